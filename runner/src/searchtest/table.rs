//! The search-test tables: Markdown (columns chosen by the test kind) and CSV (every column).

use super::summary::VariantSummary;
use crate::report::figures::csv_field;

fn opt(x: Option<f64>, places: usize) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{v:.places$}"))
}

fn options_text(options: &[(String, String)]) -> String {
    if options.is_empty() {
        return "(defaults)".into();
    }
    options.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

fn mpc_text(s: &VariantSummary) -> String {
    match (s.mpc.get("cuts"), s.mpc.get("tries")) {
        (Some(c), Some(t)) => format!("{c}/{t}"),
        _ => "-".into(),
    }
}

/// A Markdown column: heading and cell.
type Column = (&'static str, fn(&VariantSummary) -> String);

/// The columns between Positions and Faults: the depth test's (`fixed_time`) or the node
/// comparison's.
fn measure_columns(fixed_time: bool) -> [Column; 8] {
    if fixed_time {
        [
            ("Depth avg", |r| opt(r.depth_mean, 2)),
            ("Depth median", |r| opt(r.depth_median, 1)),
            ("Depth gain", |r| opt(r.depth_gain, 2)),
            ("Nodes avg", |r| opt(r.nodes_mean, 0)),
            ("kN/s", |r| opt(r.nps.map(|n| n / 1000.0), 0)),
            ("Same move %", |r| opt(r.same_move_pct, 1)),
            ("Same value %", |r| opt(r.same_value_pct, 1)),
            ("Faults", |r| r.faults.to_string()),
        ]
    } else {
        [
            ("Nodes avg", |r| opt(r.nodes_mean, 0)),
            ("Nodes sd", |r| opt(r.nodes_sd, 0)),
            ("Speed-up", |r| opt(r.speedup, 2)),
            ("Time avg ms", |r| opt(r.time_ms_mean, 1)),
            ("Same move %", |r| opt(r.same_move_pct, 1)),
            ("Same value %", |r| opt(r.same_value_pct, 1)),
            ("MPC cuts/tries", mpc_text),
            ("Faults", |r| r.faults.to_string()),
        ]
    }
}

/// Markdown table; `fixed_time` selects the depth test's columns, else the node comparison's.
pub fn markdown(rows: &[VariantSummary], fixed_time: bool) -> String {
    let mut columns: Vec<Column> = vec![
        ("Variant", |r| r.name.clone()),
        ("Options", |r| options_text(&r.options)),
        ("Positions", |r| r.positions.to_string()),
    ];
    columns.extend(measure_columns(fixed_time));
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut s = line(columns.iter().map(|(h, _)| h.to_string()).collect());
    let aligns: Vec<&str> =
        (0..columns.len()).map(|i| if i < 2 { "---" } else { "---:" }).collect();
    s.push_str(&format!("|{}|\n", aligns.join("|")));
    for r in rows {
        s.push_str(&line(columns.iter().map(|(_, cell)| cell(r)).collect()));
    }
    s
}

/// CSV with a header and one row per variant (every column, empty when unknown).
pub fn csv(rows: &[VariantSummary]) -> String {
    let mut s = String::from(
        "variant,options,positions,faults,depth_mean,depth_median,depth_gain,nodes_mean,nodes_median,nodes_sd,time_ms_mean,nps,paired,speedup,same_move_pct,same_value_pct,mpc_tries,mpc_cuts\n",
    );
    let f = |x: Option<f64>| x.map(|v| format!("{v:.4}")).unwrap_or_default();
    for r in rows {
        let count = |k: &str| r.mpc.get(k).map(|c| c.to_string()).unwrap_or_default();
        let fields = [
            csv_field(&r.name),
            csv_field(&options_text(&r.options)),
            r.positions.to_string(),
            r.faults.to_string(),
            f(r.depth_mean),
            f(r.depth_median),
            f(r.depth_gain),
            f(r.nodes_mean),
            f(r.nodes_median),
            f(r.nodes_sd),
            f(r.time_ms_mean),
            f(r.nps),
            r.paired.to_string(),
            f(r.speedup),
            f(r.same_move_pct),
            f(r.same_value_pct),
            count("tries"),
            count("cuts"),
        ];
        s.push_str(&fields.join(","));
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn row(name: &str) -> VariantSummary {
        VariantSummary {
            name: name.into(),
            options: vec![("MPC".into(), "true".into()), ("t_mid".into(), "1.2".into())],
            positions: 10,
            faults: 1,
            depth_mean: Some(9.25),
            depth_median: Some(9.0),
            nodes_mean: Some(12345.6),
            nodes_median: Some(12000.0),
            nodes_sd: Some(100.0),
            time_ms_mean: Some(50.0),
            nps: Some(246_912.0),
            paired: 10,
            depth_gain: Some(0.5),
            speedup: Some(1.5),
            same_move_pct: Some(90.0),
            same_value_pct: None,
            mpc: BTreeMap::from([("tries".into(), 7), ("cuts".into(), 3)]),
        }
    }

    #[test]
    fn tables_have_a_row_per_variant() {
        let rows = [row("base"), row("mpc")];
        let md = markdown(&rows, true);
        assert_eq!(md.lines().count(), 4);
        assert!(md.contains("| base | MPC=true,t_mid=1.2 | 10 | 9.25 | 9.0 | 0.50 | 12346 | 247 | 90.0 | - | 1 |"), "{md}");
        let md = markdown(&rows, false);
        assert!(md.contains("| 1.50 |") && md.contains("3/7"), "{md}");
        let csv = csv(&rows);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].starts_with("base,\"MPC=true,t_mid=1.2\",10,1,9.2500,"), "{}", lines[1]);
        assert!(lines[1].ends_with(",90.0000,,7,3"), "{}", lines[1]);
        assert_eq!(lines[0].split(',').count(), 18);
    }
}
