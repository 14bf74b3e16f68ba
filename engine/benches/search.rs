//! Criterion benchmarks: fixed-depth search of a few bench positions, and perft.

use criterion::{Criterion, criterion_group, criterion_main};
use engine::bench::BENCH_FENS;
use engine::options::EngineOptions;
use engine::perft::{perft_picker, perft_plain};
use engine::search::search_fen_depth;

fn search(c: &mut Criterion) {
    let opts = EngineOptions::default();
    c.bench_function("search 8 positions depth 6", |b| {
        b.iter(|| {
            let mut n = 0;
            for fen in BENCH_FENS.iter().step_by(7) {
                n += search_fen_depth(&opts, fen, 6).map_or(0, |r| r.nodes);
            }
            n
        })
    });
}

fn perft(c: &mut Criterion) {
    let board = cozy_chess::Board::default();
    c.bench_function("perft 4 start (picker)", |b| b.iter(|| perft_picker(&board, 4)));
    c.bench_function("perft 4 start (plain)", |b| b.iter(|| perft_plain(&board, 4)));
}

criterion_group!(benches, search, perft);
criterion_main!(benches);
