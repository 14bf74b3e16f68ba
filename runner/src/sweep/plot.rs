//! plot.svg: score against the swept value with 95 % bars and the 50 % baseline line (one
//! parameter, or more than two parameters along the list of points), or a heatmap of the score
//! (two parameters, a grid). The line naming the best point is written under the chart.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use stats::ScoreMoments;

use super::analysis::{PointRow, SweepAnalysis};
use super::values::numeric;

const WIDTH: u32 = 960;
const HEIGHT: u32 = 600;
/// z for a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// A plotting failure (plotters' own errors are not `Send`/`Sync`, so they are kept as text).
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the plot: {0}")]
pub struct PlotError(String);

fn perr<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError(format!("{e:?}"))
}

/// Score in % with its 95 % interval (from the pair scores), if the point has games.
fn score_bar(r: &PointRow) -> Option<(f64, f64, f64)> {
    let m = ScoreMoments::from_penta(&r.summary.penta?)?;
    let lo = (m.score - Z95 * m.std_error).max(0.0);
    let hi = (m.score + Z95 * m.std_error).min(1.0);
    Some((100.0 * m.score, 100.0 * lo, 100.0 * hi))
}

/// The line under the chart: the best point and its probability of being best.
fn footer(a: &SweepAnalysis) -> String {
    let played = a.rows.iter().filter(|r| r.p_best.is_some()).count();
    match &a.best {
        None => "No finished game pairs yet.".into(),
        Some(b) if played < 2 => format!("Only {} has finished game pairs.", b.label),
        Some(b) => format!(
            "Best: {} (score {:.1} %{}); P(best) = {:.1} % among {played} points (normal \
             approximation, points independent).",
            b.label,
            100.0 * b.score,
            b.elo.map(|e| format!(", Elo {e:+.1}")).unwrap_or_default(),
            100.0 * b.p_best
        ),
    }
}

/// A numeric axis label: the shortest of `decimals..=6` decimals that shows `x` exactly (so
/// 1.2000000000000002 prints as 1.2).
fn axis_number(x: f64, decimals: usize) -> String {
    for d in decimals..=6 {
        let s = format!("{x:.d$}");
        if s.parse::<f64>().is_ok_and(|v| (v - x).abs() <= 1e-9 * x.abs().max(1.0)) {
            return s;
        }
    }
    format!("{x:.6}")
}

/// Draws the plot as an SVG document.
pub fn svg(a: &SweepAnalysis, title: &str) -> Result<String, PlotError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(perr)?;
        let (chart_area, foot) = root.split_vertically(HEIGHT - 40);
        let font = || ("sans-serif", 13).into_font().color(&BLACK);
        foot.draw(&Text::new(footer(a), (10, 6), font())).map_err(perr)?;
        if a.params.len() == 2 {
            let key = "Cells: score % vs the baseline (games); green above 50 %, red below; \
                       the best point is outlined.";
            foot.draw(&Text::new(key, (10, 22), font())).map_err(perr)?;
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

fn line_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    a: &SweepAnalysis,
    title: &str,
) -> Result<(), PlotError> {
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
    let (ymin, ymax) = ((ymin - 2.0).max(0.0), (ymax + 2.0).min(100.0));

    let labels: Vec<String> = a
        .rows
        .iter()
        .map(|r| {
            if a.params.len() == 1 {
                r.assignments[0].1.clone()
            } else {
                r.assignments.iter().map(|x| x.1.as_str()).collect::<Vec<_>>().join("/")
            }
        })
        .collect();
    let x_desc = if a.params.len() == 1 { a.params[0].clone() } else { a.params.join(" / ") };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d((xmin - pad)..(xmax + pad), ymin..ymax)
        .map_err(perr)?;
    let decimals =
        labels.iter().map(|l| l.split_once('.').map_or(0, |(_, f)| f.len())).max().unwrap_or(0);
    let fmt_x = |x: &f64| {
        if categorical {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        } else {
            axis_number(*x, decimals)
        }
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc).y_desc("score % vs baseline (95% bars)").x_label_formatter(&fmt_x);
    if categorical {
        mesh.x_labels(n.max(1) * 2 + 1);
    }
    mesh.draw().map_err(perr)?;

    chart
        .draw_series(LineSeries::new(
            [(xmin - pad, 50.0), (xmax + pad, 50.0)],
            BLACK.mix(0.5).stroke_width(1),
        ))
        .map_err(perr)?
        .label("baseline 50%")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.mix(0.5)));
    let pts: Vec<(f64, f64)> =
        xs.iter().zip(&bars).filter_map(|(&x, b)| b.map(|b| (x, b.0))).collect();
    chart.draw_series(LineSeries::new(pts.clone(), BLUE.mix(0.4))).map_err(perr)?;
    let cap = (xmax - xmin + 2.0 * pad) / 120.0;
    for (&x, b) in xs.iter().zip(&bars) {
        let Some((_, lo, hi)) = *b else { continue };
        chart
            .draw_series([
                PathElement::new([(x, lo), (x, hi)], BLUE.stroke_width(1)),
                PathElement::new([(x - cap, lo), (x + cap, lo)], BLUE.stroke_width(1)),
                PathElement::new([(x - cap, hi), (x + cap, hi)], BLUE.stroke_width(1)),
            ])
            .map_err(perr)?;
    }
    let best = a.best.as_ref().map(|b| b.index);
    chart
        .draw_series(xs.iter().zip(&bars).enumerate().filter_map(|(i, (&x, b))| {
            b.map(|b| {
                let color = if Some(i) == best { RED } else { BLUE };
                Circle::new((x, b.0), 4, color.filled())
            })
        }))
        .map_err(perr)?
        .label("score (best in red)")
        .legend(|(x, y)| Circle::new((x + 10, y), 4, BLUE.filled()));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(perr)?;
    Ok(())
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

fn heatmap<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    a: &SweepAnalysis,
    title: &str,
) -> Result<(), PlotError> {
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
        assert_eq!(s.matches("<circle").count(), 2 + 1, "two played points + legend");
        assert!(s.contains("baseline 50%"));
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
    fn axis_numbers_lose_float_noise() {
        assert_eq!(axis_number(1.2000000000000002, 1), "1.2");
        assert_eq!(axis_number(1.0, 1), "1.0");
        assert_eq!(axis_number(2.5, 0), "2.5");
        assert_eq!(axis_number(20.0, 0), "20");
    }

    #[test]
    fn colors_are_white_at_half_and_saturate() {
        assert_eq!(cell_color(50.0, 10.0), RGBColor(255, 255, 255));
        assert_eq!(cell_color(70.0, 10.0), RGBColor(30, 150, 60));
        assert_eq!(cell_color(0.0, 10.0), RGBColor(200, 40, 40));
    }
}
