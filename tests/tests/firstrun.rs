//! End-to-end tests of what a first run shows: progress lines that name the point, an
//! undeclared swept option refused before any game, figures that agree with summary.json, honest
//! small samples, a match's own table layout, tables on disk while a run goes, and the wording
//! items (PGN rounds, log names, headers). Games are depth-limited, so the file runs in seconds.

use std::fs;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{bad_spec, read_games, run_runner, runner_bin, scratch, wait_until, watchdog};

/// A small EPD book with three different openings.
fn book(dir: &Path) -> String {
    let p = dir.join("book.epd");
    fs::write(
        &p,
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n\
         rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n\
         rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1\n",
    )
    .unwrap();
    p.display().to_string()
}

fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn json(path: &Path) -> serde_json::Value {
    let s = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&s).unwrap()
}

/// `runner sweep --param t_mid --values VALUES` at depth 2 with `extra` arguments.
fn sweep(
    dir: &Path,
    out: &Path,
    values: &str,
    games: &str,
    extra: &[&str],
) -> std::process::Output {
    let book = book(dir);
    let mut args = vec![
        "sweep",
        "--param",
        "t_mid",
        "--values",
        values,
        "--depth",
        "2",
        "--games",
        games,
        "--book",
        &book,
        "--seed",
        "3",
        "--concurrency",
        "2",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run_runner(dir, &args)
}

/// A match of the bundled engine against itself with MPC off, at depth 2.
fn small_match(dir: &Path, out: &Path, games: &str, extra: &[&str]) -> std::process::Output {
    let book = book(dir);
    let engine = e2e::engine_bin().display().to_string();
    let spec_a = format!("name=mpc,cmd={engine}");
    let spec_b = format!("name=nompc,cmd={engine},option.MPC=false");
    let mut args = vec![
        "match",
        "--engine",
        &spec_a,
        "--engine",
        &spec_b,
        "--depth",
        "2",
        "--games",
        games,
        "--book",
        &book,
        "--seed",
        "5",
        "--concurrency",
        "2",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run_runner(dir, &args)
}

/// Every plain progress line of a sweep names the point it reports on.
#[test]
fn sweep_progress_lines_name_the_point() {
    let dir = scratch("fr-progress");
    let out = dir.join("run");
    let o = sweep(&dir, &out, "0.8,1.2", "4", &["--progress", "plain"]);
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("games ")).collect();
    assert!(!lines.is_empty(), "no progress line: {stderr}");
    for l in &lines {
        assert!(l.contains("t_mid=0.8") || l.contains("t_mid=1.2"), "unnamed tally: {l}");
    }
}

/// A swept option the engine does not declare stops the sweep before any game.
#[test]
fn sweeping_an_undeclared_option_is_an_error_before_any_game() {
    let dir = scratch("fr-undeclared");
    let out = dir.join("run");
    let book = book(&dir);
    let o = run_runner(
        &dir,
        &[
            "sweep",
            "--param",
            "tmid",
            "--values",
            "1,2",
            "--depth",
            "1",
            "--games",
            "2",
            "--book",
            &book,
            "--progress",
            "quiet",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let (_, stderr) = text(&o);
    assert!(!o.status.success(), "a no-op sweep must not run: {stderr}");
    assert!(stderr.contains("tmid") && stderr.contains("does not declare"), "{stderr}");
    assert!(read_games(&out).is_empty(), "no game may be played");
}

/// The printed Elo interval is the asymmetric one of summary.json, and the score says it
/// counts complete pairs.
#[test]
fn printed_figures_match_summary_json() {
    let dir = scratch("fr-figures");
    let out = dir.join("run");
    let o = small_match(&dir, &out, "24", &["--progress", "quiet"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let s = json(&out.join("summary.json"));
    let st = &s["pairings"][0]["stats"];
    assert!(!stdout.contains("+/-"), "no half-width: {stdout}");
    if let (Some(lo), Some(hi)) = (st["elo_ci"][0].as_f64(), st["elo_ci"][1].as_f64()) {
        let want = format!("[{lo:+.1}, {hi:+.1}]");
        assert!(stdout.contains(&want), "want {want} in {stdout}");
    }
    assert!(stdout.contains("complete pair"), "say what the score counts: {stdout}");
}

/// Two games are not presented as certain.
#[test]
fn tiny_samples_say_they_are_not_meaningful() {
    let dir = scratch("fr-small");
    let out = dir.join("m");
    let o = small_match(&dir, &out, "2", &["--progress", "quiet"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("not yet meaningful"), "{stdout}");
    assert!(!stdout.contains("100.0"), "{stdout}");

    let out = dir.join("s");
    let o = sweep(&dir, &out, "0.8,1.2", "2", &["--progress", "quiet"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let md = fs::read_to_string(out.join("table.md")).unwrap();
    assert!(md.contains("not yet meaningful"), "{md}");
    assert!(!md.contains("| 100.0 |") && !stdout.contains(" 100.0 "), "{md}\n{stdout}");
}

/// A match writes table.md, and `runner report` keeps a match layout.
#[test]
fn a_match_has_its_own_table_and_report_layout() {
    let dir = scratch("fr-match-report");
    let out = dir.join("run");
    let o = small_match(&dir, &out, "4", &["--progress", "quiet"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let md = fs::read_to_string(out.join("table.md")).expect("a match writes table.md");
    for sweep_word in ["Holm", "P(best)", "Only pairing"] {
        assert!(!md.contains(sweep_word), "sweep layout in a match: {md}");
    }
    assert!(md.contains("mpc") && md.contains("nompc"), "{md}");
    // A match's plot is the running score, not a one-dot sweep chart with a "best" point.
    let svg = fs::read_to_string(out.join("plot.svg")).expect("a match writes plot.svg");
    assert!(svg.contains("complete game pair") && !svg.contains("best in red"), "{svg}");
    assert!(!svg.contains("Best:") && !svg.contains("Only "), "{svg}");
    let o = run_runner(&dir, &["report", out.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    for sweep_word in ["Holm", "P(best)", "Only pairing"] {
        assert!(!stdout.contains(sweep_word), "sweep layout in a match report: {stdout}");
    }
    assert_eq!(fs::read_to_string(out.join("table.md")).unwrap(), md, "report rewrites the same");
}

/// The table is on disk while the run is still going. The second engine never answers its
/// 13th `go`, so the run stays alive (stall timeout far away) after a few finished games; the
/// test waits for table.md while the runner is alive, then kills it. No clock is involved: the
/// runner cannot finish before the test looks.
#[test]
fn table_is_written_while_the_run_goes() {
    let _watchdog = watchdog("table_is_written_while_the_run_goes", Duration::from_secs(600));
    let dir = scratch("fr-live");
    let out = dir.join("run");
    let book = book(&dir);
    let good = bad_spec("good", "good", None);
    let hang = bad_spec("hang", "hang", Some(12));
    let mut child = Command::new(runner_bin())
        .current_dir(&dir)
        .args([
            "match",
            "--engine",
            &good,
            "--engine",
            &hang,
            "--maxmoves",
            "3",
            "--depth",
            "1",
            "--games",
            "40",
            "--concurrency",
            "1",
            "--book",
            &book,
            "--stall-timeout",
            "100000",
            "--progress",
            "quiet",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runner");
    let table = out.join("table.md");
    let mut exited = None;
    let seen = wait_until(Duration::from_secs(300), || {
        exited = child.try_wait().expect("wait");
        table.is_file() || exited.is_some()
    });
    let alive = child.try_wait().expect("wait").is_none();
    let _ = child.kill();
    let _ = child.wait();
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    assert!(seen, "waited 300 s for table.md or the run's end, in vain: {err}");
    assert!(
        table.is_file() && alive,
        "table.md must appear while the run goes ({exited:?}): {err}"
    );
    let md = fs::read_to_string(&table).unwrap();
    assert!(md.contains("good") && md.contains("hang"), "{md}");
    assert!(!dir.join("run").join("table.md.tmp").exists(), "written atomically");
}

/// PGN rounds are unique across a sweep's points; log names are clean.
#[test]
fn sweep_rounds_are_unique_and_log_names_clean() {
    let dir = scratch("fr-rounds");
    let out = dir.join("run");
    let o = sweep(&dir, &out, "0.8,1.2", "4", &["--progress", "quiet"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let pgn = fs::read_to_string(out.join("games.pgn")).unwrap();
    let rounds: Vec<&str> = pgn.lines().filter(|l| l.starts_with("[Round ")).collect();
    assert_eq!(rounds.len(), 8, "{pgn}");
    let mut unique = rounds.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), rounds.len(), "Round tags repeat: {rounds:?}");
    for e in fs::read_dir(out.join("logs")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains("__") && !name.contains("_-") && !name.contains("_."), "{name}");
    }
}

/// The match header names the pairing once.
#[test]
fn match_header_is_not_doubled() {
    let dir = scratch("fr-header");
    let out = dir.join("run");
    let o = small_match(&dir, &out, "2", &["--progress", "quiet"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(!stdout.contains("mpc vs nompc (mpc vs nompc)"), "{stdout}");
    assert!(stdout.contains("mpc vs nompc"), "{stdout}");
}

/// A draws floor below the observed draw ratio is said to be the conservative choice.
#[test]
fn draws_floor_below_observed_draws_is_explained() {
    let dir = scratch("fr-floor");
    let o = run_runner(&dir, &["stats", "--wdl", "10,40,10", "--draws-floor", "0.3"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let line = stdout.lines().find(|l| l.starts_with("p-value")).unwrap_or_default();
    assert!(line.contains("observed") && line.contains("66.67"), "{stdout}");
}
