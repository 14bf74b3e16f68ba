//! The run's store: result folders created exclusively and locked while a run writes them;
//! games.pgn in step with games.jsonl after a resume; records that carry their plan, so games of
//! another run are refused on --resume and by `runner merge`; merges that say what is missing;
//! huge counts refused with one line; the resume hint and the "resuming:" line.
//!
//! Games use the test engine (`badengine good`, deterministic and instant) at one node per move,
//! so the whole file runs in seconds.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Duration;

use e2e::{
    bad_spec, ok, read_games, run_runner, runner_bin, scratch, spawn_runner, spawn_runner_env,
    stderr, watchdog,
};
use serde_json::Value;

/// A two-line EPD book in `dir`.
fn book(dir: &Path) -> String {
    let p = dir.join("book.epd");
    fs::write(
        &p,
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n\
         rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n",
    )
    .unwrap();
    p.display().to_string()
}

/// `runner match` arguments: engines `a` and `b` (test-engine specs), `games` games, seed 5.
const NONE: &[&str] = &[];

fn match_args(dir: &Path, a: &str, b: &str, games: &str, extra: &[impl AsRef<str>]) -> Vec<String> {
    let mut v: Vec<String> = [
        "match",
        "--engine",
        a,
        "--engine",
        b,
        "--nodes",
        "1",
        "--games",
        games,
        "--maxmoves",
        "10",
        "--seed",
        "5",
        "--concurrency",
        "2",
        "--progress",
        "quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push("--book".into());
    v.push(book(dir));
    v.extend(extra.iter().map(|s| s.as_ref().to_string()));
    v
}

fn run(dir: &Path, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_runner(dir, &args)
}

fn spawn(dir: &Path, args: &[String]) -> Child {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    spawn_runner(dir, &args)
}

/// [`spawn`] with engines that stop answering once `hold_at` games are recorded in `hold_file`
/// (a games.jsonl, or a folder of runs: badengine's `BADENGINE_HOLD`), so the run is still
/// going when the test looks, whatever the machine's load.
fn spawn_held(dir: &Path, args: &[String], hold_file: &Path, hold_at: usize) -> Child {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let hold = ("BADENGINE_HOLD", format!("{}:{hold_at}", hold_file.display()));
    spawn_runner_env(dir, &args, &[hold])
}

fn out_flag(p: &Path) -> [String; 2] {
    ["--out".into(), p.display().to_string()]
}

/// Waits until `out` holds at least `n` games (the test fails past 5 minutes).
fn wait_for_games(out: &Path, n: usize) {
    e2e::wait_for_games(out, n, Duration::from_secs(300));
}

fn pgn_games(out: &Path) -> usize {
    fs::read_to_string(out.join("games.pgn")).unwrap_or_default().matches("[Event ").count()
}

/// The lines of games.jsonl as text.
fn jsonl_lines(out: &Path) -> Vec<String> {
    fs::read_to_string(out.join("games.jsonl")).unwrap().lines().map(String::from).collect()
}

fn write_lines(out: &Path, lines: &[String]) {
    fs::write(out.join("games.jsonl"), lines.join("\n") + "\n").unwrap();
}

fn key(line: &str) -> (u64, u64, u64) {
    let v: Value = serde_json::from_str(line).unwrap();
    let n = |k: &str| v[k].as_u64().unwrap();
    (n("pairing"), n("pair"), n("game"))
}

/// A resumed run appends its new games to the games.pgn it rewrote, so a kill -9
/// leaves the PGN holding the games of games.jsonl (the one game being written may be missing:
/// the jsonl line is written and synced first).
#[test]
fn killed_resumed_run_keeps_games_pgn_in_step_with_games_jsonl() {
    let _watchdog = watchdog(
        "killed_resumed_run_keeps_games_pgn_in_step_with_games_jsonl",
        Duration::from_secs(600),
    );
    let dir = scratch("store-pgn-resume");
    let out = dir.join("run");
    let (a, b) = (bad_spec("a", "slow", Some(3)), bad_spec("b", "slow", Some(3)));
    let mut args = match_args(&dir, &a, &b, "60", &out_flag(&out));
    let jsonl = out.join("games.jsonl");
    let mut child = spawn_held(&dir, &args, &jsonl, 4);
    wait_for_games(&out, 4);
    child.kill().unwrap();
    child.wait().unwrap();
    let before = read_games(&out).len();
    assert!((4..60).contains(&before), "killed at {before} games");

    args.push("--resume".into());
    let mut child = spawn_held(&dir, &args, &jsonl, before + 6);
    wait_for_games(&out, before + 6);
    child.kill().unwrap();
    child.wait().unwrap();
    let games = read_games(&out).len();
    assert!(games >= before + 6 && games < 60, "resumed run killed at {games} games");
    let pgn = pgn_games(&out);
    assert!(
        pgn == games || pgn + 1 == games,
        "games.pgn holds {pgn} games, games.jsonl {games} (resumed from {before})"
    );
}

/// A game of another run (same seed and schedule, another opponent) is refused on
/// --resume, and so is a record without a plan hash (written by an older runner).
#[test]
fn resume_refuses_games_of_another_run() {
    let dir = scratch("store-foreign-resume");
    let (a, b, c) =
        (bad_spec("a", "good", None), bad_spec("b", "good", None), bad_spec("c", "good", None));
    let mine = dir.join("mine");
    let theirs = dir.join("theirs");
    let mut args = match_args(&dir, &a, &b, "4", &out_flag(&mine));
    ok(run(&dir, &args), "first run");
    ok(run(&dir, &match_args(&dir, &a, &c, "4", &out_flag(&theirs))), "other run");
    args.push("--resume".into());
    let own = jsonl_lines(&mine);
    assert_eq!(own.len(), 4);

    // The last game replaced by the same game (same pairing, pair, colour) of the other run.
    let last = key(own.last().unwrap());
    let foreign = jsonl_lines(&theirs).into_iter().find(|l| key(l) == last).unwrap();
    let mut lines = own.clone();
    *lines.last_mut().unwrap() = foreign;
    write_lines(&mine, &lines);
    let o = run(&dir, &args);
    assert!(!o.status.success(), "a foreign game was accepted: {}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("another run") && e.contains("line 4"), "{e}");

    // A record without the plan hash cannot be checked: refused, saying so.
    let mut old: Value = serde_json::from_str(&own[0]).unwrap();
    assert!(old.get("plan_hash").is_some(), "records carry their plan hash: {}", own[0]);
    old.as_object_mut().unwrap().remove("plan_hash");
    let mut lines = own.clone();
    lines[0] = old.to_string();
    write_lines(&mine, &lines);
    let o = run(&dir, &args);
    assert!(!o.status.success(), "a record without plan hash was accepted");
    assert!(stderr(&o).contains("no plan hash"), "{}", stderr(&o));

    // The run's own records resume fine (nothing left to play).
    write_lines(&mine, &own);
    ok(run(&dir, &args), "resume of the run's own games");
    assert_eq!(read_games(&mine).len(), 4);
}

/// `runner merge` refuses a shard holding a game of another run.
#[test]
fn merge_refuses_games_of_another_run() {
    let dir = scratch("store-foreign-merge");
    let (a, b, c) =
        (bad_spec("a", "good", None), bad_spec("b", "good", None), bad_spec("c", "good", None));
    let mine = dir.join("mine");
    let theirs = dir.join("theirs");
    let shard = ["--shard".to_string(), "1/2".to_string()];
    let with = |out: &Path| [shard.clone(), out_flag(out)].concat();
    ok(run(&dir, &match_args(&dir, &a, &b, "8", &with(&mine))), "shard of my run");
    ok(run(&dir, &match_args(&dir, &a, &c, "8", &with(&theirs))), "shard of another run");
    let mut lines = jsonl_lines(&mine);
    let first = key(&lines[0]);
    lines[0] = jsonl_lines(&theirs).into_iter().find(|l| key(l) == first).unwrap();
    write_lines(&mine, &lines);
    let merged = dir.join("merged");
    let o = run_runner(&dir, &["merge", mine.to_str().unwrap(), "--out", merged.to_str().unwrap()]);
    assert!(!o.status.success(), "merged a foreign game: {}", stderr(&o));
    assert!(stderr(&o).contains("another run"), "{}", stderr(&o));
}

/// A shard whose games.jsonl was emptied does not merge as an SPRT stop (the plan has
/// no SPRT); the merge says which shard lacks how many games.
#[test]
fn emptied_shard_merges_as_incomplete_naming_what_is_missing() {
    let dir = scratch("store-empty-shard");
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let one = dir.join("s1");
    let two = dir.join("s2");
    for (k, out) in [("1/2", &one), ("2/2", &two)] {
        let extra = [vec!["--shard".to_string(), k.to_string()], out_flag(out).to_vec()].concat();
        ok(run(&dir, &match_args(&dir, &a, &b, "8", &extra)), k);
    }
    fs::write(two.join("games.jsonl"), "").unwrap();
    let merged = dir.join("merged");
    let o = run_runner(
        &dir,
        &["merge", one.to_str().unwrap(), two.to_str().unwrap(), "--out", merged.to_str().unwrap()],
    );
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(!all.contains("sprt"), "{all}");
    assert!(all.contains("2/2") && all.contains("0 of 4"), "{all}");
    if o.status.success() {
        let s: Value =
            serde_json::from_str(&fs::read_to_string(merged.join("summary.json")).unwrap())
                .unwrap();
        assert_ne!(s["stopped_by"], "sprt");
        assert_ne!(s["stopped_by"], "complete");
    }
}

/// Game counts that cannot be scheduled are refused with one line, before any
/// folder is made (no panic, no allocation abort).
#[test]
fn huge_game_counts_are_refused_with_one_line() {
    let dir = scratch("store-huge-games");
    let a = bad_spec("a", "good", None);
    let b = bad_spec("b", "good", None);
    for games in ["18446744073709551615", "100000000"] {
        let out = dir.join(format!("run-{games}"));
        let o = run(&dir, &match_args(&dir, &a, &b, games, &out_flag(&out)));
        assert_eq!(o.status.code(), Some(1), "--games {games}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains("--games"), "{e}");
        assert!(!out.exists(), "--games {games} left a folder");
        // A sweep counts --games per point.
        let sweep: Vec<String> = [
            "sweep",
            "--engine",
            &a,
            "--param",
            "Hash",
            "--values",
            "1,2",
            "--nodes",
            "1",
            "--games",
            games,
            "--progress",
            "quiet",
            "--out",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([out.display().to_string(), "--book".into(), book(&dir)])
        .collect();
        let o = run(&dir, &sweep);
        assert_eq!(o.status.code(), Some(1), "sweep --games {games}: {}", stderr(&o));
        assert!(stderr(&o).contains("--games"), "{}", stderr(&o));
        assert!(!out.exists(), "sweep --games {games} left a folder");
    }
}

/// The folders under `results/` of `dir`, sorted.
fn result_folders(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir.join("results"))
        .map(|r| r.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// `date -u +%Y%m%d-%H%M%SZ` for the current second plus `offset` seconds (UTC, as the runner
/// names folders).
fn stamp(offset: i64) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let t = now.as_secs() as i64 + offset;
    let o = Command::new("date").args(["-u", "-d", &format!("@{t}"), "+%Y%m%d-%H%M%SZ"]).output();
    String::from_utf8(o.unwrap().stdout).unwrap().trim().to_string()
}

/// A run never reuses an existing folder of `results/` (here: folders of a run that
/// is starting, made for every second of the next two minutes), and two runs started together
/// get two folders, each consistent (run.json names the engines of its games).
#[test]
fn runs_get_their_own_folders() {
    let _watchdog = watchdog("runs_get_their_own_folders", Duration::from_secs(600));
    let dir = scratch("store-unique");
    let results = dir.join("results");
    fs::create_dir_all(&results).unwrap();
    let marker = r#"{"not":"this run"}"#;
    let taken: Vec<PathBuf> = (-1..120).map(|s| results.join(stamp(s))).collect();
    for t in &taken {
        fs::create_dir_all(t).unwrap();
        fs::write(t.join("run.json"), marker).unwrap();
    }
    let engines = [("a", "b"), ("c", "d")];
    let children: Vec<Child> = engines
        .iter()
        .map(|(x, y)| {
            spawn(
                &dir,
                &match_args(
                    &dir,
                    &bad_spec(x, "good", None),
                    &bad_spec(y, "good", None),
                    "2",
                    NONE,
                ),
            )
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    for t in &taken {
        assert_eq!(
            fs::read_to_string(t.join("run.json")).unwrap(),
            marker,
            "{} reused",
            t.display()
        );
    }
    let new: Vec<PathBuf> =
        result_folders(&dir).into_iter().filter(|p| !taken.contains(p)).collect();
    assert_eq!(new.len(), 2, "{new:?}");
    let mut seen = Vec::new();
    for f in &new {
        let run: Value =
            serde_json::from_str(&fs::read_to_string(f.join("run.json")).unwrap()).unwrap();
        let names: Vec<String> = run["plan"]["engines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect();
        let games = read_games(f);
        assert_eq!(games.len(), 2, "{}", f.display());
        for g in &games {
            for side in ["white", "black"] {
                let n = g[side].as_str().unwrap();
                assert!(names.iter().any(|x| x == n), "{}: {n} not in {names:?}", f.display());
            }
        }
        seen.push(names.join(" "));
    }
    seen.sort();
    assert_eq!(seen, ["a b", "c d"]);
}

/// A run whose engine cannot start leaves no run behind in `results/` (no folder
/// holding a run.json that a later run or a bare --resume would pick up).
#[test]
fn failed_start_leaves_no_run_folder() {
    let dir = scratch("store-failed-start");
    let missing = format!("name=x,cmd={}", dir.join("no-such-engine").display());
    let good = bad_spec("b", "good", None);
    let o = run(&dir, &match_args(&dir, &missing, &good, "2", NONE));
    assert!(!o.status.success());
    for f in result_folders(&dir) {
        assert!(!f.join("run.json").exists(), "{} holds a run after a failed start", f.display());
        assert!(!f.join("games.jsonl").exists(), "{}", f.display());
    }
    // The next run plays in a folder of its own.
    ok(run(&dir, &match_args(&dir, &bad_spec("a", "good", None), &good, "2", NONE)), "next run");
    let runs: Vec<PathBuf> =
        result_folders(&dir).into_iter().filter(|f| f.join("run.json").exists()).collect();
    assert_eq!(runs.len(), 1);
    assert_eq!(read_games(&runs[0]).len(), 2);
}

/// While a run writes its folder, a second runner on it (a new run or a --resume) is
/// refused with one line; once the first is killed, --resume works (the lock dies with it).
#[test]
fn a_folder_in_use_is_refused_and_released_by_a_kill() {
    let _watchdog =
        watchdog("a_folder_in_use_is_refused_and_released_by_a_kill", Duration::from_secs(600));
    let dir = scratch("store-lock");
    let out = dir.join("run");
    let (a, b) = (bad_spec("a", "slow", Some(3)), bad_spec("b", "slow", Some(3)));
    let args = match_args(&dir, &a, &b, "400", &out_flag(&out));
    let mut resume = args.clone();
    resume.push("--resume".into());
    let jsonl = out.join("games.jsonl");
    let mut child = spawn_held(&dir, &args, &jsonl, 1);
    wait_for_games(&out, 1);
    for second in [&resume, &args] {
        let o = run(&dir, second);
        assert!(!o.status.success(), "a second runner wrote the folder");
        let e = stderr(&o);
        assert!(e.contains("in use by another runner"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let played = read_games(&out).len();
    assert!(played < 400);
    // Resume briefly, to see that the lock was released; then stop it.
    let mut child = spawn_held(&dir, &resume, &jsonl, played + 1);
    wait_for_games(&out, played + 1);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(read_games(&out).len() > played);
}

/// An interrupted run prints the exact command that resumes it (with `--out`, even
/// when the folder was chosen by the runner); that command says how many games were played.
#[test]
fn stop_message_prints_the_exact_resume_command() {
    let _watchdog =
        watchdog("stop_message_prints_the_exact_resume_command", Duration::from_secs(600));
    let dir = scratch("store-hint");
    let (a, b) = (bad_spec("a", "slow", Some(3)), bad_spec("b", "slow", Some(3)));
    let args = match_args(&dir, &a, &b, "40", NONE);
    // The folder is the runner's choice: the engines hold at 2 games in any run of results/.
    let child = spawn_held(&dir, &args, &dir.join("results"), 2);
    let mut folder = None;
    e2e::wait_for("2 games in a folder of results/", Duration::from_secs(300), || {
        folder = result_folders(&dir).into_iter().find(|f| read_games(f).len() >= 2);
        folder.is_some()
    });
    let folder = folder.expect("the run's folder");
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let e = stderr(&o);
    let hint = e
        .lines()
        .find(|l| l.contains("--resume") && l.contains("--out"))
        .unwrap_or_else(|| panic!("no resume command in: {e}"));
    let rel = folder.strip_prefix(&dir).unwrap().display().to_string();
    assert!(hint.contains(&rel), "{hint} does not name {rel}");
    let played = read_games(&folder).len();
    // The command from the hint (as a shell would run it) resumes the same folder.
    let cmd = &hint[hint.find(&runner_bin().display().to_string()).expect("runner path")..];
    let o = Command::new("sh").current_dir(&dir).args(["-c", cmd]).output().unwrap();
    assert!(o.status.success(), "{cmd}: {}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(&format!("resuming: {played} of 40 games already played")), "{e}");
    assert_eq!(read_games(&folder).len(), 40);
}

/// Files of a run folder that are symlinks to files elsewhere are refused in one
/// line naming them, never written through (the outside file keeps its text, an outside
/// folder stays empty).
#[test]
fn symlinks_in_the_run_folder_are_never_written_through() {
    use std::os::unix::fs::symlink;
    let dir = scratch("store-symlinks");
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let outside = dir.join("outside.txt");
    let elsewhere = dir.join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    for name in ["games.pgn", "games.jsonl", "logs", "summary.json"] {
        let out = dir.join(format!("run-{name}"));
        let args = match_args(&dir, &a, &b, "2", &out_flag(&out));
        ok(run(&dir, &args), "first run");
        // A run of ours without games: a new run may take the folder.
        fs::write(out.join("games.jsonl"), "").unwrap();
        // An empty outside file for games.jsonl (one with text would read as games held).
        let keep = if name == "games.jsonl" { "" } else { "keep me" };
        fs::write(&outside, keep).unwrap();
        let target = if name == "logs" { &elsewhere } else { &outside };
        let p = out.join(name);
        if p.is_dir() { fs::remove_dir_all(&p) } else { fs::remove_file(&p) }.unwrap();
        symlink(target, &p).unwrap();
        let o = run(&dir, &args);
        let e = stderr(&o);
        if name == "summary.json" {
            // Written through a temporary file and a rename: the link itself is replaced.
            ok(o, "run over a symlinked summary.json");
            assert!(!p.is_symlink(), "summary.json is still a link");
        } else {
            assert!(!o.status.success(), "{name} as a symlink was accepted: {e}");
            assert!(e.contains(name) && e.contains("symbolic link"), "{name}: {e}");
        }
        assert_eq!(fs::read_to_string(&outside).unwrap(), keep, "{name}: written through");
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0, "{name}: logs went outside");
    }
}

/// `runner match --out` and `runner merge --out` into a folder of the user's own
/// files (not a run) are refused in one line, before any engine starts, and leave them alone.
#[test]
fn a_folder_that_is_not_a_run_is_refused() {
    let dir = scratch("store-foreign-out");
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let theirs = dir.join("notes");
    fs::create_dir(&theirs).unwrap();
    for f in ["table.md", "summary.json", "games.pgn"] {
        fs::write(theirs.join(f), "mine").unwrap();
    }
    let o = run(&dir, &match_args(&dir, &a, &b, "2", &out_flag(&theirs)));
    let e = stderr(&o);
    assert!(!o.status.success(), "a folder of other files was taken: {e}");
    assert!(e.contains("not empty") && e.contains("notes"), "{e}");
    assert!(!theirs.join("logs").exists(), "an engine started");
    let shard = dir.join("shard");
    ok(run(&dir, &match_args(&dir, &a, &b, "2", &out_flag(&shard))), "a run to merge");
    let o =
        run_runner(&dir, &["merge", shard.to_str().unwrap(), "--out", theirs.to_str().unwrap()]);
    let e = stderr(&o);
    assert!(!o.status.success(), "merge into a folder of other files: {e}");
    assert!(e.contains("not empty") && e.contains("notes"), "{e}");
    for f in ["table.md", "summary.json", "games.pgn"] {
        assert_eq!(fs::read_to_string(theirs.join(f)).unwrap(), "mine", "{f} overwritten");
    }
    assert!(!theirs.join("run.json").exists());
}

/// A record of the same game with another outcome that its termination allows.
fn other_outcome(line: &str) -> String {
    let mut v: Value = serde_json::from_str(line).unwrap();
    let (result, termination) = if v["result"] == "1/2-1/2" {
        ("1-0", "adjudication-resign")
    } else {
        ("1/2-1/2", "adjudication-draw")
    };
    v["result"] = result.into();
    v["termination"] = termination.into();
    v.to_string()
}

/// A 1/2 shard of a 4-game match in `dir/name`, and its games.jsonl lines.
fn shard_run(dir: &Path, name: &str) -> (PathBuf, Vec<String>) {
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let out = dir.join(name);
    let extra = [vec!["--shard".to_string(), "1/2".to_string()], out_flag(&out).to_vec()].concat();
    ok(run(dir, &match_args(dir, &a, &b, "8", &extra)), "shard 1/2");
    let lines = jsonl_lines(&out);
    assert_eq!(lines.len(), 4);
    (out, lines)
}

fn merge(dir: &Path, shard: &Path) -> Output {
    let merged = dir.join("merged");
    run_runner(dir, &["merge", shard.to_str().unwrap(), "--out", merged.to_str().unwrap()])
}

/// Two different records of one game in a shard are an error naming the game and
/// both lines (the merge used to keep the first silently).
#[test]
fn merge_refuses_two_different_records_of_one_game() {
    let dir = scratch("store-merge-conflict");
    let (shard, mut lines) = shard_run(&dir, "s1");
    lines.push(other_outcome(&lines[1]));
    write_lines(&shard, &lines);
    let o = merge(&dir, &shard);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "a conflicting copy was merged: {e}");
    assert!(e.contains("recorded twice") && e.contains("line 2") && e.contains("line 5"), "{e}");
    let (pairing, pair, game) = key(&lines[1]);
    assert!(e.contains(&format!("game {}.{} of pairing", pair + 1, game + 1)), "{e}");
    assert_eq!(pairing, 0);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}

/// An exact copy of a game is merged once, with a warning (it used to be dropped
/// without a word).
#[test]
fn merge_keeps_an_exact_copy_once_with_a_warning() {
    let dir = scratch("store-merge-copy");
    let (shard, mut lines) = shard_run(&dir, "s1");
    lines.push(lines[0].clone());
    write_lines(&shard, &lines);
    let o = ok(merge(&dir, &shard), "merge of a shard holding a copy");
    let e = stderr(&o);
    assert!(e.contains("warning:") && e.contains("line 5 repeats") && e.contains("line 1"), "{e}");
    assert_eq!(jsonl_lines(&dir.join("merged")).len(), 4);
}

/// A damage done to a record: what it is, the edit, what the refusal says.
type Edit = (&'static str, fn(&mut Value), &'static str);

/// `runner report` and `--resume` refuse the same records with the same message: a
/// game of another run, a player the plan does not seat there, a draw by checkmate. (The report
/// used to count them all; resume took the wrong name and the impossible result.)
#[test]
fn report_and_resume_refuse_records_that_do_not_belong_alike() {
    let dir = scratch("store-record-check");
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let out = dir.join("run");
    let mut args = match_args(&dir, &a, &b, "4", &out_flag(&out));
    ok(run(&dir, &args), "run");
    args.push("--resume".into());
    let own = jsonl_lines(&out);
    let edits: [Edit; 3] = [
        ("foreign plan hash", |v| v["plan_hash"] = "0123456789abcdef".into(), "another run"),
        ("wrong player", |v| v["white"] = "z".into(), "White is \"z\""),
        (
            "draw by checkmate",
            |v| {
                v["result"] = "1/2-1/2".into();
                v["termination"] = "checkmate".into();
            },
            "result 1/2-1/2 contradicts its termination checkmate",
        ),
    ];
    for (what, edit, says) in edits {
        let mut lines = own.clone();
        let mut v: Value = serde_json::from_str(&lines[2]).unwrap();
        edit(&mut v);
        lines[2] = v.to_string();
        write_lines(&out, &lines);
        let o = run_runner(&dir, &["report", out.to_str().unwrap()]);
        let e = stderr(&o);
        assert!(!o.status.success(), "report counted a record with a {what}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{what}: {e}");
        assert!(e.contains(says) && e.contains("games.jsonl line 3: game"), "{what}: {e}");
        let check = &e[e.find("games.jsonl line 3").unwrap()..];
        let o = run(&dir, &args);
        let r = stderr(&o);
        assert!(!o.status.success(), "resume took a record with a {what}: {r}");
        assert!(r.contains(check.trim()), "{what}: resume said {r}, report {e}");
    }
    write_lines(&out, &own);
    ok(run_runner(&dir, &["report", out.to_str().unwrap()]), "report of the run's own records");
}
