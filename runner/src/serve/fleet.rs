//! The fleet source: the database's runs as [`RunView`]s, a run's page rendered from a folder
//! the server pulls into its own cache (`runner pull`'s code, re-pulled when the run's counts
//! changed), so the page is made by the same renderer as a local run's, and the workers table.
//! Every statement is the fleet queue's (`fleet/queue/`); the server connects as the role its
//! URL names, meant to be the read-only `fleet_reader` (docs/fleet-worker-role.sql).

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{Context, Result};
use stats::Options;
use tokio::sync::Mutex;
use tokio_postgres::Client;

use crate::fleet::connect::{DbTarget, connect};
use crate::fleet::decide::stats_counts;
use crate::fleet::pull::pull;
use crate::fleet::queue::dashboard::{self, WorkerRow};
use crate::fleet::queue::{self, RunRow};
use crate::fleet::schema;
use crate::fleet::submission::Submission;
use crate::report::summary::summarize_or_na;

use super::FLEET_PREFIX;
use super::view::{PairingView, RunView, State};

/// Runs listed at the most (newest first).
pub const LIST_LIMIT: i64 = 1000;

/// The database and the server's cache of pulled folders.
pub struct Fleet {
    target: DbTarget,
    db: Client,
    cache: PathBuf,
    /// Per run: the counts its cached folder was pulled at.
    pulled: Mutex<HashMap<i64, String>>,
}

impl Fleet {
    /// Connects with `url` and checks the schema version.
    pub async fn connect(url: &str) -> Result<Fleet> {
        let (target, db) = connect(Some(url)).await?;
        schema::check(&db).await?;
        let cache = std::env::temp_dir().join(format!("runner-serve-{}", std::process::id()));
        Ok(Fleet { target, db, cache, pulled: Mutex::new(HashMap::new()) })
    }

    pub async fn runs(&self) -> Result<Vec<RunView>> {
        let rows = queue::runs(&self.db, LIST_LIMIT).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            out.push(self.view(row).await?);
        }
        Ok(out)
    }

    pub async fn run(&self, id: i64) -> Result<Option<RunView>> {
        match queue::run(&self.db, id).await? {
            Some(row) => Ok(Some(self.view(&row).await?)),
            None => Ok(None),
        }
    }

    async fn view(&self, row: &RunRow) -> Result<RunView> {
        let sub = Submission::from_stored(&row.submission);
        let plan = sub.as_ref().ok().map(|s| s.plan().clone());
        let sprt = plan.as_ref().and_then(|p| p.sprt);
        let counts = queue::pairing_counts(&self.db, row.id, None).await?;
        let labels: Vec<String> =
            queue::pairings(&self.db, row.id).await?.into_iter().map(|p| p.label).collect();
        let mut games = 0;
        let pairings: Vec<PairingView> = counts
            .iter()
            .map(|c| {
                let counts = stats_counts(c);
                let label = labels
                    .get(c.pairing.max(0) as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("pairing {}", c.pairing));
                let n = counts.games();
                games += n;
                let summary = (c.penta.iter().sum::<i64>() > 0).then(|| {
                    summarize_or_na(
                        &counts,
                        &Options { sprt, ..Options::default() },
                        stats::summarize,
                    )
                    .0
                });
                PairingView {
                    label,
                    games: n,
                    wdl: counts.wdl().unwrap_or_default(),
                    penta: counts.penta().unwrap_or_default(),
                    summary,
                }
            })
            .collect();
        let state = match row.state.as_str() {
            "pending" => State::Pending,
            "active" => State::Active,
            _ => State::Finished,
        };
        let workers = if state == State::Active {
            Some(queue::progress(&self.db, row.id).await?.workers_alive)
        } else {
            None
        };
        let limits = plan.as_ref().map(|p| {
            let mut s = p.tc.to_string();
            if let Some(n) = p.nodes {
                s.push_str(&format!(", {n} nodes"));
            }
            s
        });
        Ok(RunView {
            id: format!("{FLEET_PREFIX}{}", row.id),
            source: "fleet",
            kind: sub.as_ref().map_or_else(|_| row.kind.clone(), |s| s.kind().to_string()),
            state,
            state_note: match &row.stop_reason {
                Some(why) => format!("{}: {why}", row.state),
                None => row.state.clone(),
            },
            engines: plan
                .map(|p| p.engines.iter().map(|e| e.name.clone()).collect())
                .unwrap_or_default(),
            limits: limits.unwrap_or_default(),
            games,
            pairings,
            owner: Some(row.owner.clone()),
            priority: None,
            workers,
            submitted: Some(row.created.clone()),
        })
    }

    /// Run `id`'s folder in the server's cache, pulled again when its counts changed since
    /// (`stamp`: what the caller saw of the run, e.g. its games and state).
    pub async fn folder(&self, id: i64, stamp: &str) -> Result<PathBuf> {
        let dir = self.cache.join(format!("{FLEET_PREFIX}{id}"));
        let mut pulled = self.pulled.lock().await;
        if pulled.get(&id).map(String::as_str) != Some(stamp) {
            std::fs::create_dir_all(&self.cache)
                .with_context(|| format!("cannot create {}", self.cache.display()))?;
            pull(&self.db, &self.target.to_string(), id, &dir).await?;
            pulled.insert(id, stamp.to_string());
        }
        Ok(dir)
    }

    pub async fn workers(&self) -> Result<Vec<WorkerRow>> {
        dashboard::workers(&self.db, 500).await
    }

    pub async fn change_counter(&self) -> Result<String> {
        dashboard::change_counter(&self.db).await
    }
}
