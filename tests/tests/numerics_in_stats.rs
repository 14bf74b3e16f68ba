//! Numerics in one place: model fits live in the `stats` crate (nalgebra for linear
//! algebra, rand_distr for normal draws). The runner only reads data and writes tables, so its
//! sources must hold no hand-written elimination, inversion or normal sampler.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn runner_has_no_hand_written_linear_algebra_or_normal_sampler() {
    // What the removed code looked like: pivoting loops, Gauss-Jordan/Gaussian elimination,
    // Box-Muller's `sqrt(-2 ln u1)`.
    let signs = ["pivot", "gaussian elimination", "gauss-jordan", "box-muller", ".ln()).sqrt()"];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runner/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "runner sources not found under {}", src.display());
    let mut found = Vec::new();
    for f in &files {
        let text = fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let lower = text.to_lowercase();
        for s in signs {
            if lower.contains(s) {
                found.push(format!("{}: {s}", f.display()));
            }
        }
    }
    assert!(found.is_empty(), "numerics written by hand in runner/ (use stats): {found:?}");
}
