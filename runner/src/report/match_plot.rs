//! plot.svg of a match: the first engine's score after each complete game pair, with its 95 %
//! band (from the pair scores so far) and the 50 % line. A match has one pairing, so a chart of
//! "points" would hold a single dot; the running score shows how the estimate settled.

use plotters::prelude::*;

use stats::{GameScore, Penta, ScoreMoments};

use super::figures::MIN_PAIRS;
use crate::store::GameRecord;

const WIDTH: u32 = 960;
const HEIGHT: u32 = 600;
const Z95: f64 = 1.959_963_984_540_054;

/// `(pairs, score %, lo %, hi %)` after each pair of pairing `pairing` completes, in store order.
pub fn running_score(records: &[GameRecord], pairing: usize) -> Vec<(u64, f64, f64, f64)> {
    let mut open: std::collections::HashMap<usize, (u8, GameScore)> = Default::default();
    let mut penta = Penta::default();
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.pairing == pairing) {
        let s = r.first_score();
        match open.remove(&r.pair) {
            Some((g, other)) => {
                let (g0, g1) = if g == 0 { (other, s) } else { (s, other) };
                penta.add_pair(g0, g1);
                if let Some(m) = ScoreMoments::from_penta(&penta) {
                    let lo = (m.score - Z95 * m.std_error).max(0.0);
                    let hi = (m.score + Z95 * m.std_error).min(1.0);
                    out.push((penta.pairs(), 100.0 * m.score, 100.0 * lo, 100.0 * hi));
                }
            }
            None => {
                open.insert(r.pair, (r.game, s));
            }
        }
    }
    out
}

/// A plotting failure (plotters' own errors are not `Send`/`Sync`, so they are kept as text).
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the plot: {0}")]
pub struct PlotError(pub String);

/// A plotters error as a [`PlotError`].
pub fn perr<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError(format!("{e:?}"))
}

/// The running-score chart as an SVG document.
pub fn svg(records: &[GameRecord], pairing: usize, title: &str) -> Result<String, PlotError> {
    let run = running_score(records, pairing);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(perr)?;
        let (area, foot) = root.split_vertically(HEIGHT - 40);
        let font = || ("sans-serif", 13).into_font().color(&BLACK);
        let games = records.iter().filter(|r| r.pairing == pairing).count();
        let first = match run.last() {
            None => format!("{games} game(s), no complete game pair yet."),
            Some(&(n, s, lo, hi)) => format!(
                "After {n} complete pairs ({games} games): score {s:.1} % [{lo:.1}, {hi:.1}]{}",
                if n < MIN_PAIRS {
                    format!(" (< {MIN_PAIRS} pairs: not yet meaningful)")
                } else {
                    String::new()
                }
            ),
        };
        foot.draw(&Text::new(first, (10, 6), font())).map_err(perr)?;
        let key = "Blue line: the first engine's score after each complete game pair; shaded: its \
                   95 % interval; grey: 50 %.";
        foot.draw(&Text::new(key, (10, 22), font())).map_err(perr)?;
        let n = run.last().map_or(1, |r| r.0).max(1);
        let (ymin, ymax) =
            run.iter().fold((40.0f64, 60.0f64), |(l, h), r| (l.min(r.2), h.max(r.3)));
        let (ymin, ymax) = (((ymin - 2.0) / 5.0).floor() * 5.0, ((ymax + 2.0) / 5.0).ceil() * 5.0);
        let (ymin, ymax) = (ymin.max(0.0), ymax.min(100.0));
        let mut chart = ChartBuilder::on(&area)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(55)
            .build_cartesian_2d(0f64..n as f64 + 0.5, ymin..ymax)
            .map_err(perr)?;
        let fx = |x: &f64| format!("{x:.0}");
        let fy = |y: &f64| format!("{y:.0}");
        chart
            .configure_mesh()
            .x_desc("complete game pairs")
            .y_desc("score % (95% band)")
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .draw()
            .map_err(perr)?;
        let band: Vec<(f64, f64)> = run
            .iter()
            .map(|r| (r.0 as f64, r.3))
            .chain(run.iter().rev().map(|r| (r.0 as f64, r.2)))
            .collect();
        if band.len() >= 2 {
            chart.draw_series([Polygon::new(band, BLUE.mix(0.15).filled())]).map_err(perr)?;
        }
        chart
            .draw_series(LineSeries::new(
                [(0.0, 50.0), (n as f64 + 0.5, 50.0)],
                BLACK.mix(0.5).stroke_width(1),
            ))
            .map_err(perr)?;
        chart
            .draw_series(LineSeries::new(
                run.iter().map(|r| (r.0 as f64, r.1)),
                BLUE.stroke_width(2),
            ))
            .map_err(perr)?;
        root.present().map_err(perr)?;
    }
    Ok(out)
}
