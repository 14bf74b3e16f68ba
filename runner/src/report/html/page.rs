//! The page around the sections: head (charset, viewport, title, the reload while the run is
//! live), the stylesheet (plain, readable without colour, phone width, print) and the small
//! script that sorts tables and filters the games list.
//!
//! Its Content-Security-Policy allows nothing but that script and that stylesheet (named by their
//! SHA-256 digests) and `data:` images (the plots): no other script, style, frame, object, font,
//! connection or form target, and no `<base>`.

use super::data_url::csp_hash;
use super::escape::esc;

/// Seconds between reloads of a live run's page.
pub const REFRESH_S: u32 = 10;

const CSS: &str = "
body{font:16px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#111;background:#fff}
main{max-width:64rem;margin:0 auto;padding:0 1rem 3rem}
h1{font-size:1.5rem;margin:1rem 0 .3rem}h2{font-size:1.2rem;border-bottom:1px solid #999;margin-top:2rem}
h3{font-size:1rem}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3rem 1rem;margin:.3rem 0}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.5rem 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #888;padding:.2rem .45rem;text-align:left;white-space:nowrap}
th{background:#eee;font-weight:600}td.n,th.n{text-align:right}
table.sortable th{cursor:pointer}
th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;border:1px solid #ccc;padding:.5rem;font-size:.85rem}
.state{font-weight:600}ul.verdict li{font-weight:600;margin:.2rem 0}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem}dl.facts dt{font-weight:600}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.cards{display:flex;flex-wrap:wrap;gap:1rem}.card{margin:0;border:1px solid #999;padding:.5rem}
svg{max-width:100%;height:auto}svg.plot{max-width:48rem}svg .dot{fill:#111}svg text{font-size:12px;fill:#111}
svg .bar{fill:#777;stroke:#111}svg .axis{stroke:#111}svg .grid{stroke:#ccc}
svg .level{stroke:#111;stroke-dasharray:4 4}svg .line{fill:none;stroke:#111;stroke-width:2}
figure.plotfile{margin:1rem 0}figure.plotfile img{max-width:100%;height:auto;display:block}
ol.games{list-style:none;padding-left:0}ol.games summary{cursor:pointer}.dim{color:#555}
.note{color:#333;font-size:.9rem}
.live{border:2px solid #111;padding:.3rem .6rem;display:inline-block}
@media (max-width:40rem){body{font-size:15px}dl.facts{grid-template-columns:1fr}}
@media print{.noprint,.live,nav{display:none}main{max-width:none}a{color:inherit}
details>summary{list-style:none}section{break-inside:auto}h2{break-after:avoid}}
";

const SCRIPT: &str = "
(function(){
  function key(td){var t=(td?td.textContent:'').trim();var m=t.match(/^[+-]?\\d+(\\.\\d+)?/);
    return m?{n:parseFloat(m[0]),t:t}:{n:NaN,t:t};}
  function sortBy(th){var table=th.closest('table');var tb=table.tBodies[0];if(!tb)return;
    var i=Array.prototype.indexOf.call(th.parentNode.children,th);
    var asc=th.getAttribute('aria-sort')!=='ascending';
    Array.prototype.forEach.call(th.parentNode.children,function(h){h.removeAttribute('aria-sort');});
    th.setAttribute('aria-sort',asc?'ascending':'descending');
    var rows=Array.prototype.slice.call(tb.rows);
    rows.sort(function(a,b){var x=key(a.cells[i]),y=key(b.cells[i]);
      var c=(!isNaN(x.n)&&!isNaN(y.n))?x.n-y.n:x.t.localeCompare(y.t);return asc?c:-c;});
    rows.forEach(function(r){tb.appendChild(r);});}
  document.querySelectorAll('table.sortable th').forEach(function(th){
    th.tabIndex=0;th.title='sort by this column';
    th.addEventListener('click',function(){sortBy(th);});
    th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();sortBy(th);}});});
  var f=document.getElementById('filter');
  if(f){f.addEventListener('input',function(){var q=f.value.toLowerCase();
    document.querySelectorAll('li.game').forEach(function(li){
      var s=li.querySelector('summary');li.hidden=q!==''&&s.textContent.toLowerCase().indexOf(q)<0;});});}
  function openHash(){var m=location.hash.match(/^#game-(\\d+)$/);if(!m)return;
    var li=document.getElementById('game-'+m[1]);if(li){li.querySelector('details').open=true;}}
  window.addEventListener('hashchange',openHash);openHash();
  document.documentElement.setAttribute('data-script','ok');
})();
";

/// The page's Content-Security-Policy: only its own script and stylesheet, and `data:` images.
/// (`frame-ancestors` is left out: a `<meta>` policy cannot hold it, and browsers say so in the
/// console.)
pub fn csp() -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; \
         form-action 'none'",
        csp_hash(SCRIPT),
        csp_hash(CSS)
    )
}

/// What a page served over HTTP has instead of report.html's own policy and reload: a script
/// of the server's (live counts over server-sent events) and the policy that allows it, sent
/// as a header by the server rather than as a `<meta>` element here.
pub struct Served<'a> {
    /// HTML put first in the body (the server's live counts), escaped by its maker.
    pub banner: &'a str,
    /// A script added after the page's own; its digest must be in the server's policy.
    pub script: &'a str,
    /// Put before the relative links to the run's files (the server's route to them, e.g.
    /// `/run/ID/files/`), so they resolve under the server's URL.
    pub files_base: &'a str,
    /// HTML put after the sections (a fleet run's workers, refusals and artifacts), escaped by
    /// its maker.
    pub extra: &'a str,
    /// The run's id in the server's live stream: the lines it keeps current are marked with it
    /// (see `results::verdict_section`); `None` for a page without a stream.
    pub live_id: Option<&'a str>,
}

/// The page's stylesheet and script, for a server's policy that allows them by digest.
pub fn own_assets() -> (&'static str, &'static str) {
    (CSS, SCRIPT)
}

/// The whole document around `body`. A live page reloads itself every [`REFRESH_S`] seconds.
pub fn document(title: &str, live: bool, nav: &[(&str, &str)], body: &str) -> String {
    document_as(title, live, nav, body, None)
}

/// [`document`], or with `served` the page as a server sends it: no reload, no `<meta>`
/// policy (the server's header holds it), the server's banner and script added.
pub fn document_as(
    title: &str,
    live: bool,
    nav: &[(&str, &str)],
    body: &str,
    served: Option<&Served>,
) -> String {
    let refresh = if live && served.is_none() {
        format!("<meta http-equiv=\"refresh\" content=\"{REFRESH_S}\">\n")
    } else {
        String::new()
    };
    let policy = match served {
        None => format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n", csp()),
        Some(_) => String::new(),
    };
    let (banner, after, extra) = match served {
        Some(s) => (s.banner, s.extra, format!("<script>{}</script>\n", s.script)),
        None => ("", "", String::new()),
    };
    let mut links = String::new();
    for (id, text) in nav {
        links.push_str(&format!("<li><a href=\"#{id}\">{text}</a></li>"));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         {policy}<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n{refresh}\
         <title>{t}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n<h1>{t}</h1>\n\
         <nav aria-label=\"sections\"><ul>{links}</ul></nav>\n{banner}{body}{after}\n</main>\n<script>{SCRIPT}</script>\n{extra}</body>\n</html>\n",
        t = esc(title),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_pages_reload_and_ended_pages_do_not() {
        let live = document("run <1>", true, &[], "");
        assert!(live.contains("<meta http-equiv=\"refresh\" content=\"10\">"));
        assert!(live.contains("<title>run &lt;1&gt;</title>"));
        let ended = document("run", false, &[("games", "Games")], "<p>x</p>");
        assert!(!ended.contains("http-equiv=\"refresh\""));
        assert!(ended.contains("<a href=\"#games\">Games</a>"));
        assert!(ended.contains("name=\"viewport\"") && ended.contains("@media print"));
    }

    #[test]
    fn the_policy_allows_only_the_pages_own_script_and_style() {
        let page = document("run", false, &[], "");
        let policy = csp();
        assert!(page.contains(&format!(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">"
        )));
        assert!(policy.starts_with("default-src 'none'; "), "{policy}");
        assert!(policy.contains(&format!("script-src {};", csp_hash(SCRIPT))), "{policy}");
        assert!(policy.contains(&format!("style-src {};", csp_hash(CSS))), "{policy}");
        assert!(policy.contains("img-src data:;") && policy.contains("base-uri 'none'"));
        assert!(!policy.contains("unsafe"), "{policy}");
        // The digests are of exactly what the page holds.
        assert!(page.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(page.contains(&format!("<style>{CSS}</style>")));
    }
}
