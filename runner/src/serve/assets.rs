//! The server's own stylesheet and script, and the one Content-Security-Policy every response
//! carries: scripts and styles only by their SHA-256 digests (the report page's and these),
//! `data:` images, connections to this server only (the event streams), forms only to it (the
//! list's filters), and no framing. Nothing is loaded from elsewhere.

use crate::report::html::data_url::csp_hash;
use crate::report::html::page::own_assets;

/// The server pages' additions to the report page's stylesheet: wider, and the list's cells
/// wrap (its blocks fit a 1280-pixel window).
pub const CSS: &str = "
main{max-width:120rem}section.panel{margin-top:1.5rem}svg.llr{vertical-align:middle}svg.llr .track{fill:#eee;stroke:#111}
svg.llr .mark{fill:#111}svg.llr .mid{stroke:#888}form.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:end}
.pager{display:flex;gap:1rem}td.v{font-weight:600}
table.runs th,table.runs td{white-space:normal}table.runs td.n{white-space:nowrap}
table.runs td.v,table.runs td.w{max-width:15rem}table.runs th{max-width:11rem}
table.runs .t{white-space:nowrap}table.runs td.l{min-width:8rem}
table.workers th,table.workers td{white-space:normal}table.workers td.n{white-space:nowrap}
";

/// Live counts over server-sent events. The element `#live` names its stream
/// (`data-events`); each `counts` event is a list of runs whose fields replace the text of the
/// elements marked `data-live="ID.FIELD"` (text only, never markup) and move the LLR marker.
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
      document.querySelectorAll(sel('data-live',d.id+'.'+f[0])).forEach(function(el){el.textContent=f[1];});});
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
        "default-src 'none'; script-src {} {}; style-src {} {}; img-src data:; \
         connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        csp_hash(report_script),
        csp_hash(SCRIPT),
        csp_hash(report_css),
        csp_hash(CSS)
    )
}
