//! A run's plan of work: pairings (engine A vs engine B) and a deterministic, interleaved list of
//! jobs. A job is one game pair: the same opening played twice with colours reversed.

use serde::{Deserialize, Serialize};

use crate::plan::openings::{BookOrder, opening_sequence};
use crate::plan::time_control::TimeControl;

/// Two engine specs (indices into the run's engine list) that play each other. Results are kept
/// from `first`'s point of view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pairing {
    /// Shown in tables and stored with each game, e.g. `"A vs B"` or `"t_mid=0.9"`.
    pub label: String,
    pub first: usize,
    pub second: usize,
    /// This pairing's time control when it differs from the plan's (gauntlets with several
    /// `--tc`); `None`: the plan's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tc: Option<TimeControl>,
}

/// One game pair to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// Position in the schedule (the order jobs are started in).
    pub seq: usize,
    pub pairing: usize,
    /// Index of the pair within its pairing.
    pub pair: usize,
    /// Opening index in the book.
    pub opening: usize,
}

/// One game of a job: game 0 has the pairing's first engine as White, game 1 as Black.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct GameKey {
    pub pairing: usize,
    pub pair: usize,
    pub game: u8,
}

/// `--shard K/N`: this process plays only jobs with `seq % N == K - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// `K/N`, or `auto/N` with K from the environment (see [`Shard::parse_with_env`]).
    pub fn parse(s: &str) -> Result<Shard, String> {
        Shard::parse_with_env(s, |name| std::env::var(name).ok())
    }

    /// Like [`Shard::parse`], reading `auto/N`'s index through `env`: `SHARD_INDEX` (1-based),
    /// else `JOB_COMPLETION_INDEX` (Kubernetes indexed job, 0-based), else
    /// `SLURM_ARRAY_TASK_ID` counted from `SLURM_ARRAY_TASK_MIN` (so `--array=1-N` and
    /// `--array=0-(N-1)` both work).
    pub fn parse_with_env(s: &str, env: impl Fn(&str) -> Option<String>) -> Result<Shard, String> {
        let (k, n) = s.split_once('/').ok_or_else(|| format!("bad shard {s:?}: expected K/N"))?;
        let n: usize =
            n.trim().parse().map_err(|_| format!("bad shard {s:?}: expected whole numbers K/N"))?;
        let k: usize = if k.trim() == "auto" {
            auto_shard_index(&env).map_err(|e| format!("--shard {s}: {e}"))?
        } else {
            k.trim().parse().map_err(|_| format!("bad shard {s:?}: expected whole numbers K/N"))?
        };
        if n == 0 || k == 0 || k > n {
            return Err(format!("bad shard {s:?} (K = {k}): need 1 <= K <= N"));
        }
        Ok(Shard { index: k, count: n })
    }

    pub fn contains(&self, job: &Job) -> bool {
        job.seq % self.count == self.index - 1
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The 1-based shard index of this batch task, from the environment (`--shard auto/N`).
fn auto_shard_index(env: &impl Fn(&str) -> Option<String>) -> Result<usize, String> {
    let num = |name: &str| -> Result<Option<usize>, String> {
        match env(name) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("{name}={v:?} is not a whole number")),
        }
    };
    if let Some(k) = num("SHARD_INDEX")? {
        return Ok(k);
    }
    if let Some(i) = num("JOB_COMPLETION_INDEX")? {
        return Ok(i + 1);
    }
    if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
        let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(1);
        return id.checked_sub(min).map(|k| k + 1).ok_or_else(|| {
            format!("SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}")
        });
    }
    Err("no shard index in the environment: set SHARD_INDEX (1-based), or run as a Kubernetes \
         indexed job (JOB_COMPLETION_INDEX) or a SLURM job array (SLURM_ARRAY_TASK_ID)"
        .into())
}

/// Builds the job list: `pairs` game pairs for every pairing. Pair `i` of every pairing uses the
/// same opening (drawn from the book in `order` with `seed`), and pairings are interleaved pair
/// by pair, so a stopped run has played every pairing about equally.
pub fn build_schedule(
    n_pairings: usize,
    pairs: usize,
    n_openings: usize,
    order: BookOrder,
    seed: u64,
) -> Vec<Job> {
    let openings = opening_sequence(n_openings, order, seed, pairs);
    let mut jobs = Vec::with_capacity(pairs * n_pairings);
    for (pair, &opening) in openings.iter().enumerate() {
        for pairing in 0..n_pairings {
            jobs.push(Job { seq: jobs.len(), pairing, pair, opening });
        }
    }
    jobs
}

impl Job {
    /// The two games of this job.
    pub fn games(&self) -> [GameKey; 2] {
        [0, 1].map(|game| GameKey { pairing: self.pairing, pair: self.pair, game })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaves_pairings_and_shares_openings() {
        let jobs = build_schedule(3, 4, 10, BookOrder::Random, 7);
        assert_eq!(jobs.len(), 12);
        assert_eq!(jobs.iter().map(|j| j.pairing).take(6).collect::<Vec<_>>(), [0, 1, 2, 0, 1, 2]);
        for chunk in jobs.chunks(3) {
            assert!(chunk.iter().all(|j| j.opening == chunk[0].opening && j.pair == chunk[0].pair));
        }
        assert!(jobs.iter().enumerate().all(|(i, j)| j.seq == i));
        assert_eq!(jobs, build_schedule(3, 4, 10, BookOrder::Random, 7));
        assert_ne!(jobs, build_schedule(3, 4, 10, BookOrder::Random, 8));
    }

    #[test]
    fn shards_partition_the_jobs() {
        let jobs = build_schedule(2, 10, 5, BookOrder::Sequential, 0);
        let shards: Vec<Shard> =
            (1..=3).map(|k| Shard::parse(&format!("{k}/3")).unwrap()).collect();
        for j in &jobs {
            assert_eq!(shards.iter().filter(|s| s.contains(j)).count(), 1);
        }
        assert!(Shard::parse("0/3").is_err());
        assert!(Shard::parse("4/3").is_err());
        assert!(Shard::parse("x").is_err());
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |n: &str| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string())
        };
        let auto = |vars: &'static [(&'static str, &'static str)]| {
            Shard::parse_with_env("auto/4", env(vars)).map(|s| s.index)
        };
        assert_eq!(auto(&[("SHARD_INDEX", "2")]), Ok(2));
        assert_eq!(auto(&[("JOB_COMPLETION_INDEX", "0")]), Ok(1));
        assert_eq!(auto(&[("SLURM_ARRAY_TASK_ID", "3"), ("SLURM_ARRAY_TASK_MIN", "0")]), Ok(4));
        assert_eq!(auto(&[("SLURM_ARRAY_TASK_ID", "4"), ("SLURM_ARRAY_TASK_MIN", "1")]), Ok(4));
        assert!(auto(&[("JOB_COMPLETION_INDEX", "4")]).unwrap_err().contains("1 <= K <= N"));
        assert!(auto(&[("SHARD_INDEX", "x")]).unwrap_err().contains("SHARD_INDEX"));
        assert!(auto(&[]).unwrap_err().contains("JOB_COMPLETION_INDEX"));
        assert_eq!(Shard::parse("2/3").unwrap().to_string(), "2/3");
    }
}
