//! With --sprt a match plays until a decision, not until a leftover default number of games.

use e2e::{bad_spec, read_games, run_runner, scratch};

#[test]
fn sprt_stops_at_a_decision_well_before_the_cap() {
    let dir = scratch("sprt");
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    // The second engine plays an illegal move at once: the first wins every game.
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "illegal", Some(0)));
    let o = run_runner(
        &dir,
        &[
            "match",
            "--engine",
            &a,
            "--engine",
            &b,
            "--nodes",
            "1",
            "--concurrency",
            "2",
            "--sprt",
            "elo0=0,elo1=50,alpha=0.05,beta=0.05,model=logistic",
            // b plays an illegal move every game: keep playing so that the SPRT decides.
            "--fault-limit",
            "0",
            "--progress",
            "quiet",
            "--out",
            &out_s,
        ],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let games = read_games(&out);
    assert!(games.len() >= 2 && games.len() < 200, "{} games", games.len());
    assert_eq!(games.len() % 2, 0, "pairs are completed");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["stopped_by"], "sprt");
    assert_eq!(summary["pairings"][0]["stats"]["sprt"]["verdict"], "H1");
    assert!(stdout.contains("SPRT"), "{stdout}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["plan"]["pairs"], 50_000, "default cap is large");
}

#[test]
fn no_sprt_line_without_sprt() {
    let dir = scratch("nosprt");
    let out_s = dir.join("run").to_string_lossy().into_owned();
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "illegal", Some(0)));
    let o = run_runner(
        &dir,
        &[
            "match",
            "--engine",
            &a,
            "--engine",
            &b,
            "--nodes",
            "1",
            "--games",
            "3",
            "--progress",
            "quiet",
            "--out",
            &out_s,
        ],
    );
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!stdout.contains("SPRT") && !stdout.contains("nan"), "{stdout}");
    assert!(stdout.contains("4 games"), "3 games round up to 2 pairs: {stdout}");
}
