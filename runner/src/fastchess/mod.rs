//! `runner fastchess ARGS...`: a fastchess command line (single-dash options) read as fastchess
//! reads it and written as the `runner match` command that plays the same match. A tool on top
//! of the run layer that uses nothing of the runner but its option names: [`translate`] is a
//! pure function from fastchess's words to runner's words; `cmd/fastchess.rs` prints the
//! translation and runs it.
//!
//! [`words`] splits the command line into options and quotes the result for a shell,
//! [`engines`] maps `-engine`/`-each` keys (limits, options, names, `-each` winning as in
//! fastchess), [`options`] every other option and fastchess's defaults where the runner's
//! differ. Each option the runner does not have is refused in one line naming it.

pub mod engines;
pub mod options;
pub mod words;

#[cfg(test)]
mod tests;

pub use options::Env;

/// What a fastchess command line asks for.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Run `runner match` with these arguments (after `match`); print the notes first.
    Run { argv: Vec<String>, notes: Vec<String> },
    /// `-help` or `-version`: print this and stop.
    Print(String),
}

/// Translates fastchess's `args`; words after a `--` are runner match options, appended as they
/// are. An error holds one line per refused option (or the one reason nothing could be read).
pub fn translate(args: &[String], env: &Env) -> Result<Outcome, Vec<String>> {
    let (fc, extra) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let opts = words::split(fc).map_err(|e| vec![e])?;
    let mut state = options::State::default();
    let mut refused = Vec::new();
    for o in &opts {
        if let Err(e) = state.apply(o, env) {
            refused.push(e);
        }
    }
    if let Some(text) = state.print.take() {
        return Ok(Outcome::Print(text));
    }
    match state.finish(env) {
        Ok(mut argv) if refused.is_empty() => {
            argv.extend(extra.iter().cloned());
            Ok(Outcome::Run { argv, notes: state.final_notes() })
        }
        Ok(_) => Err(refused),
        Err(more) => {
            refused.extend(more);
            Err(refused)
        }
    }
}

/// The translated command as one line a user can type: `runner match ...`.
pub fn command_line(argv: &[String]) -> String {
    let words: Vec<String> =
        ["runner", "match"].into_iter().map(String::from).chain(argv.iter().cloned()).collect();
    words::shell_line(&words)
}
