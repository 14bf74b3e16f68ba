//! Files a run writes where the user says, besides its own folder: `--pgnout` (every game as
//! PGN, as fastchess's `-pgnout` writes it) and `--epdout` (the final position of every game).
//!
//! Games are written as they end (finish order, as fastchess), after their games.jsonl line.
//! `append=true` (the default, as fastchess) adds to what the file holds. `append=false` empties
//! it when a new run starts; on `--resume` it is rewritten with the games already in games.jsonl
//! (in their finish order) before new games follow, so a resume never loses games. The EPD file
//! is always appended to (fastchess's default). A kill between a game's games.jsonl line and its
//! PGN text can leave that one game out of an appended file.
//!
//! The paths are the user's: missing parent folders are made and the file may be anywhere, but
//! never a symbolic link (refused in one line, as `runner book --out`), and never one of the run
//! folder's own files.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use shakmaty::fen::Epd;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, EnPassantMode, Position};

use crate::plan::openings::position_for;
use crate::plan::run_plan::RunPlan;
use crate::play::uci_info::Eval;
use crate::store::files;
use crate::store::pgn::{Notation, PgnStyle};
use crate::store::{GAMES_FILE, GameRecord, PGN_FILE, RUN_FILE, SUMMARY_FILE};

/// `--pgnout file=PATH[,key=value]...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnOutSpec {
    pub file: PathBuf,
    pub append: bool,
    pub style: PgnStyle,
    pub fields: CommentFields,
}

/// The optional fields of a move comment (fastchess's order: tl, latency, n, sd, nps,
/// hashfull, pv).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommentFields {
    pub timeleft: bool,
    pub latency: bool,
    pub nodes: bool,
    pub seldepth: bool,
    pub nps: bool,
    pub hashfull: bool,
    pub pv: bool,
}

impl PgnOutSpec {
    /// Parses `file=PATH,append=true,notation=lan,...` (values cannot contain commas).
    pub fn parse(spec: &str) -> Result<PgnOutSpec> {
        let bad = |why: String| anyhow!("bad --pgnout {spec:?}: {why}");
        let mut file = None;
        let mut out = PgnOutSpec {
            file: PathBuf::new(),
            append: true,
            style: PgnStyle::default(),
            fields: CommentFields::default(),
        };
        for part in spec.split(',').filter(|p| !p.is_empty()) {
            let (key, value) =
                part.split_once('=').ok_or_else(|| bad(format!("{part:?} is not key=value")))?;
            let flag = || match value {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(bad(format!("{key}= takes true or false, not {value:?}"))),
            };
            let f = &mut out.fields;
            match key {
                "file" if !value.is_empty() => file = Some(PathBuf::from(value)),
                "file" => return Err(bad("file= is empty".into())),
                "append" => out.append = flag()?,
                "notation" => {
                    out.style.notation = Notation::parse(value).ok_or_else(|| {
                        bad(format!("notation= is san, lan or uci, not {value:?}"))
                    })?
                }
                "min" => out.style.min = flag()?,
                "nodes" => f.nodes = flag()?,
                "seldepth" => f.seldepth = flag()?,
                "nps" => f.nps = flag()?,
                "hashfull" => f.hashfull = flag()?,
                "pv" => f.pv = flag()?,
                "timeleft" => f.timeleft = flag()?,
                "latency" => f.latency = flag()?,
                "tbhits" | "match_line" => {
                    return Err(bad(format!("{key}= is not supported by the runner")));
                }
                _ => return Err(bad(format!("unknown key {key:?}"))),
            }
        }
        out.file = file.ok_or_else(|| bad("file=PATH is missing".into()))?;
        Ok(out)
    }
}

/// What a run writes outside its folder: `--pgnout` and `--epdout`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputFiles {
    pub pgnout: Option<PgnOutSpec>,
    pub epdout: Option<PathBuf>,
}

impl OutputFiles {
    /// From `--pgnout SPEC` and `--epdout FILE`.
    pub fn from_flags(pgnout: Option<&str>, epdout: Option<&Path>) -> Result<OutputFiles> {
        Ok(OutputFiles {
            pgnout: pgnout.map(PgnOutSpec::parse).transpose()?,
            epdout: epdout.map(Path::to_path_buf),
        })
    }
}

/// The open extra files of a run.
#[derive(Debug)]
pub struct ExtraFiles {
    pgn: Option<(PgnOutSpec, File)>,
    epd: Option<(PathBuf, File)>,
}

/// Refuses a symlink at `path` and a path that is one of the run folder's own files; makes the
/// missing parent folders.
fn check_target(path: &Path, run_dir: &Path, flag: &str) -> Result<()> {
    if let Ok(meta) = fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            bail!(
                "{flag} {}: it is a symbolic link (the runner does not write through one): name \
                 the file itself",
                path.display()
            );
        }
        use std::os::unix::fs::MetadataExt;
        for own in [PGN_FILE, GAMES_FILE, RUN_FILE, SUMMARY_FILE] {
            if let Ok(m) = fs::symlink_metadata(run_dir.join(own))
                && (m.dev(), m.ino()) == (meta.dev(), meta.ino())
            {
                bail!("{flag} {}: it is the run folder's own {own}", path.display());
            }
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    Ok(())
}

impl ExtraFiles {
    /// Opens the files of `outputs` for a run in `run_dir` whose finished games (on `--resume`)
    /// are `done`, in games.jsonl order.
    pub fn open(
        outputs: &OutputFiles,
        run_dir: &Path,
        plan: &RunPlan,
        done: &[GameRecord],
        resume: bool,
    ) -> Result<ExtraFiles> {
        let mut extra = ExtraFiles { pgn: None, epd: None };
        if let Some(spec) = &outputs.pgnout {
            check_target(&spec.file, run_dir, "--pgnout")?;
            let file = if spec.append {
                files::open_append(&spec.file)?
            } else {
                let mut f = files::create_file(&spec.file)?;
                if resume {
                    let mut text = String::new();
                    for r in done {
                        text.push_str(&game_text(r, plan, spec)?);
                    }
                    files::write_named(&spec.file, &mut f, text.as_bytes())?;
                }
                f
            };
            extra.pgn = Some((spec.clone(), file));
        }
        if let Some(path) = &outputs.epdout {
            check_target(path, run_dir, "--epdout")?;
            extra.epd = Some((path.clone(), files::open_append(path)?));
        }
        Ok(extra)
    }

    /// Writes one finished game to each file.
    pub fn append(&mut self, rec: &GameRecord, plan: &RunPlan) -> Result<()> {
        if let Some((spec, f)) = self.pgn.as_mut() {
            let text = game_text(rec, plan, spec)?;
            files::write_named(&spec.file, f, text.as_bytes())?;
        }
        if let Some((path, f)) = self.epd.as_mut() {
            let line = final_epd(rec, plan)?;
            files::write_named(path, f, format!("{line}\n").as_bytes())?;
        }
        Ok(())
    }
}

/// The PGN text of a game for `--pgnout`.
pub fn game_text(rec: &GameRecord, plan: &RunPlan, spec: &PgnOutSpec) -> Result<String> {
    let comments: Vec<String> =
        (0..rec.moves.len()).map(|i| move_comment(rec, i, &spec.fields)).collect();
    rec.to_pgn_with(plan, spec.style, &comments)
}

/// fastchess's comment of move `i` (book moves `book`): `SCORE/DEPTH TIME` then the chosen
/// fields, and on the last move why the game ended. What an engine did not report is written as
/// fastchess writes its defaults (no score, 0).
fn move_comment(rec: &GameRecord, i: usize, f: &CommentFields) -> String {
    if i < rec.book_plies {
        return "book".into();
    }
    let k = i - rec.book_plies;
    let info = &rec.move_info;
    let get = |v: &[Option<u64>]| v.get(k).copied().flatten().unwrap_or(0);
    let score = match rec.scores.get(k).copied().flatten() {
        Some(Eval::Cp(cp)) => {
            let sign = if cp > 0 {
                "+"
            } else if cp < 0 {
                "-"
            } else {
                ""
            };
            format!("{sign}{}.{:02}", cp.unsigned_abs() / 100, cp.unsigned_abs() % 100)
        }
        // fastchess counts mates in plies: mate in n is M(2n-1), mated in n is -M(2n).
        Some(Eval::Mate(n)) if n > 0 => format!("+M{}", 2 * i64::from(n) - 1),
        Some(Eval::Mate(n)) => format!("-M{}", -2 * i64::from(n)),
        None => String::new(),
    };
    let depth = rec.depths.get(k).copied().flatten().unwrap_or(0);
    let time_ms = rec.times_ms.get(k).copied().unwrap_or(0.0);
    let mut parts = vec![format!("{score}/{depth} {}", secs(time_ms))];
    if f.timeleft {
        parts.push(format!("tl={}", secs(get(&info.timeleft_ms) as f64)));
    }
    if f.latency {
        let reported = rec.engine_times_ms.get(k).copied().flatten();
        let latency = reported.map(|r| time_ms - r as f64).unwrap_or(0.0);
        parts.push(format!("latency={}", secs(latency)));
    }
    if f.nodes {
        parts.push(format!("n={}", get(&info.nodes)));
    }
    if f.seldepth {
        let sd = info.seldepths.get(k).copied().flatten().unwrap_or(0);
        parts.push(format!("sd={sd}"));
    }
    if f.nps {
        parts.push(format!("nps={}", get(&info.nps)));
    }
    if f.hashfull {
        let h = info.hashfull.get(k).copied().flatten().unwrap_or(0);
        parts.push(format!("hashfull={h}"));
    }
    if f.pv {
        let pv = info.pvs.get(k).cloned().flatten().unwrap_or_default();
        parts.push(format!("pv=\"{pv}\""));
    }
    if i + 1 == rec.moves.len() {
        parts.push(rec.ending_text());
    }
    parts.join(", ")
}

/// Milliseconds as fastchess writes times: seconds with three decimals and `s`.
fn secs(ms: f64) -> String {
    let ms = ms.round() as i64;
    let sign = if ms < 0 { "-" } else { "" };
    format!("{sign}{}.{:03}s", ms.unsigned_abs() / 1000, ms.unsigned_abs() % 1000)
}

/// The final position of a game as fastchess's `-epdout` writes it: the FEN's first four fields,
/// then `hmvc N; fmvn N;`.
pub fn final_epd(rec: &GameRecord, plan: &RunPlan) -> Result<String> {
    let mut pos: Chess = position_for(&rec.fen, plan.variant)?;
    for (ply, m) in rec.moves.iter().enumerate() {
        let mv = m
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
            .ok_or_else(|| anyhow!("game {}: move {} ({m}) is not legal", rec.seq, ply + 1))?;
        pos.play_unchecked(mv);
    }
    let epd = Epd::from_position(&pos, EnPassantMode::Legal);
    Ok(format!("{epd} hmvc {}; fmvn {};", pos.halfmoves(), pos.fullmoves()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{plan, record};

    #[test]
    fn specs_parse_and_bad_ones_are_refused_in_one_line() {
        let s = PgnOutSpec::parse("file=out/a.pgn,append=false,notation=lan,nodes=true,min=true")
            .unwrap();
        assert_eq!(s.file, PathBuf::from("out/a.pgn"));
        assert!(!s.append && s.style.min && s.fields.nodes && !s.fields.pv);
        assert_eq!(s.style.notation, Notation::Lan);
        assert!(PgnOutSpec::parse("file=x.pgn").unwrap().append, "fastchess's default");
        for (bad, says) in [
            ("append=true", "file=PATH is missing"),
            ("file=x,notation=xyz", "san, lan or uci"),
            ("file=x,nodes=yes", "true or false"),
            ("file=x,colour=red", "unknown key"),
            ("file=x,tbhits=true", "not supported"),
            ("file", "not key=value"),
        ] {
            let e = PgnOutSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says) && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn comments_follow_fastchess() {
        let mut r = record(0, 0);
        r.move_info.timeleft_ms = vec![Some(9500), None, Some(8000)];
        r.move_info.nodes = vec![Some(1234), None, Some(1)];
        r.move_info.seldepths = vec![Some(7), None, None];
        r.move_info.pvs = vec![Some("e7e5 g2g4".into()), None, None];
        let all = CommentFields {
            timeleft: true,
            latency: true,
            nodes: true,
            seldepth: true,
            nps: true,
            hashfull: true,
            pv: true,
        };
        assert_eq!(move_comment(&r, 0, &all), "book");
        assert_eq!(
            move_comment(&r, 1, &all),
            "+0.10/3 0.002s, tl=9.500s, latency=0.001s, n=1234, sd=7, nps=0, hashfull=0, \
             pv=\"e7e5 g2g4\""
        );
        assert_eq!(move_comment(&r, 2, &CommentFields::default()), "/0 0.002s");
        assert_eq!(
            move_comment(&r, 3, &CommentFields::default()),
            "+M1/1 0.003s, checkmate",
            "mate in 1 is one ply"
        );
        r.scores[2] = Some(Eval::Mate(-3));
        r.scores[0] = Some(Eval::Cp(0));
        assert!(move_comment(&r, 3, &CommentFields::default()).starts_with("-M6/1"));
        assert!(move_comment(&r, 1, &CommentFields::default()).starts_with("0.00/3"));
    }

    #[test]
    fn final_positions_are_epd_with_counters() {
        let r = record(0, 0);
        assert_eq!(
            final_epd(&r, &plan()).unwrap(),
            "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - hmvc 1; fmvn 3;"
        );
    }
}
