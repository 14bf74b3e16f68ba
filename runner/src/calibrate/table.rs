//! The fitted parameters as a table laid out like the seed's Table 1 (pairs, stage, a, b, sigma,
//! r), plus n, in Markdown.

use super::pairs::ParamRow;

/// Crafty's figures (seed 000, Table 1; the signs of b as printed there were lost in the text
/// extraction and are not repeated here), for comparison in table.md.
pub const CRAFTY_TABLE1: &str = "\
| Pairs | Stage | a | sigma | r |
|---|---|---:|---:|---:|
| (3,5) | middlegame | 0.998 | 55.8 | 0.90 |
| (3,5) | endgame | 1.026 | 51.8 | 0.94 |
| (4,8) | middlegame | 1.02 | 82 | 0.82 |
| (4,8) | endgame | 1.11 | 75 | 0.90 |
";

/// Markdown table of `rows` in the order given (pair, then stage).
pub fn markdown(rows: &[ParamRow]) -> String {
    let mut s = String::from(
        "| Pairs | Stage | a | b | sigma | r | n |\n|---|---|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| ({},{}) | {} | {:.3} | {:.2} | {:.1} | {:.2} | {} |\n",
            r.shallow, r.deep, r.stage, r.a, r.b, r.sigma, r.r, r.n
        ));
    }
    s
}

/// The whole table.md: our fit, how it was made, and the seed's figures.
pub fn document(rows: &[ParamRow], how: &str) -> String {
    format!(
        "# MPC calibration: v = a * v' + b + e\n\n{how}\n\n{}\n\
         Scores in centipawns (100 = one pawn); sigma is the residual standard deviation, r the \
         correlation of v' and v, n the number of positions fitted.\n\n\
         ## For comparison: Crafty (seed 000, Table 1)\n\n{CRAFTY_TABLE1}",
        markdown(rows)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::positions::Stage;

    #[test]
    fn table_has_a_row_per_fit() {
        let row = ParamRow {
            stage: Stage::Middlegame,
            shallow: 4,
            deep: 8,
            a: 1.0234,
            b: -2.36,
            sigma: 82.04,
            r: 0.823,
            n: 1200,
        };
        let md = markdown(&[row.clone(), ParamRow { stage: Stage::Endgame, ..row }]);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[2], "| (4,8) | middlegame | 1.023 | -2.36 | 82.0 | 0.82 | 1200 |");
        assert!(lines[3].contains("endgame"));
        assert!(document(&[], "how").contains("Crafty"));
    }
}
