//! The verdict line, the score table, and Elo / nElo with intervals and the pentanomial bars of
//! each pairing (or sweep point), computed from games.jsonl with the `stats` crate, so a live
//! run's page is as fresh as its last game.

use stats::{SprtSpec, Summary, Verdict};

use maud::{Markup, html};

use super::charts::penta_bars;
use super::digest::Digest;
use super::input::{Kind, Liveness, RunFiles, SummaryFile};
use super::markdown;
use super::text::{num, signed, table};
use crate::report::figures::{format_p, prob_pct};
use crate::report::summary::PairingTally;
use crate::store::RunSummary;

/// Pairings drawn as cards with pentanomial bars; more are in the table only.
const MAX_CARDS: usize = 24;

/// One pairing's counts and statistics.
pub struct Row {
    pub label: String,
    pub tally: PairingTally,
    pub summary: Option<Summary>,
}

/// The rows of every pairing of the plan (or seen in the records).
pub fn rows(digest: &Digest) -> Vec<Row> {
    let sprt = digest.sprt();
    digest
        .labels
        .iter()
        .zip(&digest.tallies)
        .map(|(label, tally)| Row {
            label: label.clone(),
            tally: tally.clone(),
            summary: tally.summarize(sprt),
        })
        .collect()
}

/// "SPRT [0, 10] normalized: LLR -0.07 in [-2.94, 2.94]: continue", or the fixed-sample
/// result when there is no SPRT.
pub fn verdict_of(row: &Row, spec: Option<SprtSpec>) -> String {
    verdict_text(&row.label, row.summary.as_ref(), spec)
}

/// [`verdict_of`] from a pairing's label and statistics: the page's verdict line, and the same
/// text a server's live stream sends to keep that line current (`verdict_line`).
pub fn verdict_text(label: &str, summary: Option<&Summary>, spec: Option<SprtSpec>) -> String {
    let Some(s) = summary else {
        return format!("{label}: no complete game pair yet");
    };
    match (&s.sprt, spec) {
        (Some(r), _) => format!(
            "{}: SPRT [{}, {}] ({}) LLR {} in [{}, {}]: {}",
            label,
            r.elo0,
            r.elo1,
            r.model,
            num(Some(r.llr), 2),
            num(Some(r.lower_bound), 2),
            num(Some(r.upper_bound), 2),
            match r.verdict {
                Verdict::H1 => "H1 accepted (passed)",
                Verdict::H0 => "H0 accepted (failed)",
                Verdict::Continue => "continue (no decision yet)",
            }
        ),
        _ => format!(
            "{}: Elo {} [{}, {}], p = {} ({} at 5 %), LOS {} %",
            label,
            signed(s.elo, 1),
            signed(s.elo_ci.map(|c| c[0]), 1),
            signed(s.elo_ci.map(|c| c[1]), 1),
            format_p(s.p_value),
            if s.p_value.is_some_and(|p| p < 0.05) { "significant" } else { "not significant" },
            prob_pct(s.los)
        ),
    }
}

/// The verdict section: the run's state, then one line per pairing (or the sweep's best point,
/// the gauntlet's leader, the calibration's coverage). With `live_id` (a page a server sends
/// with its live stream), the first pairing's line is marked `data-live="ID.verdict_line"`, the
/// field of the stream that keeps it current. Whether the page reloads itself is said where
/// it does (report.html's own line, a server's banner), not here.
pub fn verdict_section(
    files: &RunFiles,
    rows: &[Row],
    live: &Liveness,
    live_id: Option<&str>,
) -> Markup {
    let state = match live {
        Liveness::Running(why) => format!("Running ({why})."),
        Liveness::Ended(how) => format!("Ended: {how}."),
    };
    let verdict_rows = matches!(files.kind, Kind::Sweep if files.sprt().is_some())
        || !matches!(files.kind, Kind::Sweep | Kind::Calibrate | Kind::Searchtest);
    let mut lines: Vec<String> = Vec::new();
    let sum = files.summary.as_ref();
    match files.kind {
        Kind::Sweep => {
            let best = match sum {
                Some(SummaryFile::Sweep(s)) => s.best.as_ref(),
                _ => None,
            };
            lines.push(match best {
                Some(b) => format!(
                    "Best point: {} (score {} %, Elo {}); probability it is the best: {} %",
                    b.label,
                    num(Some(b.score * 100.0), 1),
                    signed(b.elo, 1),
                    num(b.p_best.map(|x| x * 100.0), 1)
                ),
                None => "Best point: n/a (summary.json has none yet)".into(),
            });
            if files.sprt().is_some() {
                lines.extend(rows.iter().map(|r| verdict_of(r, files.sprt())));
            }
        }
        Kind::Calibrate | Kind::Searchtest => {
            let partial = sum.and_then(SummaryFile::partial);
            lines.push(match partial {
                Some(true) => "Partial run: not every position was searched.".into(),
                Some(false) => "Every position was searched.".into(),
                None => "n/a: no summary.json yet".into(),
            });
        }
        _ => {
            lines.extend(rows.iter().map(|r| verdict_of(r, files.sprt())));
            if files.kind == Kind::Gauntlet
                && let Some(top) = gauntlet_leader(files.run_summary())
            {
                lines.push(top);
            }
        }
    }
    // Pairs whose engines played the same moves (`report::same_moves`): said under the verdict.
    lines.extend(
        rows.iter()
            .filter_map(|r| Some(format!("{}: warning: {}", r.label, r.tally.same_moves_note()?))),
    );
    // The first pairing's line: after a sweep's best point, else first.
    let lead = (verdict_rows && !rows.is_empty()).then_some(usize::from(files.kind == Kind::Sweep));
    let live_of =
        |i: usize| live_id.filter(|_| lead == Some(i)).map(|id| format!("{id}.verdict_line"));
    html! {
        section #verdict {
            h2 { "Verdict" }
            p.state { (state) }
            ul.verdict { @for (i, l) in lines.iter().enumerate() { li data-live=[live_of(i)] { (l) } } }
        }
    }
}

fn gauntlet_leader(sum: Option<&RunSummary>) -> Option<String> {
    let g = sum?.gauntlet.as_ref()?;
    let mut out = Vec::new();
    for block in &g.ratings {
        let list = &block.ratings.ratings;
        let elo = |r: &stats::bradley_terry::Rating| r.elo.unwrap_or(f64::MIN);
        let best = list.iter().max_by(|a, b| elo(a).total_cmp(&elo(b)))?;
        let name = g.engines.get(best.engine).map_or("?", String::as_str);
        out.push(format!(
            "Highest rated at {}: {name} ({} Elo +/- {})",
            block.tc,
            num(best.elo, 1),
            num(best.err95, 1)
        ));
    }
    (!out.is_empty()).then(|| out.join("; "))
}

/// The score table: table.md as the runner wrote it, else one built from the games.
pub fn table_section(files: &RunFiles, rows: &[Row]) -> Markup {
    let heading = match files.kind {
        Kind::Calibrate | Kind::Searchtest => "Tables",
        _ => "Score table",
    };
    html! {
        section #table {
            h2 { (heading) }
            @if let Some(md) = &files.table_md {
                p.note { "From table.md." }
                (markdown::to_html(md))
            } @else if !rows.is_empty() {
                p.note { "From games.jsonl (no table.md: " code { "runner report DIR" } " writes one)." }
                (own_table(rows))
            } @else {
                p { "n/a: no table.md and no games." }
            }
        }
    }
}

fn own_table(rows: &[Row]) -> Markup {
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let w = &r.tally.wdl_all;
            let s = r.summary.as_ref();
            let p = r.tally.penta;
            vec![
                r.label.clone(),
                w.games().to_string(),
                format!("{}-{}-{}", w.wins, w.draws, w.losses),
                format!("{}-{}-{}-{}-{}", p.ll, p.ld, p.dd, p.wd, p.ww),
                num(s.and_then(|s| s.score).map(|x| x * 100.0), 1),
                interval(s.and_then(|s| s.elo), s.and_then(|s| s.elo_ci)),
                interval(s.and_then(|s| s.nelo), s.and_then(|s| s.nelo_ci)),
                prob_pct(s.and_then(|s| s.los)),
                s.and_then(|s| s.sprt.as_ref())
                    .map_or("-".into(), |r| format!("{} ({})", num(Some(r.llr), 2), r.verdict)),
            ]
        })
        .collect();
    let head = [
        "pairing",
        "games",
        "W-D-L",
        "penta LL-LD-DD-WD-WW",
        "score %",
        "Elo [95%]",
        "nElo [95%]",
        "LOS %",
        "LLR",
    ];
    table("sortable", &head, &body)
}

/// "+12.3 [-4.0, +28.1]" or "n/a".
pub fn interval(v: Option<f64>, ci: Option<[f64; 2]>) -> String {
    match ci {
        Some([lo, hi]) => {
            format!("{} [{}, {}]", signed(v, 1), signed(Some(lo), 1), signed(Some(hi), 1))
        }
        None => format!("{} [n/a]", signed(v, 1)),
    }
}

/// Elo, nElo and the pentanomial bars, one card per pairing.
pub fn elo_section(rows: &[Row]) -> Markup {
    html! {
        section #elo {
            h2 { "Elo and pentanomial" }
            @if rows.len() > MAX_CARDS {
                p { (rows.len()) " pairings: the table above has each one." }
            } @else {
                div.cards { @for r in rows { (card(r)) } }
                p.note {
                    "Game pairs (the same opening, colours swapped) from the first engine's side: \
                     LL lost both … WW won both; DD includes one win and one loss."
                }
            }
        }
    }
}

/// One pairing's card: its Elo, nElo, pairs and LOS, and its pentanomial bars.
fn card(r: &Row) -> Markup {
    let sm = r.summary.as_ref();
    let p = r.tally.penta;
    html! {
        figure.card {
            figcaption {
                strong { (r.label) } br;
                "Elo " (interval(sm.and_then(|s| s.elo), sm.and_then(|s| s.elo_ci))) br;
                "nElo " (interval(sm.and_then(|s| s.nelo), sm.and_then(|s| s.nelo_ci))) br;
                (p.pairs()) " pairs, LOS " (prob_pct(sm.and_then(|s| s.los))) " %"
            }
            (penta_bars(&format!("pentanomial of {}", r.label), p.ascending()))
        }
    }
}
