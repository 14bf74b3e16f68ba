//! The PGN the runner writes is read back by pgn-reader and replays legally from its FEN; EPD
//! move counters survive; openings are played as pairs with colours reversed.

use std::ops::ControlFlow;

use e2e::{bad_spec, run_games, scratch};
use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

#[derive(Default, Debug)]
struct Game {
    fen: Option<String>,
    plycount: Option<usize>,
    result: String,
    termination: Option<String>,
    sans: Vec<String>,
}

struct Collect;

impl Visitor for Collect {
    type Tags = Game;
    type Movetext = Game;
    type Output = Game;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Game::default())
    }
    fn tag(&mut self, g: &mut Game, name: &[u8], value: RawTag<'_>) -> ControlFlow<Self::Output> {
        let v = String::from_utf8_lossy(value.as_bytes()).into_owned();
        match name {
            b"FEN" => g.fen = Some(v),
            b"PlyCount" => g.plycount = v.parse().ok(),
            b"Result" => g.result = v,
            b"Termination" => g.termination = Some(v),
            _ => {}
        }
        ControlFlow::Continue(())
    }
    fn begin_movetext(&mut self, g: Game) -> ControlFlow<Self::Output, Self::Movetext> {
        ControlFlow::Continue(g)
    }
    fn san(&mut self, g: &mut Game, san: SanPlus) -> ControlFlow<Self::Output> {
        g.sans.push(san.to_string());
        ControlFlow::Continue(())
    }
    fn begin_variation(&mut self, _: &mut Game) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }
    fn end_game(&mut self, g: Game) -> Game {
        g
    }
}

#[test]
fn pgn_replays_legally_and_keeps_epd_counters() {
    let dir = scratch("pgn");
    // Two EPD openings with move counters (one with Black to move and an en passant square).
    std::fs::write(
        dir.join("book.epd"),
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3\n\
         rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3\n",
    )
    .unwrap();
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    let (a, b) = (bad_spec("a", "mate", None), bad_spec("b", "good", None));
    let records = run_games(
        &dir,
        &[
            "match",
            "--engine",
            &a,
            "--engine",
            &b,
            "--book",
            "book.epd",
            "--book-order",
            "sequential",
            "--nodes",
            "10",
            "--games",
            "4",
            "--maxmoves",
            "60",
            "--progress",
            "quiet",
            "--out",
            &out_s,
        ],
        &out,
    );
    assert_eq!(records.len(), 4);
    for pair in 0..2u64 {
        let g: Vec<_> = records.iter().filter(|r| r["pair"] == pair).collect();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0]["fen"], g[1]["fen"], "a pair shares its opening");
        assert_eq!(g[0]["white"], g[1]["black"], "colours reversed");
    }
    assert!(records.iter().any(|r| r["fen"].as_str().unwrap().ends_with(" b KQkq e3 0 3")));

    let text = std::fs::read(out.join("games.pgn")).unwrap();
    let mut reader = Reader::new(&text[..]);
    let mut n = 0;
    while let Some(game) = reader.read_game(&mut Collect).unwrap() {
        n += 1;
        let fen = game.fen.clone().expect("book positions are not the start position");
        assert!(fen.ends_with(" 2 3") || fen.ends_with(" 0 3"), "counters kept: {fen}");
        let mut pos: Chess =
            fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        for san in &game.sans {
            let m = san.parse::<shakmaty::san::SanPlus>().unwrap().san.to_move(&pos).unwrap();
            pos.play_unchecked(m);
        }
        assert_eq!(game.plycount, Some(game.sans.len()));
        assert!(game.termination.is_some());
        if game.result != "1/2-1/2" && game.termination.as_deref() == Some("normal") {
            assert!(pos.is_checkmate(), "decisive normal ending is mate: {game:?}");
        }
    }
    assert_eq!(n, 4);
}
