//! oracle.svg: each variant's mean oracle loss (centipawns) with its 95 % interval, overall and
//! per stage (middlegame, endgame) side by side.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;

use crate::searchtest::oracle_report::LossSummary;

/// Draws the plot as SVG text and writes it to `path` through the store.
pub fn write_plot(
    path: &Path,
    all: &LossSummary,
    stages: &BTreeMap<String, LossSummary>,
) -> Result<()> {
    let mut svg = String::new();
    draw(&mut svg, all, stages).map_err(|e| anyhow!("plot {}: {e}", path.display()))?;
    crate::store::files::write_file(path, svg.as_bytes())
}

type Series<'a> = (&'a str, &'a LossSummary, RGBColor);

fn draw(
    svg: &mut String,
    all: &LossSummary,
    stages: &BTreeMap<String, LossSummary>,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut series: Vec<Series> = vec![("all positions", all, RGBColor(0, 0, 0))];
    for (name, colour) in
        [("middlegame", RGBColor(31, 119, 180)), ("endgame", RGBColor(214, 39, 40))]
    {
        if let Some(s) = stages.get(name) {
            series.push((name, s, colour));
        }
    }
    let n = all.variants.len().max(1);
    let mut top: f64 = 1.0;
    for (_, s, _) in &series {
        for r in &s.variants {
            if let Some(l) = &r.loss {
                top = top.max(l.hi.unwrap_or(l.mean));
            }
        }
    }
    let root = SVGBackend::with_string(svg, (160 + 120 * n as u32, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let names: Vec<String> = all.variants.iter().map(|r| r.name.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption("Oracle loss per variant (mean, 95 % interval)", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..top * 1.1)?;
    chart
        .configure_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc("loss (cp)")
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let k = series.len() as f64;
    for (j, (label, s, colour)) in series.iter().enumerate() {
        let offset = (j as f64 - (k - 1.0) / 2.0) * 0.15;
        let c = *colour;
        let points: Vec<(f64, f64, f64, f64)> = s
            .variants
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let l = r.loss.as_ref()?;
                let x = i as f64 + offset;
                Some((x, l.mean, l.lo.unwrap_or(l.mean), l.hi.unwrap_or(l.mean)))
            })
            .collect();
        chart
            .draw_series(points.iter().map(|&(x, _, lo, hi)| {
                PathElement::new(vec![(x, lo), (x, hi)], c.stroke_width(2))
            }))?
            .label(*label)
            .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
        chart.draw_series(points.iter().map(|&(x, m, _, _)| Circle::new((x, m), 4, c.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
