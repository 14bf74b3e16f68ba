//! Adjudication rules of a run (`--draw`, `--resign`, `--maxmoves`): part of the plan; the
//! per-game tracking is `crate::play::adjudication`.

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
