//! The run folder's plots (plot.svg of a sweep or match, a grid's heatmap, calibration
//! scatter plots: every *.svg beside run.json) shown as images, and links to the files beside the
//! page.
//!
//! A folder may come from anywhere (a shard, a CI artifact, a colleague), so its SVG text never
//! becomes part of the page's markup: each file is an `<img>` whose source is a base64 `data:`
//! URL. A browser draws an SVG image with its scripts off and its external loads blocked, and
//! base64 holds no character that could close the attribute, so nothing in the file can run or
//! change the page. The runner's plots carry their own colours and fonts (plotters writes them as
//! attributes), so they look the same outside the page's stylesheet.

use maud::{Markup, html};

use super::data_url::svg_data_url;
use super::input::RunFiles;

/// The `<img>` showing an SVG file's drawing, or `None` when the text holds no `<svg` element.
pub fn svg_image(name: &str, text: &str) -> Option<Markup> {
    text.contains("<svg").then(|| html! { img src=(svg_data_url(text)) alt={ "plot " (name) }; })
}

/// The figures section (empty when there is no SVG file).
/// `base` is put before each file's relative link (empty in report.html, beside its files; a
/// server's route to the run's files otherwise).
pub fn section(files: &RunFiles, base: &str) -> Option<Markup> {
    if files.svgs.is_empty() {
        return None;
    }
    Some(html! {
        section #figures {
            h2 { "Plots" }
            @for (name, text) in &files.svgs {
                @let link = html! { a href={ (base) (href(name)) } { (name) } };
                @match svg_image(name, text) {
                    Some(img) => figure.plotfile { (img) figcaption { (link) } },
                    None => p { (link) ": not shown (not an SVG drawing)." },
                }
            }
        }
    })
}

/// A relative href for a file name (percent-encoding what a URL cannot hold).
pub fn href(name: &str) -> String {
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
    // A path's bytes that need no encoding: RFC 3986's unreserved, `/` and a few sub-delims.
    const PATH: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~')
        .remove(b'/')
        .remove(b'=')
        .remove(b',')
        .remove(b'+')
        .remove(b'@');
    utf8_percent_encode(name, PATH).to_string()
}

/// Links to the files beside the page (`base` as in [`section`]).
pub fn files_section(files: &RunFiles, base: &str) -> Markup {
    html! {
        section #files {
            h2 { "Files" }
            ul.files { @for f in &files.files { li { a href={ (base) (href(f)) } { (f) } } } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attacks through a plot file: markup that closes `</svg>` early and adds an `<object>` with a
    /// `data:` HTML document, a `<meta http-equiv="refresh">`, a `<base href>`, a link to
    /// `java&#x09;script:`; and the older ones (script, event handler). None of it may reach the
    /// page as markup: the file is one base64 `data:` URL inside an `<img>`.
    #[test]
    fn svg_files_become_images_and_their_markup_never_reaches_the_page() {
        let attacks = [
            "<svg></svg><object data=\"data:text/html;base64,PHNjcmlwdD5wYXJlbnQuZG9jdW1lbnQudGl0bGU9J3B3bmVkJzwvc2NyaXB0Pg==\"></object><svg></svg>",
            "<svg></svg><meta http-equiv=\"refresh\" content=\"0;url=https://example.invalid/\"><svg></svg>",
            "<svg></svg><base href=\"https://example.invalid/\"><svg></svg>",
            "<svg><a href=\"java&#x09;script:alert(1)\"><text>x</text></a></svg>",
            "<svg onload=\"x()\"></svg>",
            "<svg><script>x()</script></svg>",
            "<svg><foreignObject><iframe src=\"x\"></iframe></foreignObject></svg>",
        ];
        for attack in attacks {
            let img = svg_image("plot.svg", attack).expect("an SVG drawing is shown").into_string();
            let url = svg_data_url(attack);
            assert_eq!(
                img,
                ["<img src=\"", &url, "\" alt=\"plot plot.svg\">"].concat(),
                "{attack}"
            );
            let payload = &url["data:image/svg+xml;base64,".len()..];
            assert!(
                payload.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)),
                "{attack}"
            );
            for bad in ["<object", "<meta", "<base", "script", "onload", "<svg"] {
                assert!(!img.contains(bad), "{bad} in the page from {attack}");
            }
        }
        assert!(svg_image("x.svg", "not svg").is_none());
        // A hostile file name is escaped in the alt text.
        let img = svg_image("\"><script>.svg", "<svg/>").unwrap().into_string();
        assert!(img.contains("alt=\"plot &quot;&gt;&lt;script&gt;.svg\""), "{img}");
    }

    #[test]
    fn hrefs_are_relative_and_encoded() {
        assert_eq!(href("points/t_mid=0.9/"), "points/t_mid=0.9/");
        assert_eq!(href("a b#\"c"), "a%20b%23%22c");
    }
}
