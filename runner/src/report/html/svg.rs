//! The page's own inline SVG: pentanomial bars and a line plot (LLR or Elo against games
//! played). Every figure carries its numbers as text and tells its series apart by dash pattern
//! and a label, so it reads without colour.

use std::fmt::Write as _;

use super::escape::esc;

/// Bars of the five pair outcomes `[LL, LD, DD, WD, WW]`, each with its count written above.
pub fn penta_bars(title: &str, counts: [u64; 5]) -> String {
    const NAMES: [&str; 5] = ["LL", "LD", "DD", "WD", "WW"];
    let (w, h, top, bottom) = (300.0, 140.0, 22.0, 24.0);
    let max = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let slot = w / 5.0;
    let mut s = format!(
        "<svg class=\"penta\" role=\"img\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" \
         xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>",
        esc(title)
    );
    for (i, (&c, name)) in counts.iter().zip(NAMES).enumerate() {
        let bh = (h - top - bottom) * c as f64 / max;
        let x = slot * i as f64 + slot * 0.2;
        let y = h - bottom - bh;
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" class=\"bar\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{c}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{name}</text>",
            slot * 0.6,
            x + slot * 0.3,
            y - 5.0,
            x + slot * 0.3,
            h - 7.0,
        );
    }
    let _ =
        write!(s, "<line x1=\"0\" y1=\"{0}\" x2=\"{w}\" y2=\"{0}\" class=\"axis\"/>", h - bottom);
    s.push_str("</svg>");
    s
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

const DASHES: [&str; 6] = ["", "6 3", "2 3", "8 3 2 3", "1 5", "12 4"];

/// A line plot with axes, tick labels, axis titles, the series' labels at their ends and the
/// reference levels as dashed lines.
pub fn line_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    levels: &[Level],
) -> String {
    let (w, h) = (720.0, 320.0);
    let (left, right, top, bottom) = (60.0, 150.0, 30.0, 44.0);
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys =
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).chain(levels.iter().map(|l| l.y));
    let x_max = xs.fold(1.0_f64, f64::max);
    let (mut y_min, mut y_max) =
        ys.filter(|y| y.is_finite()).fold((0.0_f64, 0.0_f64), |(a, b), y| (a.min(y), b.max(y)));
    if y_max - y_min < 1e-9 {
        y_min -= 1.0;
        y_max += 1.0;
    }
    let pad = (y_max - y_min) * 0.05;
    let (y_min, y_max) = (y_min - pad, y_max + pad);
    let px = |x: f64| left + (w - left - right) * x / x_max;
    let py = |y: f64| top + (h - top - bottom) * (y_max - y) / (y_max - y_min);
    let mut s = format!(
        "<svg class=\"plot\" role=\"img\" viewBox=\"0 0 {w} {h}\" xmlns=\"http://www.w3.org/2000/svg\">\
         <title>{}</title><text x=\"{}\" y=\"18\" text-anchor=\"middle\" class=\"ptitle\">{}</text>",
        esc(title),
        (left + w - right) / 2.0,
        esc(title)
    );
    // Axes, ticks and their labels.
    let (x0, x1, y0, y1) = (px(0.0), px(x_max), py(y_min), py(y_max));
    let _ = write!(
        s,
        "<line x1=\"{x0:.1}\" y1=\"{y0:.1}\" x2=\"{x1:.1}\" y2=\"{y0:.1}\" class=\"axis\"/>\
         <line x1=\"{x0:.1}\" y1=\"{y0:.1}\" x2=\"{x0:.1}\" y2=\"{y1:.1}\" class=\"axis\"/>"
    );
    for t in ticks(0.0, x_max).into_iter().filter(|t| t.fract() == 0.0) {
        let _ = write!(
            s,
            "<line x1=\"{0:.1}\" y1=\"{y0:.1}\" x2=\"{0:.1}\" y2=\"{1:.1}\" class=\"axis\"/>\
             <text x=\"{0:.1}\" y=\"{2:.1}\" text-anchor=\"middle\">{3}</text>",
            px(t),
            y0 + 5.0,
            y0 + 18.0,
            tick_label(t)
        );
    }
    for t in ticks(y_min, y_max) {
        let _ = write!(
            s,
            "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{2:.1}\" y2=\"{1:.1}\" class=\"grid\"/>\
             <text x=\"{3:.1}\" y=\"{4:.1}\" text-anchor=\"end\">{5}</text>",
            x0,
            py(t),
            x1,
            x0 - 6.0,
            py(t) + 4.0,
            tick_label(t)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" class=\"xlabel\">{}</text>\
         <text x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" class=\"ylabel\" \
         transform=\"rotate(-90 14 {:.1})\">{}</text>",
        (x0 + x1) / 2.0,
        h - 6.0,
        esc(x_label),
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0,
        esc(y_label)
    );
    for l in levels {
        let _ = write!(
            s,
            "<line x1=\"{x0:.1}\" y1=\"{0:.1}\" x2=\"{x1:.1}\" y2=\"{0:.1}\" class=\"level\"/>\
             <text x=\"{1:.1}\" y=\"{2:.1}\">{3}</text>",
            py(l.y),
            x1 + 4.0,
            py(l.y) + 4.0,
            esc(&l.label)
        );
    }
    for (i, se) in series.iter().enumerate() {
        let pts: Vec<String> = se
            .points
            .iter()
            .filter(|p| p.1.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let dash = DASHES[i % DASHES.len()];
        let _ = write!(
            s,
            "<polyline points=\"{}\" class=\"line\" stroke-dasharray=\"{dash}\"><title>{}</title></polyline>",
            pts.join(" "),
            esc(&se.label)
        );
        if se.points.len() <= 60 {
            for &(x, y) in se.points.iter().filter(|p| p.1.is_finite()) {
                let _ = write!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" class=\"dot\"/>",
                    px(x),
                    py(y)
                );
            }
        }
        if let Some(&(x, y)) = se.points.iter().rev().find(|p| p.1.is_finite()) {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" class=\"slabel\">{}</text>",
                px(x) + 4.0,
                py(y) + 4.0 + 11.0 * i as f64 * f64::from(u8::from(series.len() > 1)),
                esc(&se.label)
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// About five round tick values covering `[lo, hi]`.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(mag * 10.0);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 && out.len() < 20 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

fn tick_label(t: f64) -> String {
    if (t - t.round()).abs() < 1e-9 { format!("{}", t.round() as i64) } else { format!("{t:.2}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn penta_bars_carry_their_counts_as_text() {
        let s = penta_bars("A vs <B>", [0, 2, 1, 0, 5]);
        assert!(s.starts_with("<svg"));
        assert!(s.contains("<title>A vs &lt;B&gt;</title>"));
        for name in ["LL", "LD", "DD", "WD", "WW"] {
            assert!(s.contains(&format!(">{name}</text>")), "{name}");
        }
        assert!(s.contains(">5</text>") && s.contains(">2</text>"));
        assert_eq!(s.matches("<rect").count(), 5);
    }

    #[test]
    fn all_zero_bars_do_not_divide_by_zero() {
        let s = penta_bars("empty", [0; 5]);
        assert!(!s.contains("NaN") && !s.contains("inf"));
    }

    #[test]
    fn line_plot_has_axes_labels_and_levels() {
        let series = vec![Series { label: "A vs B".into(), points: vec![(2.0, 0.1), (4.0, -0.3)] }];
        let levels = vec![
            Level { label: "H1 2.94".into(), y: 2.94 },
            Level { label: "H0 -2.94".into(), y: -2.94 },
        ];
        let s = line_plot("LLR", "games", "LLR", &series, &levels);
        assert!(s.contains(">games</text>") && s.contains(">LLR</text>"));
        assert!(s.contains("H1 2.94") && s.contains("<polyline"));
        assert!(!s.contains("NaN"));
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert!(ticks(-3.1, 3.1).contains(&0.0));
    }
}
