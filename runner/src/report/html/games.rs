//! The games list (each game opens to its PGN), terminations by kind and by engine, and the
//! faults with their reasons.

use maud::{Markup, html};

use super::digest::Digest;
use super::input::RunFiles;
use super::text::table;
use crate::play::game::GameResult;
use crate::store::GameRecord;

/// The engine that lost `r`, if it was decisive.
pub fn loser(r: &GameRecord) -> Option<&str> {
    match r.result {
        GameResult::WhiteWins => Some(&r.black),
        GameResult::BlackWins => Some(&r.white),
        GameResult::Draw => None,
    }
}

/// The PGN round tag of a record, as the store writes it ([`GameRecord::pgn_round`]: with
/// several pairings the pairing comes first).
pub fn round(files: &RunFiles, r: &GameRecord) -> String {
    let pairings = files.plan().map_or(1, |p| p.pairings.len());
    r.pgn_round(pairings)
}

/// Games listed at the most (the latest ones; the page of a long run stays a few MB).
pub const MAX_LISTED: usize = 5000;

/// The games list: one `<details>` per record, in games.jsonl order (the last [`MAX_LISTED`]).
pub fn list_section(files: &RunFiles) -> Markup {
    let n = files.records.len();
    let skip = n.saturating_sub(MAX_LISTED);
    html! {
        section #games {
            h2 { "Games (" (n) ")" }
            p.noprint {
                label for="filter" { "Filter games: " }
                input type="search" id="filter" placeholder="engine, result, termination…";
            }
            p.note { "Each game opens to its PGN; " code { "report.html#game-N" } " opens game N." }
            @if skip > 0 {
                p {
                    "The first " (skip) " games are not listed here (the page lists the last "
                    (MAX_LISTED) "): see " a href="games.pgn" { "games.pgn" } " and "
                    a href="games.jsonl" { "games.jsonl" } "."
                }
            }
            ol.games {
                @for (i, r) in files.records.iter().enumerate().skip(skip) { (game_item(files, i + 1, r)) }
            }
        }
    }
}

/// Game `k` (from 1) of the list: its line, opening to its PGN (or its moves, before games.pgn
/// has it).
fn game_item(files: &RunFiles, k: usize, r: &GameRecord) -> Markup {
    let round = round(files, r);
    let pgn = files.pgn.get(&(r.label.clone(), round.clone()));
    html! {
        li.game id={ "game-" (k) } {
            details {
                summary {
                    (k) ". " (r.white) " – " (r.black) ": " strong { (r.result.pgn()) } ", "
                    (r.termination.json_str()) ", " (r.plies) " plies, opening #" (r.opening) " "
                    span.dim { "(" (r.label) " round " (round) ")" }
                }
                @match pgn {
                    Some(text) => pre.pgn { (text) },
                    None => {
                        p { "Not in games.pgn yet. Start " code { (r.fen) } ", moves (UCI):" }
                        pre.pgn { (r.moves.join(" ")) }
                    }
                }
            }
        }
    }
}

/// Terminations by kind, and by engine (games that ended so, and how many of them it lost).
pub fn terminations_section(digest: &Digest) -> Markup {
    let (by_kind, by_engine) = (&digest.by_kind, &digest.by_engine);
    let kinds: Vec<&str> = by_kind.keys().copied().collect();
    let kind_rows: Vec<Vec<String>> = by_kind
        .iter()
        .map(|(k, (n, d))| vec![k.to_string(), n.to_string(), d.to_string()])
        .collect();
    let mut head = vec!["engine"];
    head.extend(&kinds);
    let engine_rows: Vec<Vec<String>> = by_engine
        .iter()
        .map(|(e, m)| {
            let mut row = vec![e.clone()];
            row.extend(kinds.iter().map(|k| match m.get(k) {
                Some((n, l)) => format!("{n} (lost {l})"),
                None => "0".into(),
            }));
            row
        })
        .collect();
    html! {
        section #terminations {
            h2 { "Terminations" }
            @if digest.games == 0 {
                p { "No games yet." }
            } @else {
                h3 { "By kind" }
                (table("sortable", &["termination", "games", "meaning"], &kind_rows))
                h3 { "By engine" }
                p.note { "Games of the engine that ended so (how many of them it lost)." }
                (table("sortable", &head, &engine_rows))
            }
        }
    }
}

/// Faults (time forfeits, illegal moves, crashes, stalls, disconnects: the faulting engine
/// loses and is restarted), the runner's warnings, and what could not be read.
pub fn faults_section(files: &RunFiles, digest: &Digest) -> Markup {
    let rows: Vec<Vec<String>> = digest
        .faults
        .iter()
        .map(|f| vec![f.game.to_string(), f.label.clone(), f.engine.clone(), f.why.clone()])
        .collect();
    let warnings: Vec<String> =
        files.run_summary().and_then(|s| s.warnings.clone()).unwrap_or_default();
    let more = (digest.skipped_count > digest.skipped.len() as u64).then(|| {
        format!(
            "{} more lines of games.jsonl skipped",
            digest.skipped_count - digest.skipped.len() as u64
        )
    });
    let notes: Vec<&String> = warnings
        .iter()
        .chain(&files.skipped)
        .chain(&digest.skipped)
        .chain(&more)
        .chain(&files.notes)
        .collect();
    html! {
        section #faults {
            h2 { "Faults and restarts" }
            @if digest.fault_count == 0 {
                p { "No engine faulted: no restarts." }
            } @else {
                p {
                    (digest.fault_count) " fault(s); each faulting engine lost the game and was \
                     restarted (a fresh process)."
                }
                (table("sortable", &["game", "pairing", "engine (restarted)", "reason"], &rows))
                @if digest.fault_count > digest.faults.len() as u64 {
                    p.note { "The first " (digest.faults.len()) " faults are listed." }
                }
            }
            @if !notes.is_empty() {
                h3 { "Warnings and unreadable input" }
                ul { @for n in &notes { li { (n) } } }
            }
        }
    }
}
