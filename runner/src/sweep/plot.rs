//! plot.svg: score against the swept value with 95 % bars and the 50 % baseline line (one
//! parameter, or more than two parameters along the list of points), or a heatmap of the score
//! (two parameters, a grid). The line naming the best point is written under the chart.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use stats::ScoreMoments;

use super::analysis::{PointRow, SweepAnalysis};
use super::surface::{self, Interval, Loc};
use super::values::numeric;
use crate::report::figures::{MIN_PAIRS, prob_pct, too_few};
pub use crate::report::match_plot::PlotError;
use crate::report::match_plot::perr;

const WIDTH: u32 = 960;
const HEIGHT: u32 = 600;
/// z for a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;
/// The fitted curve and the optimum's interval.
const ORANGE: RGBColor = RGBColor(230, 120, 0);

/// Score in % with its 95 % interval (from the pair scores), if the point has games. The two
/// ends are equal when every pair scored the same (no interval).
fn score_bar(r: &PointRow) -> Option<(f64, f64, f64)> {
    let m = ScoreMoments::from_penta(&r.summary.penta?)?;
    let lo = (m.score - Z95 * m.std_error).max(0.0);
    let hi = (m.score + Z95 * m.std_error).min(1.0);
    Some((100.0 * m.score, 100.0 * lo, 100.0 * hi))
}

/// The line under the chart: the best point and its probability of being best.
fn footer(a: &SweepAnalysis) -> String {
    let played = a.rows.iter().filter(|r| r.summary.pairs.unwrap_or(0) > 0).count();
    match &a.best {
        None => "No finished game pairs yet.".into(),
        Some(b) if played < 2 => format!("Only {} has finished game pairs.", b.label),
        Some(b) => {
            let what = format!(
                "{} (score {:.1} %{})",
                b.label,
                100.0 * b.score,
                b.elo.map(|e| format!(", Elo {e:+.1}")).unwrap_or_default()
            );
            match b.p_best {
                Some(p) => format!(
                    "Best: {what}; P(best) = {} % among {played} points (normal approximation, \
                     points independent).",
                    prob_pct(Some(p))
                ),
                None => format!(
                    "Leader so far: {what}; a point has fewer than {MIN_PAIRS} complete pairs: \
                     not yet meaningful."
                ),
            }
        }
    }
}

/// Draws the plot as an SVG document.
pub fn svg(a: &SweepAnalysis, title: &str) -> Result<String, PlotError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(perr)?;
        let (chart_area, foot) = root.split_vertically(HEIGHT - 56);
        let font = || ("sans-serif", 13).into_font().color(&BLACK);
        foot.draw(&Text::new(footer(a), (10, 6), font())).map_err(perr)?;
        let key = if a.params.len() == 2 {
            "Cells: score % vs the baseline (games); green above 50 %, red below; the best point \
             is outlined; orange cross and box: fitted optimum and its 95 % interval."
        } else {
            "Dots: score % with 95 % bar and games; red: best; pale: fewer than 10 pairs; open \
             circle: no interval yet (every pair scored the same); grey: baseline 50%; orange: fit."
        };
        foot.draw(&Text::new(key, (10, 22), font())).map_err(perr)?;
        if let Some(sf) = &a.surface {
            foot.draw(&Text::new(surface::plot_line(sf), (10, 38), font())).map_err(perr)?;
        }
        if a.params.len() == 2 {
            heatmap(&chart_area, a, title)?;
        } else {
            line_chart(&chart_area, a, title)?;
        }
        root.present().map_err(perr)?;
    }
    Ok(out)
}

/// The line chart in chart units: each point's x and score bar, the fitted curve, and the
/// ranges that hold them.
struct LineData {
    xs: Vec<f64>,
    /// The x axis is by position (labels are the points' values), not numeric.
    categorical: bool,
    xmin: f64,
    xmax: f64,
    /// Room left and right of the outer points.
    pad: f64,
    bars: Vec<Option<(f64, f64, f64)>>,
    curve: Vec<(f64, f64)>,
    ymin: f64,
    ymax: f64,
}

/// The chart whose x axis is `X` (numeric or by position) and whose y axis is the score %.
type LineChart<'a, DB, X> =
    ChartContext<'a, DB, Cartesian2d<X, plotters::coord::types::RangedCoordf64>>;

fn line_data(a: &SweepAnalysis) -> LineData {
    let n = a.rows.len();
    // A numeric axis when the single parameter's values are all numbers; else by position.
    let xs: Vec<f64> = match (
        a.params.len(),
        a.rows.iter().map(|r| numeric(&r.assignments[0].1)).collect::<Option<Vec<f64>>>(),
    ) {
        (1, Some(v)) if n > 0 => v,
        _ => (0..n).map(|i| i as f64).collect(),
    };
    let categorical =
        !(a.params.len() == 1 && a.rows.iter().all(|r| numeric(&r.assignments[0].1).is_some()));
    let (xmin, xmax) =
        xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
    let (xmin, xmax) = if xmin.is_finite() { (xmin, xmax) } else { (0.0, 1.0) };
    let pad = ((xmax - xmin) * 0.08)
        .max(0.5 * if categorical { 1.0 } else { (xmax - xmin).max(0.1) / 4.0 });
    let bars: Vec<Option<(f64, f64, f64)>> = a.rows.iter().map(score_bar).collect();
    let (ymin, ymax) =
        bars.iter().flatten().fold((40.0f64, 60.0f64), |(l, h), b| (l.min(b.1), h.max(b.2)));
    // Room above the highest bar for its games label.
    // The fitted curve (one numeric parameter), in score %, over the swept range.
    let curve: Vec<(f64, f64)> = match &a.surface {
        Some(sf) if !categorical && a.params.len() == 1 && sf.coefficients.is_some() => (0..=200)
            .filter_map(|i| {
                let x = xmin + (xmax - xmin) * f64::from(i) / 200.0;
                sf.predict(&[x]).map(|e| (x, 100.0 * stats::logistic_score(e)))
            })
            .collect(),
        _ => Vec::new(),
    };
    let (ymin, ymax) = curve.iter().fold((ymin, ymax), |(l, h), c| (l.min(c.1), h.max(c.1)));
    let (ymin, ymax) = ((ymin - 2.0).max(0.0), (ymax + 5.0).min(100.0));
    LineData { xs, categorical, xmin, xmax, pad, bars, curve, ymin, ymax }
}

/// Each point's label: its value, or its values joined by `/` when there are several
/// parameters.
fn point_labels(a: &SweepAnalysis) -> Vec<String> {
    a.rows
        .iter()
        .map(|r| {
            if a.params.len() == 1 {
                r.assignments[0].1.clone()
            } else {
                r.assignments.iter().map(|x| x.1.as_str()).collect::<Vec<_>>().join("/")
            }
        })
        .collect()
}

fn line_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    a: &SweepAnalysis,
    title: &str,
) -> Result<(), PlotError> {
    let d = line_data(a);
    let labels = point_labels(a);
    let x_desc = if a.params.len() == 1 { a.params[0].clone() } else { a.params.join(" / ") };
    // Tick labels only at the swept values, all with the same number of decimals (the partial
    // axis over the whole range only lends the key points a default label format).
    let x_range = (d.xmin - d.pad)..(d.xmax + d.pad);
    let x_axis = x_range.clone().with_key_points(d.xs.clone()).partial_axis(x_range);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d(x_axis, d.ymin..d.ymax)
        .map_err(perr)?;
    let decimals =
        labels.iter().map(|l| l.split_once('.').map_or(0, |(_, f)| f.len())).max().unwrap_or(0);
    let fmt_x = |x: &f64| match d.xs.iter().position(|v| (v - x).abs() < 1e-9) {
        Some(i) if d.categorical => labels[i].clone(),
        Some(_) => format!("{x:.decimals$}"),
        None => String::new(),
    };
    let fmt_y = |y: &f64| format!("{y:.0}");
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("score % vs baseline (95% bars)")
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&fmt_y)
        .draw()
        .map_err(perr)?;

    chart
        .draw_series(LineSeries::new(
            [(d.xmin - d.pad, 50.0), (d.xmax + d.pad, 50.0)],
            BLACK.mix(0.5).stroke_width(1),
        ))
        .map_err(perr)?;
    let pts: Vec<(f64, f64)> =
        d.xs.iter().zip(&d.bars).filter_map(|(&x, b)| b.map(|b| (x, b.0))).collect();
    chart.draw_series(LineSeries::new(pts, BLUE.mix(0.4))).map_err(perr)?;
    draw_fit(&mut chart, a, &d)?;
    draw_score_bars(&mut chart, a, &d)
}

/// The optimum's interval (shaded) and the optimum, then the fitted curve: under the points.
fn draw_fit<DB: DrawingBackend, X: Ranged<ValueType = f64>>(
    chart: &mut LineChart<'_, DB, X>,
    a: &SweepAnalysis,
    d: &LineData,
) -> Result<(), PlotError> {
    let (ymin, ymax) = (d.ymin, d.ymax);
    if let (false, Some(sf)) = (d.curve.is_empty(), &a.surface)
        && let (Some(Loc::One(x)), Some(Interval::One([lo, hi]))) = (&sf.optimum, &sf.ci)
    {
        chart
            .draw_series([Rectangle::new([(*lo, ymin), (*hi, ymax)], ORANGE.mix(0.15).filled())])
            .map_err(perr)?;
        chart
            .draw_series([PathElement::new([(*x, ymin), (*x, ymax)], ORANGE.stroke_width(1))])
            .map_err(perr)?;
    }
    if !d.curve.is_empty() {
        chart
            .draw_series(LineSeries::new(d.curve.iter().copied(), ORANGE.stroke_width(2)))
            .map_err(perr)?;
    }
    Ok(())
}

/// Each point's score with its 95 % bar (an open circle when there is no interval) and its
/// games above: red for the best, pale for too few pairs.
fn draw_score_bars<DB: DrawingBackend, X: Ranged<ValueType = f64>>(
    chart: &mut LineChart<'_, DB, X>,
    a: &SweepAnalysis,
    d: &LineData,
) -> Result<(), PlotError> {
    let cap = (d.xmax - d.xmin + 2.0 * d.pad) / 120.0;
    let best = a.best.as_ref().map(|b| b.index);
    let label_font =
        ("sans-serif", 12).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Bottom));
    for (i, ((&x, b), r)) in d.xs.iter().zip(&d.bars).zip(&a.rows).enumerate() {
        let Some((score, lo, hi)) = *b else { continue };
        let few = too_few(r.summary.pairs.unwrap_or(0));
        let color = if Some(i) == best { RED } else { BLUE };
        let color = if few { color.mix(0.45) } else { color.mix(1.0) };
        if hi > lo {
            chart
                .draw_series([
                    PathElement::new([(x, lo), (x, hi)], color.stroke_width(1)),
                    PathElement::new([(x - cap, lo), (x + cap, lo)], color.stroke_width(1)),
                    PathElement::new([(x - cap, hi), (x + cap, hi)], color.stroke_width(1)),
                ])
                .map_err(perr)?;
            chart.draw_series([Circle::new((x, score), 4, color.filled())]).map_err(perr)?;
        } else {
            // No spread, no interval: an open circle, never a confident dot.
            chart.draw_series([Circle::new((x, score), 5, color.stroke_width(2))]).map_err(perr)?;
        }
        chart
            .draw_series([Text::new(
                format!("{}g", r.summary.games),
                (x, hi + 0.01 * (d.ymax - d.ymin)),
                label_font.clone(),
            )])
            .map_err(perr)?;
    }
    Ok(())
}

/// Where `v` falls on a heatmap axis whose cells hold the ascending values `cells` (centre of
/// cell i at i + 0.5), interpolated linearly; `None` outside or when the values are not
/// ascending numbers.
fn cell_coord(cells: &[String], v: f64) -> Option<f64> {
    let nums: Vec<f64> = cells.iter().map(|c| numeric(c)).collect::<Option<_>>()?;
    if nums.windows(2).any(|w| w[1] <= w[0]) {
        return None;
    }
    if nums.len() == 1 {
        return ((v - nums[0]).abs() < 1e-12).then_some(0.5);
    }
    let i = nums.windows(2).position(|w| w[0] <= v && v <= w[1])?;
    Some(i as f64 + 0.5 + (v - nums[i]) / (nums[i + 1] - nums[i]))
}

/// White at 50 %, green above, red below, saturated at +/-`span` points.
fn cell_color(score_pct: f64, span: f64) -> RGBColor {
    let t = ((score_pct - 50.0) / span).clamp(-1.0, 1.0);
    let fade = |full: u8| (255.0 - (255.0 - f64::from(full)) * t.abs()).round() as u8;
    if t >= 0.0 {
        RGBColor(fade(30), fade(150), fade(60))
    } else {
        RGBColor(fade(200), fade(40), fade(40))
    }
}

/// The heatmap: the first parameter's cells across, the second's up.
type HeatChart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The values of the first and of the second parameter, each once, in the order of the points.
fn heatmap_axes(a: &SweepAnalysis) -> (Vec<String>, Vec<String>) {
    let mut xv: Vec<String> = Vec::new();
    let mut yv: Vec<String> = Vec::new();
    for r in &a.rows {
        if !xv.contains(&r.assignments[0].1) {
            xv.push(r.assignments[0].1.clone());
        }
        if !yv.contains(&r.assignments[1].1) {
            yv.push(r.assignments[1].1.clone());
        }
    }
    (xv, yv)
}

fn heatmap<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    a: &SweepAnalysis,
    title: &str,
) -> Result<(), PlotError> {
    let (xv, yv) = heatmap_axes(a);
    let (nx, ny) = (xv.len().max(1), yv.len().max(1));
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d(0f64..nx as f64, 0f64..ny as f64)
        .map_err(perr)?;
    let at = |v: &[String], x: f64| {
        let i = (x - 0.5).round();
        if (x - 0.5 - i).abs() < 1e-6 && i >= 0.0 {
            v.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let fx = |x: &f64| at(&xv, *x);
    let fy = |y: &f64| at(&yv, *y);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(a.params[0].as_str())
        .y_desc(a.params[1].as_str())
        .x_labels(nx * 2 + 1)
        .y_labels(ny * 2 + 1)
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .draw()
        .map_err(perr)?;
    draw_cells(&mut chart, a, &xv, &yv)?;
    draw_fitted_optimum(&mut chart, a, &xv, &yv)
}

/// A cell per point: coloured by its score, labelled with score and games, the best outlined.
fn draw_cells<DB: DrawingBackend>(
    chart: &mut HeatChart<'_, DB>,
    a: &SweepAnalysis,
    xv: &[String],
    yv: &[String],
) -> Result<(), PlotError> {
    let span = a
        .rows
        .iter()
        .filter_map(|r| r.summary.score)
        .map(|s| (100.0 * s - 50.0).abs())
        .fold(5.0f64, f64::max);
    let best = a.best.as_ref().map(|b| b.index);
    for (i, r) in a.rows.iter().enumerate() {
        let x = xv.iter().position(|v| *v == r.assignments[0].1).unwrap_or(0) as f64;
        let y = yv.iter().position(|v| *v == r.assignments[1].1).unwrap_or(0) as f64;
        let (fill, text) = match r.summary.score {
            Some(s) => (cell_color(100.0 * s, span), format!("{:.1}%", 100.0 * s)),
            None => (RGBColor(210, 210, 210), "n/a".to_string()),
        };
        chart
            .draw_series([Rectangle::new([(x, y), (x + 1.0, y + 1.0)], fill.filled())])
            .map_err(perr)?;
        if Some(i) == best {
            chart
                .draw_series([Rectangle::new(
                    [(x + 0.02, y + 0.02), (x + 0.98, y + 0.98)],
                    BLACK.stroke_width(3),
                )])
                .map_err(perr)?;
        }
        let style =
            ("sans-serif", 14).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Center));
        chart
            .draw_series([Text::new(
                format!("{text} ({}g)", r.summary.games),
                (x + 0.5, y + 0.5),
                style,
            )])
            .map_err(perr)?;
    }
    Ok(())
}

/// The fitted optimum (a cross) and its interval (a box), placed between the cell centres
/// (values ascending); nothing when the fit has neither or the values are not numbers.
fn draw_fitted_optimum<DB: DrawingBackend>(
    chart: &mut HeatChart<'_, DB>,
    a: &SweepAnalysis,
    xv: &[String],
    yv: &[String],
) -> Result<(), PlotError> {
    if let Some(sf) = &a.surface
        && let (Some(Loc::Two([ox, oy])), Some(Interval::Two([cx, cy]))) = (&sf.optimum, &sf.ci)
        && let (Some(px), Some(py)) = (cell_coord(xv, *ox), cell_coord(yv, *oy))
    {
        let (x0, x1) = (cell_coord(xv, cx[0]), cell_coord(xv, cx[1]));
        let (y0, y1) = (cell_coord(yv, cy[0]), cell_coord(yv, cy[1]));
        if let (Some(x0), Some(x1), Some(y0), Some(y1)) = (x0, x1, y0, y1) {
            chart
                .draw_series([Rectangle::new([(x0, y0), (x1, y1)], ORANGE.stroke_width(2))])
                .map_err(perr)?;
        }
        let d = 0.12;
        chart
            .draw_series([
                PathElement::new([(px - d, py), (px + d, py)], ORANGE.stroke_width(3)),
                PathElement::new([(px, py - d), (px, py + d)], ORANGE.stroke_width(3)),
            ])
            .map_err(perr)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::analysis::tests::{counts, sample};
    use super::super::analysis::{AnalysisOptions, analyze};
    use super::super::values::Point;
    use super::*;
    use stats::Penta;

    #[test]
    fn line_plot_has_points_bars_and_baseline() {
        let (params, points, c) = sample();
        let a = analyze(&params, &points, &c, &[], &AnalysisOptions::default()).unwrap();
        let s = svg(&a, "t_mid sweep").unwrap();
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("t_mid sweep") && s.contains("Best: t_mid=0.9"));
        assert_eq!(s.matches("<circle").count(), 2, "two played points, no legend box");
        let texts: Vec<&str> = s.lines().map(str::trim).collect();
        assert!(s.contains("baseline 50%"));
        assert_eq!(texts.iter().filter(|t| **t == "64g").count(), 2, "games per point shown");
        // Ticks only at the swept values, with one number of decimals.
        for tick in ["0.8", "0.9", "1.0"] {
            assert!(texts.contains(&tick), "tick {tick}");
        }
        assert!(!texts.contains(&"0.85") && !texts.contains(&"1"), "ticks: {texts:?}");
        assert!(!s.contains("NaN"));
    }

    #[test]
    fn two_params_make_a_heatmap() {
        let mut points = Vec::new();
        let mut c = Vec::new();
        for (i, m) in ["0.9", "1.0"].iter().enumerate() {
            for (j, e) in ["0.5", "1.0", "1.5"].iter().enumerate() {
                points.push(Point {
                    assignments: vec![
                        ("t_mid".into(), m.to_string()),
                        ("t_end".into(), e.to_string()),
                    ],
                });
                c.push(counts(Penta { ll: 1, ld: 2, dd: 3, wd: (i + j) as u64, ww: 1 }));
            }
        }
        let a = analyze(
            &["t_mid".into(), "t_end".into()],
            &points,
            &c,
            &[],
            &AnalysisOptions::default(),
        )
        .unwrap();
        let s = svg(&a, "grid").unwrap();
        assert!(s.matches("<rect").count() > 6, "a cell per point, plus the background");
        assert!(s.contains("(14g)"), "cells say their games");
        assert!(s.contains("t_end") && s.contains("t_mid"));
    }

    #[test]
    fn zero_spread_and_small_points_look_uncertain() {
        // Point 0.8: two pairs, both drawn both ways (no spread); 0.9: two pairs with spread.
        let pt = |v: &str| Point { assignments: vec![("t_mid".into(), v.into())] };
        let c = vec![
            counts(Penta { ll: 0, ld: 0, dd: 2, wd: 0, ww: 0 }),
            counts(Penta { ll: 0, ld: 0, dd: 1, wd: 1, ww: 0 }),
        ];
        let a = analyze(&["t_mid".into()], &[pt("0.8"), pt("0.9")], &c, &[], &Default::default())
            .unwrap();
        let s = svg(&a, "small").unwrap();
        let circles: Vec<&str> = s.lines().filter(|l| l.contains("<circle")).collect();
        assert_eq!(circles.len(), 2, "{circles:?}");
        // The zero-spread point is an open circle, the other a filled dot; both pale (< 10 pairs).
        assert_eq!(circles.iter().filter(|c| c.contains("fill=\"none\"")).count(), 1, "{s}");
        assert!(circles.iter().all(|c| c.contains("opacity=\"0.45\"")), "{circles:?}");
        assert!(s.contains("Leader so far") && !s.contains("P(best)"), "{s}");
        // No legend box over the data: the key is text under the chart.
        assert!(!s.contains("score (best in red)"));
    }

    #[test]
    fn colors_are_white_at_half_and_saturate() {
        assert_eq!(cell_color(50.0, 10.0), RGBColor(255, 255, 255));
        assert_eq!(cell_color(70.0, 10.0), RGBColor(30, 150, 60));
        assert_eq!(cell_color(0.0, 10.0), RGBColor(200, 40, 40));
    }
}
