//! The guide's short commands run: every ```console block of README.md and of the guide's pages
//! (docs/guide/*.md) is a trycmd case, run as written and compared with the output the page
//! shows (`...` and `[..]` elide what changes from run to run: timings, results of unseeded
//! games). Each page starts from such a command: a seconds-long one at a node limit, or the
//! short variant given right after a long first command (```sh blocks are not run).
//! `TRYCMD=overwrite cargo test -p runner --test guide_commands` takes changed output.
//!
//! The commands run from a fresh folder under the target directory, never the repository: it
//! holds the repository's `openings/`, `configs/` and `tests/data/` (each file a symbolic link,
//! so what a command writes there stays in the folder), the built `engine` as
//! `target/release/engine` (the path the pages give) and `badengine` as
//! `target/debug/badengine`. Results go to `results/` inside it, and the folder is removed when
//! every case has passed.
//!
//! Not run: the fleet's pages (fleet-operator.md, fleet-tester.md, fleet-how-it-works.md),
//! whose every command needs a PostgreSQL database and a server (docs/fleet-tour.sh, their
//! first command, takes minutes; the fleet's tests cover those commands).

use std::path::{Path, PathBuf};

/// The pages whose ```console blocks are run, from the workspace's root.
const PAGES: &[&str] = &[
    "README.md",
    "docs/guide/README.md",
    "docs/guide/match.md",
    "docs/guide/sprt.md",
    "docs/guide/sweep.md",
    "docs/guide/tune.md",
    "docs/guide/searchtest.md",
    "docs/guide/gauntlet.md",
    "docs/guide/books.md",
    "docs/guide/fastchess.md",
    "docs/guide/serve.md",
    "docs/guide/ci.md",
    "docs/guide/formats.md",
    "docs/guide/statistics.md",
    "docs/guide/development.md",
];

/// The repository's folders the pages read, mirrored file by file into the sandbox.
const MIRRORED: &[&str] = &["openings", "configs", "tests/data"];

fn mirror(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("creating {}: {e}", to.display()));
    let entries =
        std::fs::read_dir(from).unwrap_or_else(|e| panic!("reading {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.expect("directory entry");
        let link = to.join(entry.file_name());
        std::os::unix::fs::symlink(entry.path(), &link)
            .unwrap_or_else(|e| panic!("linking {}: {e}", link.display()));
    }
}

/// A binary the commands need, beside the runner, or a failure naming it and how to build it.
fn built(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.is_file(),
        "{what} not found at {}: build the workspace (cargo test --workspace --no-run, or \
         cargo build -p engine -p badengine) before this test",
        path.display()
    );
    path
}

fn link(target: &Path, link: &Path) {
    std::fs::create_dir_all(link.parent().expect("parent")).expect("creating the link's folder");
    std::os::unix::fs::symlink(target, link)
        .unwrap_or_else(|e| panic!("linking {}: {e}", link.display()));
}

#[test]
fn the_guides_short_commands_run_as_shown() {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
    let runner = PathBuf::from(env!("CARGO_BIN_EXE_runner"));
    // The runner plays the bundled engine found beside itself: `cargo test --workspace` builds
    // it there (the engine crate's binary), and badengine (tests/badengine's) with it.
    let bins = runner.parent().expect("the runner's folder").to_path_buf();
    let engine = built(bins.join("engine"), "the bundled engine (the engine crate's binary)");
    let badengine = built(bins.join("badengine"), "badengine (tests/badengine, the test engine)");
    let ls = ["/bin/ls", "/usr/bin/ls"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .expect("ls not found in /bin or /usr/bin");

    let sandbox = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("guide-commands");
    let _ = std::fs::remove_dir_all(&sandbox);
    for dir in MIRRORED {
        mirror(&root.join(dir), &sandbox.join(dir));
    }
    link(&engine, &sandbox.join("target/release/engine"));
    link(&badengine, &sandbox.join("target/debug/badengine"));
    // trycmd runs a page's commands in the current folder; this test is alone in its binary.
    std::env::set_current_dir(&sandbox).expect("entering the sandbox");

    let cases = trycmd::TestCases::new();
    cases
        .register_bin("runner", trycmd::schema::Bin::Path(runner))
        .register_bin("engine", trycmd::schema::Bin::Path(engine))
        .register_bin("ls", trycmd::schema::Bin::Path(ls))
        .env("LC_ALL", "C")
        .env("NO_COLOR", "1")
        .timeout(std::time::Duration::from_secs(120));
    for page in PAGES {
        cases.case(root.join(page));
    }
    cases.run();

    std::env::set_current_dir(&root).expect("leaving the sandbox");
    std::fs::remove_dir_all(&sandbox).expect("removing the sandbox");
}
