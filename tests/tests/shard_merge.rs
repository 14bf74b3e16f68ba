//! End-to-end tests of `--shard K/N` and `runner merge`: shards of a run, merged, equal the
//! unsharded run; merge refuses duplicates and shards of other plans; partial merges work and can
//! be completed later; a sharded sweep merges into one table. Fixed-depth games with the bundled
//! engine, few games, so the file runs in well under a minute.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use e2e::{ok, read_games, read_json as json, run_runner, runner_bin, scratch, stderr};
use serde_json::Value;

/// A small EPD book with four different openings.
fn book(dir: &Path) -> String {
    e2e::write_book(dir, 4)
}

/// `runner match` of the bundled engine against itself at a fixed depth, with `extra` flags.
fn play_match(dir: &Path, out: &Path, seed: &str, games: &str, extra: &[&str]) -> Output {
    let book = book(dir);
    let mut args = vec![
        "match",
        "--depth",
        "3",
        "--games",
        games,
        "--book",
        &book,
        "--seed",
        seed,
        "--concurrency",
        "2",
        "--progress",
        "quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run_runner(dir, &args)
}

fn merge(dir: &Path, inputs: &[&Path], out: &Path) -> Output {
    let mut args = vec!["merge".to_string()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["--out".to_string(), out.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_runner(dir, &args)
}

/// What identifies a game and what it produced, without timings or dates.
fn game_facts(g: &Value) -> String {
    let f = |k: &str| g[k].to_string();
    [
        "seq",
        "pairing",
        "label",
        "pair",
        "game",
        "opening",
        "fen",
        "white",
        "black",
        "result",
        "termination",
        "moves",
    ]
    .map(f)
    .join(" ")
}

fn keys(games: &[Value]) -> BTreeSet<(u64, u64, u64, u64)> {
    games
        .iter()
        .map(|g| {
            let n = |k: &str| g[k].as_u64().unwrap();
            (n("pairing"), n("pair"), n("opening"), n("game"))
        })
        .collect()
}

/// `(Round, White, Black, Result)` of every PGN game, in file order.
fn pgn_rounds(dir: &Path) -> Vec<String> {
    let text = fs::read_to_string(dir.join("games.pgn")).unwrap();
    let mut v = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        for tag in ["Round", "White", "Black", "Result"] {
            if let Some(rest) = line.strip_prefix(&format!("[{tag} ")) {
                cur.push_str(rest);
                if tag == "Result" {
                    v.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    v
}

#[test]
fn three_shards_merged_equal_the_unsharded_run() {
    let dir = scratch("shard-three");
    let full = dir.join("full");
    ok(play_match(&dir, &full, "11", "12", &[]), "unsharded match");
    let shards: Vec<PathBuf> = (1..=3).map(|k| dir.join(format!("s{k}"))).collect();
    for (k, s) in shards.iter().enumerate() {
        let spec = format!("{}/3", k + 1);
        ok(play_match(&dir, s, "11", "12", &["--shard", &spec]), &spec);
        let run = json(&s.join("run.json"));
        assert_eq!(run["plan"]["shard"]["index"], k + 1);
        assert_eq!(run["plan"]["shard"]["count"], 3);
        let games = read_games(s);
        assert_eq!(games.len(), 4, "shard {spec}: 2 whole pairs");
        assert!(games.iter().all(|g| g["seq"].as_u64().unwrap() % 3 == k as u64), "{spec}");
    }
    // Shards differ only in their shard, so their plan hashes differ (resume guards) ...
    let hashes: BTreeSet<String> = shards
        .iter()
        .map(|s| json(&s.join("run.json"))["plan_hash"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(hashes.len(), 3);

    let merged = dir.join("merged");
    let o = ok(merge(&dir, &[&shards[2], &shards[0], &shards[1]], &merged), "merge");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("12 of 12 scheduled games (complete)"), "{stdout}");
    assert!(!stderr(&o).contains("missing"), "{}", stderr(&o));

    // ... but the merged plan is the unsharded one, hash included.
    let (rf, rm) = (json(&full.join("run.json")), json(&merged.join("run.json")));
    assert_eq!(rm["plan"], rf["plan"]);
    assert_eq!(rm["plan_hash"], rf["plan_hash"]);
    assert_eq!(rm["merged"]["shards"], serde_json::json!([1, 2, 3]));

    // Same games: keys, and (fixed depth, deterministic engine) the same moves and results.
    let (gf, gm) = (read_games(&full), read_games(&merged));
    assert_eq!(gm.len(), 12);
    assert_eq!(keys(&gf), keys(&gm));
    let facts = |g: &[Value]| g.iter().map(game_facts).collect::<BTreeSet<_>>();
    assert_eq!(facts(&gf), facts(&gm), "fixed-depth games differ between runs");
    // games.jsonl in schedule order, same record format (same keys) as the unsharded run.
    let order: Vec<(u64, u64)> =
        gm.iter().map(|g| (g["seq"].as_u64().unwrap(), g["game"].as_u64().unwrap())).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    let key_names = |g: &Value| g.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(key_names(&gm[0]), key_names(&gf[0]));
    // games.pgn: the same games in the same (schedule) order.
    assert_eq!(pgn_rounds(&merged), pgn_rounds(&full));

    let (sf, sm) = (json(&full.join("summary.json")), json(&merged.join("summary.json")));
    for k in ["games", "wins", "draws", "losses", "terminations", "unpaired_games"] {
        assert_eq!(sm["pairings"][0][k], sf["pairings"][0][k], "{k}");
    }
    assert_eq!(sm["pairings"][0]["stats"]["penta"], sf["pairings"][0]["stats"]["penta"]);
    assert_eq!(sm["stopped_by"], "complete");
    assert_eq!(sm["merge"]["missing"], "");

    // The merged directory is an ordinary run: report reads it.
    ok(run_runner(&dir, &["report", merged.to_str().unwrap()]), "report of the merge");
}

#[test]
fn merge_refuses_duplicates_and_other_plans_and_completes_partial_merges() {
    let dir = scratch("shard-refuse");
    let (s1, s2) = (dir.join("s1"), dir.join("s2"));
    ok(play_match(&dir, &s1, "5", "4", &["--shard", "1/2"]), "shard 1/2");
    // Shard 2 takes its index from the environment, as in a Kubernetes indexed job.
    let book = book(&dir);
    let o = Command::new(runner_bin())
        .current_dir(&dir)
        .env_remove("SHARD_INDEX")
        .env("JOB_COMPLETION_INDEX", "1")
        .args(["match", "--depth", "3", "--games", "4", "--book", &book, "--seed", "5"])
        .args(["--concurrency", "2", "--progress", "quiet", "--shard", "auto/2", "--out"])
        .arg(&s2)
        .output()
        .unwrap();
    ok(o, "shard auto/2");
    assert_eq!(json(&s2.join("run.json"))["plan"]["shard"]["index"], 2);

    // The same shard twice.
    let o = merge(&dir, &[&s1, &s2, &s1], &dir.join("m-dup"));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("shard 1/2 is given twice"), "{}", stderr(&o));
    assert!(!dir.join("m-dup").join("run.json").exists());

    // A shard of another plan (another seed) and of another split.
    let other = dir.join("other");
    ok(play_match(&dir, &other, "6", "4", &["--shard", "2/2"]), "other seed");
    let o = merge(&dir, &[&s1, &other], &dir.join("m-plan"));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("seed: stored 5, now 6"), "{}", stderr(&o));
    let third = dir.join("third");
    ok(play_match(&dir, &third, "5", "4", &["--shard", "3/3"]), "3-way split");
    let o = merge(&dir, &[&s1, &third], &dir.join("m-split"));
    assert!(stderr(&o).contains("splits the run 3-way"), "{}", stderr(&o));

    // --shard without --seed would give every shard its own random seed: refused.
    let o = run_runner(&dir, &["match", "--depth", "3", "--shard", "1/2", "--progress", "quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--seed"), "{}", stderr(&o));
    // auto without an index in the environment.
    let o = Command::new(runner_bin())
        .current_dir(&dir)
        .env_remove("SHARD_INDEX")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .args(["match", "--depth", "3", "--seed", "1", "--shard", "auto/2", "--progress", "quiet"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no shard index in the environment"), "{}", stderr(&o));

    // A partial merge says what is missing; merging it again with the rest completes it.
    let part = dir.join("part");
    let o = ok(merge(&dir, &[&s1], &part), "partial merge");
    assert!(stderr(&o).contains("shard(s) 2/2 missing"), "{}", stderr(&o));
    let sp = json(&part.join("summary.json"));
    assert_eq!(
        (sp["stopped_by"].as_str(), sp["merge"]["missing"].as_str()),
        (Some("partial"), Some("2/2"))
    );
    assert_eq!(read_games(&part).len(), 2);
    // The partial merge already holds shard 1: merging it with shard 1 again is a duplicate.
    let o = merge(&dir, &[&part, &s1], &dir.join("m-dup2"));
    assert!(stderr(&o).contains("given twice"), "{}", stderr(&o));
    let whole = dir.join("whole");
    let o = ok(merge(&dir, &[&s2, &part], &whole), "completing merge");
    assert!(String::from_utf8_lossy(&o.stdout).contains("4 of 4 scheduled games (complete)"));
    assert_eq!(read_games(&whole).len(), 4);
    // An existing run is not overwritten.
    let o = merge(&dir, &[&s1, &s2], &whole);
    assert!(stderr(&o).contains("already holds a run"), "{}", stderr(&o));
}

#[test]
fn sharded_sweep_merges_into_one_table() {
    let dir = scratch("shard-sweep");
    let book = book(&dir);
    let sweep = |out: &Path, shard: Option<&str>| {
        let mut args = vec![
            "sweep",
            "--param",
            "t_mid",
            "--values",
            "0.8,1.2",
            "--depth",
            "3",
            "--games",
            "4",
            "--book",
            &book,
            "--seed",
            "7",
            "--concurrency",
            "2",
            "--progress",
            "quiet",
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(s) = shard {
            args.extend(["--shard", s]);
        }
        ok(run_runner(&dir, &args), "sweep")
    };
    let full = dir.join("full");
    sweep(&full, None);
    let (a, b) = (dir.join("a"), dir.join("b"));
    sweep(&a, Some("1/2"));
    sweep(&b, Some("2/2"));
    let merged = dir.join("merged");
    let o = ok(merge(&dir, &[&a, &b], &merged), "sweep merge");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("t_mid"), "the sweep table is printed: {stdout}");
    for f in ["table.md", "table.csv", "plot.svg", "summary.json", "sweep.json", "games.pgn"] {
        assert!(merged.join(f).is_file(), "{f} missing");
    }
    let s = json(&merged.join("summary.json"));
    assert_eq!(s["kind"], "sweep");
    assert_eq!(s["points"].as_array().unwrap().len(), 2);
    for p in ["t_mid=0.8", "t_mid=1.2"] {
        let ps = json(&merged.join("points").join(p).join("summary.json"));
        assert_eq!(ps["summary"]["games"], 4, "{p}");
    }
    // One table, the unsharded run's (fixed depth: the same games, so the same figures).
    assert_eq!(
        fs::read_to_string(merged.join("table.csv")).unwrap(),
        fs::read_to_string(full.join("table.csv")).unwrap()
    );
    assert_eq!(keys(&read_games(&merged)), keys(&read_games(&full)));

    // A sweep shard and a match shard do not merge.
    let m = dir.join("m");
    ok(play_match(&dir, &m, "7", "4", &["--shard", "2/2"]), "match shard");
    let o = merge(&dir, &[&a, &m], &dir.join("mixed"));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a shard of the same run"), "{}", stderr(&o));
}

#[test]
fn sharded_round_robin_merges_into_the_same_tables() {
    let dir = scratch("shard-rr");
    let book = book(&dir);
    let engine = e2e::engine_bin().display().to_string();
    let specs: Vec<String> =
        ["name=mpc,option.MPC=true", "name=nompc,option.MPC=false", "name=third"]
            .iter()
            .map(|s| format!("{s},cmd={engine}"))
            .collect();
    let rr = |out: &Path, shard: Option<&str>| {
        let mut args = vec!["match", "--tournament", "round-robin", "--depth", "3", "--games", "4"];
        for s in &specs {
            args.extend(["--engine", s]);
        }
        args.extend(["--book", &book, "--seed", "9", "--concurrency", "2", "--progress", "quiet"]);
        args.extend(["--out", out.to_str().unwrap()]);
        if let Some(s) = shard {
            args.extend(["--shard", s]);
        }
        ok(run_runner(&dir, &args), "round-robin")
    };
    let full = dir.join("full");
    rr(&full, None);
    let (a, b) = (dir.join("a"), dir.join("b"));
    rr(&a, Some("1/2"));
    rr(&b, Some("2/2"));
    let merged = dir.join("merged");
    ok(merge(&dir, &[&b, &a], &merged), "round-robin merge");
    assert_eq!(read_games(&merged).len(), 12);
    for f in ["table.md", "ratings.csv"] {
        assert_eq!(
            fs::read_to_string(merged.join(f)).unwrap(),
            fs::read_to_string(full.join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(json(&merged.join("summary.json"))["gauntlet"].is_object());
}
