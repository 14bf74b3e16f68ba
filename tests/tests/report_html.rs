//! The run's page (`runner report DIR --html`) of small real runs (a match with an SPRT, a
//! gauntlet of three engines, a two-point sweep), opened in headless Chromium:
//! what a person would see — the verdict, the table's rows, the plots (drawn by plotters, shown
//! as images) with their axes, one
//! games-list entry per game with a game's PGN when it is opened, and no console errors. A
//! screenshot of each page is kept as report.png in the run's folder.

use std::path::Path;

use e2e::*;

/// Runs `runner report OUT --html` and opens the page (DOM, at `#game-2`) and its screenshot.
fn open_page(dir: &Path, out: &Path) -> String {
    let o = ok(run_runner(dir, &["report", "out", "--html"]), "runner report --html");
    assert!(stdout(&o).contains("report.html"), "{}", stdout(&o));
    let page = out.join("report.html");
    assert!(page.is_file());
    assert!(!out.join("report.html.tmp").exists(), "written through a temporary file");
    let url = format!("file://{}", page.display());
    let shot = out.join("report.png");
    let seen = browse(&url, dir, Some(&shot));
    assert!(seen.console.is_empty(), "console messages: {:?}", seen.console);
    assert!(shot.is_file(), "screenshot {}", shot.display());
    let seen = browse(&format!("{url}#game-2"), dir, None);
    assert!(seen.console.is_empty(), "console messages: {:?}", seen.console);
    let dom = seen.dom;
    assert!(dom.contains("data-script=\"ok\""), "the page's script ran to its end");
    assert!(!dom.contains("http-equiv=\"refresh\""), "an ended run's page does not reload");
    assert!(dom.contains("Ended: complete."), "{}", html_section(&dom, "verdict"));
    let games = read_games(out).len();
    let games_section = html_section(&dom, "games");
    assert_eq!(games_section.matches("<li class=\"game\"").count(), games, "one entry per game");
    assert!(games_section.contains(&format!("<h2>Games ({games})</h2>")));
    // Game 2 was opened by its link: its PGN is shown.
    let opened = &games_section[games_section.find("id=\"game-2\"").expect("game 2")..];
    let opened = &opened[..opened.find("</li>").expect("end of game 2")];
    assert!(opened.contains("<details open=\"\">"), "{opened}");
    assert!(opened.contains("[Event \"runner ") && opened.contains("[Result "), "{opened}");
    assert!(opened.contains("[PlyCount "), "{opened}");
    dom
}

/// Plays `args` (then `--book`, `--concurrency 2`, `--progress quiet`, `--out out`) in a scratch
/// folder, checks that `games` games were played, and opens the page.
fn play_and_open(name: &str, args: &[&str], games: usize) -> String {
    let dir = scratch(name);
    let book = write_book(&dir, 4);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--book", &book]);
    all.extend("--concurrency 2 --progress quiet --out out".split(' '));
    let out = dir.join("out");
    assert_eq!(run_games(&dir, &all, &out).len(), games);
    open_page(&dir, &out)
}

#[test]
fn match_page_in_a_browser() {
    let engine = engine_bin();
    let a = format!("name=A,cmd={},option.LMR=false", engine.display());
    let b = format!("name=B,cmd={}", engine.display());
    let mut args = vec!["match", "--engine", &a, "--engine", &b];
    args.extend("--nodes 2000 --games 6 --sprt elo0=0,elo1=10".split(' '));
    let dom = play_and_open("report-html-match", &args, 6);

    let verdict = html_section(&dom, "verdict");
    assert!(verdict.contains("A vs B: SPRT [0, 10] (normalized) LLR"), "{verdict}");
    let table = html_section(&dom, "table");
    assert!(table.contains("<thead><tr><th scope=\"col\""), "{table}");
    assert_eq!(table.matches("<tr>").count(), 2, "a header row and A vs B: {table}");
    assert!(table.contains("<td>A vs B</td>"), "{table}");
    let plan = html_section(&dom, "plan");
    assert!(plan.contains("LMR=false") && plan.contains("nodes=2000"), "{plan}");
    let trace = drawings(html_section(&dom, "trace"), "plot").concat();
    for axis in [">games played</text>", ">LLR</text>", "H1 accepted 2.94", "H0 accepted -2.94"] {
        assert!(trace.contains(axis), "{axis} in {trace}");
    }
    let elo = drawings(html_section(&dom, "elo"), "penta").concat();
    assert!(elo.contains(">LL</text>") && elo.contains(">WW</text>"), "pentanomial bars: {elo}");
    assert!(html_section(&dom, "terminations").contains("By engine"));
    assert!(html_section(&dom, "files").contains("<a href=\"games.pgn\">games.pgn</a>"));
}

#[test]
fn sweep_page_in_a_browser() {
    let args: Vec<&str> =
        "sweep --param t_mid --values 0.9,1.1 --nodes 2000 --games 2".split(' ').collect();
    let dom = play_and_open("report-html-sweep", &args, 4);

    let verdict = html_section(&dom, "verdict");
    assert!(verdict.contains("Best point: t_mid="), "{verdict}");
    let table = html_section(&dom, "table");
    assert_eq!(table.matches("<tr>").count(), 3, "a header row and two points: {table}");
    assert!(table.contains("<td>0.9</td>") && table.contains("<td>1.1</td>"), "{table}");
    let figures = html_section(&dom, "figures");
    // The plot is an image with a data: URL (no markup from the folder reaches the page); the
    // screenshot report.png shows it drawn.
    assert!(
        figures.contains("<figure class=\"plotfile\"><img src=\"data:image/svg+xml;base64,"),
        "plot.svg shown as an image: {figures}"
    );
    assert!(figures.contains("alt=\"plot plot.svg\""), "{figures}");
    let trace = drawings(html_section(&dom, "trace"), "plot").concat();
    assert!(trace.contains(">games played</text>") && trace.contains(">Elo</text>"), "{trace}");
}

#[test]
fn gauntlet_page_in_a_browser() {
    let engine = engine_bin();
    let specs = [
        format!("name=A,cmd={},option.LMR=false", engine.display()),
        format!("name=B,cmd={}", engine.display()),
        format!("name=C,cmd={},option.NullMove=false", engine.display()),
    ];
    let mut args = vec!["match"];
    for s in &specs {
        args.extend(["--engine", s]);
    }
    args.extend("--nodes 1000 --games 2".split(' '));
    let dom = play_and_open("report-html-gauntlet", &args, 4);

    let verdict = html_section(&dom, "verdict");
    assert!(verdict.contains("A vs B: Elo") && verdict.contains("A vs C: Elo"), "{verdict}");
    assert!(verdict.contains("Highest rated at nodes=1000: "), "{verdict}");
    let table = html_section(&dom, "table");
    assert!(table.contains("<h4>Ratings (nodes=1000; anchor A = 0)</h4>"), "{table}");
    assert!(table.contains("Table 4 layout"), "{table}");
    let trace = drawings(html_section(&dom, "trace"), "plot").concat();
    assert!(trace.contains(">A vs B</text>") && trace.contains(">A vs C</text>"), "{trace}");
}

/// Every match and sweep writes its page at the end (no `runner report` needed); a page written
/// while the run goes reloads itself, the last one does not.
#[test]
fn runs_write_their_page_live_and_at_the_end() {
    let dir = scratch("report-html-live");
    let book = write_book(&dir, 4);
    let engine = format!("name=engine,cmd={}", engine_bin().display());
    let nompc = format!("name=nompc,cmd={},option.MPC=false", engine_bin().display());
    for (kind, args) in [
        ("match", vec!["match", "--engine", &engine, "--engine", &nompc]),
        ("sweep", vec!["sweep", "--engine", &engine, "--param", "t_mid", "--values", "0.9,1.2"]),
    ] {
        let out = dir.join(kind);
        let mut all = args.clone();
        all.extend(["--depth", "2", "--games", "2", "--book", &book, "--progress", "quiet"]);
        all.extend(["--out", out.to_str().unwrap()]);
        let o = ok(run_runner(&dir, &all), kind);
        assert!(stdout(&o).contains("page: "), "{kind}: {}", stdout(&o));
        let page = read_text(&out.join("report.html"));
        assert!(!page.contains("http-equiv=\"refresh\""), "{kind}: an ended run's page reloads");
        assert!(page.contains("Ended: complete."), "{kind}");
    }
}

/// A results folder comes from anywhere, and its plot.svg once closed `</svg>` early
/// and added an `<object>` whose `data:` HTML document ran a script inside the page. Planted
/// files must not run anything, while the page's own script still runs (its policy names it).
#[test]
fn a_planted_plot_svg_runs_no_script_in_the_page() {
    let dir = scratch("report-html-planted-svg");
    let book = write_book(&dir, 4);
    let engine = format!("name=A,cmd={}", engine_bin().display());
    let other = format!("name=B,cmd={},option.LMR=false", engine_bin().display());
    let args =
        ["match", "--engine", &engine, "--engine", &other, "--nodes", "1000", "--games", "2"];
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--book", &book, "--concurrency", "1", "--progress", "quiet", "--out", "out"]);
    let out = dir.join("out");
    assert_eq!(run_games(&dir, &all, &out).len(), 2);
    // The frame's script logs a marker and tries to retitle the page that holds it.
    let frame = "PHNjcmlwdD5jb25zb2xlLmxvZygnSU5KRUNURUQtQlktUExPVC1TVkcnKTt0cnl7cGFyZW50LmRvY3VtZW50\
                 LnRpdGxlPSdJTkpFQ1RFRCd9Y2F0Y2goZSl7fTwvc2NyaXB0Pg==";
    let planted = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"></svg>\
         <object data=\"data:text/html;base64,{frame}\" width=\"50\" height=\"50\"></object>\
         <base href=\"http://127.0.0.1:9/\"><svg width=\"10\" height=\"10\"></svg>\n"
    );
    std::fs::write(out.join("plot.svg"), &planted).expect("planting plot.svg");
    std::fs::write(
        out.join("extra.svg"),
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><a href=\"java&#x09;script:document.title='INJECTED'\">\
         <text y=\"10\">x</text></a></svg>",
    )
    .expect("planting extra.svg");
    ok(run_runner(&dir, &["report", "out", "--html"]), "runner report --html");
    let page = out.join("report.html");
    let html = read_text(&page);
    assert!(!html.contains("<object") && !html.contains("<base"), "planted markup in the page");
    let seen = browse(&format!("file://{}", page.display()), &dir, None);
    let injected: Vec<&String> =
        seen.console.iter().filter(|l| l.contains("INJECTED") || l.contains("Refused")).collect();
    assert!(injected.is_empty(), "the planted plot ran or tried to run: {injected:?}");
    assert!(!seen.dom.contains("<title>INJECTED"), "the planted plot retitled the page");
    assert!(!seen.dom.contains("<object"), "the planted object reached the DOM");
    assert!(seen.dom.contains("data-script=\"ok\""), "the page's own script still runs");
    assert!(seen.console.is_empty(), "console messages: {:?}", seen.console);
    let figures = html_section(&seen.dom, "figures");
    assert_eq!(figures.matches("<img src=\"data:image/svg+xml;base64,").count(), 2, "{figures}");
}
