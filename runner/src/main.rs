use std::process::ExitCode;

use clap::Parser;
use runner::cli::{Cli, Command};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let res = match &cli.command {
        Command::Match(args) => runner::cmd::match_cmd::run(args).await,
        Command::Stats(args) => runner::cmd::stats::run(args).map(|()| 0),
    };
    match res {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
