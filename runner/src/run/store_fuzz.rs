//! Fuzz-style tests of the store's readers: random and mutated games.jsonl files fed to the resume
//! path (read, repair, check against the plan, rewrite games.pgn) and to the merge path (load a
//! shard, check it, merge it). Nothing may panic; every outcome is records or an error.
//!
//! Seeded (ChaCha8), so a run is reproducible. `STORE_FUZZ_CASES` sets the number of inputs
//! (default 1500, a few seconds); `STORE_FUZZ_SEED` the seed. Long run:
//! `STORE_FUZZ_CASES=100000 cargo test --release -p runner --lib run::store_fuzz -- --nocapture`

use std::fs;
use std::path::{Path, PathBuf};

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

use anyhow::Result;

use crate::plan::run_plan::RunPlan;
use crate::report::summary::Tally;
use crate::store::merge::{self, ShardInput, check_inputs, merge_dirs};
use crate::store::*;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

/// A random JSON value, biased towards the edge cases of the record's field types.
fn random_value(rng: &mut ChaCha8Rng, depth: u32) -> Value {
    match rng.random_range(0..14) {
        0 => Value::Null,
        1 => json!(rng.random::<bool>()),
        2 => json!(u64::MAX),
        3 => json!(-1),
        4 => json!(rng.random_range(0..4u64)),
        5 => json!(255),
        6 => json!(1e308),
        7 => json!(-0.5),
        8 => json!(rng.random::<u64>()),
        9 => json!(["e2e4", "e7e5", "zz", "a7a8q", ""][rng.random_range(0..5)]),
        10 => json!("1/2-1/2"),
        11 => Value::String((0..rng.random_range(0..20)).map(|_| rng.random::<char>()).collect()),
        12 if depth < 3 => Value::Array(
            (0..rng.random_range(0..5)).map(|_| random_value(rng, depth + 1)).collect(),
        ),
        _ if depth < 3 => {
            let keys = ["cp", "mate", "x", "seq"];
            Value::Object(
                (0..rng.random_range(0..3))
                    .map(|_| {
                        (
                            keys[rng.random_range(0..keys.len())].to_string(),
                            random_value(rng, depth + 1),
                        )
                    })
                    .collect(),
            )
        }
        _ => Value::Null,
    }
}

/// One mutation of a games.jsonl text.
fn mutate(rng: &mut ChaCha8Rng, lines: &mut Vec<Vec<u8>>) {
    if lines.is_empty() {
        lines.push(b"{}".to_vec());
    }
    let i = rng.random_range(0..lines.len());
    match rng.random_range(0..9) {
        // A field set to a random value (the line stays valid JSON).
        0..=2 => {
            if let Ok(Value::Object(mut m)) = serde_json::from_slice::<Value>(&lines[i]) {
                let keys: Vec<String> = m.keys().cloned().collect();
                if !keys.is_empty() {
                    let k = &keys[rng.random_range(0..keys.len())];
                    if rng.random_range(0..6) == 0 {
                        m.remove(k);
                    } else {
                        m.insert(k.clone(), random_value(rng, 0));
                    }
                }
                lines[i] = serde_json::to_vec(&Value::Object(m)).unwrap_or_default();
            }
        }
        // Bytes flipped, inserted or cut.
        3 => {
            let l = &mut lines[i];
            if !l.is_empty() {
                let at = rng.random_range(0..l.len());
                l[at] = rng.random();
            }
        }
        4 => {
            let l = &mut lines[i];
            let at = rng.random_range(0..=l.len());
            let junk: Vec<u8> = (0..rng.random_range(1..8)).map(|_| rng.random()).collect();
            let _ = l.splice(at..at, junk);
        }
        5 => {
            let l = &mut lines[i];
            let at = rng.random_range(0..=l.len());
            l.truncate(at);
        }
        // Lines duplicated, dropped, swapped.
        6 => {
            let l = lines[i].clone();
            lines.insert(rng.random_range(0..=lines.len()), l);
        }
        7 => {
            lines.remove(i);
        }
        _ => {
            let j = rng.random_range(0..lines.len());
            lines.swap(i, j);
        }
    }
}

fn join(lines: &[Vec<u8>], newline_at_end: bool) -> Vec<u8> {
    let mut v = lines.join(&b'\n');
    if newline_at_end {
        v.push(b'\n');
    }
    v
}

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("store-fuzz-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// The valid lines of a small run (both games of its first pairs), as the runner writes them.
fn seed_lines(plan: &RunPlan) -> Vec<Vec<u8>> {
    let hash = plan.merge_hash();
    let jobs = merge::schedule_of(plan);
    jobs.iter()
        .take(3)
        .flat_map(|j| {
            (0..2u8).map(move |game| {
                let mut r = tests::record(j.pair, game);
                (r.seq, r.pairing, r.opening) = (j.seq, j.pairing, j.opening);
                r
            })
        })
        .map(|mut r| {
            r.plan_hash = Some(hash.clone());
            serde_json::to_vec(&r).unwrap()
        })
        .collect()
}

#[test]
fn mutated_games_jsonl_never_panics_on_resume_or_merge() {
    let cases = env_num("STORE_FUZZ_CASES", 1500);
    let seed = env_num("STORE_FUZZ_SEED", 20261123);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let plan = tests::plan();
    let base = seed_lines(&plan);
    let dir = tmp_dir("run");
    Store::create(&dir, &plan).unwrap();
    let (mut resumed, mut merged) = (0u64, 0u64);
    for case in 0..cases {
        let mut lines = base.clone();
        for _ in 0..rng.random_range(1..6) {
            mutate(&mut rng, &mut lines);
        }
        let bytes = join(&lines, rng.random_range(0..4) != 0);
        // The resume path: read (repairing a cut last line), check, rewrite games.pgn.
        fs::write(dir.join(GAMES_FILE), &bytes).unwrap();
        if let Ok((_, recs)) = Store::resume(&dir, &plan) {
            resumed += 1;
            let mut tally = Tally::new(plan.pairings.len());
            for r in &recs {
                tally.add(r);
            }
        }
        // The merge path: load the folder as a shard and check it; now and then a full merge.
        fs::write(dir.join(GAMES_FILE), &bytes).unwrap();
        let no_side_plan =
            |_: &Path| -> Result<Option<crate::store::formats::SweepPlan>> { Ok(None) };
        if let Ok(input) = ShardInput::load(&dir, &no_side_plan)
            && check_inputs(&[input]).is_ok()
        {
            merged += 1;
            if case % 50 == 0 {
                let out = dir.with_extension(format!("merged-{case}"));
                let _ = merge_dirs(std::slice::from_ref(&dir), &out, &no_side_plan);
                let _ = fs::remove_dir_all(&out);
            }
        }
        // Records read back for reports: every one can be turned into PGN or an error.
        for r in parse_games(&bytes).map(|x| x.0).unwrap_or_default() {
            let _ = r.to_pgn(("fuzz", "?"), &plan.tc, plan.variant, plan.pairings.len());
        }
    }
    eprintln!(
        "store fuzz: {cases} inputs (seed {seed}), {resumed} resumed, {merged} merge-checked"
    );
    assert!(resumed > 0 && merged > 0, "the mutations never leave a valid file");
    fs::remove_dir_all(&dir).unwrap();
}
