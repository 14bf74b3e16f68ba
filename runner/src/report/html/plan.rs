//! The command and the plan: engines with their options, time control, book, seed, shards,
//! SPRT and adjudication, from run.json (and sweep.json for a sweep). run.json holds the plan,
//! not the command line, so the command shown is one rebuilt from the plan that replays it.

use serde_json::Value;

use super::escape::{esc, plain, table};
use super::input::{Kind, RunFiles};
use crate::plan::time_control::TimeControl;

/// `name=..,cmd=..,arg=..,dir=..,option.K=V` of an engine object of run.json.
pub fn engine_spec(e: &Value) -> String {
    let mut parts =
        vec![format!("name={}", plain(&e["name"])), format!("cmd={}", plain(&e["cmd"]))];
    for a in e["args"].as_array().into_iter().flatten() {
        parts.push(format!("arg={}", plain(a)));
    }
    if let Some(d) = e["dir"].as_str() {
        parts.push(format!("dir={d}"));
    }
    parts.extend(options(e).into_iter().map(|(k, v)| format!("option.{k}={v}")));
    parts.join(",")
}

fn options(e: &Value) -> Vec<(String, String)> {
    let list = e["options"].as_array().into_iter().flatten();
    list.filter_map(|o| Some((plain(o.get(0)?), plain(o.get(1)?)))).collect()
}

/// The plan's time control as text ("nodes=2000", "tc=10+0.1"), or its JSON.
pub fn tc_text(plan: &Value) -> String {
    match serde_json::from_value::<TimeControl>(plan["tc"].clone()) {
        Ok(tc) => tc.to_string(),
        Err(_) => plain(&plan["tc"]),
    }
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
            for p in sw["params"].as_array().into_iter().flatten() {
                let values: Vec<String> =
                    p["values"].as_array().into_iter().flatten().map(plain).collect();
                w.extend([
                    "--param".into(),
                    plain(&p["name"]),
                    "--values".into(),
                    values.join(","),
                ]);
            }
            for f in sw["fixed"].as_array().into_iter().flatten() {
                w.extend(["--fixed".into(), format!("{}={}", plain(&f[0]), plain(&f[1]))]);
            }
            w.extend(["--engine".into(), engine_spec(&sw["engine"])]);
            w.extend(["--baseline".into(), engine_spec(&sw["baseline"])]);
            w.extend(["--games".into(), (plan["pairs"].as_u64().unwrap_or(0) * 2).to_string()]);
        }
        _ => {
            w.push("match".into());
            for e in plan["engines"].as_array().into_iter().flatten() {
                w.extend(["--engine".into(), engine_spec(e)]);
            }
            let n = plan["pairings"].as_array().map_or(1, Vec::len).max(1) as u64;
            w.extend(["--games".into(), (plan["pairs"].as_u64().unwrap_or(0) * 2 * n).to_string()]);
        }
    }
    let tc = tc_text(plan);
    if let Some((k, v)) = tc.split_once('=') {
        w.extend([format!("--{k}"), v.to_string()]);
    }
    if let Some(b) = plan["book"]["path"].as_str() {
        w.extend(["--book".into(), b.to_string()]);
    }
    w.extend(["--seed".into(), plain(&plan["seed"])]);
    if let Some(s) = files.sprt() {
        w.extend([
            "--sprt".into(),
            format!(
                "elo0={},elo1={},alpha={},beta={},model={}",
                s.elo0, s.elo1, s.alpha, s.beta, s.model
            ),
        ]);
    }
    if plan["shard"].is_object() {
        w.extend([
            "--shard".into(),
            format!("{}/{}", plain(&plan["shard"]["index"]), plain(&plan["shard"]["count"])),
        ]);
    }
    Some(w.iter().map(|s| shell_word(s)).collect::<Vec<_>>().join(" "))
}

/// The section.
pub fn section(files: &RunFiles) -> String {
    let mut s = String::from("<section id=\"plan\"><h2>Command and plan</h2>");
    let Some(plan) = files.plan() else {
        s.push_str(&other_plan(files));
        s.push_str("</section>");
        return s;
    };
    if let Some(cmd) = command(files) {
        s.push_str(&format!(
            "<p>A command that plays this plan again (rebuilt from run.json):</p><pre class=\"cmd\">{}</pre>",
            esc(&cmd)
        ));
    }
    let mut engines: Vec<Value> = plan["engines"].as_array().cloned().unwrap_or_default();
    if let Some(sw) = &files.sweep {
        engines = vec![sw["engine"].clone(), sw["baseline"].clone()];
    }
    let rows: Vec<Vec<String>> = engines
        .iter()
        .map(|e| {
            let opts: Vec<String> = options(e).iter().map(|(k, v)| format!("{k}={v}")).collect();
            let args: Vec<String> = e["args"].as_array().into_iter().flatten().map(plain).collect();
            vec![
                esc(&plain(&e["name"])),
                esc(&plain(&e["cmd"])),
                esc(&args.join(" ")),
                esc(&opts.join(", ")),
            ]
        })
        .collect();
    s.push_str(&table("engines", &["engine", "command", "arguments", "options"], &rows));
    let sprt = files.sprt().map_or("none".to_string(), |x| {
        format!("elo0 {} elo1 {} alpha {} beta {} ({})", x.elo0, x.elo1, x.alpha, x.beta, x.model)
    });
    let book = match plan["book"]["path"].as_str() {
        Some(p) => format!(
            "{p} ({} openings, {} order)",
            plain(&plan["book"]["openings"]),
            plain(&plan["book_order"])
        ),
        None => "the start position".into(),
    };
    let shard = match plan["shard"].as_object() {
        Some(_) => {
            format!("{} of {}", plain(&plan["shard"]["index"]), plain(&plan["shard"]["count"]))
        }
        None => "none (the whole run)".into(),
    };
    let mut facts = vec![
        ("kind", files.kind.name().to_string()),
        ("time control", tc_text(plan)),
        ("book", book),
        ("seed", plain(&plan["seed"])),
        ("game pairs per pairing", plain(&plan["pairs"])),
        ("SPRT", sprt),
        ("shard", shard),
        ("adjudication", adjudication(&plan["adjudication"])),
    ];
    if let Some(created) = files.run.as_ref().and_then(|r| r["created"].as_str()) {
        facts.push(("created", created.to_string()));
    }
    s.push_str(&facts_list(&facts));
    s.push_str("</section>");
    s
}

fn adjudication(a: &Value) -> String {
    let parts: Vec<String> = ["draw", "resign", "max_moves"]
        .iter()
        .filter(|k| !a[**k].is_null())
        .map(|k| format!("{k}: {}", plain(&a[*k])))
        .collect();
    if parts.is_empty() { "none".into() } else { parts.join("; ") }
}

/// A `<dl>` of label/value pairs (values escaped here).
pub fn facts_list(facts: &[(&str, String)]) -> String {
    let mut s = String::from("<dl class=\"facts\">");
    for (k, v) in facts {
        s.push_str(&format!("<dt>{}</dt><dd>{}</dd>", esc(k), esc(v)));
    }
    s.push_str("</dl>");
    s
}

/// Calibrate and searchtest folders have no run.json: their summary.json's engine and inputs.
fn other_plan(files: &RunFiles) -> String {
    let Some(sum) = &files.summary else {
        return "<p>n/a: no run.json and no summary.json (yet).</p>".into();
    };
    let mut facts: Vec<(&str, String)> = vec![("kind", files.kind.name().to_string())];
    for key in [
        "engine",
        "positions_file",
        "positions",
        "limit",
        "mode",
        "searched",
        "searches",
        "faults",
        "partial",
        "elapsed_s",
    ] {
        if let Some(v) = sum.get(key) {
            let text = if key == "engine" && v.is_object() { engine_spec(v) } else { plain(v) };
            facts.push((key, text));
        }
    }
    facts_list(&facts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn engine_specs_and_quoting() {
        let e = json!({"name": "A b", "cmd": "/x/e", "args": ["-q"], "dir": null, "options": [["Hash", "16"]]});
        assert_eq!(engine_spec(&e), "name=A b,cmd=/x/e,arg=-q,option.Hash=16");
        assert_eq!(shell_word("name=A b"), "'name=A b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(tc_text(&json!({"tc": {"kind": "nodes", "nodes": 5}})), "nodes=5");
        assert_eq!(tc_text(&json!({"tc": "odd"})), "odd");
    }
}
