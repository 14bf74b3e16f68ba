//! The games list (each game opens to its PGN), terminations by kind and by engine, and the
//! faults with their reasons.

use std::fmt::Write as _;

use super::digest::Digest;
use super::escape::{esc, table};
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
pub fn terminations_section(digest: &Digest) -> String {
    let (by_kind, by_engine) = (&digest.by_kind, &digest.by_engine);
    let mut s = String::from("<section id=\"terminations\"><h2>Terminations</h2>");
    if digest.games == 0 {
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
pub fn faults_section(files: &RunFiles, digest: &Digest) -> String {
    let mut s = String::from("<section id=\"faults\"><h2>Faults and restarts</h2>");
    if digest.fault_count == 0 {
        s.push_str("<p>No engine faulted: no restarts.</p>");
    } else {
        s.push_str(&format!(
            "<p>{} fault(s); each faulting engine lost the game and was restarted (a fresh process).</p>",
            digest.fault_count
        ));
        let rows: Vec<Vec<String>> = digest
            .faults
            .iter()
            .map(|f| vec![f.game.to_string(), esc(&f.label), esc(&f.engine), esc(&f.why)])
            .collect();
        s.push_str(&table("sortable", &["game", "pairing", "engine (restarted)", "reason"], &rows));
        if digest.fault_count > digest.faults.len() as u64 {
            let _ = write!(
                s,
                "<p class=\"note\">The first {} faults are listed.</p>",
                digest.faults.len()
            );
        }
    }
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
