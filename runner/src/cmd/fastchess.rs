//! `runner fastchess ARGS...`: translates a fastchess command line (`crate::fastchess`), prints
//! the `runner match` command on one line, then runs it as `runner match` would.

use anyhow::Result;
use clap::Parser;

use crate::cli::{Cli, Command, FastchessArgs};
use crate::exit::Exit;
use crate::fastchess::{self, Env, Outcome};
use crate::play::worker::default_concurrency;

/// `runner fastchess`. Returns the process exit code.
pub async fn run(args: &FastchessArgs) -> Result<Exit> {
    let env = Env {
        cpus: default_concurrency(),
        stamp: chrono::Local::now().format("%Y%m%d_%H%M%S").to_string(),
    };
    let (argv, notes) = match fastchess::translate(&args.args, &env) {
        Ok(Outcome::Run { argv, notes }) => (argv, notes),
        Ok(Outcome::Print(text)) => {
            outln!("{text}");
            return Ok(Exit::Done);
        }
        Err(lines) => {
            for line in lines {
                errln!("error: {line}");
            }
            return Ok(Exit::BadCommandLine);
        }
    };
    errln!("{}", fastchess::command_line(&argv));
    for note in notes {
        errln!("note: {note}");
    }
    let words = ["runner", "match"].into_iter().map(String::from).chain(argv);
    let cli = match Cli::try_parse_from(words) {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("the command above is not valid");
            errln!("{first}");
            return Ok(Exit::BadCommandLine);
        }
    };
    match cli.command {
        Command::Match(m) => crate::cmd::match_cmd::run(&m).await,
        _ => anyhow::bail!("the translation is not a runner match command"),
    }
}
