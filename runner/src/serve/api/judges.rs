//! The judges of the runs workers report to, each read from the database once: after a stored
//! report the server asks its run's judge whether a bound may be crossed, and decides the run
//! only then (or when nothing is left open), in a transaction of its own
//! (`fleet::queue::settle`). A run's judge does not change after it is made.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use serde_json::Value;
use tokio_postgres::Client;
use tokio_postgres::types::Type;

use crate::fleet::decide::Judge;

/// A run's judge, or why it cannot be read (the run's next decision fails it with that).
pub type Read = Result<Arc<Judge>, String>;

/// The judges read so far, by run; at most [`Judges::KEEP`], past that the cache starts afresh.
#[derive(Default)]
pub struct Judges(Mutex<HashMap<i64, Read>>);

impl Judges {
    pub const KEEP: usize = 4096;

    /// Run `run`'s judge (no rules for a run that does not exist: its reports are refused).
    pub async fn of(&self, db: &Client, run: i64) -> Result<Read> {
        if let Some(j) = self.0.lock().unwrap_or_else(|e| e.into_inner()).get(&run) {
            return Ok(j.clone());
        }
        let found = db
            .query_typed_opt("SELECT judge FROM runs WHERE id = $1", &[(&run, Type::INT8)])
            .await
            .context("cannot read the run's judge")?;
        let Some(row) = found else { return Ok(Ok(Arc::new(Judge::default()))) };
        let stored: Value = row.try_get("judge")?;
        let read = Judge::read(&stored).map(Arc::new);
        let mut cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= Self::KEEP {
            cache.clear();
        }
        cache.insert(run, read.clone());
        Ok(read)
    }
}
