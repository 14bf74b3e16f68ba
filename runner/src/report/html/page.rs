//! The page around the sections: head (charset, viewport, title, the reload while the run is
//! live), the stylesheet (plain, readable without colour, phone width, print) and the small
//! script that sorts tables and filters the games list.
//!
//! Its Content-Security-Policy allows nothing but that script and that stylesheet (named by their
//! SHA-256 digests) and `data:` images (the plots): no other script, style, frame, object, font,
//! connection or form target, and no `<base>`.

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::data_url::csp_hash;

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

/// What a page served over HTTP shows besides the run's sections: a server's live counts, its
/// routes to the run's files, its own sections. Part of the page a server keeps between visits
/// ([`Page`]); what differs by viewer goes in [`Viewer`].
pub struct Served<'a> {
    /// Put first in the body (the server's live counts).
    pub banner: Markup,
    /// Put before the relative links to the run's files (the server's route to them, e.g.
    /// `/run/ID/files/`), so they resolve under the server's URL.
    pub files_base: &'a str,
    /// Put after the sections (a fleet run's workers, refusals and artifacts).
    pub extra: Markup,
    /// The run's id in the server's live stream: the lines it keeps current are marked with it
    /// (see `results::verdict_section`); `None` for a page without a stream.
    pub live_id: Option<&'a str>,
}

/// What a served page adds for one request: the server's script (live counts over server-sent
/// events; its digest must be in the server's policy, sent as a header) and the viewer's
/// actions (forms for an owner or approver).
pub struct Viewer<'a> {
    pub script: &'a str,
    pub actions: Option<Markup>,
}

/// A run's page before its document: its title, whether it reloads itself (a live report.html),
/// its navigation and its sections.
pub struct Page {
    pub title: String,
    pub reload: bool,
    pub nav: Vec<(&'static str, &'static str)>,
    pub main: Markup,
}

/// The page's stylesheet and script, for a server's policy that allows them by digest.
pub fn own_assets() -> (&'static str, &'static str) {
    (CSS, SCRIPT)
}

/// The whole document of `page`: report.html's, with its own `<meta>` policy and (while the
/// run is live) a reload every [`REFRESH_S`] seconds; or with `viewer` the page as a server
/// sends it: no reload, no `<meta>` policy (the server's header holds it), the server's script
/// and the viewer's actions added.
pub fn document(page: &Page, viewer: Option<&Viewer>) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                @if viewer.is_none() { meta http-equiv="Content-Security-Policy" content=(csp()); }
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if page.reload && viewer.is_none() { meta http-equiv="refresh" content=(REFRESH_S); }
                title { (page.title) }
                style { (PreEscaped(CSS)) }
            }
            body {
                main {
                    h1 { (page.title) }
                    nav aria-label="sections" {
                        ul { @for (id, text) in &page.nav { li { a href={ "#" (id) } { (text) } } } }
                    }
                    (page.main)
                    @if let Some(a) = viewer.and_then(|v| v.actions.as_ref()) { (a) }
                }
                script { (PreEscaped(SCRIPT)) }
                @if let Some(v) = viewer { script { (PreEscaped(v.script)) } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(title: &str, reload: bool, nav: Vec<(&'static str, &'static str)>) -> Page {
        Page { title: title.into(), reload, nav, main: html! { p { "x" } } }
    }

    #[test]
    fn live_pages_reload_and_ended_pages_do_not() {
        let live = document(&page("run <1>", true, vec![]), None).into_string();
        assert!(live.contains("<meta http-equiv=\"refresh\" content=\"10\">"), "{live}");
        assert!(live.contains("<title>run &lt;1&gt;</title>"));
        let ended = document(&page("run", false, vec![("games", "Games")]), None).into_string();
        assert!(!ended.contains("http-equiv=\"refresh\""));
        assert!(ended.contains("<a href=\"#games\">Games</a>"));
        assert!(ended.contains("name=\"viewport\"") && ended.contains("@media print"));
        let viewer = Viewer { script: "s()", actions: Some(html! { section #actions {} }) };
        let served = document(&page("run", true, vec![]), Some(&viewer)).into_string();
        assert!(!served.contains("http-equiv"), "{served}");
        assert!(served.contains("<section id=\"actions\"></section></main>"), "{served}");
        assert!(served.contains("<script>s()</script></body>"), "{served}");
    }

    #[test]
    fn the_policy_allows_only_the_pages_own_script_and_style() {
        let doc = document(&page("run", false, vec![]), None).into_string();
        let policy = csp();
        assert!(doc.contains(&format!(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">"
        )));
        assert!(policy.starts_with("default-src 'none'; "), "{policy}");
        assert!(policy.contains(&format!("script-src {};", csp_hash(SCRIPT))), "{policy}");
        assert!(policy.contains(&format!("style-src {};", csp_hash(CSS))), "{policy}");
        assert!(policy.contains("img-src data:;") && policy.contains("base-uri 'none'"));
        assert!(!policy.contains("unsafe"), "{policy}");
        // The digests are of exactly what the page holds.
        assert!(doc.contains(&["<script>", SCRIPT, "</script>"].concat()));
        assert!(doc.contains(&["<style>", CSS, "</style>"].concat()));
    }
}
