//! Reading what an engine writes: lines capped in length, and the few UCI replies the runner
//! acts on (`id name`, `option name`, `uciok`, `readyok`, `bestmove`), scanned by hand so that no
//! engine output can make the runner panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Longest line an engine may write, newline excluded (1 MiB); a longer one is garbage output.
pub const MAX_LINE: usize = 1 << 20;

/// What one read of a line gave.
#[derive(Debug, PartialEq, Eq)]
pub enum LineRead {
    /// A line (in the buffer, newline included when there was one).
    Line,
    /// End of output.
    Eof,
    /// More than `max` bytes without a newline; the reader stops here.
    Overlong,
}

/// Reads one line into `buf` (cleared first), holding at most `max` bytes plus the newline.
pub async fn read_line_capped<R: AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    buf.clear();
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if buf.is_empty() { LineRead::Eof } else { LineRead::Line });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let content = buf.len() + take - usize::from(done);
        if content > max {
            return Ok(LineRead::Overlong);
        }
        buf.extend_from_slice(chunk.get(..take).unwrap_or(chunk));
        r.consume(take);
        if done {
            return Ok(LineRead::Line);
        }
    }
}

/// The move token of a `bestmove` line (empty when the line has none); `None` for other lines.
pub fn bestmove(line: &str) -> Option<&str> {
    let mut it = line.split_ascii_whitespace();
    (it.next()? == "bestmove").then(|| it.next().unwrap_or(""))
}

/// The name of an `option name NAME type ...` declaration (words joined by one space).
pub fn option_name(line: &str) -> Option<String> {
    let mut it = line.split_ascii_whitespace();
    if it.next()? != "option" || it.next()? != "name" {
        return None;
    }
    let words: Vec<&str> = it.take_while(|w| *w != "type").collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// The type word of an `option name NAME type TYPE ...` declaration (`spin`, `check`, `string`,
/// ...); `None` for other lines or a declaration without one.
pub fn option_type(line: &str) -> Option<String> {
    option_name(line)?;
    let mut it = line.split_ascii_whitespace().skip_while(|w| *w != "type");
    it.next()?;
    it.next().map(str::to_string)
}

/// The engine's name from `id name NAME`.
pub fn id_name(line: &str) -> Option<String> {
    let mut it = line.split_ascii_whitespace();
    if it.next()? != "id" || it.next()? != "name" {
        return None;
    }
    let words: Vec<&str> = it.collect();
    (!words.is_empty()).then(|| words.join(" "))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn option_types_are_read() {
        let t = |l: &str| option_type(l);
        assert_eq!(t("option name X type spin default 50 min 0 max 100").as_deref(), Some("spin"));
        assert_eq!(t("option name t mid type string default 1.0").as_deref(), Some("string"));
        assert_eq!(t("option name X"), None);
        assert_eq!(t("option name X type"), None);
        assert_eq!(t("info string type spin"), None);
    }
}
