//! tune.svg: each parameter's path over the games, one panel per parameter (x: games played,
//! y: theta after each finished pair), with its min and max as grey lines at the panel's edges
//! and its start as a dot. The project's plot style (`report::match_plot`).

use plotters::prelude::*;

use super::files::fmt_value;
use super::run::TuneState;
pub use crate::report::match_plot::PlotError;
use crate::report::match_plot::perr;

const WIDTH: u32 = 960;
/// Height of one parameter's panel.
const PANEL: u32 = 260;
const FOOT: u32 = 30;

/// Draws the plot as an SVG document.
pub fn svg(state: &TuneState) -> Result<String, PlotError> {
    let n = state.spsa.params.len().max(1);
    let height = PANEL * n as u32 + FOOT;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(perr)?;
        let (panels, foot) = root.split_vertically(height - FOOT);
        let key = format!(
            "Blue: theta after each finished game pair ({} of {} iterations); dot: start; grey \
             lines: min and max.",
            state.history.len(),
            state.spsa.iterations
        );
        let font = ("sans-serif", 13).into_font().color(&BLACK);
        foot.draw(&Text::new(key, (10, 8), font)).map_err(perr)?;
        let max_games = (2 * state.spsa.iterations).max(2) as f64;
        for (i, area) in panels.split_evenly((n, 1)).iter().enumerate() {
            let Some(p) = state.spsa.params.get(i) else { break };
            let pad = (p.max - p.min) * 0.05;
            let mut chart = ChartBuilder::on(area)
                .caption(
                    format!("{} (final {})", p.name, fmt_value(state.theta[i])),
                    ("sans-serif", 18),
                )
                .margin(12)
                .x_label_area_size(35)
                .y_label_area_size(60)
                .build_cartesian_2d(0f64..max_games, (p.min - pad)..(p.max + pad))
                .map_err(perr)?;
            let fx = |x: &f64| format!("{x:.0}");
            let fy = |y: &f64| fmt_value(*y);
            chart
                .configure_mesh()
                .x_desc("games")
                .y_desc(p.name.as_str())
                .x_label_formatter(&fx)
                .y_label_formatter(&fy)
                .draw()
                .map_err(perr)?;
            for bound in [p.min, p.max] {
                chart
                    .draw_series(LineSeries::new(
                        [(0.0, bound), (max_games, bound)],
                        BLACK.mix(0.45).stroke_width(1),
                    ))
                    .map_err(perr)?;
            }
            let path = std::iter::once((0.0, p.start))
                .chain(state.history.iter().map(|h| (h.games as f64, h.theta[i])));
            chart.draw_series(LineSeries::new(path, BLUE.stroke_width(2))).map_err(perr)?;
            chart.draw_series([Circle::new((0.0, p.start), 4, BLUE.filled())]).map_err(perr)?;
        }
        root.present().map_err(perr)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_panel_per_parameter() {
        let s = crate::tune::files::tests::state();
        let svg = super::svg(&s).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("X (final ") && svg.contains("t_mid (final")
        );
    }
}
