//! fastchess's `-engine` and `-each` keys as the runner's `--engine` specs, `--each` and limit
//! flags. fastchess applies `-each` after every `-engine` (its values win over an engine's own);
//! the runner's `--each` yields to an engine's own value, so a key `-each` sets is dropped from
//! the engines here, and the limits of `-each` become the global `--tc`/`--st`/`--nodes`/
//! `--depth`/`--timemargin`.

use std::path::Path;

/// The runner's per-engine limit keys (branch limits), in the order they are written.
const LIMITS: [&str; 5] = ["tc", "st", "nodes", "depth", "timemargin"];
/// Limit keys that give an engine something to stop at (fastchess refuses an engine without).
const STOPS: [&str; 4] = ["tc", "st", "nodes", "depth"];

/// One fastchess engine key as runner spec items (`args="a b"` gives two `arg=`), or why not.
pub fn engine_key(key: &str, value: &str) -> Result<Vec<(String, String)>, String> {
    let one = |k: &str, v: &str| Ok(vec![(k.to_string(), v.to_string())]);
    if value.contains(',') {
        return Err(format!(
            "{key}={value}: holds a comma, which the runner's engine specs cannot carry"
        ));
    }
    match key {
        "cmd" | "name" | "dir" | "nodes" | "timemargin" => one(key, value),
        "plies" | "depth" => one("depth", value),
        "tc" => one("tc", &time_control(value)?),
        "st" => one("st", value.strip_suffix('s').unwrap_or(value)),
        "args" => Ok(value.split_whitespace().map(|a| ("arg".to_string(), a.into())).collect()),
        "restart" => match value {
            "off" => Ok(Vec::new()),
            "on" => Err("restart=on: not supported: the runner keeps each engine running \
                         between games and starts a fresh one only after a fault"
                .into()),
            _ => Err(format!("restart={value}: expected on or off")),
        },
        "proto" => match value {
            "uci" => Ok(Vec::new()),
            _ => Err(format!("proto={value}: not supported: only uci engines")),
        },
        _ if key.strip_prefix("option.").is_some_and(|n| !n.is_empty()) => one(key, value),
        _ => Err(format!("unknown key {key:?}")),
    }
}

/// A fastchess time control (`moves/minutes:seconds+increment`, seconds may end in `s`) as the
/// runner's `--tc` (`moves/seconds+increment`).
pub fn time_control(tc: &str) -> Result<String, String> {
    let bad = |why: &str| format!("tc={tc}: {why}");
    if tc.contains("hg") {
        return Err(bad("not supported: hourglass time controls"));
    }
    if tc == "inf" || tc == "infinite" {
        return Err(bad("not supported: no limit at all (give st=, nodes= or depth= instead)"));
    }
    let (moves, rest) = match tc.split_once('/') {
        Some(("inf" | "infinite", rest)) => (None, rest),
        Some((m, rest)) => (Some(m), rest),
        None => (None, tc),
    };
    let (base, inc) = match rest.split_once('+') {
        Some((b, i)) => (b, Some(i.strip_suffix('s').unwrap_or(i))),
        None => (rest, None),
    };
    let base = match base.split_once(':') {
        Some((min, sec)) => {
            let num = |s: &str| s.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0);
            let sec = sec.strip_suffix('s').unwrap_or(sec);
            let (Some(min), Some(sec)) = (num(min), num(sec)) else {
                return Err(bad("minutes:seconds are not numbers"));
            };
            seconds((min * 60.0 + sec) * 1000.0)
        }
        None => base.strip_suffix('s').unwrap_or(base).to_string(),
    };
    let mut out = moves.map(|m| format!("{m}/")).unwrap_or_default() + &base;
    if let Some(inc) = inc {
        out += &format!("+{inc}");
    }
    Ok(out)
}

/// Milliseconds as seconds, without trailing zeros (90000 -> "90", 90500 -> "90.5").
fn seconds(ms: f64) -> String {
    let ms = ms.round() as u64;
    match ms % 1000 {
        0 => format!("{}", ms / 1000),
        frac => format!("{}.{frac:03}", ms / 1000).trim_end_matches('0').to_string(),
    }
}

/// What the engines of a fastchess command become on the runner's command line.
#[derive(Debug, Default, PartialEq)]
pub struct EngineFlags {
    /// `--engine`, `--each` and the global limit flags, in that order.
    pub argv: Vec<String>,
    /// The names, in order (for the tournament options).
    pub names: Vec<String>,
}

/// Resolves the engines (each a list of runner spec items) and the `-each` items into flags.
/// fastchess's rules: every engine needs `cmd=`; its name defaults to the command's file stem;
/// `-each` wins over an engine's own key; every engine needs a limit (tc, st, nodes or depth);
/// the time margin is 0 ms unless given (the runner's default is 100).
pub fn resolve(
    engines: &[Vec<(String, String)>],
    each: &[(String, String)],
) -> Result<EngineFlags, Vec<String>> {
    let mut refused = Vec::new();
    let mut out = EngineFlags::default();
    let each_has = |k: &str| each.iter().any(|(key, _)| key.eq_ignore_ascii_case(k));
    let each_cmd = each.iter().rev().find(|(k, _)| k == "cmd").map(|(_, v)| v.clone());
    if each_has("name") {
        refused.push("-each name=: every engine would have the same name".to_string());
    }
    for (i, items) in engines.iter().enumerate() {
        let cmd = each_cmd.clone().or_else(|| last(items, "cmd"));
        let Some(cmd) = cmd else {
            refused.push(format!("-engine #{}: needs cmd=", i + 1));
            continue;
        };
        let name = last(items, "name").unwrap_or_else(|| {
            Path::new(&cmd).file_stem().map_or(cmd.clone(), |s| s.to_string_lossy().into_owned())
        });
        if !STOPS.iter().any(|k| each_has(k) || last(items, k).is_some()) {
            refused.push(format!(
                "-engine {name}: no limit: give tc=, st=, nodes= or depth= in -engine or -each \
                 (fastchess has no default)"
            ));
        }
        let mut spec = vec![format!("name={name}"), format!("cmd={cmd}")];
        for (k, v) in items {
            if k != "name" && k != "cmd" && !each_has(k) {
                spec.push(format!("{k}={v}"));
            }
        }
        out.argv.extend(["--engine".to_string(), spec.join(",")]);
        out.names.push(name);
    }
    let each_spec: Vec<String> = each
        .iter()
        .filter(|(k, _)| k != "cmd" && !LIMITS.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !each_spec.is_empty() {
        out.argv.extend(["--each".to_string(), each_spec.join(",")]);
    }
    for k in LIMITS {
        if let Some(v) = each.iter().rev().find(|(key, _)| key == k).map(|(_, v)| v) {
            out.argv.extend([format!("--{k}"), v.clone()]);
        }
    }
    if !each_has("timemargin") {
        out.argv.extend(["--timemargin".to_string(), "0".to_string()]);
    }
    match refused.is_empty() {
        true => Ok(out),
        false => Err(refused),
    }
}

/// The last value of `key` among spec items.
fn last(items: &[(String, String)], key: &str) -> Option<String> {
    items.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (k, v) in pairs {
            out.extend(engine_key(k, v).unwrap());
        }
        out
    }

    #[test]
    fn engine_keys_map_onto_spec_items() {
        let got = items(&[
            ("cmd", "./sf"),
            ("name", "SF"),
            ("args", "--threads 2  -q"),
            ("dir", "/e"),
            ("option.Hash", "16"),
            ("tc", "40/1:30+0.5s"),
            ("st", "0.2s"),
            ("nodes", "5000"),
            ("plies", "7"),
            ("depth", "8"),
            ("timemargin", "50"),
            ("restart", "off"),
            ("proto", "uci"),
        ]);
        let got: Vec<String> = got.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(
            got,
            [
                "cmd=./sf",
                "name=SF",
                "arg=--threads",
                "arg=2",
                "arg=-q",
                "dir=/e",
                "option.Hash=16",
                "tc=40/90+0.5",
                "st=0.2",
                "nodes=5000",
                "depth=7",
                "depth=8",
                "timemargin=50"
            ]
        );
    }

    #[test]
    fn engine_keys_the_runner_lacks_are_refused_naming_them() {
        let err = |k, v| engine_key(k, v).unwrap_err();
        assert!(err("restart", "on").starts_with("restart=on: not supported"));
        assert!(err("restart", "maybe").contains("expected on or off"));
        assert!(err("proto", "xboard").contains("only uci"));
        assert!(err("ponder", "true").contains("unknown key \"ponder\""));
        assert!(err("option.", "1").contains("unknown key"));
        assert!(err("option.Name", "a,b").contains("holds a comma"));
        assert!(err("tc", "inf").contains("no limit"));
        assert!(err("tc", "10hg").contains("hourglass"));
        assert!(err("tc", "x:10+1").contains("not numbers"));
    }

    #[test]
    fn time_controls_become_seconds() {
        for (fc, runner) in [
            ("10+0.1", "10+0.1"),
            ("60", "60"),
            ("1:00+1", "60+1"),
            ("2:30.25", "150.25"),
            ("0:10s+0.1s", "10+0.1"),
            ("40/60+0.6", "40/60+0.6"),
            ("inf/5+0.05", "5+0.05"),
            ("40/1:30", "40/90"),
        ] {
            assert_eq!(time_control(fc).unwrap(), runner, "{fc}");
        }
    }

    fn flags(engines: &[&[(&str, &str)]], each: &[(&str, &str)]) -> Result<String, Vec<String>> {
        let engines: Vec<_> = engines.iter().map(|e| items(e)).collect();
        resolve(&engines, &items(each)).map(|f| f.argv.join(" "))
    }

    #[test]
    fn each_wins_over_an_engines_own_key_and_names_default_to_the_file_stem() {
        let got = flags(
            &[
                &[("cmd", "/x/sf.exe"), ("option.hash", "32"), ("nodes", "10"), ("args", "a")],
                &[("cmd", "b"), ("name", "B"), ("option.Threads", "2"), ("tc", "5+0.05")],
            ],
            &[("option.Hash", "16"), ("tc", "10+0.1"), ("args", "z"), ("timemargin", "30")],
        )
        .unwrap();
        assert_eq!(
            got,
            "--engine name=sf,cmd=/x/sf.exe,nodes=10 --engine name=B,cmd=b,option.Threads=2 \
             --each option.Hash=16,arg=z --tc 10+0.1 --timemargin 30"
        );
    }

    #[test]
    fn limits_only_in_each_become_global_flags_and_the_margin_is_fastchess_zero() {
        let got = flags(&[&[("cmd", "a")], &[("cmd", "b")]], &[("nodes", "1000"), ("depth", "3")]);
        assert_eq!(
            got.unwrap(),
            "--engine name=a,cmd=a --engine name=b,cmd=b --nodes 1000 --depth 3 --timemargin 0"
        );
        let got = flags(&[&[("cmd", "a"), ("st", "1")], &[("cmd", "b"), ("st", "2")]], &[]);
        assert_eq!(
            got.unwrap(),
            "--engine name=a,cmd=a,st=1 --engine name=b,cmd=b,st=2 --timemargin 0"
        );
        let got = flags(&[&[("name", "x"), ("tc", "1")]], &[("cmd", "e")]).unwrap();
        assert_eq!(got, "--engine name=x,cmd=e,tc=1 --timemargin 0", "-each cmd= for all");
    }

    #[test]
    fn engines_without_cmd_or_limit_and_each_name_are_refused() {
        let e =
            flags(&[&[("name", "a"), ("tc", "1")], &[("cmd", "b")]], &[("name", "z")]).unwrap_err();
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(e[0].contains("-each name="));
        assert!(e[1].contains("-engine #1: needs cmd="));
        assert!(e[2].starts_with("-engine b: no limit"));
    }
}
