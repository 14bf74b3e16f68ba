//! The files real runs write read back through the types of `runner::store::formats`, the ones
//! every writer and reader uses: run.json, every games.jsonl line and summary.json of a match, a
//! round-robin, a merge of two shards, a sweep (with sweep.json and every point's summary.json)
//! and a tune (with tune.json and every tune.jsonl line), and plan.json, summary.json and
//! oracle.json of `calibrate` and `searchtest` (bundled engine, tiny limits).
//!
//! Each file is read as JSON, then as its type, then written back from the type: the two JSON
//! values must be equal. A key a writer puts in a file that its type does not hold is dropped by
//! that round trip and fails here (the check `#[serde(deny_unknown_fields)]` would make, also
//! through the `flatten` of a sweep's summary), as does a key the type writes that the file
//! lacks.

use std::fs;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use e2e::{engine_bin, run_runner, scratch, stderr};
use runner::store::formats::{
    CalibratePlanFile, CalibrateSummary, GameRecord, OracleFile, PointRow, RunFile, RunSummary,
    SearchtestPlanFile, SearchtestSummary, SweepPlan, SweepSummary, TuneFile, TuneLogLine,
};

/// The keys of `a` and `b` (objects, recursively) where they differ, as JSON pointers.
fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let here = format!("{at}/{k}");
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => differences(p, q, &here, out),
                    (Some(_), None) => out.push(format!("{here}: in the file, not in the type")),
                    (None, Some(_)) => {
                        out.push(format!("{here}: written by the type, not in the file"))
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{at}/{i}"), out);
            }
        }
        _ if a != b => out.push(format!("{at}: {a} in the file, {b} from the type")),
        _ => {}
    }
}

/// `text` (the file `what`) read as a `T`, after checking that `T` holds all of it.
fn read_as<T: DeserializeOwned + Serialize>(what: &str, text: &str) -> T {
    let file: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: {e}"));
    let typed: T = serde_json::from_value(file.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let back = serde_json::to_value(&typed).expect("serializes");
    let mut diff = Vec::new();
    differences(&file, &back, "", &mut diff);
    assert!(diff.is_empty(), "{what} and its type differ:\n{}", diff.join("\n"));
    typed
}

fn read_file<T: DeserializeOwned + Serialize>(dir: &Path, name: &str) -> T {
    let path = dir.join(name);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    read_as(&path.display().to_string(), &text)
}

/// run.json, every line of games.jsonl and summary.json of a run folder; returns them.
fn read_run(dir: &Path) -> (RunFile, Vec<GameRecord>, Value) {
    let (run, games) = read_run_and_games(dir);
    let summary = fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    (run, games, serde_json::from_str(&summary).expect("summary.json is JSON"))
}

/// run.json and every line of games.jsonl of a run folder (a tuning run writes no summary.json:
/// its result is tune.json).
fn read_run_and_games(dir: &Path) -> (RunFile, Vec<GameRecord>) {
    let run: RunFile = read_file(dir, "run.json");
    let path = dir.join("games.jsonl");
    let text = fs::read_to_string(&path).expect("games.jsonl");
    let games: Vec<GameRecord> = text
        .lines()
        .enumerate()
        .map(|(i, line)| read_as(&format!("{} line {}", path.display(), i + 1), line))
        .collect();
    assert!(!games.is_empty(), "{}: no games", path.display());
    (run, games)
}

fn runs(dir: &Path, args: &[&str]) {
    let o = run_runner(dir, args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
}

#[test]
fn a_match_a_round_robin_and_a_merge_write_what_their_types_hold() {
    let dir = scratch("formats-match");
    let engine = engine_bin().display().to_string();
    let spec = |name: &str| format!("name={name},cmd={engine}");
    let (a, b, c) = (spec("a"), spec("b"), spec("c"));
    let quick = ["--nodes", "300", "--maxmoves", "20", "--progress", "quiet", "--seed", "3"];
    let with = |head: &[&str], out: &str| -> Vec<String> {
        head.iter().chain(&quick).chain(&["--out", out]).map(|s| s.to_string()).collect()
    };
    let run = |v: Vec<String>| runs(&dir, &v.iter().map(String::as_str).collect::<Vec<_>>());

    run(with(&["match", "--engine", &a, "--engine", &b, "--games", "4"], "m"));
    let (r, games, summary) = read_run(&dir.join("m"));
    assert_eq!(r.plan.kind, runner::plan::run_plan::RunKind::Match);
    assert_eq!(games.len(), 4);
    let s: RunSummary = read_as("m/summary.json", &summary.to_string());
    assert_eq!((s.pairings.len(), s.pairings[0].games), (1, 4));
    assert!(s.runner_overhead.is_some() && s.warnings.is_some());

    let rr = ["match", "--engine", &a, "--engine", &b, "--engine", &c, "--games", "6"];
    run(with(&[&rr[..], &["--tournament", "round-robin"]].concat(), "rr"));
    let (r, _, summary) = read_run(&dir.join("rr"));
    assert_eq!(r.plan.kind, runner::plan::run_plan::RunKind::RoundRobin);
    let s: RunSummary = read_as("rr/summary.json", &summary.to_string());
    assert!(s.gauntlet.is_some(), "a tournament's tables are in its summary");

    for k in ["1", "2"] {
        let shard = format!("{k}/2");
        let head = ["match", "--engine", &a, "--engine", &b, "--games", "4", "--shard", &shard];
        run(with(&head, &format!("s{k}")));
    }
    runs(&dir, &["merge", "s1", "s2", "--out", "merged"]);
    let (r, games, summary) = read_run(&dir.join("merged"));
    assert!(r.merged.is_some() && r.merged_from.as_ref().is_some_and(|m| m.len() == 2));
    assert_eq!(games.len(), 4);
    let s: RunSummary = read_as("merged/summary.json", &summary.to_string());
    assert_eq!(s.merge.as_ref().map(|m| m.sources.len()), Some(2));
}

#[test]
fn a_sweep_writes_what_its_types_hold() {
    let dir = scratch("formats-sweep");
    let sweep =
        "sweep --param t_mid --values 0.8,1.0,1.2 --depth 2 --games 4 --maxmoves 20 --seed 5";
    let args: Vec<&str> = sweep.split(' ').chain(["--progress", "quiet", "--out", "sw"]).collect();
    runs(&dir, &args);
    let sw = dir.join("sw");
    let (r, _, summary) = read_run(&sw);
    assert_eq!(r.plan.kind, runner::plan::run_plan::RunKind::Sweep);
    let plan: SweepPlan = read_file(&sw, "sweep.json");
    assert_eq!((plan.params.len(), plan.points.len()), (1, 3));
    let s: SweepSummary = read_as("sw/summary.json", &summary.to_string());
    assert_eq!((s.kind.as_str(), s.points.len()), ("sweep", 3));
    assert!(s.best.is_some() && !s.run.stopped_by.is_empty());
    assert!(s.surface.is_some(), "three numeric points: a surface entry");
    assert_eq!(s.context.engine, plan.engine);
    // Each point's own summary.json is its row of the sweep's.
    for (point, row) in plan.points.iter().zip(&s.points) {
        let own: PointRow = read_file(&sw.join("points").join(point.dir_name()), "summary.json");
        assert_eq!(&own, row, "{}", point.label());
    }
}

#[test]
fn a_tune_writes_what_its_types_hold() {
    let dir = scratch("formats-tune");
    let tune = "tune --param t_mid,1,0.5,1.5,0.1,0.5 --depth 2 --games 4 --maxmoves 20 --seed 7";
    let args: Vec<&str> = tune.split(' ').chain(["--progress", "quiet", "--out", "tu"]).collect();
    runs(&dir, &args);
    let tu = dir.join("tu");
    let (r, games) = read_run_and_games(&tu);
    assert_eq!(r.plan.kind, runner::plan::run_plan::RunKind::Tune);
    assert!(!tu.join("summary.json").exists(), "a tuning run's result is tune.json");
    let t: TuneFile = read_file(&tu, "tune.json");
    assert_eq!((t.iterations, t.history.len(), t.games), (2, 2, games.len()));
    assert!(t.values.contains_key("t_mid"), "{:?}", t.values);
    let path = tu.join("tune.jsonl");
    let text = fs::read_to_string(&path).expect("tune.jsonl");
    let lines: Vec<TuneLogLine> = text
        .lines()
        .enumerate()
        .map(|(i, line)| read_as(&format!("{} line {}", path.display(), i + 1), line))
        .collect();
    assert!(matches!(lines.first(), Some(TuneLogLine::Plan(s)) if *s == t.spsa));
    assert_eq!(lines.iter().filter(|l| matches!(l, TuneLogLine::Start(_))).count(), 2);
}

#[test]
fn calibrate_and_searchtest_write_what_their_types_hold() {
    let dir = scratch("formats-tools");
    let positions = e2e::write_book(&dir, 4);
    let with = |cmd: &str, out: &str| -> Vec<String> {
        let words = cmd.split(' ').chain(["--out", out, "--positions", &positions]);
        words.map(String::from).collect()
    };
    let run = |v: Vec<String>| runs(&dir, &v.iter().map(String::as_str).collect::<Vec<_>>());
    run(with("calibrate --pairs 1:2", "cal"));
    let plan: CalibratePlanFile = read_file(&dir.join("cal"), "plan.json");
    assert_eq!(plan.positions, 4);
    let s: CalibrateSummary = read_file(&dir.join("cal"), "summary.json");
    assert!(!s.partial && s.searched == 4);

    run(with("searchtest --variant base:MPC=false --variant mpc:MPC=true --depth 2", "st"));
    let plan: SearchtestPlanFile = read_file(&dir.join("st"), "plan.json");
    assert_eq!(plan.variants.len(), 2);
    let s: SearchtestSummary = read_file(&dir.join("st"), "summary.json");
    assert_eq!((s.partial, s.variants.len()), (false, 2));
    assert!(s.oracle.is_none() && s.suite.is_none());

    // With an oracle (the bundled engine at depth 2) and EPD `bm`/`am`: oracle.json, and
    // summary.json's `oracle` and `suite`.
    fs::write(
        dir.join("suite.epd"),
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id \"s1\";\n\
         4k3/8/8/3q4/8/8/8/3RK3 b - - am Qd4 Qd3 Qd2+; id \"s2\";\n",
    )
    .expect("suite.epd");
    let oracle = format!("name=oracle,cmd={},depth=2", engine_bin().display());
    let args = "searchtest --variant a:MPC=false --variant b:MPC=true --depth 2 --positions \
                suite.epd --out so --oracle";
    let args: Vec<&str> = args.split_whitespace().chain([oracle.as_str()]).collect();
    runs(&dir, &args);
    let so = dir.join("so");
    let plan: SearchtestPlanFile = read_file(&so, "plan.json");
    assert!(plan.oracle.is_some());
    let o: OracleFile = read_file(&so, "oracle.json");
    assert_eq!(o.summary.variants.len(), 2);
    let s: SearchtestSummary = read_file(&so, "summary.json");
    assert_eq!(s.oracle.as_ref(), Some(&o));
    assert_eq!(s.suite.as_ref().map(Vec::len), Some(2));
}

/// A key written but missing from a type is caught by the round trip.
#[test]
fn a_key_the_type_does_not_hold_fails_the_check() {
    let text = r#"{"stopped_by":"complete","pairings":[],"new_key":1}"#;
    let caught = std::panic::catch_unwind(|| read_as::<RunSummary>("summary.json", text));
    let msg = caught.expect_err("an unknown key must fail");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("/new_key: in the file, not in the type"), "{msg}");
}
