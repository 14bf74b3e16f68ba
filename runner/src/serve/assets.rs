//! The server's own stylesheet and script, and the one Content-Security-Policy every response
//! carries: scripts and styles only by their SHA-256 digests (the report page's and these),
//! `data:` images, connections to this server only (the event streams), forms only to it (the
//! list's filters), and no framing. Nothing is loaded from elsewhere.

use crate::report::html::data_url::csp_hash;
use crate::report::html::page::own_assets;

/// The server pages' additions to the report page's stylesheet: wider, and the list's cells
/// wrap (its blocks fit a 1280-pixel window).
pub const CSS: &str = "
main{max-width:120rem}section.panel{margin-top:1.5rem}form.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:end}
.pager{display:flex;gap:1rem}
table.runs th,table.runs td{white-space:normal}table.runs td.n{white-space:nowrap}
table.runs td.st,table.runs td.w{max-width:13rem}table.runs th{max-width:11rem}
table.runs .t{white-space:nowrap}table.runs td.l{min-width:8rem}
table.workers th,table.workers td{white-space:normal}table.workers td.n{white-space:nowrap}
";

/// The states' colours, on the list's rows and a run page's live box (which carries it, the
/// report page's stylesheet having none): a class `st-WORD` per [`State`] word, a tint with a
/// darker bar on the left, and the word itself in a badge, so that it reads without colour
/// too. The games bar is a `<progress>` element (the policy allows no inline style).
///
/// [`State`]: crate::state::State
pub const STATE_CSS: &str = "
.st-pending{--st:#5b7fa6;--st-bg:#e8eef6}.st-running{--st:#b8860b;--st-bg:#fff4cf}
.st-accepted{--st:#2e7d32;--st-bg:#dcf1dc}.st-rejected{--st:#c62828;--st-bg:#fbe0e0}
.st-ended{--st:#666;--st-bg:#f3f3f3}.st-stopped{--st:#8e5bb5;--st-bg:#f1e8f8}
.st-cancelled{--st:#888;--st-bg:#e6e6e6}.st-failed{--st:#a0410d;--st-bg:#fbe3d0}
table.runs tr[class^=st-] td{background:var(--st-bg)}table.runs tr[class^=st-] td.st{border-left:.4rem solid var(--st)}
.badge{display:inline-block;padding:0 .4rem;border:1px solid var(--st,#555);border-radius:.25rem;background:#fff;color:#111;white-space:nowrap}
progress.games{-webkit-appearance:none;appearance:none;width:8rem;height:.75rem;vertical-align:middle;border:1px solid #555;border-radius:2px;background:#fff;color:var(--st,#555)}
progress.games::-webkit-progress-bar{background:#fff}progress.games::-webkit-progress-value{background:var(--st,#555)}
progress.games::-moz-progress-bar{background:var(--st,#555)}
.livebox{display:block;max-width:60rem;border:2px solid var(--st,#111);border-left-width:.5rem;background:var(--st-bg,#fff);padding:.4rem .8rem;margin:.5rem 0}
.livebox p{margin:.1rem 0}.livebox .livehead{font-weight:600}
dl.figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(13rem,1fr));gap:.5rem 1.2rem;margin:.3rem 0}
dl.figures dt{font-size:.8rem;color:#333;text-transform:uppercase;letter-spacing:.03em}
dl.figures dd{margin:0;font-size:1.05rem;font-weight:600;font-variant-numeric:tabular-nums}dl.figures dd .dim{font-weight:400;font-size:.85rem}
svg.llr{vertical-align:middle}svg.llr .track{fill:#eee;stroke:#111}svg.llr .mark{fill:#111}svg.llr .mid{stroke:#888}
";

/// Live counts over server-sent events. The element `#live` names its stream
/// (`data-events`); each `counts` event is a list of runs whose fields replace the text of the
/// elements marked `data-live="ID.FIELD"` (text only, never markup; a `<progress>` or `<meter>`
/// takes the number as its value), move the LLR marker, and set the class `st-STATE` of the
/// elements marked `data-state-of="ID"` (the list's row, the run page's live box).
/// A hidden tab closes its stream and a visible one opens it again; an `end` event, or every
/// run ended on a run's page (`data-reload="1"`, reloaded once for its final state), stops it.
pub const SCRIPT: &str = "
(function(){
  var box=document.getElementById('live');
  if(!box||!window.EventSource)return;
  var url=box.getAttribute('data-events'),reload=box.getAttribute('data-reload')==='1';
  var es=null,done=false,n=0;
  function sel(a,v){return '['+a+'=\"'+CSS.escape(v)+'\"]';}
  function apply(d){
    (d.fields||[]).forEach(function(f){
      document.querySelectorAll(sel('data-live',d.id+'.'+f[0])).forEach(function(el){
        if(el.tagName==='PROGRESS'||el.tagName==='METER'){var v=parseFloat(f[1]);if(!isNaN(v))el.value=v;}
        else el.textContent=f[1];});});
    if(typeof d.state==='string'){
      document.querySelectorAll(sel('data-state-of',d.id)).forEach(function(el){
        el.className=el.className.replace(/(^|\\s)st-[a-z]+/g,'').trim();el.classList.add('st-'+d.state);});}
    if(typeof d.llr_at==='number'){
      document.querySelectorAll(sel('data-llr',d.id)).forEach(function(el){
        el.setAttribute('x',String(Math.round(d.llr_at*116)));});}}
  function close(){if(es){es.close();es=null;}}
  function open(){if(es||done)return;es=new EventSource(url);
    es.addEventListener('counts',function(e){var list=JSON.parse(e.data);var ended=list.length>0;
      list.forEach(function(d){apply(d);if(!d.ended)ended=false;});
      n+=1;box.setAttribute('data-updates',String(n));
      if(ended&&reload){done=true;close();location.reload();}});
    es.addEventListener('end',function(){done=true;close();box.setAttribute('data-ended','1');});}
  document.addEventListener('visibilitychange',function(){if(document.hidden)close();else open();});
  if(!document.hidden)open();
})();
";

/// The policy of every response (sent as a header).
pub fn csp() -> String {
    let (report_css, report_script) = own_assets();
    format!(
        "default-src 'none'; script-src {} {}; style-src {} {} {}; img-src data:; \
         connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        csp_hash(report_script),
        csp_hash(SCRIPT),
        csp_hash(report_css),
        csp_hash(CSS),
        csp_hash(STATE_CSS)
    )
}
