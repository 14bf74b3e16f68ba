//! End-to-end: `runner stats` as a user runs it (the built runner binary, spawned).

use std::path::PathBuf;
use std::process::{Command, Output};

/// The runner binary: `RUNNER_BIN` if set, else the e2e crate's helper (which builds it once).
fn runner_bin() -> PathBuf {
    std::env::var_os("RUNNER_BIN").map(PathBuf::from).unwrap_or_else(e2e::runner_bin)
}

fn stats(args: &[&str]) -> Output {
    Command::new(runner_bin()).arg("stats").args(args).output().expect("spawn runner stats")
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = stats(&all);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("runner stats --json prints one JSON object")
}

/// The Crafty ProbCut paper: with at least 30 % draws, 38 of 64 points are significant at
/// p < 0.05 and 37 are not.
#[test]
fn crafty_paper_critical_score() {
    let v = json(&["--wdl", "30,16,18", "--draws-floor", "0.3"]);
    assert_eq!(v["games"], 64);
    assert_eq!(v["critical_score"], 38.0);
    assert!(v["p_value"].as_f64().unwrap() < 0.05, "{v}");
    let v = json(&["--wdl", "29,16,19", "--draws-floor", "0.3"]);
    assert!(v["p_value"].as_f64().unwrap() >= 0.05, "{v}");
    for k in ["score", "draw_ratio", "elo", "elo_ci", "nelo", "nelo_ci", "los", "p_value"] {
        assert!(!v[k].is_null(), "{k} missing in {v}");
    }
    assert!(v["sprt"].is_null());
}

/// A real fishtest run (6549951b136acbc573529528, SPRT nElo [0, 2]): its stored LLR is
/// -2.936953911013966.
#[test]
fn fishtest_llr_through_the_cli() {
    let v = json(&["--penta", "369,12695,27124,12664,332", "--sprt", "elo0=0,elo1=2"]);
    let s = &v["sprt"];
    assert!((s["llr"].as_f64().unwrap() - -2.936953911013966).abs() < 1e-9, "{s}");
    assert_eq!(s["verdict"], "continue");
    assert_eq!(s["model"], "normalized");
    assert_eq!((s["elo0"].as_f64(), s["elo1"].as_f64()), (Some(0.0), Some(2.0)));
    assert!((s["lower_bound"].as_f64().unwrap() + 19f64.ln()).abs() < 1e-12);
    assert!((s["upper_bound"].as_f64().unwrap() - 19f64.ln()).abs() < 1e-12);
    assert_eq!(v["pairs"], 53184);
}

#[test]
fn human_table_has_sprt_line_only_when_asked() {
    let plain = stats(&["--wdl", "120,200,95"]);
    assert!(plain.status.success());
    let text = String::from_utf8(plain.stdout).unwrap();
    assert!(text.contains("Elo") && text.contains("LOS") && !text.contains("SPRT"), "{text}");
    let with = stats(&["--wdl", "120,200,95", "--sprt", "elo0=0,elo1=5,model=logistic"]);
    let text = String::from_utf8(with.stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("SPRT") && l.contains("LLR")), "{text}");
}

#[test]
fn undefined_values_are_na_never_nan() {
    for counts in [&["--wdl", "0,0,0"][..], &["--wdl", "1,0,0"], &["--penta", "0,0,7,0,0"]] {
        let out = stats(counts);
        assert!(out.status.success(), "{counts:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("n/a") && !text.to_lowercase().contains("nan"), "{text}");
        let mut all = counts.to_vec();
        all.push("--json");
        let out = stats(&all);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(!text.to_lowercase().contains("nan") && !text.contains("inf"), "{text}");
    }
}

#[test]
fn bad_input_is_a_one_line_error() {
    for args in [
        &["--wdl", "-1,2,3"][..],
        &["--wdl", "1,2"],
        &["--wdl", "a,b,c"],
        &["--penta", "1,2,3,4,5,6"],
        &["--wdl", "1,2,3", "--sprt", "elo0=5,elo1=5"],
        &["--wdl", "1,2,3", "--sprt", "elo0=0,elo1=5,alpha=0"],
        &["--wdl", "1,2,3", "--sprt", "elo0=0,elo1=5,beta=1"],
        &["--wdl", "1,2,3", "--draws-floor", "1.0"],
        &["--wdl", "1,2,3", "--penta", "0,0,1,0,0"],
    ] {
        let out = stats(args);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?}: {:?}", out.status);
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or_default();
        assert!(first.starts_with("error:") && first.len() > 20, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed results");
    }
}
