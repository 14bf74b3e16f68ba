//! The small pieces every section uses: numbers as text ("n/a" when absent, never a made-up
//! figure) and a table with a header row. Escaping is not here: every value reaches the page
//! through a maud template, which escapes it.

use maud::{Markup, Render, html};

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

/// A `<table>` of class `class` with a header row, in a scrolling box (a wide table scrolls on a
/// phone rather than widening the page). Cells are anything maud renders: text is escaped.
pub fn table<H: Render, C: Render>(class: &str, head: &[H], rows: &[Vec<C>]) -> Markup {
    html! {
        div.scroll {
            table class=(class) {
                thead { tr { @for h in head { th scope="col" { (h) } } } }
                tbody { @for r in rows { tr { @for c in r { td { (c) } } } } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_say_na_when_missing() {
        assert_eq!(num(None, 1), "n/a");
        assert_eq!(num(Some(f64::NAN), 1), "n/a");
        assert_eq!(signed(Some(2.04), 1), "+2.0");
        assert_eq!(plain(&serde_json::json!("a")), "a");
        assert_eq!(plain(&serde_json::Value::Null), "n/a");
    }

    #[test]
    fn tables_have_a_header_row_and_escape_their_cells() {
        let t = table("t", &["a", "b"], &[vec!["1", "<2>"]]).into_string();
        assert!(t.contains("<thead><tr><th scope=\"col\">a</th>"), "{t}");
        assert!(t.contains("<tbody><tr><td>1</td><td>&lt;2&gt;</td></tr>"), "{t}");
    }
}
