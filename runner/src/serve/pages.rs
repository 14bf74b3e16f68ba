//! The server's own pages in maud: every value spliced into `html!` is escaped (text and
//! attributes) unless wrapped in `PreEscaped`, which here holds only the constant stylesheets
//! and scripts and the report renderer's output (escaped by that renderer).

use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::plan::run_plan::RunPlan;
use crate::store::GameRecord;
use crate::store::pgn::PgnStyle;

use super::assets;
use super::games::Page;
use super::view::{LiveCounts, RunView, State};
use crate::report::html::page::own_assets;

/// Finished runs per page of the list.
pub const FINISHED_PER_PAGE: usize = 50;

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
    /// pending, active or finished (all when empty).
    #[serde(default)]
    pub state: String,
    /// Text in the id, an engine, the kind or the owner.
    #[serde(default)]
    pub q: String,
    /// The page of finished runs, from 0.
    #[serde(default)]
    pub page: usize,
}

/// `/`: the runs in panels by state.
pub fn index(runs: &[RunView], f: &Filters, notes: &[String]) -> Markup {
    let q = f.q.to_lowercase();
    let wanted = State::parse(&f.state);
    let shown: Vec<&RunView> =
        runs.iter().filter(|r| r.matches(&q) && wanted.is_none_or(|s| s == r.state)).collect();
    let body = html! {
        form.filters method="get" action="/" {
            label { "State " select name="state" {
                option value="" selected[wanted.is_none()] { "all" }
                @for s in [State::Pending, State::Active, State::Finished] {
                    option value=(s.name()) selected[wanted == Some(s)] { (s.name()) }
                }
            } }
            label { "Engine, owner or text " input type="search" name="q" value=(f.q); }
            button type="submit" { "Filter" }
        }
        @for n in notes { p.note { (n) } }
        @for (state, title) in [(State::Pending, "Pending approval"), (State::Active, "Active"), (State::Finished, "Finished")] {
            @let group: Vec<&&RunView> = shown.iter().filter(|r| r.state == state).collect();
            @if !group.is_empty() || (state == State::Active && wanted.is_none()) {
                section.panel id=(state.name()) {
                    h2 { (title) " (" (group.len()) ")" }
                    @if state == State::Finished {
                        @let from = (f.page * FINISHED_PER_PAGE).min(group.len());
                        @let to = (from + FINISHED_PER_PAGE).min(group.len());
                        (runs_table(&group[from..to]))
                        (pager(f, from, to, group.len()))
                    } @else if group.is_empty() {
                        p { "None." }
                    } @else {
                        (runs_table(&group))
                    }
                }
            }
        }
    };
    layout("Runs", Some("/events"), body)
}

fn pager(f: &Filters, from: usize, to: usize, total: usize) -> Markup {
    let link = |page: usize| {
        format!("/?state={}&q={}&page={page}#finished", url_escape(&f.state), url_escape(&f.q))
    };
    html! {
        p.pager {
            @if f.page > 0 { a href=(link(f.page - 1)) { "newer" } }
            span { (if total == 0 { 0 } else { from + 1 }) "–" (to) " of " (total) }
            @if to < total { a href=(link(f.page + 1)) { "older" } }
        }
    }
}

/// `s` for a URL's query value.
pub fn url_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn runs_table(runs: &[&&RunView]) -> Markup {
    html! {
        div.scroll { table.sortable { thead { tr {
            th scope="col" { "run" } th scope="col" { "engines" } th scope="col" { "limits" }
            th scope="col" { "games" } th scope="col" { "W-D-L" } th scope="col" { "pentanomial" }
            th scope="col" { "Elo (95 %)" } th scope="col" { "nElo (95 %)" } th scope="col" { "LLR" }
            th scope="col" { "verdict" } th scope="col" { "owner" }
        } }
        tbody { @for r in runs { (run_row(r)) } } } }
    }
}

fn run_row(r: &RunView) -> Markup {
    let live = LiveCounts::of(r);
    let field = |k: &str| live.fields.iter().find(|(f, _)| *f == k).map(|(_, v)| v.clone());
    let cell = |k: &'static str| {
        let key = format!("{}.{k}", r.id);
        html! { span data-live=(key) { (field(k).unwrap_or_else(|| "n/a".into())) } }
    };
    let sprt = r.lead().and_then(|p| p.summary.as_ref()).and_then(|s| s.sprt.as_ref());
    html! {
        tr {
            td { a href=(format!("/run/{}", url_escape(&r.id))) { (r.id) } br; span.dim { (r.kind) } }
            td { (r.engines.join(" vs ")) @if r.pairings.len() > 1 { br; span.dim { (r.pairings.len()) " pairings" } } }
            td { (r.limits) }
            td.n { (cell("games")) }
            td.n { (cell("wdl")) }
            td.n { (cell("penta")) }
            td.n { (cell("elo")) }
            td.n { (cell("nelo")) }
            td {
                @if let Some(s) = sprt {
                    (llr_bar(&r.id, live.llr_at.unwrap_or(0.5)))
                    " " (cell("llr"))
                    br; span.dim { "[" (format!("{:.2}", s.lower_bound)) ", " (format!("{:.2}", s.upper_bound)) "], elo " (s.elo0) " to " (s.elo1) }
                } @else { "n/a" }
            }
            td.v { (cell("verdict")) }
            td { (r.owner.as_deref().unwrap_or("")) }
        }
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

/// The banner of a run page served live: its counts, marked for the script.
pub fn run_banner(r: &RunView, events: &str) -> Markup {
    let live = LiveCounts::of(r);
    html! {
        div.live #live data-events=(events) data-reload="1" {
            "Live: "
            @for (k, v) in &live.fields {
                (k) " " span data-live=(format!("{}.{k}", r.id)) { (v) } "; "
            }
            a href=(format!("/run/{}/games", url_escape(&r.id))) { "games" }
        }
    }
}

/// The link to the paged games, put where report.html lists its games.
pub fn games_link(id: &str, games: u64) -> Markup {
    let base = format!("/run/{}", url_escape(id));
    html! {
        section #games { h2 { "Games (" (games) ")" }
            p { a href=(format!("{base}/games")) { "Browse the games" } ", or download "
                a href=(format!("{base}/games.pgn")) { "games.pgn" } " and "
                a href=(format!("{base}/games.jsonl")) { "games.jsonl" } "." } }
    }
}

/// `/run/ID/games`: one page of games, each opening to its PGN.
pub fn games_page(
    id: &str,
    plan: Option<&RunPlan>,
    page: &Page,
    offset: usize,
    limit: usize,
) -> Markup {
    let base = format!("/run/{}", url_escape(id));
    let body = html! {
        p { a href=(base) { "Back to the run" } " · download " a href=(format!("{base}/games.pgn")) { "games.pgn" } " · " a href=(format!("{base}/games.jsonl")) { "games.jsonl" } }
        p.pager {
            @if offset > 0 { a href=(format!("{base}/games?offset={}&limit={limit}", offset.saturating_sub(limit))) { "previous" } }
            span { "games " (offset + 1) "–" (offset + page.games.len()) }
            @if page.more { a href=(format!("{base}/games?offset={}&limit={limit}", offset + limit)) { "next" } }
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

/// `/workers`: the workers table, newest first.
pub fn workers_page(rows: &[crate::fleet::queue::dashboard::WorkerRow]) -> Markup {
    let body = html! {
        div.scroll { table.sortable { thead { tr {
            th scope="col" { "id" } th scope="col" { "host" } th scope="col" { "key" }
            th scope="col" { "concurrency" } th scope="col" { "version" } th scope="col" { "started" }
            th scope="col" { "heartbeat" } th scope="col" { "stopped" } th scope="col" { "alive" }
        } }
        tbody { @for w in rows { tr {
            td.n { (w.id) } td { (w.host) } td { (w.key_name.as_deref().unwrap_or("")) }
            td.n { (w.concurrency) } td { (w.version.as_deref().unwrap_or("")) }
            td { (w.started.as_deref().unwrap_or("")) } td { (w.heartbeat.as_deref().unwrap_or("")) }
            td { (w.stopped.as_deref().unwrap_or("")) } td { (if w.alive { "yes" } else { "no" }) }
        } } } } }
    };
    layout("Workers", None, body)
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
        }
    }

    #[test]
    fn every_value_from_a_run_is_escaped() {
        let evil = "<script>alert(1)</script>";
        let runs = [run("x\"><b>", evil, "<i>owner</i>", State::Active)];
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

    #[test]
    fn runs_are_grouped_and_filtered_by_state_and_text() {
        let runs = [
            run("fleet-1", "Alpha", "alice", State::Pending),
            run("fleet-2", "Beta", "bob", State::Active),
            run("fleet-3", "Alpha", "bob", State::Finished),
        ];
        let page = index(&runs, &Filters::default(), &[]).into_string();
        assert!(page.contains("Pending approval (1)") && page.contains("Active (1)"));
        assert!(page.contains("Finished (1)"));
        let f = Filters { q: "alpha".into(), state: "finished".into(), page: 0 };
        let page = index(&runs, &f, &[]).into_string();
        assert!(page.contains("href=\"/run/fleet-3\"") && !page.contains("href=\"/run/fleet-1\""));
        assert!(!page.contains("href=\"/run/fleet-2\""));
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(url_escape("a b&c/é"), "a%20b%26c%2F%C3%A9");
    }
}
