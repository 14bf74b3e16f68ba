//! Adjudication rules of a run (`--draw`, `--resign`, `--maxmoves`, and the rule of `--tb`):
//! part of the plan; the per-game tracking is `crate::play::adjudication`, the tables are
//! probed by `crate::play::tablebase`.

use serde::{Deserialize, Serialize};

/// `--draw movenumber=N,movecount=N,score=CP`, as cutechess-cli counts it: a draw once at least
/// `movenumber` full moves were played (book moves included) and the engines' scores stayed
/// within `score` cp of zero for the last 2 x `movecount` plies; a capture or a pawn move starts
/// the count again (at that ply).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawRule {
    pub movenumber: u32,
    pub movecount: u32,
    pub score: i32,
}

/// `--resign movecount=N,score=CP[,twosided=true]`: a side whose own score was at most -`score`
/// for `movecount` consecutive moves of its own loses; with `twosided`, only when the other
/// side's score was at least +`score` for its last `movecount` moves too (cutechess-cli's rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResignRule {
    pub movecount: u32,
    pub score: i32,
    /// Left out of run.json when false, so plans without it keep their hash.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub twosided: bool,
}

/// All adjudication settings of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjudication {
    pub draw: Option<DrawRule>,
    pub resign: Option<ResignRule>,
    /// A draw after this many full moves played by the engines (book moves not counted).
    pub max_moves: Option<u32>,
    /// Syzygy tablebase adjudication (`--tb`): which positions and results. Where the tables
    /// are is not part of the plan (each machine has its own path, `--tb PATH`). Left out of
    /// run.json when absent, so plans without it keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tablebase: Option<TablebaseRule>,
}

/// Which tablebase results end a game (`--tbadjudicate`, fastchess's `-tbadjudicate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TbAdjudicate {
    /// Only won (and so lost) positions.
    WinLoss,
    /// Only drawn positions.
    Draw,
    /// Both.
    #[default]
    Both,
}

impl TbAdjudicate {
    pub fn as_str(self) -> &'static str {
        match self {
            TbAdjudicate::WinLoss => "win-loss",
            TbAdjudicate::Draw => "draw",
            TbAdjudicate::Both => "both",
        }
    }
}

/// `--tb PATH --tbpieces N [--tbignore50] [--tbadjudicate ...]`: a game ends as soon as a
/// position with at most `pieces` pieces (kings included) is in the Syzygy tables, with the
/// tables' result. `pieces` is always concrete in a plan (by default the largest tables found
/// at `--tb` when the run was planned), so that a fleet worker knows which tables it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TablebaseRule {
    pub pieces: u32,
    /// Adjudicate as if there were no fifty-move rule (cursed wins are wins, blessed losses
    /// losses). Left out of run.json when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore50: bool,
    pub adjudicate: TbAdjudicate,
}

/// The most pieces a Syzygy table holds (7-piece tables exist; none larger).
pub const TB_MAX_PIECES: u32 = 7;

impl TablebaseRule {
    /// The rule of `--tbpieces` (None: `found`, the largest tables at `--tb`), `--tbignore50`
    /// and `--tbadjudicate`.
    pub fn new(
        pieces: Option<u32>,
        found: u32,
        ignore50: bool,
        adjudicate: TbAdjudicate,
    ) -> anyhow::Result<TablebaseRule> {
        let pieces = pieces.unwrap_or(found);
        if !(3..=TB_MAX_PIECES).contains(&pieces) {
            anyhow::bail!("--tbpieces must be 3 to {TB_MAX_PIECES} (got {pieces})");
        }
        Ok(TablebaseRule { pieces, ignore50, adjudicate })
    }

    /// One line for logs and the fleet: "Syzygy 4 pieces, win-loss and draw, fifty-move rule".
    pub fn describe(&self) -> String {
        let what = match self.adjudicate {
            TbAdjudicate::Both => "wins, losses and draws",
            TbAdjudicate::WinLoss => "wins and losses",
            TbAdjudicate::Draw => "draws",
        };
        let fifty = if self.ignore50 { "fifty-move rule ignored" } else { "fifty-move rule" };
        format!("Syzygy tablebases up to {} pieces: {what}, {fifty}", self.pieces)
    }
}

fn key_values(input: &str, keys: &[&str]) -> Result<Vec<i64>, String> {
    let mut vals: Vec<Option<i64>> = vec![None; keys.len()];
    for item in input.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=').ok_or_else(|| format!("{item:?} is not key=value"))?;
        let idx = keys
            .iter()
            .position(|x| *x == k.trim())
            .ok_or_else(|| format!("unknown key {k:?} (expected {})", keys.join(", ")))?;
        let v: i64 = v.trim().parse().map_err(|_| format!("{k}: {v:?} is not a whole number"))?;
        if !(0..=1_000_000).contains(&v) {
            return Err(format!("{k}: {v} is out of range"));
        }
        vals[idx] = Some(v);
    }
    keys.iter().zip(vals).map(|(k, v)| v.ok_or_else(|| format!("missing {k}="))).collect()
}

impl DrawRule {
    pub fn parse(s: &str) -> Result<DrawRule, String> {
        let v = key_values(s, &["movenumber", "movecount", "score"])
            .map_err(|e| format!("bad --draw {s:?}: {e}"))?;
        if v[1] == 0 {
            return Err(format!("bad --draw {s:?}: movecount must be > 0"));
        }
        Ok(DrawRule { movenumber: v[0] as u32, movecount: v[1] as u32, score: v[2] as i32 })
    }
}

impl ResignRule {
    pub fn parse(s: &str) -> Result<ResignRule, String> {
        let bad = |e: String| format!("bad --resign {s:?}: {e}");
        // `twosided=true|false` is the one key that is not a number.
        let mut twosided = false;
        let mut numbers = Vec::new();
        for item in s.split(',') {
            match item.split_once('=') {
                Some((k, v)) if k.trim() == "twosided" => {
                    twosided = match v.trim() {
                        "true" => true,
                        "false" => false,
                        other => {
                            return Err(bad(format!("twosided: {other:?} is not true or false")));
                        }
                    }
                }
                _ => numbers.push(item),
            }
        }
        let v = key_values(&numbers.join(","), &["movecount", "score"]).map_err(bad)?;
        if v[0] == 0 {
            return Err(bad("movecount must be > 0".into()));
        }
        Ok(ResignRule { movecount: v[0] as u32, score: v[1] as i32, twosided })
    }
}

impl Adjudication {
    /// The rules of `--draw`, `--resign` and `--maxmoves`.
    pub fn from_flags(
        draw: Option<&str>,
        resign: Option<&str>,
        maxmoves: Option<u32>,
    ) -> anyhow::Result<Adjudication> {
        Ok(Adjudication {
            draw: draw.map(DrawRule::parse).transpose().map_err(|e| anyhow::anyhow!(e))?,
            resign: resign.map(ResignRule::parse).transpose().map_err(|e| anyhow::anyhow!(e))?,
            max_moves: match maxmoves {
                Some(0) => anyhow::bail!("--maxmoves must be > 0"),
                m => m,
            },
            tablebase: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rules() {
        assert_eq!(
            DrawRule::parse("movenumber=40,movecount=8,score=10").unwrap(),
            DrawRule { movenumber: 40, movecount: 8, score: 10 }
        );
        assert_eq!(
            ResignRule::parse("movecount=3,score=600").unwrap(),
            ResignRule { movecount: 3, score: 600, twosided: false }
        );
        assert_eq!(
            ResignRule::parse("movecount=3,twosided=true,score=600").unwrap(),
            ResignRule { movecount: 3, score: 600, twosided: true }
        );
        assert!(
            ResignRule::parse("movecount=3,score=600,twosided=yes")
                .unwrap_err()
                .contains("twosided")
        );
        assert!(DrawRule::parse("movenumber=40,movecount=8").unwrap_err().contains("score"));
        assert!(ResignRule::parse("movecount=x,score=1").is_err());
        assert!(ResignRule::parse("movecount=1,score=1,foo=2").is_err());
        assert!(ResignRule::parse("movecount=0,score=1").is_err());
    }

    /// Plans without `twosided` serialize as before (their hash is unchanged).
    #[test]
    fn one_sided_resign_keeps_the_old_json() {
        let r = ResignRule { movecount: 3, score: 600, twosided: false };
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"movecount":3,"score":600}"#);
        let back: ResignRule = serde_json::from_str(r#"{"movecount":3,"score":600}"#).unwrap();
        assert_eq!(back, r);
    }
}
