//! table.md (the runner's Markdown tables) as HTML: headings, pipe tables with a header row,
//! fenced code and paragraphs; everything else is text, escaped.

use super::escape::esc;

/// The HTML of a Markdown document of the kind the runner writes. Headings are demoted below
/// the page's own (`#` becomes `<h3>`).
pub fn to_html(md: &str) -> String {
    let lines: Vec<&str> = md.lines().collect();
    let mut out = String::new();
    let mut para: Vec<&str> = Vec::new();
    let mut i = 0;
    let flush = |para: &mut Vec<&str>, out: &mut String| {
        if !para.is_empty() {
            out.push_str(&format!("<p>{}</p>", inline(&para.join(" "))));
            para.clear();
        }
    };
    while i < lines.len() {
        let line = lines[i].trim_end();
        if line.trim().is_empty() {
            flush(&mut para, &mut out);
            i += 1;
        } else if line.starts_with("```") {
            flush(&mut para, &mut out);
            let end = lines[i + 1..].iter().position(|l| l.starts_with("```")).map(|p| i + 1 + p);
            let body = &lines[i + 1..end.unwrap_or(lines.len())];
            out.push_str(&format!("<pre>{}</pre>", esc(&body.join("\n"))));
            i = end.map(|e| e + 1).unwrap_or(lines.len());
        } else if let Some(level) = heading(line) {
            flush(&mut para, &mut out);
            let h = (level + 2).min(6);
            out.push_str(&format!("<h{h}>{}</h{h}>", esc(line[level..].trim())));
            i += 1;
        } else if line.starts_with('|') && lines.get(i + 1).is_some_and(|l| is_rule(l)) {
            flush(&mut para, &mut out);
            let end = lines[i + 2..].iter().position(|l| !l.trim_start().starts_with('|'));
            let end = end.map(|p| i + 2 + p).unwrap_or(lines.len());
            out.push_str(&table(line, lines[i + 1], &lines[i + 2..end]));
            i = end;
        } else {
            para.push(line.trim());
            i += 1;
        }
    }
    flush(&mut para, &mut out);
    out
}

/// Text with `code` spans; the rest escaped.
fn inline(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return esc(text); // an unpaired backtick: plain text
    }
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("<code>{}</code>", esc(p)));
        } else {
            out.push_str(&esc(p));
        }
    }
    out
}

fn heading(line: &str) -> Option<usize> {
    let n = line.chars().take_while(|&c| c == '#').count();
    (n > 0 && line[n..].starts_with(' ')).then_some(n)
}

fn is_rule(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|') && t.contains('-') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// The cells of a pipe-table row.
pub fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(|c| c.trim().to_string()).collect()
}

fn table(head: &str, rule: &str, rows: &[&str]) -> String {
    let right: Vec<bool> =
        cells(rule).iter().map(|c| c.ends_with(':') && !c.starts_with(':')).collect();
    let class = |k: usize| if right.get(k).copied().unwrap_or(false) { " class=\"n\"" } else { "" };
    let mut s = String::from("<div class=\"scroll\"><table class=\"md sortable\"><thead><tr>");
    for (k, c) in cells(head).iter().enumerate() {
        s.push_str(&format!("<th scope=\"col\"{}>{}</th>", class(k), esc(c)));
    }
    s.push_str("</tr></thead><tbody>");
    for r in rows {
        s.push_str("<tr>");
        for (k, c) in cells(r).iter().enumerate() {
            s.push_str(&format!("<td{}>{}</td>", class(k), inline(c)));
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
    fn tables_headings_and_paragraphs() {
        let md = "# Sweep of <x>\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n| <3> | 4 |\n\nBest point: x\nand more.\n";
        let h = to_html(md);
        assert!(h.contains("<h3>Sweep of &lt;x&gt;</h3>"), "{h}");
        assert!(h.contains("<th scope=\"col\">a</th><th scope=\"col\" class=\"n\">b</th>"), "{h}");
        assert!(h.contains("<td>&lt;3&gt;</td><td class=\"n\">4</td>"), "{h}");
        assert_eq!(h.matches("<tr>").count(), 3);
        assert!(h.contains("<p>Best point: x and more.</p>"), "{h}");
        assert_eq!(to_html("Engine `a<b>`; ok"), "<p>Engine <code>a&lt;b&gt;</code>; ok</p>");
        assert_eq!(to_html("odd `x"), "<p>odd `x</p>");
    }

    #[test]
    fn fenced_code_is_kept_and_escaped() {
        let h = to_html("```\na<b\n```\n");
        assert_eq!(h, "<pre>a&lt;b</pre>");
        assert_eq!(to_html("```\nnever closed"), "<pre>never closed</pre>");
    }
}
