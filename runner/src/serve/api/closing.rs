//! Runs whose every pair is played but that no report decided are decided by the server: the
//! last two pairs of a run reported at the same instant each see the other still open, so
//! neither report ends the run. Before, only an idle worker's `settle` did; now the server looks
//! every [`EVERY`] while it runs. Two servers on one database may both look: a decision takes
//! the run's row `FOR UPDATE` and leaves a run that is no longer active as it is.

use std::sync::Weak;
use std::time::Duration;

use anyhow::Result;

use crate::fleet::queue::settle;
use crate::serve::App;

/// How often the server looks for runs to close.
pub const EVERY: Duration = Duration::from_secs(5);

/// Looks every [`EVERY`] while the server lives (and has a fleet database).
pub async fn keep_closing(app: Weak<App>) {
    let mut said: Option<String> = None;
    loop {
        tokio::time::sleep(EVERY).await;
        let Some(app) = app.upgrade() else { return };
        let Some(pool) = &app.pool else { return };
        match close_once(pool).await {
            Ok(_) => said = None,
            // Once per kind of failure (a database restart fails every look until it is back).
            Err(e) => {
                let line = format!("{e:#}");
                if said.as_deref() != Some(line.as_str()) {
                    errln!("warning: cannot close the runs with nothing open ({line}); retrying");
                    said = Some(line);
                }
            }
        }
    }
}

/// One look: decides every active run with nothing open; returns the runs it decided.
pub async fn close_once(pool: &deadpool_postgres::Pool) -> Result<Vec<i64>> {
    let mut db = pool.get().await?;
    let runs = settle::unsettled(&db).await?;
    for &run in &runs {
        settle::decide(&mut db, run).await?;
    }
    Ok(runs)
}
