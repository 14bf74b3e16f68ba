//! The repository's Syzygy tables (tests/data/syzygy) read by shakmaty-syzygy, the runner's
//! prober, and by python-chess's own (`chess.syzygy`), an independent implementation: on 3000
//! seeded random legal positions of every 3- and 4-piece material, WDL and DTZ agree.

use std::path::Path;

use e2e::python::python_chess;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use runner::play::tablebase::{materials, random_position};
use shakmaty::fen::Fen;
use shakmaty::{Chess, EnPassantMode};
use shakmaty_syzygy::Tablebase;

const PROBE: &str = r#"
import sys
import chess, chess.syzygy
tb = chess.syzygy.open_tablebase(sys.argv[1])
for fen in sys.stdin.read().split("\n"):
    if fen:
        b = chess.Board(fen)
        print(tb.probe_wdl(b), tb.probe_dtz(b))
"#;

#[test]
fn shakmaty_syzygy_and_python_chess_read_the_same_values() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/syzygy");
    let mut tb = Tablebase::<Chess>::new();
    let added = tb.add_directory(&dir).expect("tests/data/syzygy");
    assert_eq!(added, 2 * 35, "35 WDL and 35 DTZ tables of 3 and 4 pieces");
    let mut rng = ChaCha8Rng::seed_from_u64(20261129);
    let all = materials(4);
    let mut fens = Vec::new();
    let mut ours = Vec::new();
    for i in 0..3000 {
        let (w, b) = &all[i % all.len()];
        let pos = random_position(w, b, &mut rng).expect("a legal position");
        let wdl = tb.probe_wdl_after_zeroing(&pos).expect("WDL probe");
        let dtz = tb.probe_dtz(&pos).expect("DTZ probe").ignore_rounding();
        fens.push(Fen::from_position(&pos, EnPassantMode::Legal).to_string());
        ours.push(format!("{} {}", wdl.signum() * wdl_magnitude(wdl), dtz.0));
    }
    let input = fens.join("\n");
    let dir_arg = dir.display().to_string();
    let theirs = python_chess("python-chess probing the tables", PROBE, &[&dir_arg], Some(&input));
    let theirs: Vec<&str> = theirs.lines().collect();
    assert_eq!(theirs.len(), ours.len());
    let mut decisive = 0;
    for ((fen, a), b) in fens.iter().zip(&ours).zip(&theirs) {
        assert_eq!(a, b, "{fen}: shakmaty-syzygy (WDL DTZ) against python-chess");
        decisive += usize::from(!a.starts_with("0 "));
    }
    // Not a set of draws only: most random positions of these materials are won or lost.
    assert!(decisive > 1000, "{decisive} decisive positions of 3000");
}

/// Syzygy's WDL as python-chess prints it: -2, -1, 0, 1, 2.
fn wdl_magnitude(w: shakmaty_syzygy::Wdl) -> i32 {
    use shakmaty_syzygy::Wdl::*;
    match w {
        Loss | Win => 2,
        BlessedLoss | CursedWin => 1,
        Draw => 0,
    }
}
