//! The folders of `runner/src` are layers (runner/README.md, "Source layout: the layers of a
//! run"): a file may use a module of its own folder or of a lower layer, never one of its own
//! rank or higher. Every arrow points strictly down the ranks of [`LAYERS`], so the folder
//! graph has no cycle either.
//!
//! The check reads every `.rs` file under `runner/src`, drops comments, string and character
//! literals, and follows each path that starts at the crate root: `crate::X`, `$crate::X`,
//! `crate::{X, Y::{..}}` groups (also over several lines), `super::` chains that climb to the
//! root, and `runner::X` in `main.rs` (the binary crate). A failure names the file, the line and
//! the arrow. `cargo test -p runner --test layers -- --nocapture` also prints the whole graph.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first. A top-level folder of `runner/src` (or a file directly in it,
/// named without `.rs`) may use the names of lower rows only; names in one row are siblings and
/// may not use each other. A new folder must be added here, at its rank, or the test fails.
const LAYERS: &[&[&str]] = &[
    &["out", "exit", "hex", "state"],
    &["plan"],
    &["play"],
    &["cli"],
    &["store"],
    &["report"],
    &["run"],
    &["sweep", "gauntlet", "tune", "calibrate", "searchtest", "book", "fastchess"],
    &["fleet"],
    &["serve"],
    &["cmd"],
    &["main", "lib"],
];

fn rank(layers: &[&[&str]], node: &str) -> Option<usize> {
    layers.iter().position(|row| row.contains(&node))
}

/// One `crate::X` reference: where it is and the top-level name it reaches.
#[derive(Debug, PartialEq)]
struct Arrow {
    line: usize,
    target: String,
}

#[derive(Debug, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Tokens of a Rust source with their 1-based line; comments and literals are dropped.
fn tokens(src: &str) -> Vec<(usize, Tok)> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    // Skips c[from..to] and returns `to`, counting the newlines in between.
    let skip = |from: usize, to: usize, line: &mut usize| {
        *line += c[from..to.min(c.len())].iter().filter(|&&ch| ch == '\n').count();
        to.min(c.len())
    };
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < c.len() && depth > 0 {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 1;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 1;
                }
                j += 1;
            }
            i = skip(i, j, &mut line);
        } else if ch == '"' {
            i = skip(i, string_end(&c, i + 1), &mut line);
        } else if ch == '\'' {
            // A character literal ('x', '\n', '{') or a lifetime / label ('a).
            if next == Some('\\') {
                let mut j = i + 1;
                while j < c.len() && c[j] != '\'' {
                    j += if c[j] == '\\' { 2 } else { 1 };
                }
                i = skip(i, j + 1, &mut line);
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            if matches!(word.as_str(), "r" | "br" | "cr") && raw_string_start(&c, i) {
                let hashes = c[i..].iter().take_while(|&&h| h == '#').count();
                let mut j = i + hashes + 1;
                while j < c.len() {
                    if c[j] == '"' && c[j + 1..].iter().take_while(|&&h| h == '#').count() >= hashes
                    {
                        break;
                    }
                    j += 1;
                }
                i = skip(i, j + 1 + hashes, &mut line);
            } else if matches!(word.as_str(), "b" | "c") && c.get(i) == Some(&'"') {
                i = skip(i, string_end(&c, i + 1), &mut line);
            } else if word == "b" && c.get(i) == Some(&'\'') {
                let mut j = i + 1;
                while j < c.len() && c[j] != '\'' {
                    j += if c[j] == '\\' { 2 } else { 1 };
                }
                i = j + 1;
            } else if word == "r" && c.get(i) == Some(&'#') {
                // A raw identifier (r#type): the `#` is skipped, the name follows.
                i += 1;
            } else {
                out.push((line, Tok::Ident(word)));
            }
        } else if ch == ':' && next == Some(':') {
            out.push((line, Tok::PathSep));
            i += 2;
        } else {
            if ch == '\n' {
                line += 1;
            } else if !ch.is_whitespace() {
                out.push((line, Tok::Punct(ch)));
            }
            i += 1;
        }
    }
    out
}

/// The index just past the closing quote of a string whose body starts at `i`.
fn string_end(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i] != '"' {
        i += if c[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

/// Whether `r`, `br` or `cr` ending at `i` opens a raw string (`r"`, `r#"`, `r##"`, ...).
fn raw_string_start(c: &[char], i: usize) -> bool {
    let hashes = c[i..].iter().take_while(|&&h| h == '#').count();
    c.get(i + hashes) == Some(&'"')
}

/// The top-level names reached from the crate root in one file. `depth` is the file's module
/// depth below the root (`plan/mod.rs` 1, `plan/engines.rs` 2); `roots` are the names that
/// start at the root besides `crate` (`runner` in the binary's `main.rs`).
fn arrows(src: &str, depth: usize, roots: &[&str]) -> Vec<Arrow> {
    let toks = tokens(src);
    let ident = |k: usize| match toks.get(k) {
        Some((_, Tok::Ident(w))) => Some(w.as_str()),
        _ => None,
    };
    let sep = |k: usize| matches!(toks.get(k), Some((_, Tok::PathSep)));
    let mut out = Vec::new();
    // Inline modules (`mod tests { .. }`) open at these brace depths; they deepen `super`.
    let (mut braces, mut inline_mods) = (0usize, Vec::<usize>::new());
    let mut k = 0;
    while k < toks.len() {
        match &toks[k].1 {
            Tok::Punct('{') => braces += 1,
            Tok::Punct('}') => {
                braces = braces.saturating_sub(1);
                if inline_mods.last() == Some(&braces) {
                    inline_mods.pop();
                }
            }
            Tok::Ident(w) if w == "mod" && ident(k + 1).is_some() => {
                if matches!(toks.get(k + 2), Some((_, Tok::Punct('{')))) {
                    inline_mods.push(braces);
                }
            }
            _ => {}
        }
        // Where a path that starts at the crate root continues, if one starts here.
        let after_root = match ident(k) {
            Some(w)
                if (w == "crate" || roots.contains(&w)) && sep(k + 1) && !sep_before(&toks, k) =>
            {
                Some(k + 2)
            }
            Some("super") if !sep_before(&toks, k) => {
                let mut j = k;
                let mut ups = 0;
                while ident(j) == Some("super") && sep(j + 1) {
                    ups += 1;
                    j += 2;
                }
                (ups > 0 && ups >= depth + inline_mods.len()).then_some(j)
            }
            _ => None,
        };
        let Some(start) = after_root else {
            k += 1;
            continue;
        };
        if let Some(target) = ident(start) {
            out.push(Arrow { line: toks[start].0, target: target.to_string() });
        } else if matches!(toks.get(start), Some((_, Tok::Punct('{')))) {
            // A group: the first name of each item at the group's own level.
            let (mut level, mut j, mut item_start) = (0usize, start, true);
            while j < toks.len() {
                match &toks[j].1 {
                    Tok::Punct('{') => {
                        level += 1;
                        item_start = level == 1;
                    }
                    Tok::Punct('}') => {
                        level -= 1;
                        if level == 0 {
                            break;
                        }
                    }
                    Tok::Punct(',') if level == 1 => item_start = true,
                    Tok::Ident(w) if item_start && level == 1 => {
                        if w != "self" {
                            out.push(Arrow { line: toks[j].0, target: w.clone() });
                        }
                        item_start = false;
                    }
                    _ => item_start = false,
                }
                j += 1;
            }
        }
        k = start;
    }
    out
}

/// Whether the token before `k` is `::` (then `k` is inside a longer path, not its start).
fn sep_before(toks: &[(usize, Tok)], k: usize) -> bool {
    k > 0 && toks[k - 1].1 == Tok::PathSep
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The layer of a file (its top-level folder, or its name for a file in `src/`) and its module
/// depth below the crate root.
fn node_and_depth(rel: &Path) -> (String, usize) {
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let first = parts[0].trim_end_matches(".rs").to_string();
    let last = parts.last().expect("a file name");
    let depth = match last.as_str() {
        "lib.rs" | "main.rs" if parts.len() == 1 => 0,
        "mod.rs" => parts.len() - 1,
        _ => parts.len(),
    };
    (first, depth)
}

/// Every problem of `runner/src` against the table `layers`: an arrow that points up or to a
/// sibling, or a folder missing from the table (named, never a panic); and the folder graph with
/// the number of arrows per edge.
fn check(layers: &[&[&str]]) -> (Vec<String>, BTreeMap<(String, String), usize>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 20, "only {} .rs files under {}", files.len(), src.display());
    // Top-level names: folders and files of src/; any other name after `crate::` is an item
    // of the crate root (lib.rs).
    let modules: Vec<String> =
        files.iter().map(|f| node_and_depth(f.strip_prefix(&src).expect("under src")).0).collect();
    let mut graph: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut problems = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        let shown = format!("runner/src/{}", rel.display());
        let (node, depth) = node_and_depth(rel);
        let Some(from) = rank(layers, &node) else {
            problems.push(format!(
                "{shown}: layer `{node}` is not in LAYERS (runner/tests/layers.rs); add it at its rank"
            ));
            continue;
        };
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{shown}: {e}"));
        let roots: &[&str] = if node == "main" { &["runner"] } else { &[] };
        for Arrow { line, target } in arrows(&text, depth, roots) {
            let target = if modules.contains(&target) { target } else { "lib".to_string() };
            if target == node || (node == "main" && target == "lib") {
                continue;
            }
            *graph.entry((node.clone(), target.clone())).or_default() += 1;
            // A folder missing from the table is named once, at its own files.
            let Some(to) = rank(layers, &target) else { continue };
            if to >= from {
                let lower: Vec<&str> =
                    layers[..from].iter().flat_map(|r| r.iter()).copied().collect();
                let allowed = if lower.is_empty() {
                    format!("`{node}` is the lowest layer and may use no other")
                } else {
                    format!("`{node}` may use only: {}", lower.join(", "))
                };
                let way = if to == from { "to a sibling layer" } else { "up" };
                problems
                    .push(format!("{shown}:{line}: {node} -> {target} points {way} ({allowed})"));
            }
        }
    }
    (problems, graph)
}

#[test]
fn no_folder_of_runner_src_uses_a_higher_or_sibling_layer() {
    let (problems, graph) = check(LAYERS);
    for ((a, b), n) in &graph {
        println!("{a:>10} -> {b:<10} {n:3}");
    }
    assert!(problems.is_empty(), "layer violations:\n{}", problems.join("\n"));
}

/// A folder missing from the table is a problem naming it (it used to panic in an `expect`
/// when another folder's file used it before its own files were seen).
#[test]
fn a_folder_missing_from_the_table_is_named() {
    for missing in ["store", "book", "out"] {
        let rows: Vec<Vec<&str>> =
            LAYERS.iter().map(|r| r.iter().copied().filter(|n| *n != missing).collect()).collect();
        let table: Vec<&[&str]> = rows.iter().map(Vec::as_slice).collect();
        let (problems, _) = check(&table);
        let want = format!("layer `{missing}` is not in LAYERS");
        assert!(problems.iter().any(|p| p.contains(&want)), "{missing}: {problems:?}");
    }
}

fn targets(src: &str, depth: usize) -> Vec<(usize, String)> {
    arrows(src, depth, &[]).into_iter().map(|a| (a.line, a.target)).collect()
}

#[test]
fn paths_groups_and_multi_line_uses_are_seen() {
    let src = "use crate::plan::x;\nuse crate::{\n    play::{a, b::{c, d}},\n    report as r,\n    self,\n};\nfn f() { crate::store::g(); $crate::run::h!(); }\n";
    let got = targets(src, 2);
    let want = [(1, "plan"), (3, "play"), (4, "report"), (7, "store"), (7, "run")];
    assert_eq!(got, want.map(|(l, t)| (l, t.to_string())));
}

#[test]
fn comments_strings_and_chars_are_not_paths() {
    let src = "// use crate::report;\n/* crate::report /* nested */ crate::run */\nlet s = \"crate::report\";\nlet r = r#\"crate::run \" \"#;\nlet c = '{'; let q = '\\''; let b = b'x';\nfn f<'a>(x: &'a str) {}\nuse crate::plan;\n";
    assert_eq!(targets(src, 1), vec![(7, "plan".to_string())]);
}

#[test]
fn super_reaches_the_root_only_from_deep_enough() {
    // In plan/engines.rs (depth 2) `super::super::X` is crate::X; `super::X` stays in plan/.
    assert_eq!(targets("use super::super::report::x;", 2), vec![(1, "report".to_string())]);
    assert!(targets("use super::schedule::x;", 2).is_empty());
    // An inline `mod tests` adds one level; it ends with its closing brace.
    let src = "mod tests {\n use super::super::report::x;\n}\nuse super::super::run::y;\n";
    assert_eq!(targets(src, 2), vec![(4, "run".to_string())]);
    // `pub(crate)` and a path that merely contains `crate` are not arrows.
    assert!(targets("pub(crate) fn f() { other::crate_x::y(); }", 1).is_empty());
}
