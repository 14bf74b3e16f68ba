//! The bundled engine plays a short match against each of Debian's engines (engines no one
//! here wrote): every game ends by the rules or by adjudication, never by a fault, and the
//! PGN holds both games. Stockfish plays in other tests too (sweeps, Chess960, gauntlets).

use e2e::{
    DEBIAN_ENGINES, debian_engine, engine_bin, ok, read_games, read_text, run_runner, scratch,
};

/// Endings without a fault (no crash, stall, illegal move, garbage or time forfeit).
const BY_RULES: [&str; 8] = [
    "checkmate",
    "stalemate",
    "threefold",
    "fifty-move",
    "insufficient-material",
    "adjudication-draw",
    "adjudication-resign",
    "max-moves",
];

#[test]
fn the_bundled_engine_plays_each_debian_engine() {
    for name in DEBIAN_ENGINES {
        let cmd = debian_engine(name);
        let dir = scratch(&format!("debian-{name}"));
        let out = dir.join("run");
        let ours = format!("name=engine,cmd={}", engine_bin().display());
        let theirs = format!("name={name},cmd={cmd}");
        let book = concat!(env!("CARGO_MANIFEST_DIR"), "/../openings/default.epd");
        let o = run_runner(
            &dir,
            &[
                "match",
                "--engine",
                &ours,
                "--engine",
                &theirs,
                "--depth",
                "3",
                "--games",
                "2",
                "--maxmoves",
                "30",
                "--seed",
                "1",
                "--concurrency",
                "1",
                "--progress",
                "quiet",
                "--book",
                book,
                "--out",
                out.to_str().unwrap(),
            ],
        );
        ok(o, name);
        let games = read_games(&out);
        assert_eq!(games.len(), 2, "{name}");
        for g in &games {
            let t = g["termination"].as_str().unwrap_or_default().to_string();
            assert!(BY_RULES.contains(&t.as_str()), "{name}: {t} in {g}");
            assert!(g["moves"].as_array().is_some_and(|m| !m.is_empty()), "{name}: {g}");
        }
        let pgn = read_text(&out.join("games.pgn"));
        assert_eq!(pgn.matches("[Event ").count(), 2, "{name}: {pgn}");
        assert!(pgn.contains(&format!("\"{name}\"")), "{name}: {pgn}");
    }
}
