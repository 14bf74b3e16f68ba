//! Subcommands.

pub mod approve;
pub mod book;
pub mod calibrate;
pub mod cancel;
pub mod db;
pub mod delete;
pub mod door;
pub mod fastchess;
pub mod gc;
pub mod match_cmd;
pub mod merge;
pub mod modify;
pub mod pull;
pub mod purge;
pub mod report;
pub mod searchtest;
pub mod serve;
pub mod stats;
pub mod status;
pub mod submit;
pub mod sweep;
pub mod tune;
pub mod user;
pub mod worker;
pub mod worker_key;
pub mod workers;

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::Cli;
    use crate::exit::Exit;

    /// clap refuses a bad command line with the code `Exit::BadCommandLine` names.
    #[test]
    fn a_bad_command_line_exits_with_the_named_code() {
        let e = Cli::try_parse_from(["runner", "match", "--progress", "bogus"]).unwrap_err();
        assert_eq!(e.exit_code(), i32::from(Exit::BadCommandLine.code()));
        assert_eq!(
            [Exit::Done, Exit::Error, Exit::BadCommandLine, Exit::Interrupted].map(Exit::code),
            [0, 1, 2, 130]
        );
    }
}
