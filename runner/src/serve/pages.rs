//! The server's own pages in maud: every value spliced into `html!` is escaped (text and
//! attributes) unless wrapped in `PreEscaped`, which here holds only the constant stylesheets
//! and scripts and the report renderer's output (escaped by that renderer).

use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::plan::run_plan::RunPlan;
use crate::store::GameRecord;
use crate::store::pgn::PgnStyle;

use crate::fleet::queue::Refusal;
use crate::fleet::queue::builds::BuildRow;
use crate::fleet::queue::dashboard::RunArtifact;
use crate::fleet::queue::workers::WorkerRow;
use crate::fleet::worker_stats::KeyStat;

use super::assets;
use super::games::Page;
use super::view::{LiveCounts, RunView, State};
use crate::report::html::page::own_assets;

/// Finished runs per page of the list.
pub const FINISHED_PER_PAGE: usize = 50;

/// The filter's value for every ended state (the Finished panel).
const FINISHED: &str = "finished";

/// The list's panels: the states grouped by what a reader does with them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Pending,
    Running,
    Finished,
}

impl Group {
    fn of(s: State) -> Group {
        match s {
            State::Pending => Group::Pending,
            State::Running => Group::Running,
            _ => Group::Finished,
        }
    }

    fn id(self) -> &'static str {
        match self {
            Group::Pending => "pending",
            Group::Running => "running",
            Group::Finished => FINISHED,
        }
    }

    fn title(self) -> &'static str {
        match self {
            Group::Pending => "Pending approval",
            Group::Running => "Running",
            Group::Finished => "Finished",
        }
    }
}

/// A page of the server around `body`; `events` is the live stream it listens to, if any.
pub fn layout(title: &str, events: Option<&str>, body: Markup) -> Markup {
    let (css, script) = own_assets();
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(css)) }
                style { (PreEscaped(assets::CSS)) }
                style { (PreEscaped(assets::STATE_CSS)) }
            }
            body {
                main {
                    nav aria-label="site" { ul { li { a href="/" { "Runs" } } li { a href="/workers" { "Workers" } } li { a href="/metrics" { "Metrics" } } } }
                    h1 { (title) }
                    @if let Some(url) = events {
                        p.live #live data-events=(url) { "Live: counts update as games are played." }
                    }
                    (body)
                }
                script { (PreEscaped(script)) }
                script { (PreEscaped(assets::SCRIPT)) }
            }
        }
    }
}

/// The filters of the list, as the URL carries them.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct Filters {
    /// One of [`State`]'s words, or `finished` for every ended state (all when empty).
    #[serde(default)]
    pub state: String,
    /// Text in the id, an engine, an option that differs, the kind or the owner.
    #[serde(default)]
    pub q: String,
    /// The owner's name, exactly (all when empty).
    #[serde(default)]
    pub owner: String,
    /// Text in an engine's name.
    #[serde(default)]
    pub engine: String,
    /// The page of finished runs, from 0.
    #[serde(default)]
    pub page: usize,
}

/// `/`: the runs in panels by state.
pub fn index(runs: &[RunView], f: &Filters, notes: &[String]) -> Markup {
    let q = f.q.to_lowercase();
    let engine = f.engine.to_lowercase();
    let wanted = State::parse(&f.state);
    let finished = f.state == FINISHED;
    let mut owners: Vec<&str> = runs.iter().filter_map(|r| r.owner.as_deref()).collect();
    owners.sort_unstable();
    owners.dedup();
    let shown: Vec<&RunView> = runs
        .iter()
        .filter(|r| {
            r.matches(&q)
                && r.has_engine(&engine)
                && (f.owner.is_empty() || r.owner.as_deref() == Some(f.owner.as_str()))
                && wanted.is_none_or(|s| s == r.state)
                && (!finished || r.state.has_ended())
        })
        .collect();
    let fleet = runs.iter().any(|r| r.source == "fleet");
    let group_of = |group: Group| {
        let mut g: Vec<&&RunView> = shown.iter().filter(|r| Group::of(r.state) == group).collect();
        if group == Group::Running {
            // By priority, highest first (a stable sort: newest first within one).
            g.sort_by_key(|r| std::cmp::Reverse(r.priority.unwrap_or(0)));
        }
        g
    };
    let body = html! {
        form.filters method="get" action="/" {
            label { "State " select name="state" {
                option value="" selected[wanted.is_none() && !finished] { "all" }
                @for s in State::ALL {
                    option value=(s.name()) selected[wanted == Some(s)] { (s.label()) }
                }
                option value=(FINISHED) selected[finished] { "any ended" }
            } }
            @if !owners.is_empty() || !f.owner.is_empty() {
                label { "Owner " select name="owner" {
                    option value="" selected[f.owner.is_empty()] { "all" }
                    @if !f.owner.is_empty() && !owners.contains(&f.owner.as_str()) {
                        option value=(f.owner) selected { (f.owner) }
                    }
                    @for o in &owners { option value=(o) selected[f.owner == *o] { (o) } }
                } }
            }
            label { "Engine " input type="search" name="engine" value=(f.engine); }
            label { "Text " input type="search" name="q" value=(f.q); }
            button type="submit" { "Filter" }
            a href="/" { "clear" }
        }
        @for n in notes { p.note { (n) } }
        @for group in [Group::Pending, Group::Running, Group::Finished] {
            @let runs = group_of(group);
            @if !runs.is_empty() || (group == Group::Running && wanted.is_none() && !finished) {
                section.panel id=(group.id()) {
                    h2 { (group.title()) " (" (runs.len()) ")" }
                    @if group == Group::Finished {
                        @let from = (f.page * FINISHED_PER_PAGE).min(runs.len());
                        @let to = (from + FINISHED_PER_PAGE).min(runs.len());
                        (runs_table(&runs[from..to], fleet))
                        (pager(f, from, to, runs.len()))
                    } @else if runs.is_empty() {
                        p { "None." }
                    } @else {
                        (runs_table(&runs, fleet))
                    }
                }
            }
        }
    };
    layout("Runs", Some("/events"), body)
}

fn pager(f: &Filters, from: usize, to: usize, total: usize) -> Markup {
    let link = |page: usize| {
        format!(
            "/?state={}&owner={}&engine={}&q={}&page={page}#finished",
            url_escape(&f.state),
            url_escape(&f.owner),
            url_escape(&f.engine),
            url_escape(&f.q)
        )
    };
    html! {
        p.pager {
            @if f.page > 0 { a href=(link(f.page - 1)) { "newer" } }
            span { (if total == 0 { 0 } else { from + 1 }) "–" (to) " of " (total) }
            @if to < total { a href=(link(f.page + 1)) { "older" } }
        }
    }
}

/// `s` for a URL's query value: every byte but RFC 3986's unreserved ones percent-encoded.
pub fn url_escape(s: &str) -> String {
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
    const QUERY_VALUE: &AsciiSet =
        &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');
    utf8_percent_encode(s, QUERY_VALUE).to_string()
}

/// The list's table: a row per run, coloured by its state (a class `st-WORD` per state, its
/// word also in the first cell), each cell a small block of stacked lines (as the anchors'
/// lists show a test), so that every column fits a 1280-pixel window.
fn runs_table(runs: &[&&RunView], fleet: bool) -> Markup {
    html! {
        div.scroll { table.sortable.runs { thead { tr {
            th scope="col" { "state" } th scope="col" { "run" } th scope="col" { "engines · limits" }
            th scope="col" { "games · W-D-L · pentanomial" } th scope="col" { "Elo · nElo (95 %)" }
            th scope="col" { "LLR" }
            @if fleet {
                th scope="col" { "owner · priority · throughput" }
                th scope="col" { "share now (target) · workers · pairs/h · time left" }
            }
        } }
        tbody { @for r in runs { (run_row(r, fleet)) } } } }
    }
}

/// A part of the whole as a percentage.
fn pct(x: f64) -> String {
    format!("{:.0} %", 100.0 * x)
}

/// The element marked with run `id`'s field `k`, kept current by the script.
fn live_text(id: &str, live: &LiveCounts, k: &str) -> Markup {
    html! { span data-live=(format!("{id}.{k}")) { (live.field(k).unwrap_or("n/a")) } }
}

/// A run's state as a badge: its word (with H1 / H0), kept current by the script.
fn state_badge(r: &RunView, live: &LiveCounts) -> Markup {
    html! { strong.badge { (live_text(&r.id, live, "state")) } }
}

/// The games played against those planned, as a bar the script keeps current (an element, so
/// no inline style), with the count in words beside it; only the count without a plan.
fn games_bar(r: &RunView, live: &LiveCounts) -> Markup {
    let key = format!("{}.games", r.id);
    let sprt = r.lead().and_then(|p| p.summary.as_ref()).is_some_and(|s| s.sprt.is_some());
    html! {
        (live_text(&r.id, live, "games"))
        @if let Some(n) = r.games_planned {
            " of " @if sprt { "at most " } (n) " games"
            br;
            progress.games data-live=(key) max=(n) value=(r.games.min(n))
                title=(format!("{} of {n} games played", r.games)) { (r.progress().map_or_else(String::new, pct)) }
        } @else { " games" }
    }
}

fn run_row(r: &RunView, fleet: bool) -> Markup {
    let live = LiveCounts::of(r);
    let cell = |k: &str| live_text(&r.id, &live, k);
    let sprt = r.lead().and_then(|p| p.summary.as_ref()).and_then(|s| s.sprt.as_ref());
    let dash = || "–".to_string();
    let running = r.state == State::Running;
    html! {
        tr class=(format!("st-{}", r.state.name())) data-state-of=(r.id) {
            td.st { (state_badge(r, &live)) br; span.dim { (r.state_note) } }
            td { a href=(format!("/run/{}", url_escape(&r.id))) { (r.id) } br; span.dim { (r.kind) }
                @if let Some(t) = &r.submitted { br; span.dim.t { "submitted " (t) } }
                @if let Some(t) = &r.finished { br; span.dim.t { "finished " (t) } } }
            td { (r.engines.join(" vs "))
                @for o in &r.options { br; span.dim { (o) } }
                @if r.pairings.len() > 1 { br; span.dim { (r.pairings.len()) " pairings" } }
                br; span.dim { (r.limits) } }
            td.n { (games_bar(r, &live)) br; (cell("wdl")) br; span.dim { (cell("penta")) } }
            td.n { (cell("elo")) br; span.dim { "nElo " (cell("nelo")) } }
            td.l {
                @if let Some(s) = sprt {
                    (llr_bar(&r.id, live.llr_at.unwrap_or(0.5)))
                    " " (cell("llr"))
                    br; span.dim { "[" (format!("{:.2}", s.lower_bound)) ", " (format!("{:.2}", s.upper_bound)) "], elo " (s.elo0) " to " (s.elo1) }
                } @else { "n/a" }
            }
            @if fleet {
                td { (r.owner.as_deref().unwrap_or(""))
                    br; span.dim { "priority " (r.priority.map_or_else(dash, |p| p.to_string())) }
                    @if let Some(t) = r.throughput { br; span.dim { "throughput " (t) } } }
                td.w { @if running {
                    (r.share_now.map_or_else(|| "n/a".into(), pct))
                    " (" (r.share_target.map_or_else(|| "n/a".into(), pct)) ")"
                    br; (workers_text(r.workers)) ", "
                    (r.pairs_per_hour.map_or_else(|| "n/a".into(), |x| format!("{x:.0}"))) " pairs/h"
                    br; span.dim { (r.time_left.clone().unwrap_or_else(dash)) }
                } @else { (dash()) } }
            }
        }
    }
}

/// "1 worker", "3 workers", "– workers".
fn workers_text(n: Option<i64>) -> String {
    match n {
        Some(1) => "1 worker".into(),
        Some(n) => format!("{n} workers"),
        None => "– workers".into(),
    }
}

/// The LLR as a marker on a track from the lower bound (left) to the upper (right). Drawn as
/// SVG attributes, not styles, so the policy needs no inline style.
fn llr_bar(id: &str, at: f64) -> Markup {
    let x = (at * 116.0).round();
    html! {
        svg.llr width="120" height="14" viewBox="0 0 120 14" role="img" aria-label="LLR between its bounds" {
            rect.track x="0" y="3" width="120" height="8" {}
            line.mid x1="60" y1="0" x2="60" y2="14" {}
            rect.mark data-llr=(id) x=(x) y="0" width="4" height="14" {}
        }
    }
}

/// The banner of a run page served live: its state and counts as labelled figures, marked
/// for the script, and what of the page they keep current (the Games heading, the first
/// pairing's verdict line) and what not. It carries the state stylesheet (allowed by its digest
/// in the server's policy), since the report page's own does not colour states.
pub fn run_banner(r: &RunView, events: &str) -> Markup {
    let live = LiveCounts::of(r);
    let cell = |k: &str| live_text(&r.id, &live, k);
    let sprt = r.lead().and_then(|p| p.summary.as_ref()).and_then(|s| s.sprt.as_ref());
    let lead = match r.pairings.len() {
        0 | 1 => String::new(),
        n => format!(" (the first of {n} pairings)"),
    };
    html! {
        style { (PreEscaped(assets::STATE_CSS)) }
        section #live class=(format!("live livebox st-{}", r.state.name())) data-state-of=(r.id)
            data-events=(events) data-reload="1" aria-label="Live counts" {
            p.livehead { "Live" (lead) }
            dl.figures {
                div { dt { "State" } dd { (state_badge(r, &live)) } }
                div { dt { "Games" } dd { (games_bar(r, &live)) } }
                div { dt { "W-D-L" } dd { (cell("wdl")) } }
                div { dt { "Pentanomial" } dd { (cell("penta")) br; span.dim { "LL LD DD WD WW" } } }
                div { dt { "Elo (95 %)" } dd { (cell("elo")) } }
                div { dt { "nElo (95 %)" } dd { (cell("nelo")) } }
                @if let Some(s) = sprt {
                    div { dt { "LLR" } dd { (cell("llr")) " in [" (format!("{:.2}", s.lower_bound)) ", " (format!("{:.2}", s.upper_bound)) "]"
                        br; (llr_bar(&r.id, live.llr_at.unwrap_or(0.5)))
                        br; span.dim { "SPRT elo " (s.elo0) " to " (s.elo1) } } }
                }
            }
        }
        (live_note(r))
    }
}

/// What a live run page keeps current and what it does not, said under its live box.
fn live_note(r: &RunView) -> Markup {
    let lead =
        if r.pairings.len() > 1 { "the first pairing's verdict line" } else { "the verdict line" };
    html! {
        p.note #live-note {
            "These counts, the Games heading and " (lead) " update as games are played. "
            "The tables, plots and other sections are as of this page's loading ("
            (r.games) " games): reload for newer ones. The page reloads itself once the run has ended."
        }
    }
}

/// The note of a fleet run's page made while its games are still being read (the first visit
/// to a long run): what is complete and what is not yet.
pub fn gathering(held: i64, stored: i64) -> Markup {
    html! {
        p.note #gathering {
            "Reading this run's stored games in the background: " (held) " of " (stored)
            " so far. The verdict, the score table and the pentanomial are the database's counts and complete; "
            "the sections made from the games themselves (terminations, time use, faults, the LLR trace) cover those read so far. Reload for more."
        }
    }
}

/// The link to the paged games, put where report.html lists its games.
pub fn games_link(id: &str, games: u64) -> Markup {
    let base = format!("/run/{}", url_escape(id));
    html! {
        section #games { h2 { "Games (" span data-live=(format!("{id}.games")) { (games) } ")" }
            p { a href=(format!("{base}/games")) { "Browse the games" } ", or download "
                a href=(format!("{base}/games.pgn")) { "games.pgn" } " and "
                a href=(format!("{base}/games.jsonl")) { "games.jsonl" } "." } }
    }
}

/// How a games page is paged: a local run's by line of games.jsonl, a fleet run's by schedule
/// position of its pairs (the next page starts at the first pair not shown).
pub enum Paging {
    Lines { offset: usize, limit: usize, total: u64 },
    Pairs { from: usize, next: Option<usize>, limit: usize },
}

/// `/run/ID/games`: one page of games, each opening to its PGN.
pub fn games_page(id: &str, plan: Option<&RunPlan>, page: &Page, paging: &Paging) -> Markup {
    let base = format!("/run/{}", url_escape(id));
    let at = |offset: usize, limit: usize| format!("{base}/games?offset={offset}&limit={limit}");
    let body = html! {
        p { a href=(base) { "Back to the run" } " · download " a href=(format!("{base}/games.pgn")) { "games.pgn" } " · " a href=(format!("{base}/games.jsonl")) { "games.jsonl" } }
        p.pager {
            @match paging {
                Paging::Lines { offset, limit, total } => {
                    @if *offset > 0 { a href=(at(offset.saturating_sub(*limit), *limit)) { "previous" } }
                    span { "games " (offset + 1) "–" (offset + page.games.len()) " of " (total) }
                    @if page.more { a href=(at(offset + limit, *limit)) { "next" } }
                }
                Paging::Pairs { from, next, limit } => {
                    @if *from > 0 { a href=(at(from.saturating_sub(limit.div_ceil(2)), *limit)) { "previous" } }
                    span { "pairs from " (from + 1) ": " (page.games.len()) " games" }
                    @if let Some(n) = next { a href=(at(*n, *limit)) { "next" } }
                }
            }
        }
        ol.games {
            @for (i, r) in &page.games {
                li.game id=(format!("game-{}", i + 1)) { details {
                    summary { (i + 1) ". " (r.white) " – " (r.black) ": " strong { (r.result.pgn()) } ", " (r.termination.json_str()) ", " (r.plies) " plies, opening #" (r.opening) " " span.dim { "(" (r.label) ")" } }
                    pre.pgn { (pgn_of(r, plan)) }
                } }
            }
        }
    };
    layout(&format!("Games of {id}"), None, body)
}

/// A game's PGN (moves replayed for SAN), or its moves in UCI when it cannot be made.
fn pgn_of(r: &GameRecord, plan: Option<&RunPlan>) -> String {
    plan.and_then(|p| r.to_pgn_with(p, PgnStyle::default(), &[]).ok())
        .unwrap_or_else(|| format!("[FEN \"{}\"]\n{}", r.fen, r.moves.join(" ")))
}

/// A page saying what went wrong (404, 500), the message escaped.
pub fn error_page(title: &str, message: &str) -> Markup {
    layout(title, None, html! { p { (message) } })
}

/// `/workers`: the workers as `runner workers` lists them (its columns, its state words and
/// rates), and under the table the runs each refused with the reasons.
pub fn workers_page(rows: &[WorkerRow], all: bool) -> Markup {
    use crate::fleet::workers::{ago, pairs_per_hour, state, worker_name};
    let body = html! {
        p { @if all { "Every worker that registered. " a href="/workers" { "Only those alive or seen lately" } }
            @else { "Workers alive or seen in the last hour. " a href="/workers?all=true" { "Every worker" } } }
        @if rows.is_empty() { p { "No worker." } } @else {
        div.scroll { table.sortable.workers { thead { tr {
            th scope="col" { "worker" } th scope="col" { "host" } th scope="col" { "cpu" }
            th scope="col" { "cores" } th scope="col" { "conc" } th scope="col" { "version" }
            th scope="col" { "state" } th scope="col" { "last heartbeat" } th scope="col" { "runs now" }
            th scope="col" { "pairs/h" } th scope="col" { "games" } th scope="col" { "crashes" }
            th scope="col" { "time losses" }
        } }
        tbody { @for w in rows { tr {
            td { (worker_name(w)) } td { (w.host) } td { (w.cpu.as_deref().unwrap_or("unknown")) }
            td.n { (w.cores.map_or_else(|| "-".into(), |c| c.to_string())) }
            td.n { (w.concurrency) } td { (w.version.as_deref().unwrap_or("-")) }
            td { (state(w)) } td { (w.heartbeat) " (" (ago(w.heartbeat_ago)) " ago)" }
            td.n { (w.runs_now) }
            td.n { (pairs_per_hour(w).map_or_else(|| "-".into(), |r| format!("{r:.0}"))) }
            td.n { (w.games) } td.n { (w.crashes) } td.n { (w.time_losses) }
        } } } } }
        @let refused: Vec<(&WorkerRow, &(i64, String))> = rows.iter().flat_map(|w| w.refusals.iter().map(move |r| (w, r))).collect();
        @if !refused.is_empty() {
            h2 { "Refusals" }
            ul { @for (w, (run, why)) in &refused {
                li { (worker_name(w)) " refused " a href=(format!("/run/{}{run}", super::FLEET_PREFIX)) { "run " (run) } ": " (why) }
            } }
        }
        }
    };
    layout("Workers", None, body)
}

/// A fleet run's own sections: each worker key's pairs, score and residual against the rest
/// of the run with its flag, the refusals with their reasons, and the artifacts it names.
pub fn fleet_sections(
    run: i64,
    keys: &[KeyStat],
    refusals: &[Refusal],
    artifacts: &[RunArtifact],
    builds: &[BuildRow],
) -> Markup {
    html! {
        section #workers { h2 { "Workers" }
            @if keys.is_empty() { p { "No worker has reported a pair yet." } } @else {
                p.note { "Each worker key's pairs against the keys not flagged: chi-square over LL+LD, DD, WD+WW per pairing (a sparse cell pooled with its neighbour), the residual as a normal z; the worst key is flagged first, below p = "
                    (crate::fleet::worker_stats::FLAG_P) " over the keys judged, and the others judged again without it." }
                div.scroll { table.sortable { thead { tr {
                    th scope="col" { "worker key" } th scope="col" { "pairs" } th scope="col" { "score" }
                    th scope="col" { "residual" } th scope="col" { "p" } th scope="col" { "flag" }
                } }
                tbody { @for k in keys { tr {
                    td { (k.key_name) } td.n { (k.pairs) } td.n { (format!("{:.1} %", 100.0 * k.score)) }
                    @match &k.residual {
                        Some(r) => { td.n { (format!("{:.1}", r.z)) } td.n { (format!("{:.2e}", r.p)) } }
                        None => { td { "-" } td { "too few pairs" } }
                    }
                    td { @if k.flagged { strong { "FLAGGED" } ": " code { "runner purge " (run) " --worker " (k.key_name) } " plays its pairs again" } }
                } } } } }
            }
        }
        section #refusals { h2 { "Refusals" }
            @if refusals.is_empty() { p { "No worker key refused this run." } } @else {
                ul { @for r in refusals { li { strong { (r.key_name) } ": " (r.reason) } } }
            }
        }
        section #artifacts { h2 { "Artifacts" }
            @if artifacts.is_empty() { p { "The run names no artifact (its engines are found on the workers)." } } @else {
                div.scroll { table { thead { tr {
                    th scope="col" { "sha-256" } th scope="col" { "kind" } th scope="col" { "bytes" } th scope="col" { "sealed" }
                } }
                tbody { @for a in artifacts { tr {
                    td { code { (a.sha) } } td { (a.kind) } td.n { (a.size) } td { (if a.sealed { "yes" } else { "no" }) }
                } } } } }
            }
        }
        section #builds { h2 { "Builds" }
            @if builds.is_empty() { p { "No worker has built an engine of this run (its engines are binaries, or no worker loaded them yet)." } } @else {
                p.note { "The last build of each engine on each worker: built, taken from the worker's build cache, or failed (the worker then refuses the run); the bench speed on that machine." }
                div.scroll { table.sortable { thead { tr {
                    th scope="col" { "worker" } th scope="col" { "engine" } th scope="col" { "commit" } th scope="col" { "build" }
                    th scope="col" { "seconds" } th scope="col" { "nodes/s" } th scope="col" { "error" }
                } }
                tbody { @for b in builds { tr {
                    td { (b.worker) } td { (b.engine) } td { code { (b.commit.get(..12).unwrap_or(&b.commit)) } } td { (b.build) }
                    td.n { @if let Some(t) = b.build_secs { (format!("{t:.1}")) } @else { "-" } }
                    td.n { @if let Some(n) = b.nps { (n) } @else { "-" } }
                    td { (b.error.as_deref().unwrap_or("")) }
                } } } } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::view::PairingView;

    fn run(id: &str, engine: &str, owner: &str, state: State) -> RunView {
        RunView {
            id: id.into(),
            source: "fleet",
            kind: "match".into(),
            state,
            state_note: "complete".into(),
            engines: vec![engine.into(), "B".into()],
            limits: "10+0.1".into(),
            games: 0,
            pairings: vec![PairingView {
                label: format!("{engine} vs B"),
                games: 0,
                wdl: Default::default(),
                penta: Default::default(),
                summary: None,
            }],
            owner: Some(owner.into()),
            priority: None,
            workers: None,
            submitted: None,
            ..RunView::default()
        }
    }

    #[test]
    fn every_value_from_a_run_is_escaped() {
        let evil = "<script>alert(1)</script>";
        let runs = [run("x\"><b>", evil, "<i>owner</i>", State::Running)];
        // Unfiltered: the run's row is there, every value escaped.
        let page = index(&runs, &Filters::default(), &["<note>".into()]).into_string();
        for raw in [evil, "<i>owner</i>", "\"><b>", "<note>"] {
            assert!(!page.contains(raw), "{raw} unescaped");
        }
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{page}");
        // The only scripts are the two constant ones.
        assert_eq!(page.matches("<script>").count(), 2);
        // A filter's text goes back into its input escaped (it matches no run here).
        let f = Filters { q: "\"><x>".into(), ..Filters::default() };
        let page = index(&runs, &f, &[]).into_string();
        assert!(!page.contains("\"><x>"), "the filter's text unescaped");
        assert!(page.contains("&quot;&gt;&lt;x&gt;"), "{page}");
    }

    /// A worker's own words (its key's name, a build's error, an engine's name) reach the run
    /// page escaped.
    #[test]
    fn the_fleet_sections_escape_what_workers_and_owners_wrote() {
        let evil = "<img src=x onerror=alert(1)>";
        let b = BuildRow {
            worker: format!("{evil}#3"),
            engine: evil.into(),
            commit: evil.into(),
            build: "failed".into(),
            build_secs: Some(1.5),
            nps: None,
            error: Some(evil.into()),
        };
        let refusal = Refusal { key_name: evil.into(), reason: evil.into() };
        let page = fleet_sections(7, &[], &[refusal], &[], &[b]).into_string();
        assert!(!page.contains(evil), "{page}");
        assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;"), "{page}");
        assert!(page.contains("<td class=\"n\">1.5</td>"), "{page}");
    }

    #[test]
    fn runs_are_grouped_and_filtered_by_state_and_text() {
        let runs = [
            run("fleet-1", "Alpha", "alice", State::Pending),
            run("fleet-2", "Beta", "bob", State::Running),
            run("fleet-3", "Alpha", "bob", State::Accepted),
        ];
        let page = index(&runs, &Filters::default(), &[]).into_string();
        assert!(page.contains("Pending approval (1)") && page.contains("Running (1)"));
        assert!(page.contains("Finished (1)"));
        let f = Filters { q: "alpha".into(), state: "finished".into(), ..Filters::default() };
        let page = index(&runs, &f, &[]).into_string();
        assert!(page.contains("href=\"/run/fleet-3\"") && !page.contains("href=\"/run/fleet-1\""));
        assert!(!page.contains("href=\"/run/fleet-2\""));
        // One state by its word.
        let f = Filters { state: "running".into(), ..Filters::default() };
        let page = index(&runs, &f, &[]).into_string();
        assert!(page.contains("href=\"/run/fleet-2\"") && !page.contains("href=\"/run/fleet-3\""));
    }

    /// A row reads at a glance: its state's class and word, and its games as a bar; the live
    /// box of a run page shows labelled figures, each marked for the script.
    #[test]
    fn rows_carry_their_state_and_a_bar_and_the_live_box_its_labels() {
        let mut r = run("fleet-4", "Alpha", "bob", State::Rejected);
        r.games = 30;
        r.games_planned = Some(120);
        let page = index(&[r.clone()], &Filters::default(), &[]).into_string();
        assert!(page.contains("<tr class=\"st-rejected\" data-state-of=\"fleet-4\">"), "{page}");
        assert!(page.contains("<span data-live=\"fleet-4.state\">rejected (H0)</span>"), "{page}");
        assert!(
            page.contains(
                "<progress class=\"games\" data-live=\"fleet-4.games\" max=\"120\" value=\"30\""
            ),
            "{page}"
        );
        assert!(page.contains("30 of 120 games played"), "{page}");
        // Every state word is a filter and has its colour in the stylesheet.
        for s in State::ALL {
            assert!(page.contains(&format!("<option value=\"{}\"", s.name())), "{s:?}");
            assert!(assets::STATE_CSS.contains(&format!(".st-{}{{", s.name())), "{s:?}");
        }
        r.state = State::Running;
        let banner = run_banner(&r, "/run/fleet-4/events").into_string();
        for label in ["State", "Games", "W-D-L", "Pentanomial", "Elo (95 %)", "nElo (95 %)"] {
            assert!(banner.contains(&format!("<dt>{label}</dt>")), "{label}: {banner}");
        }
        assert!(banner.contains("class=\"live livebox st-running\""), "{banner}");
        assert!(banner.contains("data-events=\"/run/fleet-4/events\""), "{banner}");
        for k in ["state", "games", "wdl", "penta", "elo", "nelo"] {
            assert!(banner.contains(&format!("data-live=\"fleet-4.{k}\"")), "{k}: {banner}");
        }
        // The box's stylesheet is the one the policy allows by its digest.
        assert!(banner.contains(assets::STATE_CSS));
        assert!(
            assets::csp().contains(&crate::report::html::data_url::csp_hash(assets::STATE_CSS))
        );
        // No inline style anywhere (the policy would block it).
        assert!(!page.contains("style=") && !banner.contains("style="));
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(url_escape("a b&c/é"), "a%20b%26c%2F%C3%A9");
    }
}
