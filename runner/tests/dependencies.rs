//! Every dependency a workspace crate declares is used by that crate: its name appears as a
//! path (`name::`) or an import (`use name`) in the crate's sources (src/, tests/, benches/,
//! build.rs). A dependency left behind after a refactoring fails here, naming it.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_declared_dependency_is_used() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut unused = Vec::new();
    for member in ["engine", "runner", "stats", "tests"] {
        let dir = root.join(member);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let doc: toml::Value = toml::from_str(&manifest).unwrap();
        let mut files = Vec::new();
        for sub in ["src", "tests", "benches"] {
            sources(&dir.join(sub), &mut files);
        }
        if dir.join("build.rs").is_file() {
            files.push(dir.join("build.rs"));
        }
        let text: String = files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
        for table in ["dependencies", "dev-dependencies"] {
            let Some(deps) = doc.get(table).and_then(|t| t.as_table()) else { continue };
            // A renamed dependency is used under its key, so the key is what is looked for.
            for name in deps.keys() {
                let ident = name.replace('-', "_");
                let used =
                    [format!("{ident}::"), format!("use {ident}"), format!("extern crate {ident}")]
                        .iter()
                        .any(|p| text.contains(p.as_str()));
                if !used {
                    unused.push(format!("{member}: [{table}] {name}"));
                }
            }
        }
    }
    assert!(unused.is_empty(), "declared but never used: {}", unused.join(", "));
}
