//! The command and the plan: engines with their options, time control, book, seed, shards,
//! SPRT and adjudication, from run.json (and sweep.json for a sweep). run.json holds the plan,
//! not the command line, so the command shown is one rebuilt from the plan that replays it.

use maud::{Markup, html};
use serde::Serialize;

use super::input::{Kind, RunFiles, SummaryFile};
use super::text::{plain, table};
use crate::plan::engine_spec::EngineSpec;
use crate::plan::openings::{STARTPOS_BOOK, is_builtin_book};
use crate::plan::run_plan::RunPlan;

/// `name=..,cmd=..,arg=..,dir=..,option.K=V` and the engine's own limits (`nodes=3000`,
/// `tc=..`) of an engine of run.json.
pub fn engine_spec(e: &EngineSpec) -> String {
    let mut parts = vec![format!("name={}", e.name), format!("cmd={}", e.cmd)];
    parts.extend(e.args.iter().map(|a| format!("arg={a}")));
    if let Some(d) = &e.dir {
        parts.push(format!("dir={}", d.display()));
    }
    parts.extend(e.options.iter().map(|(k, v)| format!("option.{k}={v}")));
    parts.extend(e.limits.spec_keys());
    parts.join(",")
}

/// A value as its JSON text (strings without quotes, `null` as `n/a`).
fn json_text(v: &impl Serialize) -> String {
    serde_json::to_value(v).map_or_else(|e| format!("n/a ({e})"), |v| plain(&v))
}

/// The plan's limits as text ("nodes=2000", "tc=10+0.1", "A: nodes=3000; B: nodes=600"):
/// `RunPlan::limits_text`.
pub fn tc_text(plan: &RunPlan) -> String {
    plan.limits_text()
}

/// The run's own limit flags (`--tc` for each clock of its pairings, `--st`, `--nodes`,
/// `--depth`, the caps beside a clock, `--timemargin` when not the default); the engines' own
/// limits are keys of their `--engine`.
fn limit_flags(plan: &RunPlan) -> Vec<String> {
    let mut tcs = vec![plan.tc];
    for p in 0..plan.pairings.len() {
        let tc = plan.pairing_tc(p);
        if !tcs.contains(&tc) {
            tcs.push(tc);
        }
    }
    let mut w: Vec<String> = Vec::new();
    let caps = [plan.nodes.map(|n| format!("nodes={n}")), plan.depth.map(|d| format!("depth={d}"))];
    for text in tcs.iter().map(|t| Some(t.to_string())).chain(caps).flatten() {
        if let Some((k, v)) = text.split_once('=') {
            w.extend([format!("--{k}"), v.to_string()]);
        }
    }
    if plan.timemargin_ms != crate::plan::time_control::DEFAULT_TIMEMARGIN_MS {
        w.extend(["--timemargin".into(), plan.timemargin_ms.to_string()]);
    }
    w
}

fn shell_word(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_=.,/+:@%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A command line that plays this plan again.
pub fn command(files: &RunFiles) -> Option<String> {
    let plan = files.plan()?;
    let mut w: Vec<String> = vec!["runner".into()];
    match (files.kind, files.sweep.as_ref()) {
        (Kind::Sweep, Some(sw)) => {
            w.push("sweep".into());
            for p in &sw.params {
                w.extend(["--param".into(), p.name.clone(), "--values".into(), p.values.join(",")]);
            }
            for (k, v) in &sw.fixed {
                w.extend(["--fixed".into(), format!("{k}={v}")]);
            }
            for (flag, e) in [("--engine", &sw.engine), ("--baseline", &sw.baseline)] {
                w.extend([flag.into(), engine_spec(e)]);
            }
            w.extend(["--games".into(), (plan.pairs * 2).to_string()]);
        }
        _ => {
            w.push("match".into());
            for e in &plan.engines {
                w.extend(["--engine".into(), engine_spec(e)]);
            }
            let n = plan.pairings.len().max(1);
            w.extend(["--games".into(), (plan.pairs * 2 * n).to_string()]);
        }
    }
    w.extend(limit_flags(plan));
    match &plan.book.path {
        _ if is_builtin_book(&plan.book) => {}
        Some(b) => w.extend(["--book".into(), b.clone()]),
        None => w.extend(["--book".into(), STARTPOS_BOOK.into()]),
    }
    w.extend(["--seed".into(), plan.seed.to_string()]);
    if let Some(s) = files.sprt() {
        w.extend([
            "--sprt".into(),
            format!(
                "elo0={},elo1={},alpha={},beta={},model={}",
                s.elo0, s.elo1, s.alpha, s.beta, s.model
            ),
        ]);
    }
    if let Some(s) = plan.shard {
        w.extend(["--shard".into(), format!("{}/{}", s.index, s.count)]);
    }
    Some(w.iter().map(|s| shell_word(s)).collect::<Vec<_>>().join(" "))
}

/// The section.
pub fn section(files: &RunFiles) -> Markup {
    let Some(plan) = files.plan() else {
        return html! { section #plan { h2 { "Command and plan" } (other_plan(files)) } };
    };
    let mut engines: Vec<EngineSpec> = plan.engines.clone();
    if let Some(sw) = &files.sweep {
        engines = vec![sw.engine.clone(), sw.baseline.clone()];
    }
    let rows: Vec<Vec<String>> = engines
        .iter()
        .map(|e| {
            let opts: Vec<String> = e.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let own = e.limits.spec_keys().join(" ");
            let own = if own.is_empty() { "the run's".to_string() } else { own };
            vec![e.name.clone(), e.cmd.clone(), e.args.join(" "), opts.join(", "), own]
        })
        .collect();
    let head = ["engine", "command", "arguments", "options", "limits"];
    html! {
        section #plan {
            h2 { "Command and plan" }
            @if let Some(cmd) = command(files) {
                p { "A command that plays this plan again (rebuilt from run.json):" }
                pre.cmd { (cmd) }
            }
            (table("engines", &head, &rows))
            (facts_list(&plan_facts(files, plan)))
        }
    }
}

/// The plan's facts: kind, limits, book, seed, pairs, SPRT, shard, adjudication, creation.
fn plan_facts(files: &RunFiles, plan: &RunPlan) -> Vec<(&'static str, String)> {
    let sprt = files.sprt().map_or("none".to_string(), |x| {
        format!("elo0 {} elo1 {} alpha {} beta {} ({})", x.elo0, x.elo1, x.alpha, x.beta, x.model)
    });
    let built_in = if is_builtin_book(&plan.book) { ", built into the runner" } else { "" };
    let book = match &plan.book.path {
        Some(p) => format!(
            "{p} ({} openings, {} order{built_in})",
            plan.book.openings,
            json_text(&plan.book_order)
        ),
        None => "the start position alone (--book startpos)".into(),
    };
    let shard = match plan.shard {
        Some(s) => format!("{} of {}", s.index, s.count),
        None => "none (the whole run)".into(),
    };
    let mut facts = vec![
        ("kind", files.kind.name().to_string()),
        ("limits", tc_text(plan)),
        ("book", book),
        ("seed", plan.seed.to_string()),
        ("game pairs per pairing", plan.pairs.to_string()),
        ("SPRT", sprt),
        ("shard", shard),
        ("adjudication", adjudication(&plan.adjudication)),
    ];
    if let Some(run) = &files.run {
        facts.push(("created", run.created.clone()));
    }
    facts
}

fn adjudication(a: &crate::plan::adjudication::Adjudication) -> String {
    let parts: Vec<String> = [
        ("draw", a.draw.as_ref().map(json_text)),
        ("resign", a.resign.as_ref().map(json_text)),
        ("max_moves", a.max_moves.as_ref().map(json_text)),
        ("tablebase", a.tablebase.as_ref().map(json_text)),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some(format!("{k}: {}", v?)))
    .collect();
    if parts.is_empty() { "none".into() } else { parts.join("; ") }
}

/// A `<dl>` of label/value pairs.
pub fn facts_list(facts: &[(&str, String)]) -> Markup {
    html! { dl.facts { @for (k, v) in facts { dt { (k) } dd { (v) } } } }
}

/// Calibrate and searchtest folders have no run.json: their summary.json's engine and inputs.
fn other_plan(files: &RunFiles) -> Markup {
    // What both tools write, then what only one of them does.
    let ((engine, file, positions, faults, partial), own) = match &files.summary {
        Some(SummaryFile::Calibrate(c)) => (
            (&c.engine, &c.positions_file, c.positions, c.faults, c.partial),
            [
                ("mode", json_text(&c.mode)),
                ("searched", c.searched.to_string()),
                ("elapsed_s", c.elapsed_s.to_string()),
            ]
            .to_vec(),
        ),
        Some(SummaryFile::Searchtest(s)) => (
            (&s.engine, &s.positions_file, s.positions, s.faults, s.partial),
            [("limit", json_text(&s.limit)), ("searches", s.searches.to_string())].to_vec(),
        ),
        _ => return html! { p { "n/a: no run.json and no summary.json (yet)." } },
    };
    let mut facts: Vec<(&str, String)> = vec![
        ("kind", files.kind.name().to_string()),
        ("engine", engine_spec(engine)),
        ("positions_file", file.clone()),
        ("positions", positions.to_string()),
    ];
    facts.extend(own);
    facts.extend([("faults", faults.to_string()), ("partial", partial.to_string())]);
    facts_list(&facts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn engine_specs_and_quoting() {
        let e = json!({"name": "A b", "cmd": "/x/e", "args": ["-q"], "dir": null, "options": [["Hash", "16"]]});
        let e: EngineSpec = serde_json::from_value(e).unwrap();
        assert_eq!(engine_spec(&e), "name=A b,cmd=/x/e,arg=-q,option.Hash=16");
        assert_eq!(shell_word("name=A b"), "'name=A b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(tc_text(&crate::store::tests::plan()), "nodes=100");
    }

    /// The rebuilt command gives each engine its own limits and the run's caps and margin:
    /// `--engine name=n3000,..,nodes=3000 --engine name=n600,..,nodes=600` plays again as asked.
    #[test]
    fn the_rebuilt_command_keeps_every_limit() {
        let mut plan = crate::store::tests::plan();
        plan.engines[0].limits.nodes = Some(3000);
        plan.engines[1].limits.nodes = Some(600);
        plan.engines[1].limits.timemargin_ms = Some(7);
        let words = limit_flags(&plan);
        assert_eq!(words, ["--nodes", "100"]);
        assert_eq!(engine_spec(&plan.engines[0]), "name=A,cmd=e,nodes=3000");
        assert_eq!(engine_spec(&plan.engines[1]), "name=B,cmd=e,nodes=600,timemargin=7");
        plan.tc = crate::plan::time_control::TimeControl::parse_tc("10+0.1").unwrap();
        plan.nodes = Some(5);
        plan.depth = Some(9);
        plan.timemargin_ms = 250;
        assert_eq!(
            limit_flags(&plan),
            ["--tc", "10+0.1", "--nodes", "5", "--depth", "9", "--timemargin", "250"]
        );
    }
}
