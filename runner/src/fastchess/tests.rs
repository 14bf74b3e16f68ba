//! The whole translation, option by option: fastchess words in, runner words out (or the
//! refusal lines), nothing executed.

use super::*;

fn env() -> Env {
    Env { cpus: 8, stamp: "20261125_110000".into() }
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// Two engines with a limit, so that one option at a time can be checked.
const BASE: &str = "-engine cmd=./a -engine cmd=./b -each nodes=500";
/// What [`BASE`] alone becomes.
const BASE_OUT: &str = "--engine name=a,cmd=./a --engine name=b,cmd=./b --nodes 500 \
                        --timemargin 0 --games 4 --concurrency 1";

fn run(args: &str) -> (String, Vec<String>) {
    match translate(&words(args), &env()) {
        Ok(Outcome::Run { argv, notes }) => (argv.join(" "), notes),
        other => panic!("{args}: {other:?}"),
    }
}

/// The runner arguments of `BASE` + `extra`, without BASE's own part and the fault limit.
fn mapped(extra: &str) -> String {
    let (argv, _) = run(&format!("{BASE} {extra}"));
    let rest = argv.strip_prefix(BASE_OUT).unwrap_or_else(|| panic!("{extra}: {argv}"));
    rest.trim().to_string()
}

fn refused(args: &str) -> Vec<String> {
    match translate(&words(args), &env()) {
        Err(lines) => lines,
        other => panic!("{args}: not refused: {other:?}"),
    }
}

/// The one refusal line of `BASE` + `extra`.
fn refusal(extra: &str) -> String {
    let lines = refused(&format!("{BASE} {extra}"));
    assert_eq!(lines.len(), 1, "{extra}: {lines:?}");
    lines[0].clone()
}

#[test]
fn a_full_sprt_command_line_translates_in_full() {
    let (argv, notes) = run("-engine cmd=X name=Y option.Hash=16 -engine cmd=Z name=W \
         -each tc=10+0.1 -openings file=B.epd format=epd order=random -games 2 -rounds 500 \
         -concurrency 8 -sprt elo0=0 elo1=5 alpha=0.05 beta=0.05 model=normalized \
         -pgnout file=out.pgn");
    assert_eq!(
        argv,
        "--engine name=Y,cmd=X,option.Hash=16 --engine name=W,cmd=Z --tc 10+0.1 --timemargin 0 \
         --games 1000 --concurrency 8 --book B.epd --book-order random \
         --sprt elo0=0,elo1=5,alpha=0.05,beta=0.05,model=normalized \
         --pgnout file=out.pgn,append=true --fault-limit 1"
    );
    assert!(notes.is_empty(), "{notes:?}");
}

#[test]
fn fastchess_defaults_are_made_explicit() {
    // Concurrency 1, margin 0, 2 rounds of 2 games, stop at the first crash; no book: a note.
    let (argv, notes) = run(BASE);
    assert_eq!(argv, format!("{BASE_OUT} --fault-limit 1"));
    assert_eq!(notes.len(), 1);
    assert!(notes[0].contains("start position"), "{notes:?}");
    // A book is read in order unless order=random.
    assert_eq!(
        mapped("-openings file=b.pgn"),
        "--book b.pgn --book-order sequential --fault-limit 1"
    );
}

#[test]
fn games_rounds_and_repeat() {
    let games = |extra: &str| {
        let (argv, _) = run(&format!("-engine cmd=a -engine cmd=b -each nodes=5 {extra}"));
        let i = argv.find("--games").unwrap();
        let j = argv.find(" --concurrency").unwrap();
        argv[i..j].to_string()
    };
    assert_eq!(games("-rounds 500"), "--games 1000");
    assert_eq!(games("-rounds 10 -games 1"), "--games 10 --repeat 1");
    assert_eq!(games("-games 100"), "--games 200", "fastchess swaps a -games above 2");
    assert_eq!(games("-rounds 7 -repeat"), "--games 14");
    assert_eq!(games("-rounds 7 -games 1 -repeat"), "--games 14", "-repeat is -games 2");
    assert_eq!(games("-rounds 7 -repeat 1"), "--games 7 --repeat 1");
    assert_eq!(
        games("-sprt elo0=0 elo1=5 alpha=0.05 beta=0.05 -rounds 0"),
        "--games 1000000",
        "-sprt turns -rounds 0 into fastchess's 500000"
    );
    assert!(
        refused("-engine cmd=a -engine cmd=b -each nodes=5 -games 5 -rounds 4")[0]
            .contains("at most 2 games per round")
    );
    assert!(refused("-engine cmd=a -engine cmd=b -each nodes=5 -rounds 0")[0].contains("no games"));
    assert!(
        refused("-engine cmd=a -engine cmd=b -each nodes=5 -games x")[0]
            .contains("-games: expected a whole number")
    );
    let (_, notes) = run(&format!("{BASE} -sprt elo0=0 elo1=5 alpha=0.05 beta=0.05"));
    assert!(notes.iter().any(|n| n.contains("caps the test at 4 games")), "{notes:?}");
}

#[test]
fn concurrency_as_fastchess_counts_it() {
    let conc = |extra: &str| {
        let (argv, _) = run(&format!("-engine cmd=a -engine cmd=b -each nodes=5 {extra}"));
        argv.split(" --concurrency ").nth(1).unwrap().split(' ').next().unwrap().to_string()
    };
    assert_eq!(conc("-concurrency 8"), "8");
    assert_eq!(conc("-concurrency 0"), "8", "0: every hardware thread");
    assert_eq!(conc("-concurrency -2"), "6", "-N: all but N");
    assert_eq!(conc("-concurrency 20 -force-concurrency"), "20");
    assert!(refusal("-concurrency 9").contains("more than the 8 hardware threads"));
    assert!(refusal("-concurrency -8").contains("-concurrency: 0 games at once"));
}

#[test]
fn engine_and_each_keys() {
    let (argv, _) = run("-engine cmd=/e/sf name=sf args=--uci dir=/e option.Threads=2 \
         tc=1:00+1 st=2 nodes=10 depth=3 plies=4 timemargin=20 restart=off proto=uci \
         -engine cmd=/e/b depth=2 -each option.Hash=8 dir=/w");
    assert!(
        argv.starts_with(
            "--engine name=sf,cmd=/e/sf,arg=--uci,option.Threads=2,tc=60+1,st=2,nodes=10,\
             depth=3,depth=4,timemargin=20 --engine name=b,cmd=/e/b,depth=2 --each option.Hash=8,dir=/w \
             --timemargin 0"
        ),
        "{argv}"
    );
    assert!(refusal("-engine cmd=c restart=on").contains("restart=on: not supported"));
    assert!(refusal("-each proto=xboard").contains("only uci"));
    assert!(refusal("-each ponder=true").contains("-each unknown key \"ponder\""));
    assert!(refusal("-each option.X=a,b").contains("comma"));
    assert!(refused("-engine cmd=a nodes=1")[0].contains("at least two engines"));
}

#[test]
fn more_than_two_engines_play_fastchess_round_robin_or_its_gauntlet() {
    let three = "-engine cmd=a -engine cmd=b -engine cmd=c -each nodes=5";
    assert!(run(three).0.contains("--timemargin 0 --tournament round-robin --games"));
    let g = run(&format!("{three} -tournament gauntlet -seeds 2")).0;
    assert!(g.contains("--tournament gauntlet --gauntlet-seats 2 --games"), "{g}");
    assert_eq!(mapped("-tournament gauntlet -seeds 2"), "--fault-limit 1", "two: a match");
    assert!(refusal("-tournament swiss").contains("roundrobin or gauntlet"));
}

#[test]
fn openings() {
    assert_eq!(
        mapped("-openings file=u.epd format=epd order=random plies=8 start=3 policy=round"),
        "--book u.epd --book-order random --book-plies 8 --book-start 3 --fault-limit 1"
    );
    assert_eq!(
        mapped("-openings file=u start=1"),
        "--book u --book-order sequential --fault-limit 1"
    );
    assert!(refusal("-openings file=u.epd format=pgn").contains("format=pgn for u.epd"));
    assert!(refusal("-openings file=u.epd policy=encounter").contains("unknown policy"));
    assert!(refusal("-openings file=u.epd start=0").contains("at least 1"));
    assert!(refusal("-openings order=random").contains("needs file="));
    assert!(refusal("-openings file=u.epd foo=1").contains("unknown key \"foo\""));
}

#[test]
fn sprt_models_and_keys() {
    assert_eq!(
        mapped("-sprt elo0=-1 elo1=3 alpha=0.1 beta=0.05 model=logistic -rounds 2"),
        "--sprt elo0=-1,elo1=3,alpha=0.1,beta=0.05,model=logistic --fault-limit 1"
    );
    assert!(
        refusal("-sprt elo0=0 elo1=5 alpha=0.05 beta=0.05 model=bayesian")
            .contains("not supported: model=bayesian")
    );
    assert!(refusal("-sprt elo0=0 elo1=5").contains("missing alpha, beta"));
    assert!(refusal("-sprt elo0=0 elo1=5 alpha=x beta=0.05").contains("alpha=x is not a number"));
    assert!(refusal("-sprt elo0=0 elo1=5 alpha=0.05 beta=0.05 model=x").contains("unknown model"));
    assert!(refusal("-sprt").contains("expects key=value"));
}

#[test]
fn adjudication_with_fastchess_defaults_for_missing_keys() {
    assert_eq!(
        mapped(
            "-draw movenumber=34 movecount=8 score=20 -resign movecount=3 score=600 -maxmoves 200"
        ),
        "--draw movenumber=34,movecount=8,score=20 --resign movecount=3,score=600 --maxmoves 200 \
         --fault-limit 1"
    );
    assert_eq!(
        mapped("-draw score=5 -resign score=900 twosided=true"),
        "--draw movenumber=0,movecount=1,score=5 --resign movecount=1,score=900,twosided=true \
         --fault-limit 1"
    );
    assert_eq!(
        mapped("-resign movecount=2 score=1 twosided=false"),
        "--resign movecount=2,score=1 --fault-limit 1"
    );
    assert!(refusal("-draw score=-5").contains("cannot be negative"));
    assert!(refusal("-resign twosided=yes").contains("expected true or false"));
    assert!(refusal("-draw moves=3").contains("unknown key \"moves\""));
}

#[test]
fn tablebase_adjudication_maps_to_the_runners_flags() {
    assert_eq!(
        mapped("-tb /s:/t -tbpieces 4 -tbignore50 -tbadjudicate WIN_LOSS"),
        "--tb /s:/t --tbpieces 4 --tbignore50 --tbadjudicate win-loss --fault-limit 1"
    );
    assert_eq!(
        mapped("-tb /s -tbpieces 0 -tbadjudicate DRAW"),
        "--tb /s --tbadjudicate draw --fault-limit 1"
    );
    assert!(refusal("-tb /s -tbadjudicate SOME").contains("expected BOTH, WIN_LOSS or DRAW"));
    assert!(refusal("-tb /s -tbpieces x").contains("-tbpieces"));
}

#[test]
fn pgn_and_epd_output_and_tags() {
    assert_eq!(
        mapped(
            "-pgnout file=g.pgn notation=lan nodes=true seldepth=true nps=true hashfull=true \
                pv=true timeleft=true latency=true min=false tbhits=false append=false"
        ),
        "--pgnout file=g.pgn,notation=lan,nodes=true,seldepth=true,nps=true,hashfull=true,\
         pv=true,timeleft=true,latency=true,min=false,append=false --fault-limit 1"
    );
    assert_eq!(
        mapped("-pgnout -epdout -event My Cup -site Here"),
        "--pgnout file=fastchess_20261125_110000.pgn,append=true \
         --epdout fastchess_20261125_110000.epd --event MyCup --site Here --fault-limit 1"
    );
    assert_eq!(mapped("-epdout file=end.epd"), "--epdout end.epd --fault-limit 1");
    assert!(refusal("-pgnout tbhits=true").contains("tbhits=true"));
    assert!(refusal("-pgnout match_line=x").contains("match_line"));
    assert!(refusal("-pgnout notation=xan").contains("unknown notation"));
    assert!(refusal("-pgnout nodes=1").contains("expected true or false"));
    assert!(refusal("-pgnout file=a,b.pgn").contains("comma"));
    assert!(refusal("-epdout append=false").contains("not supported: append="));
}

#[test]
fn output_lines() {
    assert_eq!(
        mapped("-output format=cutechess -ratinginterval 20 -scoreinterval 5 -report penta=true"),
        "--output cutechess --ratinginterval 20 --scoreinterval 5 --fault-limit 1"
    );
    assert!(refusal("-output format=json").contains("format=fastchess or format=cutechess"));
    assert!(refusal("-report penta=false").contains("not supported: penta=false"));
}

#[test]
fn scheduling_affinity_variant_seed_and_timeouts() {
    assert_eq!(
        mapped(
            "-noswap -reverse -wait 50 -use-affinity -variant fischerandom -srand 7 \
                -startup-ms 2500 -ping-ms 60000 -recover"
        ),
        "--noswap --reverse --wait 50 --affinity --variant fischerandom --seed 7 \
         --start-timeout 2.5 --stall-timeout 60 --fault-limit 0"
    );
    assert_eq!(mapped("-use-affinity 0,2-3"), "--affinity=0,2-3 --fault-limit 1");
    assert!(refusal("-variant crazyhouse").contains("standard or fischerandom"));
    assert!(refusal("-noswap 1").contains("takes no value"));
    assert!(refusal("-ucinewgame-ms 100").contains("not supported"));
}

#[test]
fn options_that_map_to_nothing_say_so_in_a_note() {
    let (argv, notes) = run(&format!(
        "{BASE} -autosaveinterval 5 -show-latency -log file=f.log level=info engine=true"
    ));
    assert_eq!(argv, format!("{BASE_OUT} --debug-log --fault-limit 1"));
    assert!(notes[0].starts_with("-autosaveinterval: nothing to set"), "{notes:?}");
    assert!(notes[1].starts_with("-show-latency: nothing to set"), "{notes:?}");
    assert!(notes[2].starts_with("-log: mapped differently"), "{notes:?}");
    assert!(refusal("-log level=loud").contains("unknown level"));
}

#[test]
fn options_the_runner_lacks_are_refused_one_line_each() {
    for (opt, needle) in [
        ("-config file=c.json", "-config: not supported"),
        ("-testEnv", "-testEnv: not supported"),
        ("-strict", "-strict: not supported"),
        ("-check-mate-pvs", "-check-mate-pvs: not supported"),
        ("-crc32 pgn=true", "-crc32: not supported"),
        ("-debug", "-debug: not supported"),
        ("--compliance ./e", "--compliance: not supported"),
        ("-bogus 3", "-bogus: unknown fastchess option"),
    ] {
        assert!(refusal(opt).starts_with(needle), "{opt}: {}", refusal(opt));
    }
    let all = refused(&format!("{BASE} -strict -testEnv -crc32 pgn=true"));
    assert_eq!(all.len(), 3, "every refused option has its line: {all:?}");
    assert!(refused("rounds 3")[0].contains("not a fastchess option"));
}

#[test]
fn quick_is_fastchess_preset() {
    let (argv, _) = run("-quick cmd=./e cmd=./e book=b.epd");
    assert_eq!(
        argv,
        "--engine name=./e1,cmd=./e --engine name=./e2,cmd=./e --tc 10+0.1 --timemargin 0 \
         --games 50000 --concurrency 6 --book b.epd --book-order random \
         --draw movenumber=30,movecount=8,score=8 --output cutechess --fault-limit 0"
    );
    assert!(refused("-quick cmd=a book=b.epd")[0].contains("two cmd="));
    assert!(refused("-quick cmd=a cmd=b book=b.txt")[0].contains(".epd or .pgn"));
}

#[test]
fn help_version_and_runner_options_after_a_double_dash() {
    let print = |a: &str| match translate(&words(a), &env()) {
        Ok(Outcome::Print(t)) => t,
        other => panic!("{other:?}"),
    };
    assert!(print("-version").starts_with("runner "));
    assert!(print("--help").contains("Coming from fastchess"));
    let (argv, _) = run(&format!("{BASE} -- --out r --progress plain"));
    assert!(argv.ends_with("--fault-limit 1 --out r --progress plain"), "{argv}");
    assert_eq!(
        command_line(&words("--engine name=a,cmd=./x --event it's")),
        r#"runner match --engine name=a,cmd=./x --event 'it'\''s'"#
    );
}
