//! The per-worker parts of `runner status`: each worker key's pairs of a run, its score and its
//! residual against the rest of the run (`stats::residual`: a chi-square test of homogeneity per
//! pairing, fishtest's check of its workers), and a flag on a key whose pairs are too unlike the
//! others' to be chance; and the line of a run that no worker can play.
//!
//! Workers are judged by key, not by process: a key is one machine or one contributor, and
//! `runner purge RUN --worker KEY` takes back a key's pairs. A key is flagged when its p-value is
//! below [`FLAG_P`] divided by the number of keys judged (Bonferroni: with twenty honest keys,
//! one at p < 0.001 would otherwise be expected now and then). A key with too few pairs to judge
//! (fewer than 5 expected in a cell of its row of the table) has no residual and is never
//! flagged.

use anyhow::Result;
use stats::{Penta, Residual, worker_residual};
use tokio_postgres::Client;

use super::queue::workers::{KeyPairing, key_tallies};
use super::workers::align;

/// The family-wise p-value below which a worker key is flagged.
pub const FLAG_P: f64 = 0.001;

/// One worker key's part in a run.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyStat {
    pub key_name: String,
    pub pairs: u64,
    /// The first engine's score over the key's pairs (0 to 1).
    pub score: f64,
    pub residual: Option<Residual>,
    pub flagged: bool,
}

fn penta(c: &[i64; 5]) -> Penta {
    let u = |x: i64| x.max(0) as u64;
    Penta { ll: u(c[0]), ld: u(c[1]), dd: u(c[2]), wd: u(c[3]), ww: u(c[4]) }
}

fn add(a: &mut Penta, b: &Penta) {
    a.ll += b.ll;
    a.ld += b.ld;
    a.dd += b.dd;
    a.wd += b.wd;
    a.ww += b.ww;
}

/// Each key's pairs, score, residual and flag, from the run's per-key, per-pairing counts.
pub fn key_stats(rows: &[KeyPairing]) -> Vec<KeyStat> {
    let mut totals: std::collections::BTreeMap<i32, Penta> = Default::default();
    for r in rows {
        add(totals.entry(r.pairing).or_default(), &penta(&r.penta));
    }
    let mut keys: Vec<&str> = rows.iter().map(|r| r.key_name.as_str()).collect();
    keys.dedup();
    let mut out: Vec<KeyStat> = keys
        .iter()
        .map(|k| {
            let mine: Vec<(Penta, Penta)> = rows
                .iter()
                .filter(|r| r.key_name == *k)
                .map(|r| (penta(&r.penta), totals[&r.pairing]))
                .collect();
            let mut all = Penta::default();
            for (p, _) in &mine {
                add(&mut all, p);
            }
            let pairs = all.pairs();
            let points =
                0.25 * all.ld as f64 + 0.5 * all.dd as f64 + 0.75 * all.wd as f64 + all.ww as f64;
            KeyStat {
                key_name: k.to_string(),
                pairs,
                score: if pairs > 0 { points / pairs as f64 } else { 0.0 },
                residual: worker_residual(&mine),
                flagged: false,
            }
        })
        .collect();
    let judged = out.iter().filter(|s| s.residual.is_some()).count();
    for s in &mut out {
        s.flagged = s.residual.is_some_and(|r| r.p < FLAG_P / judged as f64);
    }
    out
}

/// The status lines of run `run`'s workers: nothing when fewer than two keys played it (no
/// one to compare with).
pub fn format_key_stats(run: i64, stats: &[KeyStat]) -> String {
    if stats.len() < 2 {
        return String::new();
    }
    let mut table =
        vec![["worker key", "pairs", "score", "residual", "p", "flag"].map(String::from).to_vec()];
    for s in stats {
        let (z, p) = match &s.residual {
            Some(r) => (format!("{:.1}", r.z), format_p(r.p)),
            None => ("-".into(), "too few pairs".into()),
        };
        let flag = if s.flagged {
            format!("FLAGGED: `runner purge {run} --worker {}` plays its pairs again", s.key_name)
        } else {
            String::new()
        };
        table.push(vec![
            s.key_name.clone(),
            s.pairs.to_string(),
            format!("{:.1}%", 100.0 * s.score),
            z,
            p,
            flag,
        ]);
    }
    let mut out = String::from(
        "  workers (each key's pairs against the rest of the run's: chi-square over LL+LD, DD, \
         WD+WW per pairing; residual as a normal z):\n",
    );
    for line in align(&table).lines() {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn format_p(p: f64) -> String {
    if p < 1e-4 { format!("{p:.0e}") } else { format!("{p:.4}") }
}

/// The per-worker block of run `run` in `runner status`.
pub async fn block(db: &Client, run: i64) -> Result<String> {
    Ok(format_key_stats(run, &key_stats(&key_tallies(db, run).await?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kp(k: &str, pairing: i32, penta: [i64; 5]) -> KeyPairing {
        KeyPairing { key_name: k.into(), pairing, penta }
    }

    #[test]
    fn a_key_unlike_the_others_is_flagged_and_a_small_one_never() {
        let rows = [
            kp("a", 0, [3, 20, 50, 20, 3]),
            kp("b", 0, [2, 21, 49, 22, 2]),
            kp("c", 0, [3, 19, 52, 19, 3]),
            kp("evil", 0, [0, 0, 0, 0, 60]),
            kp("tiny", 0, [0, 0, 0, 0, 3]),
        ];
        let s = key_stats(&rows);
        let names: Vec<&str> = s.iter().map(|x| x.key_name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "evil", "tiny"]);
        assert!(s[..3].iter().all(|x| !x.flagged && x.residual.is_some()), "{s:?}");
        assert!(s[3].flagged && s[3].score == 1.0, "{:?}", s[3]);
        assert!(s[4].residual.is_none() && !s[4].flagged, "{:?}", s[4]);
        assert_eq!(s[0].pairs, 96);
        assert!((s[0].score - 0.5).abs() < 1e-12);
        let text = format_key_stats(9, &s);
        assert!(text.contains("worker key  pairs  score   residual  p"), "{text}");
        assert!(text.contains("FLAGGED: `runner purge 9 --worker evil` plays its pairs again"));
        assert!(text.contains("tiny        3      100.0%  -         too few pairs"), "{text}");
        assert_eq!(text.matches("FLAGGED").count(), 1, "{text}");
        // One key alone: nothing to compare.
        assert_eq!(format_key_stats(9, &key_stats(&rows[..1])), "");
    }

    #[test]
    fn pairings_are_compared_within_themselves() {
        // Two sweep points of different strengths; each key played both alike: no flag, though
        // pooled over the pairings the keys would differ if they had played them unequally.
        let rows = [
            kp("a", 0, [10, 30, 20, 0, 0]),
            kp("a", 1, [0, 0, 20, 30, 10]),
            kp("b", 0, [20, 60, 40, 0, 0]),
            kp("b", 1, [0, 0, 10, 15, 5]),
        ];
        let s = key_stats(&rows);
        assert!(s.iter().all(|x| !x.flagged), "{s:?}");
        assert!(s.iter().all(|x| x.residual.is_some_and(|r| r.chi2 < 1e-9)), "{s:?}");
    }
}

/// The state `runner status` shows for a run: an active run that every worker that tried
/// refused, with no pair played or held, says that no worker can play it.
pub fn state_words(state: &str, pairs_done: i64, pairs_leased: i64, refusals: usize) -> String {
    if state == "active" && pairs_done == 0 && pairs_leased == 0 && refusals > 0 {
        format!(
            "active, but no worker can play it: {refusals} worker key(s) tried and refused it \
             (below), none has played a pair"
        )
    } else {
        state.to_string()
    }
}

#[cfg(test)]
mod state_tests {
    use super::state_words;

    #[test]
    fn a_run_every_worker_refused_says_so() {
        assert_eq!(state_words("active", 0, 0, 0), "active");
        assert_eq!(state_words("active", 3, 0, 2), "active");
        assert_eq!(state_words("active", 0, 1, 2), "active");
        assert_eq!(state_words("failed", 0, 0, 3), "failed");
        assert!(state_words("active", 0, 0, 2).starts_with("active, but no worker can play it: 2"));
    }
}
