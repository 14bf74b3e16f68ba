//! The per-worker parts of `runner status`: each worker key's pairs of a run, its score and its
//! residual against the rest of the run, the keys already flagged left out (`stats::residual`:
//! a chi-square test of homogeneity per pairing, fishtest's check of its workers), and a flag on
//! a key whose pairs are too unlike the others' to be chance; and the line of a run that no
//! worker can play.
//!
//! Workers are judged by key, not by process: a key is one machine or one contributor, and
//! `runner purge RUN --worker KEY` takes back a key's pairs. A key is flagged when its p-value is
//! below [`FLAG_P`] divided by the number of keys judged (Bonferroni: with twenty honest keys,
//! one at p < 0.001 would otherwise be expected now and then), worst first (see [`key_stats`]).
//! A key with too few pairs to judge (a single cell left once the sparse ones are pooled) has no
//! residual and is never flagged.

use anyhow::Result;
use stats::{Penta, Residual, worker_residual};
use tokio_postgres::Client;

use super::queue::workers::{KeyPairing, key_tallies};
use super::workers::align;
use crate::state::State;

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
///
/// Worst first: the key with the smallest p-value is flagged when it is below [`FLAG_P`] over
/// the number of keys judged, its pairs are left out of the run's totals, and the others are
/// judged again, until no key is below the limit. A key is compared with the keys not flagged,
/// so a bad key does not drag honest ones with it: with two honest keys and one that lies on a
/// third of the pairs, "the rest" of an honest key is half lies, and it would be flagged too.
pub fn key_stats(rows: &[KeyPairing]) -> Vec<KeyStat> {
    let mut keys: Vec<&str> = rows.iter().map(|r| r.key_name.as_str()).collect();
    keys.dedup();
    let mut flagged: Vec<&str> = Vec::new();
    let mut out = judge(rows, &keys, &flagged);
    let judged = out.iter().filter(|s| s.residual.is_some()).count();
    loop {
        let worst = out
            .iter()
            .filter(|s| !s.flagged)
            .filter_map(|s| s.residual.map(|r| (s.key_name.as_str(), r.p)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match worst {
            Some((k, p)) if p < FLAG_P / judged as f64 => {
                let k = keys.iter().copied().find(|x| *x == k).unwrap_or_default();
                flagged.push(k);
                out = judge(rows, &keys, &flagged);
            }
            _ => return out,
        }
    }
}

/// Each key of `keys` against the pairs of the keys not `flagged` (a flagged key: against
/// those and its own).
fn judge(rows: &[KeyPairing], keys: &[&str], flagged: &[&str]) -> Vec<KeyStat> {
    let mut kept: std::collections::BTreeMap<i32, Penta> = Default::default();
    for r in rows.iter().filter(|r| !flagged.contains(&r.key_name.as_str())) {
        add(kept.entry(r.pairing).or_default(), &penta(&r.penta));
    }
    keys.iter()
        .map(|k| {
            let bad = flagged.contains(k);
            let mine: Vec<(Penta, Penta)> = rows
                .iter()
                .filter(|r| r.key_name == *k)
                .map(|r| {
                    let p = penta(&r.penta);
                    let mut total = kept.get(&r.pairing).copied().unwrap_or_default();
                    if bad {
                        add(&mut total, &p);
                    }
                    (p, total)
                })
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
                flagged: bad,
            }
        })
        .collect()
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
        "  workers (each key's pairs against the keys not flagged: chi-square over LL+LD, DD, \
         WD+WW per pairing, a sparse cell pooled with its neighbour; residual as a normal z):\n",
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

    /// Two honest keys and one that reports only won pairs on a third of the run (engines that
    /// trade wins, as node-limited self-play does): compared with everyone, each honest key's
    /// "rest" is half lies and looks as far off as the liar. Worst first, only the liar is
    /// flagged, and the honest keys are judged against each other.
    #[test]
    fn a_liar_does_not_drag_honest_keys_with_it() {
        let rows = [
            kp("box1", 0, [1, 1, 40, 1, 0]),
            kp("box2", 0, [0, 1, 35, 1, 0]),
            kp("box3", 0, [0, 0, 0, 0, 40]),
        ];
        // Against the whole run, box1 would be flagged too.
        let all = rows.iter().fold(Penta::default(), |mut a, r| {
            add(&mut a, &penta(&r.penta));
            a
        });
        let naive = worker_residual(&[(penta(&rows[0].penta), all)]).unwrap();
        assert!(naive.p < FLAG_P / 3.0, "{naive:?}");
        let s = key_stats(&rows);
        let flags: Vec<bool> = s.iter().map(|x| x.flagged).collect();
        assert_eq!(flags, [false, false, true], "{s:?}");
        assert!(s[2].residual.unwrap().p < 1e-12, "{s:?}");
        // Against each other the honest keys are alike (too few pairs outside DD to judge, or
        // a p-value nowhere near the limit).
        assert!(s[..2].iter().all(|x| x.residual.is_none_or(|r| r.p > 0.01)), "{s:?}");
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

/// The state `runner status` shows for a run, in [`State`]'s words: a running run that every
/// worker that tried refused, with no pair played or held, says that no worker can play it.
pub fn state_words(state: State, pairs_done: i64, pairs_leased: i64, refusals: usize) -> String {
    if state == State::Running && pairs_done == 0 && pairs_leased == 0 && refusals > 0 {
        format!(
            "running, but no worker can play it: {refusals} worker key(s) tried and refused it \
             (below), none has played a pair"
        )
    } else {
        state.label().to_string()
    }
}

#[cfg(test)]
mod state_tests {
    use super::state_words;
    use crate::state::State;

    #[test]
    fn a_run_every_worker_refused_says_so() {
        assert_eq!(state_words(State::Running, 0, 0, 0), "running");
        assert_eq!(state_words(State::Running, 3, 0, 2), "running");
        assert_eq!(state_words(State::Running, 0, 1, 2), "running");
        assert_eq!(state_words(State::Failed, 0, 0, 3), "failed");
        assert_eq!(state_words(State::Accepted, 9, 0, 0), "accepted (H1)");
        assert!(
            state_words(State::Running, 0, 0, 2)
                .starts_with("running, but no worker can play it: 2")
        );
    }
}
