//! What an approver approves: every engine of a run as workers will run it, in full (`runner
//! status RUN`, `runner approve RUN`): the command and its arguments quoted as a shell would
//! need them (a stored `/bin/sh -c '...'` whole, control characters shown escaped so that no
//! text can hide another), the working folder, every UCI option, and what the command is on a
//! worker: a stored binary (its SHA-256 and size), a build from source (repository, commit,
//! build command, binary), or a worker's own engine of that name (nothing stored).

use super::identity::EngineIdentity;
use super::queue::artifacts::ArtifactRow;
use super::submission::Submission;

/// `s` as one shell word: bare when it holds only safe characters, else single-quoted; control
/// characters (and other invisible ones) are written as `\u{..}` so the approver sees them.
pub fn shell_word(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    let shown: String = s
        .chars()
        .map(|c| match c.is_control() || is_invisible(c) {
            true => c.escape_unicode().to_string(),
            false => c.to_string(),
        })
        .collect();
    if !shown.is_empty() && shown.chars().all(safe) && shown == s {
        return shown;
    }
    format!("'{}'", shown.replace('\'', r"'\''"))
}

/// Characters that print as nothing or move the text (bidirectional overrides, zero widths).
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// A value shown on one line, escaped like [`shell_word`] but unquoted.
fn visible(s: &str) -> String {
    s.chars()
        .map(|c| match c.is_control() || is_invisible(c) {
            true => c.escape_unicode().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// The block of a run's engines (`artifacts`: the run's stored artifacts, with their sizes).
pub fn engines_block(sub: &Submission, artifacts: &[ArtifactRow]) -> String {
    let mut out = String::from("  engines, as workers run them (in a box where they can):\n");
    for spec in &sub.plan().engines {
        let id = sub.engines.iter().find(|i| i.name == spec.name);
        out.push_str(&format!("    {}\n", visible(&spec.name)));
        // A source engine's command is the binary each worker builds (named under `runs:`),
        // not the path it had on the submitter's machine, which no worker sees.
        let cmd = match id.and_then(|i| i.source.as_ref()) {
            Some(src) => format!("(the built {})", shell_word(&src.bin)),
            None => shell_word(&spec.cmd),
        };
        let mut words = vec![cmd];
        words.extend(spec.args.iter().map(|a| shell_word(a)));
        out.push_str(&format!("      command: {}\n", words.join(" ")));
        if let Some(d) = &spec.dir {
            out.push_str(&format!("      folder: {}\n", shell_word(&d.display().to_string())));
        }
        out.push_str(&format!("      runs: {}\n", runs_what(id, artifacts)));
        if spec.options.is_empty() {
            out.push_str("      options: none\n");
        } else {
            out.push_str("      options:\n");
            for (k, v) in &spec.options {
                out.push_str(&format!("        {} = {}\n", visible(k), visible(v)));
            }
        }
    }
    out
}

/// What a worker starts for the engine of identity `id`.
fn runs_what(id: Option<&EngineIdentity>, artifacts: &[ArtifactRow]) -> String {
    let Some(id) = id else {
        return "no identity stored: workers refuse it".into();
    };
    if let Some(src) = &id.source {
        let size = artifacts
            .iter()
            .find(|a| a.sha == src.archive_sha)
            .map_or_else(|| "not stored".to_string(), |a| format!("{} bytes", a.size));
        return format!(
            "built from source: repository {}, commit {}, build command {}, binary {} (source \
             archive sha256 {}, {size}), bench {} nodes",
            shell_word(&src.repo),
            visible(&src.commit),
            shell_word(&src.build),
            shell_word(&src.bin),
            src.archive_sha,
            src.nodes
        );
    }
    match artifacts.iter().find(|a| a.sha == id.sha256) {
        Some(a) => format!(
            "the stored binary of {} (sha256 {}, {} bytes){}",
            shell_word(&id.cmd),
            a.sha,
            a.size,
            id.bench.as_deref().map(|b| format!(", {b}")).unwrap_or_default()
        ),
        None => format!(
            "a worker's own engine of this name, or this command under a worker's --trust, if \
             its sha256 is {} (nothing stored)",
            id.sha256
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_whole_and_hidden_characters_shown() {
        assert_eq!(shell_word("/usr/games/stockfish"), "/usr/games/stockfish");
        assert_eq!(shell_word("-c"), "-c");
        assert_eq!(
            shell_word("cat /proc/$PPID/environ; echo 'x'"),
            r"'cat /proc/$PPID/environ; echo '\''x'\'''"
        );
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a\rb"), r"'a\u{d}b'");
        assert_eq!(shell_word("a\u{202e}b"), r"'a\u{202e}b'");
        assert_eq!(visible("x\u{1b}[2Ky"), r"x\u{1b}[2Ky");
    }
}
