use std::process::ExitCode;

use clap::Parser;
use runner::cli::{Cli, Command};
use runner::exit::Exit;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let res = match &cli.command {
        Command::Match(args) => runner::cmd::match_cmd::run(args).await,
        Command::Stats(args) => runner::cmd::stats::run(args).map(|()| Exit::Done),
        Command::Sweep(args) => runner::cmd::sweep::run(args).await,
        Command::Tune(args) => runner::cmd::tune::run(args).await,
        Command::Report(args) => runner::cmd::report::run(args),
        Command::Merge(args) => runner::cmd::merge::run(args),
        Command::Book(args) => runner::cmd::book::run(args).await,
        Command::Calibrate(args) => runner::cmd::calibrate::run(args).await,
        Command::Searchtest(args) => runner::cmd::searchtest::run(args).await,
        Command::Worker(args) => runner::cmd::worker::run(args).await,
        Command::Db(args) => runner::cmd::db::run(args).await,
        Command::Submit(args) => runner::cmd::submit::run(args).await,
        Command::Pull(args) => runner::cmd::pull::run(args).await,
        Command::Status(args) => runner::cmd::status::run(args).await,
        Command::Cancel(args) => runner::cmd::cancel::run(args).await,
        Command::Modify(args) => runner::cmd::modify::run(args).await,
        Command::Approve(args) => runner::cmd::approve::run(args).await,
        Command::Gc(args) => runner::cmd::gc::run(args).await,
        Command::Purge(args) => runner::cmd::purge::run(args).await,
        Command::WorkerKey(args) => runner::cmd::worker_key::run(args).await,
        Command::Workers(args) => runner::cmd::workers::run(args).await,
        Command::Delete(args) => runner::cmd::delete::run(args).await,
        Command::Fastchess(args) => runner::cmd::fastchess::run(args).await,
        Command::Serve(args) => runner::cmd::serve::run(args).await,
        Command::User(args) => runner::cmd::user::run(args).await,
    };
    // Whatever the engines left behind (re-parented to the runner, its subreaper) dies with the
    // command, engines included.
    runner::play::orphans::reap_all(std::time::Duration::from_secs(2)).await;
    match res {
        Ok(exit) => exit.into(),
        Err(e) => {
            runner::errln!("error: {e:#}");
            Exit::Error.into()
        }
    }
}
