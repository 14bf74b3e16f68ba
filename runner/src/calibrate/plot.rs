//! Scatter plot of one depth pair (seed 000, Figure 4): shallow score v' against deep score v,
//! one colour per stage, with each stage's fitted line.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;

use super::pairs::{DepthPair, PairPoint, ParamRow, fit_points};
use crate::plan::positions::Stage;

fn colour(stage: Stage) -> RGBColor {
    match stage {
        Stage::Middlegame => RGBColor(31, 119, 180),
        Stage::Endgame => RGBColor(214, 39, 40),
    }
}

/// Writes an SVG scatter of the fitted points of `pair` (|v'| <= max_abs, no mates) with the
/// fitted lines of `rows` for that pair. Points whose v falls outside the plotted range
/// (+-2 * max_abs) are left out of the picture (not of the fit).
pub fn scatter(
    path: &Path,
    pair: DepthPair,
    points: &[PairPoint],
    rows: &[ParamRow],
    max_abs: i32,
) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| anyhow!("plot {}: {e}", path.display());
    let xr = max_abs as f64;
    let yr = 2.0 * xr;
    let root = SVGBackend::new(path, (720, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("Depth pair {pair}: deep v vs shallow v'"), ("sans-serif", 24))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(-xr..xr, -yr..yr)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(format!("v' (cp, depth {})", pair.shallow))
        .y_desc(format!("v (cp, depth {})", pair.deep))
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 15))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|e| err(&e))?;
    for stage in Stage::ALL {
        let c = colour(stage);
        let pts: Vec<(f64, f64)> =
            fit_points(points, stage).into_iter().filter(|p| p.1.abs() <= yr).collect();
        let n = pts.len();
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 2, c.mix(0.35).filled())))
            .map_err(|e| err(&e))?
            .label(format!("{stage} ({n} shown)"))
            .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
        if let Some(row) = rows
            .iter()
            .find(|r| r.stage == stage && r.shallow == pair.shallow && r.deep == pair.deep)
        {
            let line = [(-xr, row.a * -xr + row.b), (xr, row.a * xr + row.b)];
            chart
                .draw_series(LineSeries::new(line, c.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(format!("{stage}: a={:.3} b={:.1} sigma={:.1}", row.a, row.b, row.sigma))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], c.stroke_width(2)));
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::uci_info::Eval;

    #[test]
    fn writes_an_svg_with_points_and_lines() {
        let pair = DepthPair { shallow: 1, deep: 2 };
        let points: Vec<PairPoint> = (0..50)
            .map(|i| PairPoint {
                index: i,
                stage: if i % 2 == 0 { Stage::Middlegame } else { Stage::Endgame },
                shallow: 1,
                deep: 2,
                v_shallow: Eval::Cp(i as i32 * 10 - 250),
                v_deep: Eval::Cp(i as i32 * 11 - 240),
                used: true,
            })
            .collect();
        let row = ParamRow {
            stage: Stage::Middlegame,
            shallow: 1,
            deep: 2,
            a: 1.1,
            b: 5.0,
            sigma: 3.0,
            r: 0.99,
            n: 25,
        };
        let path = std::env::temp_dir().join(format!("calib-plot-{}.svg", std::process::id()));
        scatter(&path, pair, &points, &[row], 300).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<circle") && svg.contains("<polyline"));
        assert!(svg.contains("a=1.100"));
        std::fs::remove_file(&path).ok();
    }
}
