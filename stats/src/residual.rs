//! How far one worker's game pairs stand from the rest of a run's: a chi-square test of
//! homogeneity, as fishtest checks its workers.
//!
//! Per pairing, a 2 x C table: the worker's pair results and those of every other worker of the
//! run, in C = 3 cells: LL+LD (the first engine lost the pair), DD (a draw, or a win and a
//! loss), WD+WW (won the pair). The pentanomial's outer cells are merged into their neighbours
//! because LL and WW are rare between engines of similar strength: their expected counts stay
//! below 5 for hundreds of pairs, where the chi-square approximation is not to be trusted. A
//! cell empty in the whole pairing is left out (one degree of freedom less). The statistic of
//! the table is the worker's row of the full table's chi-square divided by the share of pairs
//! that are not the worker's, which is the same number; summed over the pairings the worker
//! played (independent tables) with their degrees of freedom, it is chi-square distributed when
//! the worker's pairs come from the same distribution as the others'.
//!
//! A cell whose expected count in the worker's row is below [`MIN_EXPECTED`] is pooled with its
//! neighbour (the sparsest first), the usual remedy for a chi-square table: between engines
//! that draw or trade wins nearly every pair, LL+LD and WD+WW stay nearly empty, and a worker
//! reporting only won pairs would otherwise never be judged. A pairing left with a single cell
//! is left out: too few pairs to judge. With no pairing left there is no residual (never a
//! verdict from a few pairs).

use statrs::distribution::{ChiSquared, ContinuousCDF, Normal};

use crate::Penta;

/// The smallest expected count of a cell of the worker's row for its pairing to count.
pub const MIN_EXPECTED: f64 = 5.0;

/// A worker's residual against the rest of its run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Residual {
    /// The chi-square statistic, summed over the pairings judged.
    pub chi2: f64,
    /// Its degrees of freedom.
    pub dof: u32,
    /// P(chi-square >= chi2) when the worker is like the others.
    pub p: f64,
    /// `p` as a standard normal deviate (the z with the same upper tail; 0 for p >= 0.5), as
    /// fishtest shows it: easier to read than a small p.
    pub z: f64,
    /// Pairs of the worker in the pairings judged.
    pub pairs: u64,
}

/// The three cells the test uses: LL+LD, DD, WD+WW.
fn cells(p: &Penta) -> [f64; 3] {
    [(p.ll + p.ld) as f64, p.dd as f64, (p.wd + p.ww) as f64]
}

/// One pairing's table: the worker's pairs against the rest (`total` minus the worker's).
/// `None` when the pairing cannot be judged: too few pairs of the worker or of the others, or a
/// single cell used.
fn table(worker: &Penta, total: &Penta) -> Option<(f64, u32)> {
    let w = cells(worker);
    let t = cells(total);
    let rest: Vec<f64> = t.iter().zip(&w).map(|(t, w)| t - w).collect();
    if rest.iter().any(|x| *x < 0.0) {
        return None;
    }
    let (nw, nr) = (w.iter().sum::<f64>(), rest.iter().sum::<f64>());
    let n = nw + nr;
    if nw == 0.0 || nr == 0.0 {
        return None;
    }
    // The cells used in the pairing, in order, as (worker's, rest's) counts.
    let mut cols: Vec<(f64, f64)> =
        (0..3).filter(|&j| t[j] > 0.0).map(|j| (w[j], rest[j])).collect();
    let size = |c: &(f64, f64)| c.0 + c.1;
    // Pool the sparsest cell whose expected count in the worker's row is too small into its
    // neighbour (an outer cell into the middle; the middle into its smaller neighbour), until
    // every cell is large enough or a single one is left.
    loop {
        if cols.len() < 2 {
            return None;
        }
        let sparse = (0..cols.len())
            .filter(|&j| nw * size(&cols[j]) / n < MIN_EXPECTED)
            .min_by(|&a, &b| size(&cols[a]).total_cmp(&size(&cols[b])));
        let Some(j) = sparse else { break };
        let k = match j {
            0 => 1,
            j if j + 1 == cols.len() => j - 1,
            j if size(&cols[j - 1]) <= size(&cols[j + 1]) => j - 1,
            j => j + 1,
        };
        let (a, b) = cols.remove(j);
        let k = if k > j { k - 1 } else { k };
        cols[k].0 += a;
        cols[k].1 += b;
    }
    let mut chi2 = 0.0;
    for c in &cols {
        let tj = size(c);
        for (row, obs) in [(nw, c.0), (nr, c.1)] {
            let e = row * tj / n;
            chi2 += (obs - e) * (obs - e) / e;
        }
    }
    Some((chi2, cols.len() as u32 - 1))
}

/// The residual of a worker whose pairs are `pairings[i].0` in pairing i, whose run's pairs
/// (every worker's, this one's included) are `pairings[i].1`. `None` when no pairing can be
/// judged.
pub fn worker_residual(pairings: &[(Penta, Penta)]) -> Option<Residual> {
    let mut chi2 = 0.0;
    let mut dof = 0;
    let mut pairs = 0;
    for (w, t) in pairings {
        if let Some((c, d)) = table(w, t) {
            chi2 += c;
            dof += d;
            pairs += w.pairs();
        }
    }
    if dof == 0 {
        return None;
    }
    let p = ChiSquared::new(f64::from(dof)).ok()?.sf(chi2).clamp(0.0, 1.0);
    Some(Residual { chi2, dof, p, z: upper_z(p), pairs })
}

/// The z with upper tail `p` (`p` near 0 gives a large z, at most 40), 0 from p = 0.5 up.
fn upper_z(p: f64) -> f64 {
    if p >= 0.5 {
        return 0.0;
    }
    let n = Normal::standard();
    if p <= 0.0 { 40.0 } else { (-n.inverse_cdf(p)).min(40.0) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;
    use rand_distr::{Distribution, weighted::WeightedIndex};

    fn penta(c: [u64; 5]) -> Penta {
        Penta { ll: c[0], ld: c[1], dd: c[2], wd: c[3], ww: c[4] }
    }

    fn add(a: &Penta, b: &Penta) -> Penta {
        penta([a.ll + b.ll, a.ld + b.ld, a.dd + b.dd, a.wd + b.wd, a.ww + b.ww])
    }

    #[test]
    fn a_worker_like_the_rest_has_no_residual_to_speak_of() {
        let w = penta([2, 20, 50, 20, 2]);
        let rest = penta([4, 40, 100, 40, 4]);
        let r = worker_residual(&[(w, add(&w, &rest))]).unwrap();
        assert!(r.chi2.abs() < 1e-12, "{r:?}");
        assert_eq!(r.dof, 2);
        assert!((r.p - 1.0).abs() < 1e-12);
        assert_eq!(r.z, 0.0);
        assert_eq!(r.pairs, 94);
    }

    /// The 2 x 3 table worked by hand: worker [10, 20, 30], rest [30, 20, 10] (LL+LD, DD,
    /// WD+WW); every expected count is 20 (rows of 60, columns of 40), so
    /// chi2 = 2 * (100 + 0 + 100) / 20 = 20 with 2 degrees of freedom, p = exp(-10).
    #[test]
    fn a_table_computed_by_hand() {
        let w = penta([0, 10, 20, 30, 0]);
        let rest = penta([0, 30, 20, 10, 0]);
        let r = worker_residual(&[(w, add(&w, &rest))]).unwrap();
        assert!((r.chi2 - 20.0).abs() < 1e-9, "{r:?}");
        assert_eq!(r.dof, 2);
        assert!((r.p - (-10.0f64).exp()).abs() < 1e-12, "{r:?}");
        // P(Z > z) = exp(-10) = 4.540e-5: z = 3.914.
        assert!((r.z - 3.9139).abs() < 1e-3, "{r:?}");
    }

    #[test]
    fn few_pairs_or_nobody_to_compare_with_give_no_residual() {
        // Expected counts below 5 in the worker's row.
        let w = penta([0, 1, 3, 1, 0]);
        let rest = penta([5, 100, 300, 100, 5]);
        assert_eq!(worker_residual(&[(w, add(&w, &rest))]), None);
        // The only worker of the pairing.
        let w = penta([5, 100, 300, 100, 5]);
        assert_eq!(worker_residual(&[(w, w)]), None);
        // Every pair a draw: one cell, nothing to test.
        let w = penta([0, 0, 40, 0, 0]);
        assert_eq!(worker_residual(&[(w, add(&w, &w))]), None);
        // Counts that do not add up (the worker's above the total) are not judged.
        assert_eq!(worker_residual(&[(w, penta([0, 0, 10, 0, 0]))]), None);
        assert_eq!(worker_residual(&[]), None);
    }

    /// Engines that trade wins: the honest keys' pairs are nearly all DD (as node-limited
    /// self-play gives), so LL+LD is too sparse for a cell of its own. It is pooled with DD,
    /// and a key that reports only won pairs is judged, and stands out, on DD against WD+WW.
    #[test]
    fn a_sparse_cell_is_pooled_with_its_neighbour() {
        let honest = penta([1, 1, 77, 1, 0]);
        let liar = penta([0, 0, 0, 0, 40]);
        let total = add(&honest, &liar);
        let r = worker_residual(&[(liar, total)]).unwrap();
        assert_eq!(r.dof, 1);
        assert!(r.p < 1e-12 && r.z > 7.0, "{r:?}");
        // Worked by hand: cells [LL+LD+DD, WD+WW] = liar [0, 40], rest [79, 1], n = 120;
        // expected liar [26.33, 13.67], rest [52.67, 27.33]: chi2 = 26.33 + 50.75 + 13.17 +
        // 25.37 (each (o - e)^2 / e).
        let e =
            [40.0 * 79.0 / 120.0, 40.0 * 41.0 / 120.0, 80.0 * 79.0 / 120.0, 80.0 * 41.0 / 120.0];
        let o = [0.0, 40.0, 79.0, 1.0];
        let want: f64 = e.iter().zip(o).map(|(e, o)| (o - e) * (o - e) / e).sum();
        assert!((r.chi2 - want).abs() < 1e-9, "{} vs {want}", r.chi2);
        // The honest key, against the liar alone, is judged on the same pooled table.
        let h = worker_residual(&[(honest, total)]).unwrap();
        assert!((h.chi2 - want).abs() < 1e-9, "{h:?}");
    }

    #[test]
    fn an_empty_cell_of_the_pairing_costs_a_degree_of_freedom() {
        let w = penta([0, 0, 30, 30, 0]);
        let rest = penta([0, 0, 60, 60, 0]);
        let r = worker_residual(&[(w, add(&w, &rest))]).unwrap();
        assert_eq!(r.dof, 1);
    }

    #[test]
    fn pairings_add_their_statistics_and_degrees_of_freedom() {
        let a = (penta([0, 10, 20, 30, 0]), penta([0, 40, 40, 40, 0]));
        let b = (penta([2, 20, 50, 20, 2]), penta([6, 60, 150, 60, 6]));
        let one = worker_residual(&[a]).unwrap();
        let both = worker_residual(&[a, b]).unwrap();
        assert_eq!(both.dof, 4);
        assert!((both.chi2 - one.chi2).abs() < 1e-9);
        assert!(both.p > one.p, "a like pairing dilutes the evidence");
        assert_eq!(both.pairs, 60 + 94);
    }

    /// Honest workers drawn from one distribution: under the null the p-values are uniform, so
    /// none of 20 falls below 0.001 / 20 here; a worker that reports only won pairs does.
    #[test]
    fn a_biased_worker_stands_out_among_honest_ones() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let probs = WeightedIndex::new([0.03, 0.22, 0.5, 0.22, 0.03]).unwrap();
        let mut workers: Vec<Penta> = (0..20)
            .map(|_| {
                let mut c = [0u64; 5];
                for _ in 0..200 {
                    c[probs.sample(&mut rng)] += 1;
                }
                penta(c)
            })
            .collect();
        workers.push(penta([0, 0, 0, 0, 60]));
        let total = workers.iter().fold(Penta::default(), |a, w| add(&a, w));
        let res: Vec<Residual> =
            workers.iter().map(|w| worker_residual(&[(*w, total)]).unwrap()).collect();
        let limit = 0.001 / res.len() as f64;
        for r in &res[..20] {
            assert!(r.p > limit, "{r:?}");
        }
        assert!(res[20].p < 1e-12 && res[20].z > 7.0, "{:?}", res[20]);
    }
}
