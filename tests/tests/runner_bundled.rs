//! With no --engine the bundled engine plays itself.

use e2e::{engine_bin, read_games, run_games, run_runner, scratch};

#[test]
fn bundled_engine_self_play_at_fixed_depth() {
    assert!(engine_bin().is_file());
    let dir = scratch("bundled");
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    let games = run_games(
        &dir,
        &[
            "match",
            "--depth",
            "2",
            "--games",
            "2",
            "--maxmoves",
            "30",
            "--concurrency",
            "2",
            "--progress",
            "quiet",
            "--out",
            &out_s,
        ],
        &out,
    );
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!(g["white"], "engine");
        let t = g["termination"].as_str().unwrap();
        assert!(
            !["crash", "stall", "disconnect", "illegal-move", "time-forfeit"].contains(&t),
            "{g}"
        );
        // The engine reports scores and depths.
        assert!(g["depths"].as_array().unwrap().iter().any(|d| d.as_u64().is_some()), "{g}");
    }
}

#[test]
fn stockfish_against_the_bundled_engine_by_name() {
    e2e::debian_engine("stockfish");
    let dir = scratch("sfbundled");
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    let o = run_runner(
        &dir,
        &[
            "match",
            "--engine",
            "name=engine",
            "--engine",
            "name=stockfish",
            "--nodes",
            "500",
            "--games",
            "2",
            "--maxmoves",
            "40",
            "--progress",
            "quiet",
            "--out",
            &out_s,
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(read_games(&out).len(), 2);
}
