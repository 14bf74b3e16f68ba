//! The games list (each game opens to its PGN), terminations by kind and by engine, and the
//! faults with their reasons.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::escape::{esc, num, table};
use super::input::RunFiles;
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
pub fn list_section(files: &RunFiles) -> String {
    let n = files.records.len();
    let skip = n.saturating_sub(MAX_LISTED);
    let mut s = format!(
        "<section id=\"games\"><h2>Games ({n})</h2>\
         <p class=\"noprint\"><label for=\"filter\">Filter games: </label>\
         <input type=\"search\" id=\"filter\" placeholder=\"engine, result, termination…\"></p>\
         <p class=\"note\">Each game opens to its PGN; <code>report.html#game-N</code> opens game N.</p>"
    );
    if skip > 0 {
        let _ = write!(
            s,
            "<p>The first {skip} games are not listed here (the page lists the last {MAX_LISTED}): \
             see <a href=\"games.pgn\">games.pgn</a> and <a href=\"games.jsonl\">games.jsonl</a>.</p>"
        );
    }
    s.push_str("<ol class=\"games\">");
    for (i, r) in files.records.iter().enumerate().skip(skip) {
        let pgn = files.pgn.get(&(r.label.clone(), round(files, r)));
        let _ = write!(
            s,
            "<li class=\"game\" id=\"game-{}\"><details><summary>{}. {} – {}: <strong>{}</strong>, {}, {} plies, opening #{} <span class=\"dim\">({} round {})</span></summary>",
            i + 1,
            i + 1,
            esc(&r.white),
            esc(&r.black),
            r.result.pgn(),
            r.termination.json_str(),
            r.plies,
            r.opening,
            esc(&r.label),
            round(files, r)
        );
        match pgn {
            Some(text) => {
                let _ = write!(s, "<pre class=\"pgn\">{}</pre>", esc(text));
            }
            None => {
                let _ = write!(
                    s,
                    "<p>Not in games.pgn yet. Start <code>{}</code>, moves (UCI):</p><pre class=\"pgn\">{}</pre>",
                    esc(&r.fen),
                    esc(&r.moves.join(" "))
                );
            }
        }
        s.push_str("</details></li>");
    }
    s.push_str("</ol></section>");
    s
}

/// Terminations by kind, and by engine (games that ended so, and how many of them it lost).
pub fn terminations_section(files: &RunFiles) -> String {
    let mut by_kind: BTreeMap<&str, (u64, &str)> = BTreeMap::new();
    let mut by_engine: BTreeMap<&str, BTreeMap<&str, (u64, u64)>> = BTreeMap::new();
    for r in &files.records {
        let k = r.termination.json_str();
        by_kind.entry(k).or_insert((0, r.termination.describe())).0 += 1;
        for e in [r.white.as_str(), r.black.as_str()] {
            let c = by_engine.entry(e).or_default().entry(k).or_default();
            c.0 += 1;
            if loser(r) == Some(e) {
                c.1 += 1;
            }
        }
    }
    let mut s = String::from("<section id=\"terminations\"><h2>Terminations</h2>");
    if files.records.is_empty() {
        s.push_str("<p>No games yet.</p></section>");
        return s;
    }
    let rows: Vec<Vec<String>> =
        by_kind.iter().map(|(k, (n, d))| vec![esc(k), n.to_string(), esc(d)]).collect();
    s.push_str("<h3>By kind</h3>");
    s.push_str(&table("sortable", &["termination", "games", "meaning"], &rows));
    let kinds: Vec<&str> = by_kind.keys().copied().collect();
    let mut head = vec!["engine".to_string()];
    head.extend(kinds.iter().map(|k| esc(k)));
    let head_refs: Vec<&str> = head.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = by_engine
        .iter()
        .map(|(e, m)| {
            let mut row = vec![esc(e)];
            row.extend(kinds.iter().map(|k| match m.get(k) {
                Some((n, l)) => format!("{n} (lost {l})"),
                None => "0".into(),
            }));
            row
        })
        .collect();
    s.push_str("<h3>By engine</h3><p class=\"note\">Games of the engine that ended so (how many of them it lost).</p>");
    s.push_str(&table("sortable", &head_refs, &rows));
    s.push_str("</section>");
    s
}

/// Faults (time forfeits, illegal moves, crashes, stalls, disconnects: the faulting engine
/// loses and is restarted), the runner's warnings, and what could not be read.
pub fn faults_section(files: &RunFiles) -> String {
    let mut s = String::from("<section id=\"faults\"><h2>Faults and restarts</h2>");
    let faults: Vec<(usize, &GameRecord)> =
        files.records.iter().enumerate().filter(|(_, r)| r.termination.is_fault()).collect();
    if faults.is_empty() {
        s.push_str("<p>No engine faulted: no restarts.</p>");
    } else {
        s.push_str(&format!(
            "<p>{} fault(s); each faulting engine lost the game and was restarted (a fresh process).</p>",
            faults.len()
        ));
        let rows: Vec<Vec<String>> = faults
            .iter()
            .map(|(i, r)| {
                let mut why = r.termination.describe().to_string();
                if let Some(m) = &r.illegal_move {
                    why.push_str(&format!(": {m}"));
                }
                if let Some(f) = &r.forfeit {
                    why.push_str(&format!(
                        ": thought {} ms with {} ms on the clock (margin {} ms)",
                        num(Some(f.think_ms), 1),
                        num(Some(f.clock_ms), 1),
                        num(Some(f.margin_ms), 0)
                    ));
                }
                vec![(i + 1).to_string(), esc(&r.label), esc(loser(r).unwrap_or("?")), esc(&why)]
            })
            .collect();
        s.push_str(&table("sortable", &["game", "pairing", "engine (restarted)", "reason"], &rows));
    }
    let warnings: Vec<String> =
        files.run_summary().and_then(|s| s.warnings.clone()).unwrap_or_default();
    let notes: Vec<&String> = warnings.iter().chain(&files.skipped).chain(&files.notes).collect();
    if !notes.is_empty() {
        s.push_str("<h3>Warnings and unreadable input</h3><ul>");
        for n in notes {
            let _ = write!(s, "<li>{}</li>", esc(n));
        }
        s.push_str("</ul>");
    }
    s.push_str("</section>");
    s
}
