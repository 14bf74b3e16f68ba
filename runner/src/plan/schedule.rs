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
    /// Opening index in the book (of game 0; of both games unless `second_opening`).
    pub opening: usize,
    /// Game 1's opening under `--repeat 1` (every opening played once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_opening: Option<usize>,
}

/// How openings and colours are handed out: `--repeat`, `--noswap`, `--reverse`, `--book-start`,
/// `--wait` (as fastchess's `-games`, `-noswap`, `-reverse`, `-openings start=`, `-wait`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Scheduling {
    /// Games per opening: 2 (a pair with colours reversed, the default), 1 (every opening once,
    /// colours alternating game by game), or an even N (each opening for N/2 pairs).
    pub repeat: u32,
    /// No colour swap: the pairing's first engine has White in every game.
    pub noswap: bool,
    /// Colours reversed: the first engine takes Black where it would have White.
    pub reverse: bool,
    /// The first opening used, 1-based (in the book's order, or in the seeded random order).
    pub book_start: usize,
    /// Milliseconds a worker waits after each game before the next.
    pub wait_ms: u64,
}

impl Default for Scheduling {
    fn default() -> Self {
        Scheduling { repeat: 2, noswap: false, reverse: false, book_start: 1, wait_ms: 0 }
    }
}

impl Scheduling {
    pub fn is_default(&self) -> bool {
        *self == Scheduling::default()
    }

    /// Checks the values (`openings`: the book's size).
    pub fn check(&self, openings: usize) -> Result<(), String> {
        if self.repeat == 0 || (self.repeat > 2 && !self.repeat.is_multiple_of(2)) {
            return Err(format!(
                "--repeat {}: give 1, 2 or an even number (a game pair is one opening with \
                 colours reversed)",
                self.repeat
            ));
        }
        if self.book_start == 0 || self.book_start > openings.max(1) {
            return Err(format!(
                "--book-start {}: the book has {openings} opening(s) (1-based)",
                self.book_start
            ));
        }
        Ok(())
    }

    /// True when the pairing's first engine has White in `game` (0 or 1) of a job: game 0 by
    /// default (so colours alternate game by game), every game with `--noswap`, the other way
    /// round with `--reverse`.
    pub fn first_is_white(&self, game: u8) -> bool {
        (self.noswap || game == 0) != self.reverse
    }

    /// True when a job's two games are one opening played with colours reversed, the game pair
    /// that pentanomial statistics count; false under `--repeat 1` and `--noswap`.
    pub fn reversed_pairs(&self) -> bool {
        self.repeat != 1 && !self.noswap
    }

    /// Why the games are not counted in pairs, when they are not.
    pub fn unpaired_reason(&self) -> Option<&'static str> {
        match (self.repeat == 1, self.noswap) {
            (true, _) => Some("--repeat 1 plays every opening once"),
            (false, true) => Some("--noswap plays both games of an opening with the same colours"),
            _ => None,
        }
    }
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

/// Builds the job list: `pairs` jobs of two games for every pairing. Pair `i` of every pairing
/// uses the same opening(s) (drawn from the book in `order` with `seed`, from the
/// `book_start`-th on), and pairings are interleaved pair by pair, so a stopped run has played
/// every pairing about equally. `sched.repeat` decides how many games share an opening.
pub fn build_schedule(
    n_pairings: usize,
    pairs: usize,
    n_openings: usize,
    order: BookOrder,
    seed: u64,
    sched: &Scheduling,
) -> Vec<Job> {
    let per_opening = (sched.repeat as usize / 2).max(1);
    let draws =
        if sched.repeat == 1 { pairs.saturating_mul(2) } else { pairs.div_ceil(per_opening) };
    let skip = sched.book_start.saturating_sub(1);
    let seq = opening_sequence(n_openings, order, seed, draws.saturating_add(skip));
    let seq = seq.get(skip..).unwrap_or_default();
    let mut jobs = Vec::with_capacity(pairs.saturating_mul(n_pairings));
    for pair in 0..pairs {
        let (opening, second_opening) = if sched.repeat == 1 {
            (seq.get(2 * pair), seq.get(2 * pair + 1).copied())
        } else {
            (seq.get(pair / per_opening), None)
        };
        let Some(&opening) = opening else { break };
        for pairing in 0..n_pairings {
            jobs.push(Job { seq: jobs.len(), pairing, pair, opening, second_opening });
        }
    }
    jobs
}

impl Job {
    /// The two games of this job.
    pub fn games(&self) -> [GameKey; 2] {
        [0, 1].map(|game| GameKey { pairing: self.pairing, pair: self.pair, game })
    }

    /// The opening of game `game` (0 or 1) of this job.
    pub fn opening_of(&self, game: u8) -> usize {
        match (game, self.second_opening) {
            (1, Some(o)) => o,
            _ => self.opening,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaves_pairings_and_shares_openings() {
        let d = Scheduling::default();
        let jobs = build_schedule(3, 4, 10, BookOrder::Random, 7, &d);
        assert_eq!(jobs.len(), 12);
        assert_eq!(jobs.iter().map(|j| j.pairing).take(6).collect::<Vec<_>>(), [0, 1, 2, 0, 1, 2]);
        for chunk in jobs.chunks(3) {
            assert!(chunk.iter().all(|j| j.opening == chunk[0].opening && j.pair == chunk[0].pair));
        }
        assert!(jobs.iter().enumerate().all(|(i, j)| j.seq == i));
        assert_eq!(jobs, build_schedule(3, 4, 10, BookOrder::Random, 7, &d));
        assert_ne!(jobs, build_schedule(3, 4, 10, BookOrder::Random, 8, &d));
    }

    /// Each scheduling option's openings and colours.
    #[test]
    fn scheduling_options_give_openings_and_colours() {
        let seq = BookOrder::Sequential;
        let openings = |s: &Scheduling| -> Vec<(usize, usize)> {
            build_schedule(1, 4, 10, seq, 0, s)
                .iter()
                .map(|j| (j.opening_of(0), j.opening_of(1)))
                .collect()
        };
        let colours = |s: &Scheduling| [s.first_is_white(0), s.first_is_white(1)];
        let d = Scheduling::default();
        assert_eq!(openings(&d), [(0, 0), (1, 1), (2, 2), (3, 3)]);
        assert_eq!(colours(&d), [true, false]);
        assert!(d.reversed_pairs() && d.unpaired_reason().is_none());
        // --repeat 1: every opening once, colours alternating game by game.
        let once = Scheduling { repeat: 1, ..d };
        assert_eq!(openings(&once), [(0, 1), (2, 3), (4, 5), (6, 7)]);
        assert_eq!(colours(&once), [true, false]);
        assert!(!once.reversed_pairs() && once.unpaired_reason().is_some());
        // --repeat 4: each opening for two pairs.
        assert_eq!(openings(&Scheduling { repeat: 4, ..d }), [(0, 0), (0, 0), (1, 1), (1, 1)]);
        // --noswap: the first engine is White in both games; --reverse: Black first.
        let noswap = Scheduling { noswap: true, ..d };
        assert_eq!(colours(&noswap), [true, true]);
        assert!(!noswap.reversed_pairs());
        assert_eq!(colours(&Scheduling { reverse: true, ..d }), [false, true]);
        assert_eq!(colours(&Scheduling { reverse: true, noswap: true, ..d }), [false, false]);
        assert!(Scheduling { reverse: true, ..d }.reversed_pairs());
        // --book-start 3: the sequence starts at the third opening (1-based) and wraps.
        let start = Scheduling { book_start: 9, ..d };
        assert_eq!(openings(&start), [(8, 8), (9, 9), (0, 0), (1, 1)]);
        // In random order it skips into the seeded order, as fastchess rotates its shuffle.
        let all = build_schedule(1, 6, 10, BookOrder::Random, 5, &d);
        let late =
            build_schedule(1, 4, 10, BookOrder::Random, 5, &Scheduling { book_start: 3, ..d });
        let ids = |j: &[Job]| j.iter().map(|j| j.opening).collect::<Vec<_>>();
        assert_eq!(ids(&late), ids(&all)[2..]);
        for bad in [
            Scheduling { repeat: 0, ..d },
            Scheduling { repeat: 3, ..d },
            Scheduling { book_start: 0, ..d },
            Scheduling { book_start: 11, ..d },
        ] {
            assert!(bad.check(10).is_err(), "{bad:?}");
        }
        assert!(Scheduling { repeat: 6, book_start: 10, ..d }.check(10).is_ok());
    }

    #[test]
    fn shards_partition_the_jobs() {
        let jobs = build_schedule(2, 10, 5, BookOrder::Sequential, 0, &Scheduling::default());
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
