//! Match results as counts: trinomial (per game) and pentanomial (per game pair).

use serde::{Deserialize, Serialize};

use crate::error::StatsError;

/// Largest total this crate accepts: every count and sum stays exactly representable as `f64`.
pub const MAX_TOTAL: u64 = 1 << 52;

/// The result of one game from the first engine's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameScore {
    Win,
    Draw,
    Loss,
}

impl GameScore {
    /// Points for the first engine: 1, 1/2 or 0, counted in half points (2, 1, 0).
    pub fn half_points(self) -> u8 {
        match self {
            GameScore::Win => 2,
            GameScore::Draw => 1,
            GameScore::Loss => 0,
        }
    }
}

/// Trinomial counts: wins, draws and losses of the first engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Wdl {
    /// Counts one more game.
    pub fn add(&mut self, s: GameScore) {
        match s {
            GameScore::Win => self.wins += 1,
            GameScore::Draw => self.draws += 1,
            GameScore::Loss => self.losses += 1,
        }
    }

    /// Number of games (saturating: absurd totals are rejected by [`Wdl::check`]).
    pub fn games(&self) -> u64 {
        self.wins.saturating_add(self.draws).saturating_add(self.losses)
    }

    /// Points of the first engine: wins + draws / 2.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }

    /// Counts in the order of ascending score: `[losses, draws, wins]`.
    pub fn ascending(&self) -> [u64; 3] {
        [self.losses, self.draws, self.wins]
    }

    /// Rejects totals above [`MAX_TOTAL`].
    pub fn check(&self) -> Result<(), StatsError> {
        check_total(&self.ascending(), "games")
    }
}

/// Pentanomial counts: game pairs (same opening, colours reversed) by the first engine's pair
/// score: LL = 0, LD = 1/2, DD or WL = 1, WD = 3/2, WW = 2 points. The order of the two games in
/// a pair does not matter (LD counts DL too), and `dd` includes the WL pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Penta {
    pub ll: u64,
    pub ld: u64,
    pub dd: u64,
    pub wd: u64,
    pub ww: u64,
}

impl Penta {
    /// Counts one finished game pair (both results from the first engine's point of view).
    pub fn add_pair(&mut self, first: GameScore, second: GameScore) {
        match first.half_points() + second.half_points() {
            0 => self.ll += 1,
            1 => self.ld += 1,
            2 => self.dd += 1,
            3 => self.wd += 1,
            _ => self.ww += 1,
        }
    }

    /// Number of game pairs (saturating: absurd totals are rejected by [`Penta::check`]).
    pub fn pairs(&self) -> u64 {
        self.ascending().iter().fold(0u64, |a, &c| a.saturating_add(c))
    }

    /// Points of the first engine and number of games: `(LD/2 + DD + 3 WD/2 + 2 WW, 2 pairs)`.
    pub fn to_wdl_score(&self) -> (f64, u64) {
        let points =
            0.5 * self.ld as f64 + self.dd as f64 + 1.5 * self.wd as f64 + 2.0 * self.ww as f64;
        (points, self.pairs().saturating_mul(2))
    }

    /// Counts in the order of ascending pair score: `[ll, ld, dd, wd, ww]`.
    pub fn ascending(&self) -> [u64; 5] {
        [self.ll, self.ld, self.dd, self.wd, self.ww]
    }

    /// Rejects totals whose number of games would exceed [`MAX_TOTAL`].
    pub fn check(&self) -> Result<(), StatsError> {
        check_total(&self.ascending(), "game pairs")?;
        if self.pairs() > MAX_TOTAL / 2 {
            return Err(StatsError::InvalidCounts(format!(
                "at most {} game pairs are supported",
                MAX_TOTAL / 2
            )));
        }
        Ok(())
    }
}

fn check_total(counts: &[u64], what: &str) -> Result<(), StatsError> {
    let mut total: u64 = 0;
    for &c in counts {
        total = match total.checked_add(c) {
            Some(t) if t <= MAX_TOTAL => t,
            _ => {
                return Err(StatsError::InvalidCounts(format!(
                    "at most {MAX_TOTAL} {what} are supported"
                )));
            }
        };
    }
    Ok(())
}

/// The input of [`crate::summarize`] and [`crate::sprt()`].
///
/// Trinomial counts treat games as independent. Pentanomial counts keep the game pairs, whose
/// two games share an opening and are correlated: their statistics use the variance of the pair
/// score, which is what a paired schedule needs. When both are known (a match run), pass
/// [`Counts::Paired`]: the estimates and the SPRT use the pentanomial counts, and the game
/// counts (wins, draws, losses, draw ratio) come from the trinomial ones. Pentanomial counts
/// alone do not know wins, draws and losses (see [`Counts::wdl`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counts {
    Wdl(Wdl),
    Penta(Penta),
    /// Both views of the same games: `wdl.games()` must equal `2 * penta.pairs()` and the
    /// points must agree.
    Paired {
        wdl: Wdl,
        penta: Penta,
    },
}

impl Counts {
    /// The pentanomial counts if known.
    pub fn penta(&self) -> Option<Penta> {
        match *self {
            Counts::Wdl(_) => None,
            Counts::Penta(p) | Counts::Paired { penta: p, .. } => Some(p),
        }
    }

    /// Games won, drawn and lost, if known. Pentanomial counts alone do not know them: a `dd`
    /// pair is two draws or a win and a loss, so `Counts::Penta` gives `None` (use
    /// [`Counts::Paired`] when both views are known).
    pub fn wdl(&self) -> Option<Wdl> {
        match *self {
            Counts::Wdl(w) | Counts::Paired { wdl: w, .. } => Some(w),
            Counts::Penta(_) => None,
        }
    }

    /// Number of games (two per pair for pentanomial counts; saturating).
    pub fn games(&self) -> u64 {
        match *self {
            Counts::Wdl(w) | Counts::Paired { wdl: w, .. } => w.games(),
            Counts::Penta(p) => p.to_wdl_score().1,
        }
    }

    /// Points of the first engine (known from either view).
    pub fn points(&self) -> f64 {
        match *self {
            Counts::Wdl(w) | Counts::Paired { wdl: w, .. } => w.points(),
            Counts::Penta(p) => p.to_wdl_score().0,
        }
    }

    /// Validates the counts (sizes, and consistency of [`Counts::Paired`]).
    pub fn check(&self) -> Result<(), StatsError> {
        match self {
            Counts::Wdl(w) => w.check(),
            Counts::Penta(p) => p.check(),
            Counts::Paired { wdl, penta } => {
                wdl.check()?;
                penta.check()?;
                let (points, games) = penta.to_wdl_score();
                if wdl.games() != games || wdl.points() != points {
                    return Err(StatsError::InvalidCounts(format!(
                        "W-D-L {}-{}-{} ({} games, {} points) does not match the pentanomial \
                         counts ({} games, {} points)",
                        wdl.wins,
                        wdl.draws,
                        wdl.losses,
                        wdl.games(),
                        wdl.points(),
                        games,
                        points
                    )));
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use GameScore::*;

    #[test]
    fn pairs_land_in_their_bins() {
        let mut p = Penta::default();
        p.add_pair(Loss, Loss);
        p.add_pair(Draw, Loss);
        p.add_pair(Loss, Draw);
        p.add_pair(Win, Loss);
        p.add_pair(Draw, Draw);
        p.add_pair(Draw, Win);
        p.add_pair(Win, Win);
        assert_eq!(p, Penta { ll: 1, ld: 2, dd: 2, wd: 1, ww: 1 });
        assert_eq!(p.pairs(), 7);
        assert_eq!(p.to_wdl_score(), (0.0 + 1.0 + 2.0 + 1.5 + 2.0, 14));
    }

    #[test]
    fn wdl_counts_games() {
        let mut w = Wdl::default();
        for s in [Win, Win, Draw, Loss] {
            w.add(s);
        }
        assert_eq!(w, Wdl { wins: 2, draws: 1, losses: 1 });
        assert_eq!(w.games(), 4);
        assert_eq!(w.points(), 2.5);
    }

    #[test]
    fn paired_counts_must_agree() {
        let penta = Penta { ll: 0, ld: 1, dd: 1, wd: 0, ww: 0 };
        let ok = Wdl { wins: 0, draws: 3, losses: 1 };
        assert!(Counts::Paired { wdl: ok, penta }.check().is_ok());
        let wl = Wdl { wins: 1, draws: 1, losses: 2 };
        assert!(Counts::Paired { wdl: wl, penta }.check().is_ok());
        let bad = Wdl { wins: 1, draws: 2, losses: 1 };
        assert!(Counts::Paired { wdl: bad, penta }.check().is_err());
    }

    /// A DD+WL pair is two draws or a win and a loss, so pentanomial counts alone
    /// must not claim W/D/L (they used to count every such pair as two draws).
    #[test]
    fn pentanomial_counts_do_not_know_wdl() {
        let c = Counts::Penta(Penta { ll: 1, ld: 6, dd: 20, wd: 8, ww: 1 });
        assert_eq!(c.wdl(), None);
        assert_eq!(c.games(), 72);
        assert_eq!(c.points(), 3.0 + 20.0 + 12.0 + 2.0);
        let w = Wdl { wins: 3, draws: 2, losses: 1 };
        assert_eq!(Counts::Wdl(w).wdl(), Some(w));
        assert_eq!((Counts::Wdl(w).games(), Counts::Wdl(w).points()), (6, 4.0));
    }

    #[test]
    fn absurd_totals_are_errors_not_overflows() {
        let w = Wdl { wins: u64::MAX, draws: u64::MAX, losses: 1 };
        assert!(w.check().is_err());
        assert_eq!(w.games(), u64::MAX);
        let p = Penta { ll: MAX_TOTAL / 2, ld: 0, dd: 0, wd: 0, ww: 1 };
        assert!(p.check().is_err());
    }
}
