//! Small dense linear algebra for the ratings fit: solving and inverting the (symmetric,
//! positive definite) information matrix by Gauss-Jordan elimination with partial pivoting.

/// A square matrix, row-major.
pub type Matrix = Vec<Vec<f64>>;

/// The inverse of `a`, or `None` when it is singular (a pivot below `1e-12` of the largest
/// entry).
pub fn invert(a: &Matrix) -> Option<Matrix> {
    let n = a.len();
    let scale = a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    if n == 0 || scale == 0.0 || a.iter().any(|r| r.len() != n) {
        return if n == 0 { Some(Vec::new()) } else { None };
    }
    // [a | I] reduced to [I | a^-1].
    let mut m: Matrix = a
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r = row.clone();
            r.extend((0..n).map(|j| if i == j { 1.0 } else { 0.0 }));
            r
        })
        .collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 * scale {
            return None;
        }
        m.swap(col, pivot);
        let p = m[col][col];
        m[col].iter_mut().for_each(|v| *v /= p);
        let pivot_row = m[col].clone();
        for (row, r) in m.iter_mut().enumerate() {
            let f = r[col];
            if row != col && f != 0.0 {
                r.iter_mut().zip(&pivot_row).for_each(|(v, pv)| *v -= f * pv);
            }
        }
    }
    Some(m.into_iter().map(|r| r[n..].to_vec()).collect())
}

/// `a * x`.
pub fn mul_vec(a: &Matrix, x: &[f64]) -> Vec<f64> {
    a.iter().map(|row| row.iter().zip(x).map(|(u, v)| u * v).sum()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverts_and_detects_singular() {
        let a = vec![vec![4.0, -1.0, 0.0], vec![-1.0, 4.0, -1.0], vec![0.0, -1.0, 4.0]];
        let inv = invert(&a).unwrap();
        for i in 0..3 {
            let col: Vec<f64> = inv.iter().map(|row| row[i]).collect();
            let e = mul_vec(&a, &col);
            for (k, v) in e.iter().enumerate() {
                assert!((v - if k == i { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
        assert!(invert(&vec![vec![1.0, 2.0], vec![2.0, 4.0]]).is_none());
        assert!(invert(&vec![vec![0.0]]).is_none());
        assert_eq!(invert(&Vec::new()), Some(Vec::new()));
    }
}
