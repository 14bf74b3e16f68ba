//! How each pairing's LLR (with an SPRT) or Elo estimate (without) moved as its game pairs
//! completed, replayed from games.jsonl in file order with the `stats` crate's SPRT (the same
//! `stats::sprt` on the same pentanomial counts that summary.json's `sprt` block comes from).

use stats::{Counts, SprtSpec};

use super::escape::num;
use super::svg::{Level, Series, line_plot};
use crate::report::summary::PairingTally;
use crate::store::GameRecord;

/// At most this many points per line (every k-th completed pair, and the last).
const MAX_POINTS: u64 = 400;
/// Pairings beyond this many are not drawn (the table has them all).
const MAX_SERIES: usize = 12;

/// The traced value of each pairing: `(games played, value)` after each completed pair.
pub fn trace(labels: &[String], records: &[GameRecord], sprt: Option<SprtSpec>) -> Vec<Series> {
    let mut total_pairs = vec![0u64; labels.len()];
    for r in records {
        if r.game == 1
            && let Some(n) = total_pairs.get_mut(r.pairing)
        {
            *n += 1;
        }
    }
    let mut tallies = vec![PairingTally::default(); labels.len()];
    let mut series: Vec<Series> =
        labels.iter().map(|l| Series { label: l.clone(), points: Vec::new() }).collect();
    for r in records {
        let Some(t) = tallies.get_mut(r.pairing) else { continue };
        let before = t.penta.pairs();
        t.add(r);
        let pairs = t.penta.pairs();
        let every = total_pairs[r.pairing].div_ceil(MAX_POINTS).max(1);
        if pairs == before || (pairs % every != 0 && pairs < total_pairs[r.pairing]) {
            continue;
        }
        if let Some(v) = value(&t.penta, sprt) {
            series[r.pairing].points.push((t.wdl_all.games() as f64, v));
        }
    }
    series.retain(|s| !s.points.is_empty());
    series
}

fn value(penta: &stats::Penta, sprt: Option<SprtSpec>) -> Option<f64> {
    match sprt {
        Some(spec) => stats::sprt(&Counts::Penta(*penta), &spec).ok().map(|r| r.llr),
        None => {
            let (points, games) = penta.to_wdl_score();
            (games > 0).then(|| stats::elo::logistic_elo_clamped(points / games as f64))
        }
    }
}

/// The section: the plot, or a line saying why there is none.
pub fn section(labels: &[String], records: &[GameRecord], sprt: Option<SprtSpec>) -> String {
    let series = trace(labels, records, sprt);
    let (title, what) = match sprt {
        Some(_) => ("LLR against games played", "LLR"),
        None => ("Elo estimate against games played", "Elo"),
    };
    let mut s = format!("<section id=\"trace\"><h2>{title}</h2>");
    if series.is_empty() {
        s.push_str("<p>No game pair has completed yet.</p></section>");
        return s;
    }
    if series.len() > MAX_SERIES {
        s.push_str(&format!(
            "<p>{} pairings: too many lines to draw; the table above has each one.</p></section>",
            series.len()
        ));
        return s;
    }
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
    s.push_str(&line_plot(title, "games played", what, &series, &levels));
    let note = match sprt {
        Some(_) => {
            "The LLR after each complete game pair (pentanomial counts); dashed lines: the SPRT bounds."
        }
        None => "Logistic Elo of the score after each complete game pair (clamped to about ±1200).",
    };
    s.push_str(&format!("<p class=\"note\">{note}</p></section>"));
    s
}
