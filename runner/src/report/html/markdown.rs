//! table.md (the runner's Markdown tables) on the page: parsed by pulldown-cmark, drawn by maud.
//! Headings, paragraphs, lists, code and pipe tables become their elements; raw HTML in the file
//! is shown as text, links and images as their text, so nothing in the file becomes markup.

use maud::{Markup, html};
use pulldown_cmark::{Alignment, Event, HeadingLevel, Options, Parser, Tag};

/// The page's rendering of a Markdown document. Headings are demoted below the page's own
/// (`#` becomes `<h3>`); a right-aligned table column (`--:`) gets class `n`; tables sort.
pub fn to_html(md: &str) -> Markup {
    let mut events = Parser::new_ext(md, Options::ENABLE_TABLES);
    children(&mut events)
}

/// The elements up to the end of the current one (or of the document).
fn children(events: &mut Parser) -> Markup {
    let mut parts: Vec<Markup> = Vec::new();
    while let Some(event) = events.next() {
        parts.push(match event {
            Event::End(_) => break,
            Event::Start(tag) => element(tag, events),
            Event::Text(t)
            | Event::Html(t)
            | Event::InlineHtml(t)
            | Event::InlineMath(t)
            | Event::DisplayMath(t) => html! { (t.as_ref()) },
            Event::Code(t) => html! { code { (t.as_ref()) } },
            Event::SoftBreak => html! { " " },
            Event::HardBreak => html! { br; },
            Event::Rule => html! { hr; },
            Event::FootnoteReference(_) | Event::TaskListMarker(_) => continue,
        });
    }
    html! { @for p in &parts { (p) } }
}

/// One element whose start was just read, with its children.
fn element(tag: Tag, events: &mut Parser) -> Markup {
    if let Tag::Table(align) = tag {
        return table(&align, events);
    }
    let inner = children(events);
    match tag {
        Tag::Paragraph => html! { p { (inner) } },
        Tag::Heading { level, .. } => match level {
            HeadingLevel::H1 => html! { h3 { (inner) } },
            HeadingLevel::H2 => html! { h4 { (inner) } },
            HeadingLevel::H3 => html! { h5 { (inner) } },
            _ => html! { h6 { (inner) } },
        },
        Tag::CodeBlock(_) => html! { pre { (inner) } },
        Tag::List(Some(start)) => html! { ol start=(start) { (inner) } },
        Tag::List(None) => html! { ul { (inner) } },
        Tag::Item => html! { li { (inner) } },
        Tag::Emphasis => html! { em { (inner) } },
        Tag::Strong => html! { strong { (inner) } },
        Tag::Strikethrough => html! { del { (inner) } },
        // Links, images, quotes, HTML blocks and the rest: their text.
        _ => inner,
    }
}

/// A pipe table: its head and rows, right-aligned columns marked `n` for the stylesheet.
fn table(align: &[Alignment], events: &mut Parser) -> Markup {
    let (mut head, mut rows) = (Vec::new(), Vec::new());
    while let Some(event) = events.next() {
        match event {
            Event::Start(Tag::TableHead) => head = cells(events),
            Event::Start(Tag::TableRow) => rows.push(cells(events)),
            Event::End(_) => break,
            _ => {}
        }
    }
    let class = |k: usize| matches!(align.get(k), Some(Alignment::Right)).then_some("n");
    html! {
        div.scroll {
            table.md.sortable {
                thead { tr {
                    @for (k, h) in head.iter().enumerate() { th scope="col" class=[class(k)] { (h) } }
                } }
                tbody { @for r in &rows { tr {
                    @for (k, c) in r.iter().enumerate() { td class=[class(k)] { (c) } }
                } } }
            }
        }
    }
}

/// The cells of a table row (or of its head).
fn cells(events: &mut Parser) -> Vec<Markup> {
    let mut out = Vec::new();
    while let Some(event) = events.next() {
        match event {
            Event::Start(Tag::TableCell) => out.push(children(events)),
            Event::End(_) => break,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(md: &str) -> String {
        to_html(md).into_string()
    }

    #[test]
    fn tables_headings_and_paragraphs() {
        let md = "# Sweep of <x>\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n| <3> | 4 |\n\nBest point: x\nand more.\n";
        let h = page(md);
        assert!(h.contains("<h3>Sweep of &lt;x&gt;</h3>"), "{h}");
        assert!(h.contains("<th scope=\"col\">a</th><th scope=\"col\" class=\"n\">b</th>"), "{h}");
        assert!(h.contains("<td>&lt;3&gt;</td><td class=\"n\">4</td>"), "{h}");
        assert!(h.contains("<table class=\"md sortable\">"), "{h}");
        assert_eq!(h.matches("<tr>").count(), 3);
        assert!(h.contains("<p>Best point: x and more.</p>"), "{h}");
        assert_eq!(page("Engine `a<b>`; ok"), "<p>Engine <code>a&lt;b&gt;</code>; ok</p>");
        assert_eq!(page("odd `x"), "<p>odd `x</p>");
    }

    #[test]
    fn fenced_code_is_kept_and_escaped() {
        assert_eq!(page("```\na<b\n```\n"), "<pre>a&lt;b\n</pre>");
        assert_eq!(page("```\nnever closed"), "<pre>never closed</pre>");
    }

    /// Raw HTML, a link to `javascript:` and an image with an event handler: all text.
    #[test]
    fn nothing_in_the_file_becomes_markup() {
        let h = page(
            "<script>alert(1)</script>\n\nx <b onclick=\"y()\">z</b> [a](javascript:alert(1)) \
             ![i](x.png \"t\")\n\n| <img src=x onerror=y()> |\n|--|\n| <svg/onload=z()> |\n",
        );
        for bad in ["<script", "<b ", "<img", "<svg", "<a ", "href"] {
            assert!(!h.contains(bad), "{bad} in {h}");
        }
        assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{h}");
        assert!(h.contains("&lt;svg/onload=z()&gt;"), "{h}");
    }
}
