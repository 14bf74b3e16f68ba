//! The runner's own plots (plot.svg of a sweep or match, a grid's heatmap, calibration
//! scatter plots: every *.svg beside run.json) inlined, and links to the files beside the page.

use super::escape::esc;
use super::input::RunFiles;

/// The SVG markup of a file, without its XML prolog, or `None` when it holds anything that
/// could run (scripts, event handlers, foreign objects) or is not an `<svg>` element.
pub fn inline_svg(text: &str) -> Option<&str> {
    let start = text.find("<svg")?;
    let body = text[start..].trim_end();
    let lower = body.to_ascii_lowercase();
    let active = ["<script", "javascript:", "<foreignobject", "<iframe", "<!entity"]
        .iter()
        .any(|w| lower.contains(w))
        || has_event_attribute(&lower);
    (!active && body.ends_with("</svg>")).then_some(body)
}

/// Whether some attribute's name starts with "on" (onload=, onclick=, ...).
fn has_event_attribute(lower: &str) -> bool {
    let b = lower.as_bytes();
    lower.match_indices("on").any(|(i, _)| {
        let before = i.checked_sub(1).map(|j| b[j]);
        if !before.is_some_and(|c| c.is_ascii_whitespace() || c == b'/' || c == b'"' || c == b'\'')
        {
            return false;
        }
        let rest = &lower[i + 2..];
        let name_len = rest.bytes().take_while(|c| c.is_ascii_alphabetic()).count();
        name_len > 0 && rest[name_len..].trim_start().starts_with('=')
    })
}

/// The figures section (empty when there is no SVG file).
pub fn section(files: &RunFiles) -> String {
    if files.svgs.is_empty() {
        return String::new();
    }
    let mut s = String::from("<section id=\"figures\"><h2>Plots</h2>");
    for (name, text) in &files.svgs {
        let href = href(name);
        match inline_svg(text) {
            Some(svg) => s.push_str(&format!(
                "<figure class=\"inlined\">{svg}<figcaption><a href=\"{href}\">{}</a></figcaption></figure>",
                esc(name)
            )),
            None => s.push_str(&format!(
                "<p><a href=\"{href}\">{}</a>: not inlined (not a plain SVG drawing).</p>",
                esc(name)
            )),
        }
    }
    s.push_str("</section>");
    s
}

/// A relative href for a file name (percent-encoding what a URL cannot hold), escaped.
pub fn href(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/=,+@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    esc(&out)
}

/// Links to the files beside the page.
pub fn files_section(files: &RunFiles) -> String {
    let mut s = String::from("<section id=\"files\"><h2>Files</h2><ul class=\"files\">");
    for f in &files.files {
        s.push_str(&format!("<li><a href=\"{}\">{}</a></li>", href(f), esc(f)));
    }
    s.push_str("</ul></section>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_svg_is_inlined_and_active_svg_is_not() {
        let ok =
            "<?xml version=\"1.0\"?>\n<svg width=\"10\"><text font-size=\"3\">Elo</text></svg>\n";
        assert_eq!(
            inline_svg(ok),
            Some("<svg width=\"10\"><text font-size=\"3\">Elo</text></svg>")
        );
        assert_eq!(inline_svg("<svg onload=\"x()\"></svg>"), None);
        assert_eq!(inline_svg("<svg><script>x()</script></svg>"), None);
        assert_eq!(inline_svg("<svg><a href=\"javascript:x\"/></svg>"), None);
        assert!(inline_svg("<svg><text>on = off</text></svg>").is_some());
        assert_eq!(inline_svg("not svg"), None);
    }

    #[test]
    fn hrefs_are_relative_and_encoded() {
        assert_eq!(href("points/t_mid=0.9/"), "points/t_mid=0.9/");
        assert_eq!(href("a b#\"c"), "a%20b%23%22c");
    }
}
