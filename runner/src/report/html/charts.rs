//! The page's own figures, drawn by plotters as the runner's other plots are: pentanomial bars
//! and a line plot (LLR or Elo against games played). Each is shown as an `<img>` of a `data:`
//! URL, as the folder's plots are ([`super::figures`]), so no drawing is ever part of the page's
//! markup; its numbers are in its `alt` text and beside it, and its series are told apart by
//! dash pattern and a legend as well as colour.

use maud::{Markup, html};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data_url::svg_data_url;
use super::text::num;
use crate::report::match_plot::{PlotError, perr};

const NAMES: [&str; 5] = ["LL", "LD", "DD", "WD", "WW"];

/// An `<img>` of an SVG drawing with its description, or the reason it could not be drawn.
fn image(class: &str, alt: &str, svg: Result<String, PlotError>) -> Markup {
    match svg {
        Ok(svg) => html! { img class=(class) src=(svg_data_url(&svg)) alt=(alt); },
        Err(e) => html! { p.note { (alt) " (" (e) ")" } },
    }
}

/// Bars of the five pair outcomes `[LL, LD, DD, WD, WW]`, each with its count written above.
pub fn penta_bars(title: &str, counts: [u64; 5]) -> Markup {
    let list: Vec<String> = NAMES.iter().zip(counts).map(|(n, c)| format!("{n} {c}")).collect();
    let alt = format!("{title}: {}", list.join(", "));
    image("penta", &alt, draw_penta(counts))
}

fn draw_penta(counts: [u64; 5]) -> Result<String, PlotError> {
    let top = counts.iter().copied().max().unwrap_or(0).max(1) as f64 * 1.25;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (300, 150)).into_drawing_area();
        root.fill(&WHITE).map_err(perr)?;
        let (area, foot) = root.split_vertically(130);
        let mut chart = ChartBuilder::on(&area)
            .margin(6)
            .build_cartesian_2d(0f64..5.0, 0f64..top)
            .map_err(perr)?;
        let centred =
            |v| ("sans-serif", 12).into_font().color(&BLACK).pos(Pos::new(HPos::Center, v));
        for (i, (&c, name)) in counts.iter().zip(NAMES).enumerate() {
            let x = i as f64;
            let bar = [(x + 0.2, 0.0), (x + 0.8, c as f64)];
            chart
                .draw_series([Rectangle::new(bar, RGBColor(119, 119, 119).filled())])
                .map_err(perr)?;
            chart.draw_series([Rectangle::new(bar, BLACK.stroke_width(1))]).map_err(perr)?;
            let (px, py) = chart.backend_coord(&(x + 0.5, c as f64));
            area.draw(&Text::new(c.to_string(), (px, py - 3), centred(VPos::Bottom)))
                .map_err(perr)?;
            foot.draw(&Text::new(name, (px, 4), centred(VPos::Top))).map_err(perr)?;
        }
        let (x0, y0) = chart.backend_coord(&(0.0, 0.0));
        let (x1, _) = chart.backend_coord(&(5.0, 0.0));
        area.draw(&PathElement::new([(x0, y0), (x1, y0)], BLACK.stroke_width(1))).map_err(perr)?;
        root.present().map_err(perr)?;
    }
    Ok(out)
}

/// One line of a plot: a label and its (x, y) points.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// A horizontal reference line (an SPRT bound) with its label.
pub struct Level {
    pub label: String,
    pub y: f64,
}

/// A plot's words: its title and its axes' names.
pub struct Labels<'a> {
    pub title: &'a str,
    pub x: &'a str,
    pub y: &'a str,
}

/// A line plot with axes, tick labels, axis titles, a legend of the series, and the reference
/// levels as dashed lines with their labels.
pub fn line_plot(labels: &Labels, series: &[Series], levels: &[Level]) -> Markup {
    let ends: Vec<String> = series
        .iter()
        .filter_map(|s| {
            let &(x, y) = s.points.iter().rev().find(|p| p.1.is_finite())?;
            Some(format!("{} {} after {x:.0}", s.label, num(Some(y), 2)))
        })
        .collect();
    let alt = format!("{}: {}", labels.title, ends.join("; "));
    image("plot", &alt, draw_lines(labels, series, levels))
}

/// The y range of a plot: every finite value and level, with 0, padded by 5 %.
fn y_range(series: &[Series], levels: &[Level]) -> (f64, f64) {
    let ys =
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).chain(levels.iter().map(|l| l.y));
    let (mut lo, mut hi) =
        ys.filter(|y| y.is_finite()).fold((0.0_f64, 0.0_f64), |(a, b), y| (a.min(y), b.max(y)));
    if hi - lo < 1e-9 {
        lo -= 1.0;
        hi += 1.0;
    }
    let pad = (hi - lo) * 0.05;
    (lo - pad, hi + pad)
}

fn draw_lines(labels: &Labels, series: &[Series], levels: &[Level]) -> Result<String, PlotError> {
    let x_max = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(1.0_f64, f64::max);
    let (y_min, y_max) = y_range(series, levels);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (720, 340)).into_drawing_area();
        root.fill(&WHITE).map_err(perr)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(labels.title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(0f64..x_max, y_min..y_max)
            .map_err(perr)?;
        let fx = |x: &f64| format!("{x:.0}");
        let fy =
            |y: &f64| if y.fract().abs() < 1e-9 { format!("{y:.0}") } else { format!("{y:.2}") };
        chart
            .configure_mesh()
            .x_desc(labels.x)
            .y_desc(labels.y)
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .max_light_lines(0)
            .bold_line_style(RGBColor(204, 204, 204))
            .draw()
            .map_err(perr)?;
        let font = ("sans-serif", 12).into_font().color(&BLACK);
        for l in levels {
            let style = BLACK.stroke_width(1);
            chart
                .draw_series(DashedLineSeries::new([(0.0, l.y), (x_max, l.y)], 6, 4, style))
                .map_err(perr)?;
            let at = chart.backend_coord(&(0.0, l.y));
            root.draw(&Text::new(l.label.clone(), (at.0 + 6, at.1 - 15), font.clone()))
                .map_err(perr)?;
        }
        for (i, s) in series.iter().enumerate() {
            draw_series(&mut chart, i, s)?;
        }
        if !series.is_empty() {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(font)
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(perr)?;
        }
        root.present().map_err(perr)?;
    }
    Ok(out)
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Series `i`: solid, dashed or dotted by turn, coloured by the palette, dots when few.
fn draw_series(chart: &mut Chart, i: usize, s: &Series) -> Result<(), PlotError> {
    let colour = Palette99::pick(i).to_rgba();
    let style = colour.stroke_width(2);
    let points: Vec<(f64, f64)> = s.points.iter().copied().filter(|p| p.1.is_finite()).collect();
    let drawn = match i % 3 {
        0 => chart.draw_series(LineSeries::new(points.clone(), style)),
        1 => chart.draw_series(DashedLineSeries::new(points.clone(), 8, 4, style)),
        _ => chart.draw_series(DashedLineSeries::new(points.clone(), 2, 4, style)),
    }
    .map_err(perr)?;
    drawn
        .label(s.label.clone())
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], colour.stroke_width(2)));
    if points.len() <= 60 {
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
            .map_err(perr)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The drawing behind a figure's `<img>`.
    fn drawing(m: &Markup) -> String {
        use base64::Engine;
        let s = m.0.as_str();
        let start = s.find("base64,").expect("a data URL") + "base64,".len();
        let end = start + s[start..].find('"').expect("the URL ends");
        let bytes = base64::engine::general_purpose::STANDARD.decode(&s[start..end]).unwrap();
        // plotters writes a text element's words on a line of their own.
        String::from_utf8(bytes).unwrap().replace('\n', "")
    }

    #[test]
    fn penta_bars_carry_their_counts_as_text() {
        let m = penta_bars("A vs <B>", [0, 2, 1, 0, 5]);
        let page = m.0.as_str();
        assert!(page.starts_with("<img class=\"penta\" src=\"data:image/svg+xml;base64,"));
        assert!(page.contains("alt=\"A vs &lt;B&gt;: LL 0, LD 2, DD 1, WD 0, WW 5\""), "{page}");
        let svg = drawing(&m);
        for name in ["LL", "LD", "DD", "WD", "WW"] {
            assert!(svg.contains(&format!(">{name}</text>")), "{name}: {svg}");
        }
        assert!(svg.contains(">5</text>") && svg.contains(">2</text>"));
    }

    #[test]
    fn all_zero_bars_do_not_divide_by_zero() {
        let svg = drawing(&penta_bars("empty", [0; 5]));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn line_plot_has_axes_labels_levels_and_a_legend() {
        let series =
            vec![Series { label: "A vs <B>".into(), points: vec![(2.0, 0.1), (4.0, -0.3)] }];
        let levels = vec![
            Level { label: "H1 2.94".into(), y: 2.94 },
            Level { label: "H0 -2.94".into(), y: -2.94 },
        ];
        let labels = Labels { title: "LLR", x: "games", y: "LLR" };
        let m = line_plot(&labels, &series, &levels);
        let page = m.0.as_str();
        assert!(page.contains("alt=\"LLR: A vs &lt;B&gt; -0.30 after 4\""), "{page}");
        let svg = drawing(&m);
        assert!(svg.contains(">games</text>") && svg.contains(">LLR</text>"), "{svg}");
        assert!(svg.contains("H1 2.94") && svg.contains("A vs &lt;B&gt;"), "{svg}");
        assert!(!svg.contains("NaN"));
    }
}
