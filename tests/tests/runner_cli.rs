//! `runner match` input errors: a one-line message, a non-zero exit, and no game played.

use e2e::{bad_spec, fails_before_any_game, read_games, run_runner, scratch};

fn fails(name: &str, args: &[&str], needle: &str) {
    fails_before_any_game(name, args, needle);
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let good = bad_spec("good", "good", None);
    let out = "--out=out";
    fails(
        "spec",
        &["match", "--engine", "nmae=x,cmd=y", "--engine", &good, out],
        "unknown key \"nmae\"",
    );
    fails("undef", &["match", "--engine", "name=nosuch", "--engine", &good, out], "not defined");
    fails(
        "book",
        &[
            "match",
            "--engine",
            &good,
            "--engine",
            "name=g2,cmd=/bin/true",
            "--book",
            "missing.epd",
            out,
        ],
        "book missing.epd not found",
    );
    fails("tc", &["match", "--engine", &good, "--tc", "fast", out], "bad time control");
    fails("sprt", &["match", "--engine", &good, "--sprt", "elo0=5", out], "bad --sprt");
    fails("draw", &["match", "--engine", &good, "--draw", "movecount=3", out], "bad --draw");
    fails("games", &["match", "--engine", &good, "--games", "0", out], "--games must be > 0");
}

#[test]
fn engines_that_cannot_start_fail_before_any_game() {
    let good = bad_spec("good", "good", None);
    fails(
        "path",
        &[
            "match",
            "--engine",
            "name=ghost,cmd=/nonexistent/engine",
            "--engine",
            &good,
            "--out=out",
        ],
        "engine ghost: cannot start /nonexistent/engine",
    );
    let mute = bad_spec("mute", "nouci", None);
    fails(
        "nouci",
        &["match", "--engine", &mute, "--engine", &good, "--start-timeout", "1", "--out=out"],
        "engine mute: no uciok within 1s",
    );
}

#[test]
fn clap_rejects_conflicting_limits() {
    let dir = scratch("conflict");
    // A clock and a node cap may go together (`go wtime .. nodes N`); two clocks may not.
    let o = run_runner(&dir, &["match", "--tc", "10+0.1", "--st", "0.1"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn engines_by_name_from_a_file_with_each_options_and_protocol_logs() {
    let dir = scratch("enginesfile");
    let bad = e2e::badengine_bin();
    std::fs::write(
        dir.join("engines.toml"),
        format!(
            "[[engine]]\nname = \"b1\"\ncmd = \"{0}\"\nargs = [\"good\"]\nspeed = 3\n\
             [[engine]]\nname = \"b2\"\ncmd = \"{0}\"\n[engine.options]\nHash = 4\n",
            bad.display()
        ),
    )
    .unwrap();
    let o = run_runner(
        &dir,
        &[
            "match",
            "--engine",
            "name=b1",
            "--engine",
            "name=b2",
            "--engines-file",
            "engines.toml",
            "--each",
            "option.Hash=2,option.Foo=1",
            "--nodes",
            "1",
            "--games",
            "2",
            "--maxmoves",
            "5",
            "--debug-log",
            "--progress",
            "quiet",
            "--allow-unknown-options",
            "--out",
            "out",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("unknown key \"speed\""), "{err}");
    assert!(err.contains("does not declare option(s) Foo"), "{err}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/run.json")).unwrap()).unwrap();
    assert_eq!(
        run["plan"]["engines"][0]["options"],
        serde_json::json!([["Hash", "2"], ["Foo", "1"]])
    );
    assert_eq!(
        run["plan"]["engines"][1]["options"],
        serde_json::json!([["Hash", "4"], ["Foo", "1"]])
    );
    let log = std::fs::read_to_string(dir.join("out/logs/b2-0.uci.log")).unwrap();
    assert!(log.contains("> setoption name Hash value 4"), "{log}");
    assert!(log.contains("< uciok"), "{log}");
    assert_eq!(read_games(&dir.join("out")).len(), 2);
}

/// Numbers and names that would corrupt a run's records are refused in
/// one line before any game (each of these was accepted before, and played).
#[test]
fn absurd_numbers_and_colliding_names_are_refused_before_any_game() {
    let (a, b, c) =
        (bad_spec("a", "good", None), bad_spec("b", "good", None), bad_spec("c", "good", None));
    let bundled = format!("name=e,cmd={}", e2e::engine_bin().display());
    let quick = ["--nodes", "1", "--games", "2", "--maxmoves", "4", "--out", "out"];
    let with = |head: &[&str]| -> Vec<String> {
        head.iter().chain(quick.iter()).map(|s| s.to_string()).collect()
    };
    // clap's refusals end with a "try --help" line, so the needle may be on any line.
    let run = |name: &str, args: Vec<String>, needle: &str| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let dir = scratch(name);
        let o = run_runner(&dir, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{name}: should fail");
        assert!(
            err.lines().any(|l| l.contains(needle)),
            "{name}: expected {needle:?}, got:\n{err}"
        );
        assert!(read_games(&dir.join("out")).is_empty(), "{name}: no game may be played");
    };
    for (i, elo) in ["nan", "inf", "-inf", "1e308"].iter().enumerate() {
        let args = with(&["match", "--engine", &a, "--engine", &b, "--engine", &c]);
        let mut args = args;
        args.push(format!("--anchor-elo={elo}"));
        run(&format!("anchor{i}"), args, "is not a rating between");
    }
    run(
        "concurrency",
        with(&["match", "--engine", &a, "--engine", &b, "--concurrency", "100000"]),
        "100000 is more than",
    );
    run(
        "tune_c_end",
        with(&["tune", "--engine", &bundled, "--param", "t_mid,1,0.5,1.5,1e200,1"]),
        "c_end 1e200 is beyond",
    );
    let dir = scratch("epd_counters");
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";
    for (i, counters) in ["99999999999999999999 1", "-5 1", "0 0"].iter().enumerate() {
        let book = dir.join(format!("book{i}.epd"));
        std::fs::write(&book, format!("{start} 0 1\n{start} {counters}\n")).unwrap();
        let book = book.display().to_string();
        run(
            &format!("epd{i}"),
            with(&["match", "--engine", &a, "--engine", &b, "--book", &book]),
            "line 2",
        );
    }
    let sweep =
        |values: &str| with(&["sweep", "--engine", &a, "--param", "Hash", "--values", values]);
    run("sweep_files", sweep("a/b,a_b,a b"), "both become \"a_b\" in the points/ folder names");
    run("sweep_numbers", sweep("1,1.0,1.00"), "1 and 1.0 are the same number");
    let (xy, x_y) = (bad_spec("x/y", "good", None), bad_spec("x_y", "good", None));
    run(
        "log_names",
        with(&["match", "--engine", &xy, "--engine", &x_y]),
        "would share the log file name x_y-N.stderr.log",
    );
    let (avb, cc) = (bad_spec("a vs b", "good", None), bad_spec("c", "good", None));
    run(
        "vs_names",
        with(&["match", "--engine", &avb, "--engine", &cc, "--engine", &a]),
        "contains \" vs \"",
    );
}

/// `--progress` takes auto, plain or quiet; anything else is refused by clap (exit 2, the values
/// named), never silently taken as `auto`. `runner book` has the same option.
#[test]
fn an_unknown_progress_mode_is_refused() {
    let dir = scratch("progress-bogus");
    for cmd in ["match", "book"] {
        let o = run_runner(&dir, &[cmd, "--progress", "bogus", "--out", "out"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
        assert!(err.contains("'bogus'") && err.contains("auto, plain, quiet"), "{cmd}: {err}");
        assert!(!dir.join("out").exists(), "{cmd}: a folder was made");
    }
}

/// An option the engine does not declare (`option.tmid`, a typo of t_mid) stops a match, a
/// gauntlet and a sweep (`--fixed`) before any game, naming the closest declared option;
/// `--allow-unknown-options` sends it anyway, with a warning.
#[test]
fn an_undeclared_option_is_an_error_naming_the_closest_declared_one() {
    let engine = e2e::engine_bin().display().to_string();
    let typo = format!("name=A,cmd={engine},option.tmid=1.2");
    let other = format!("name=B,cmd={engine}");
    let third = format!("name=C,cmd={engine}");
    let limits = ["--nodes", "200", "--games", "2", "--maxmoves", "4", "--out", "out"];
    let needle = "does not declare the option(s) tmid (did you mean t_mid?)";
    let mut args = vec!["match", "--engine", &typo, "--engine", &other];
    args.extend(limits);
    let err = fails_before_any_game("undeclared-match", &args, needle);
    assert!(err.contains("--allow-unknown-options"), "{err}");
    let mut args = vec!["match", "--engine", &typo, "--engine", &other, "--engine", &third];
    args.extend(limits);
    fails_before_any_game("undeclared-gauntlet", &args, needle);
    let mut args = vec!["sweep", "--param", "t_end", "--values", "1,2", "--fixed", "tmid=1.2"];
    args.extend(limits);
    fails_before_any_game("undeclared-sweep", &args, needle);

    let dir = scratch("undeclared-allowed");
    let mut args = vec!["match", "--engine", &typo, "--engine", &other, "--allow-unknown-options"];
    args.extend(limits);
    let o = run_runner(&dir, &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("does not declare option(s) tmid (sent anyway"), "{err}");
    assert_eq!(read_games(&dir.join("out")).len(), 2);
}

/// A worker speaks only to the fleet's server, under a key: `--db` is gone, and a worker with no
/// server or no key says so in one line before it connects anywhere.
#[test]
fn a_worker_needs_the_server_and_a_key() {
    let dir = scratch("worker-door");
    let key = dir.join("w.key");
    std::fs::write(&key, "fk_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n")
        .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let worker = |args: &[&str]| {
        let o = std::process::Command::new(e2e::runner_bin())
            .arg("worker")
            .args(args)
            .current_dir(&dir)
            .env_remove("RUNNER_SERVER")
            .env_remove("RUNNER_WORKER_KEY")
            .env_remove("RUNNER_DB")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("runner");
        assert!(!o.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let e = worker(&["--db", "host=/nonexistent dbname=fleet"]);
    assert!(e.contains("unexpected argument '--db'"), "{e}");
    let e = worker(&["--server", "http://127.0.0.1:9"]);
    assert!(e.contains("a worker needs a key: --key-file FILE or RUNNER_WORKER_KEY"), "{e}");
    let e = worker(&["--key-file", key.to_str().unwrap()]);
    assert!(e.contains("no fleet server: give --server URL (or set RUNNER_SERVER)"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}
