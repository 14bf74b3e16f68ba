//! HTML escaping and the small formatting helpers every section uses. Every string that comes
//! from a file (engine names, options, PGN, labels, warnings) goes through [`esc`].

use std::fmt::Write as _;

/// `s` escaped for HTML text and for attribute values in double or single quotes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number with `digits` decimals, or "n/a" when absent or not finite.
pub fn num(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.digits$}"),
        _ => "n/a".into(),
    }
}

/// A signed number with `digits` decimals ("+1.5"), or "n/a".
pub fn signed(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:+.digits$}"),
        _ => "n/a".into(),
    }
}

/// A JSON value as a short plain string (strings unquoted; null as "n/a").
pub fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "n/a".into(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A `<table>` with a header row; `head` and the cells are HTML already escaped by the caller.
/// Numeric-looking columns are right-aligned by the stylesheet through `class="n"`.
pub fn table(class: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!("<div class=\"scroll\"><table class=\"{class}\"><thead><tr>");
    for h in head {
        let _ = write!(s, "<th scope=\"col\">{h}</th>");
    }
    s.push_str("</tr></thead><tbody>");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            let _ = write!(s, "<td>{c}</td>");
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc(r#"<script>alert("x&'y')</script>"#),
            "&lt;script&gt;alert(&quot;x&amp;&#39;y&#39;)&lt;/script&gt;"
        );
        assert_eq!(esc("Stockfish 17 — ü"), "Stockfish 17 — ü");
    }

    #[test]
    fn numbers_say_na_when_missing() {
        assert_eq!(num(None, 1), "n/a");
        assert_eq!(num(Some(f64::NAN), 1), "n/a");
        assert_eq!(signed(Some(2.04), 1), "+2.0");
        assert_eq!(plain(&serde_json::json!("a")), "a");
        assert_eq!(plain(&serde_json::Value::Null), "n/a");
    }

    #[test]
    fn tables_have_a_header_row() {
        let t = table("t", &["a", "b"], &[vec!["1".into(), "2".into()]]);
        assert!(t.contains("<thead><tr><th scope=\"col\">a</th>"));
        assert!(t.contains("<tbody><tr><td>1</td><td>2</td></tr>"));
    }
}
