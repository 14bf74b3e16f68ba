//! How each pairing's LLR (with an SPRT) or Elo estimate (without) moved as its game pairs
//! completed, gathered from games.jsonl in file order ([`super::digest`]) with the `stats` crate's SPRT (the same
//! `stats::sprt` on the same pentanomial counts that summary.json's `sprt` block comes from).

use maud::{Markup, html};
use stats::{Counts, SprtSpec};

use super::charts::{Labels, Level, line_plot};
use super::digest::Digest;
use super::text::num;

/// Pairings beyond this many are not drawn (the table has them all).
const MAX_SERIES: usize = 12;

pub fn value(penta: &stats::Penta, sprt: Option<SprtSpec>) -> Option<f64> {
    match sprt {
        Some(spec) => stats::sprt(&Counts::Penta(*penta), &spec).ok().map(|r| r.llr),
        None => {
            let (points, games) = penta.to_wdl_score();
            (games > 0).then(|| stats::elo::logistic_elo_clamped(points / games as f64))
        }
    }
}

/// The section: the plot, or a line saying why there is none.
pub fn section(digest: &Digest) -> Markup {
    let sprt = digest.sprt();
    let series = digest.trace();
    let (title, what) = match sprt {
        Some(_) => ("LLR against games played", "LLR"),
        None => ("Elo estimate against games played", "Elo"),
    };
    let levels: Vec<Level> = match sprt {
        Some(spec) => vec![
            Level {
                label: format!("H1 accepted {}", num(Some(spec.upper_bound()), 2)),
                y: spec.upper_bound(),
            },
            Level {
                label: format!("H0 accepted {}", num(Some(spec.lower_bound()), 2)),
                y: spec.lower_bound(),
            },
        ],
        None => vec![Level { label: "0 Elo".into(), y: 0.0 }],
    };
    let note = match sprt {
        Some(_) => {
            "The LLR after each complete game pair (pentanomial counts); dashed lines: the SPRT bounds."
        }
        None => "Logistic Elo of the score after each complete game pair (clamped to about ±1200).",
    };
    html! {
        section #trace {
            h2 { (title) }
            @if series.is_empty() {
                p { "No game pair has completed yet." }
            } @else if series.len() > MAX_SERIES {
                p { (series.len()) " pairings: too many lines to draw; the table above has each one." }
            } @else {
                (line_plot(&Labels { title, x: "games played", y: what }, &series, &levels))
                p.note { (note) }
            }
        }
    }
}
