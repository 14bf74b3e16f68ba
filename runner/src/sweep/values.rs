//! The values a sweep visits: `--values` lists, `--range LO:HI:STEP`, the seed's default ranges for
//! the bundled engine's MPC thresholds, and the grid (cartesian product) of several parameters.
//!
//! Ranges are stepped in exact decimal arithmetic: `0.8:1.3:0.1` is read as 8..=13 tenths, so it
//! yields exactly six values, written `0.8 0.9 1.0 1.1 1.2 1.3` (as many decimals as the most
//! precise of the three numbers), never `0.30000000000000004`.

/// Most points one parameter may have (a guard against a typo such as `0:1000:0.001`).
pub const MAX_VALUES: usize = 10_000;

/// A bad `--param`/`--values`/`--range`/`--fixed` argument; the message says what to type.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ValuesError {
    #[error("bad range {input:?}: {reason} (expected LO:HI:STEP, e.g. 0.8:1.3:0.1)")]
    Range { input: String, reason: String },
    #[error("bad value list {input:?}: {reason} (expected e.g. 0.8,0.9,1.0)")]
    List { input: String, reason: String },
    #[error("{flag} {value:?} comes before any --param: put it after the --param it belongs to")]
    Orphan { flag: &'static str, value: String },
    #[error("--param {name:?} has more than one --values/--range: give one per --param")]
    Twice { name: String },
    #[error(
        "--param {name:?} has no values: add --values V1,V2,... or --range LO:HI:STEP after it"
    )]
    Missing { name: String },
    #[error("--param {name:?} is given twice")]
    DuplicateParam { name: String },
    #[error("bad parameter name {name:?}: {reason}")]
    BadName { name: String, reason: &'static str },
    #[error("bad --fixed {input:?}: expected NAME=VALUE")]
    Fixed { input: String },
    #[error("the grid has {points} points, more than the limit of {limit}")]
    TooBig { points: usize, limit: usize },
}

/// A swept parameter and a point of the sweep (sweep.json holds both).
pub use crate::store::formats::{Point, SweptParam};

impl Point {
    /// `t_mid=0.9,t_end=1.0`: unique within a sweep, used as the pairing label.
    pub fn label(&self) -> String {
        self.assignments.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(",")
    }

    /// The label made safe as a directory name (characters other than letters, digits, `.`, `-`,
    /// `_`, `=` and `,` become `_`).
    pub fn dir_name(&self) -> String {
        file_safe(&self.label())
    }
}

/// Text made safe for a file name: characters other than ASCII letters, digits, `.`, `-`, `_`, `=`
/// and `,` become `_`. [`parse_list`] refuses values that this maps to the same text.
fn file_safe(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() || ".-_=,".contains(c) { c } else { '_' })
        .collect()
}

/// Two different texts that read as the same finite number (`1`, `1.0`, `+1.00`): an engine
/// would be given the same setting twice.
fn same_number(a: &str, b: &str) -> bool {
    matches!((numeric(a), numeric(b)), (Some(x), Some(y)) if x == y)
}

/// The seed's threshold ranges for the bundled engine (Jiang and Buro, Tables 2 and 3): `t_mid`
/// 0.8..1.3 and `t_end` 0.5..1.3, by 0.1. `None` for any other parameter.
pub fn default_range(name: &str) -> Option<&'static str> {
    match name {
        "t_mid" => Some("0.8:1.3:0.1"),
        "t_end" => Some("0.5:1.3:0.1"),
        _ => None,
    }
}

/// A decimal number as an integer count of `10^-scale`.
#[derive(Clone, Copy, Debug)]
struct Decimal {
    mantissa: i128,
    scale: u32,
}

fn parse_decimal(s: &str) -> Result<Decimal, String> {
    let t = s.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits_ok(int) || !digits_ok(frac) {
        return Err(format!("{t:?} is not a decimal number"));
    }
    if int.len() + frac.len() > 30 {
        return Err(format!("{t:?} has too many digits"));
    }
    let mut mantissa: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        mantissa = mantissa * 10 + i128::from(b - b'0');
    }
    Ok(Decimal { mantissa: if neg { -mantissa } else { mantissa }, scale: frac.len() as u32 })
}

fn rescale(d: Decimal, scale: u32) -> i128 {
    d.mantissa * 10i128.pow(scale - d.scale)
}

fn format_scaled(m: i128, scale: u32) -> String {
    if scale == 0 {
        return m.to_string();
    }
    let p = 10i128.pow(scale);
    let sign = if m < 0 { "-" } else { "" };
    let a = m.abs();
    format!("{sign}{}.{:0width$}", a / p, a % p, width = scale as usize)
}

/// Expands `LO:HI:STEP` (HI included when a step lands on it exactly).
pub fn parse_range(input: &str) -> Result<Vec<String>, ValuesError> {
    let err = |reason: String| ValuesError::Range { input: input.to_string(), reason };
    let parts: Vec<&str> = input.split(':').collect();
    if parts.len() != 3 {
        return Err(err(format!("{} field(s) instead of 3", parts.len())));
    }
    let lo = parse_decimal(parts[0]).map_err(err)?;
    let hi = parse_decimal(parts[1]).map_err(err)?;
    let step = parse_decimal(parts[2]).map_err(err)?;
    let scale = lo.scale.max(hi.scale).max(step.scale);
    let (lo, hi, step) = (rescale(lo, scale), rescale(hi, scale), rescale(step, scale));
    if step <= 0 {
        return Err(err("STEP must be positive".into()));
    }
    if hi < lo {
        return Err(err("HI is below LO".into()));
    }
    let count = (hi - lo) / step + 1;
    if count > MAX_VALUES as i128 {
        return Err(err(format!("{count} values, more than {MAX_VALUES}")));
    }
    Ok((0..count).map(|i| format_scaled(lo + i * step, scale)).collect())
}

/// Splits `--values A,B,C`. Values are sent verbatim with `setoption`, so any option type works
/// (numbers, `true`/`false`, combo names); blanks around commas are dropped.
pub fn parse_list(input: &str) -> Result<Vec<String>, ValuesError> {
    let err = |reason: &str| ValuesError::List { input: input.to_string(), reason: reason.into() };
    let values: Vec<String> = input.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(err("empty value"));
    }
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(err("a value is repeated"));
        }
        if let Some(w) = values[..i].iter().find(|w| same_number(w, v)) {
            return Err(err(&format!("{w} and {v} are the same number: give it once")));
        }
        if let Some(w) = values[..i].iter().find(|w| file_safe(w) == file_safe(v)) {
            return Err(err(&format!(
                "{w:?} and {v:?} both become {:?} in the points/ folder names: give values that \
                 differ in letters, digits, '.', '-', '_' or '='",
                file_safe(v)
            )));
        }
    }
    if values.len() > MAX_VALUES {
        return Err(err("too many values"));
    }
    Ok(values)
}

fn check_name(name: &str) -> Result<(), ValuesError> {
    let bad = |reason| Err(ValuesError::BadName { name: name.to_string(), reason });
    if name.trim().is_empty() {
        return bad("empty");
    }
    if name.trim() != name {
        return bad("leading or trailing blanks");
    }
    if name.contains(['=', ',', '\n', '\r']) {
        return bad("'=', ',' and line breaks are not allowed in option names here");
    }
    Ok(())
}

/// One value source on the command line, with its position among all arguments (clap's index),
/// which decides the `--param` it belongs to.
#[derive(Clone, Debug)]
pub enum ValueArg {
    List(String),
    Range(String),
}

/// Builds the swept parameters from the flags in command-line order: every `--values`/`--range`
/// belongs to the nearest `--param` before it; a `--param` with neither takes its default range
/// ([`default_range`]) or is an error. Arguments are `(index, text)` as reported by clap.
pub fn assign(
    params: &[(usize, String)],
    values: &[(usize, ValueArg)],
) -> Result<Vec<SweptParam>, ValuesError> {
    let mut params: Vec<(usize, String)> = params.to_vec();
    params.sort_by_key(|p| p.0);
    for (i, (_, n)) in params.iter().enumerate() {
        check_name(n)?;
        if params[..i].iter().any(|(_, m)| m == n) {
            return Err(ValuesError::DuplicateParam { name: n.clone() });
        }
    }
    let mut given: Vec<Option<Vec<String>>> = vec![None; params.len()];
    for (idx, arg) in values {
        let owner = params.iter().rposition(|(p, _)| p < idx);
        let (flag, text) = match arg {
            ValueArg::List(t) => ("--values", t),
            ValueArg::Range(t) => ("--range", t),
        };
        let Some(owner) = owner else {
            return Err(ValuesError::Orphan { flag, value: text.clone() });
        };
        if given[owner].is_some() {
            return Err(ValuesError::Twice { name: params[owner].1.clone() });
        }
        given[owner] = Some(match arg {
            ValueArg::List(t) => parse_list(t)?,
            ValueArg::Range(t) => parse_range(t)?,
        });
    }
    params
        .into_iter()
        .zip(given)
        .map(|((_, name), vals)| {
            let values = match vals {
                Some(v) => v,
                None => match default_range(&name) {
                    Some(r) => parse_range(r)?,
                    None => return Err(ValuesError::Missing { name }),
                },
            };
            Ok(SweptParam { name, values })
        })
        .collect()
}

/// Parses `--fixed NAME=VALUE`.
pub fn parse_fixed(input: &str) -> Result<(String, String), ValuesError> {
    let (n, v) =
        input.split_once('=').ok_or_else(|| ValuesError::Fixed { input: input.to_string() })?;
    let (n, v) = (n.trim(), v.trim());
    if n.is_empty() || v.is_empty() {
        return Err(ValuesError::Fixed { input: input.to_string() });
    }
    Ok((n.to_string(), v.to_string()))
}

/// The grid: every combination of values, the first `--param` varying slowest.
pub fn grid(params: &[SweptParam]) -> Result<Vec<Point>, ValuesError> {
    let total = params.iter().try_fold(1usize, |acc, p| acc.checked_mul(p.values.len()));
    match total {
        Some(n) if n <= MAX_VALUES => {}
        other => {
            return Err(ValuesError::TooBig {
                points: other.unwrap_or(usize::MAX),
                limit: MAX_VALUES,
            });
        }
    }
    let mut points = vec![Point { assignments: Vec::new() }];
    for p in params {
        points = points
            .into_iter()
            .flat_map(|pt| {
                p.values.iter().map(move |v| {
                    let mut a = pt.assignments.clone();
                    a.push((p.name.clone(), v.clone()));
                    Point { assignments: a }
                })
            })
            .collect();
    }
    Ok(points)
}

/// A value as a number, if it is one (for numeric plot axes).
pub fn numeric(v: &str) -> Option<f64> {
    v.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_range_has_six_clean_values() {
        let v = parse_range("0.8:1.3:0.1").unwrap();
        assert_eq!(v, ["0.8", "0.9", "1.0", "1.1", "1.2", "1.3"]);
        assert_eq!(parse_range("0.5:1.3:0.1").unwrap().len(), 9);
    }

    #[test]
    fn ranges_of_other_shapes() {
        assert_eq!(parse_range("0:20:5").unwrap(), ["0", "5", "10", "15", "20"]);
        assert_eq!(parse_range("0:1:0.3").unwrap(), ["0.0", "0.3", "0.6", "0.9"]);
        assert_eq!(parse_range("-0.2:0.1:0.1").unwrap(), ["-0.2", "-0.1", "0.0", "0.1"]);
        assert_eq!(parse_range("0.5:1:0.25").unwrap(), ["0.50", "0.75", "1.00"]);
        assert_eq!(parse_range("1:1:1").unwrap(), ["1"]);
        assert_eq!(parse_range(" .5 : 1.5 : .5 ").unwrap(), ["0.5", "1.0", "1.5"]);
    }

    #[test]
    fn bad_ranges_are_errors_with_the_expected_form() {
        for bad in ["0.8:1.3", "a:1:0.1", "1:0:0.1", "0:1:0", "0:1:-0.1", "1e3:2:1", "0:1:", "::"] {
            let e = parse_range(bad).unwrap_err();
            assert!(e.to_string().contains("LO:HI:STEP"), "{bad}: {e}");
        }
        assert!(parse_range("0:1000:0.001").is_err(), "too many values");
    }

    #[test]
    fn lists_keep_order_and_text() {
        assert_eq!(parse_list("1.0, 0.9,true,Never").unwrap(), ["1.0", "0.9", "true", "Never"]);
        assert!(parse_list("1,,2").is_err());
        assert!(parse_list("1,2,1").is_err());
        assert!(parse_list("").is_err());
    }

    #[test]
    fn lists_refuse_values_that_would_play_or_file_as_one() {
        // Three spellings of one number would play three identical points.
        let e = parse_list("1,1.0,1.00").unwrap_err().to_string();
        assert!(e.contains("1 and 1.0 are the same number"), "{e}");
        assert!(parse_list("0.5,+.5").is_err());
        assert!(parse_list("-0,0").is_err());
        // Values that clean to one folder name would overwrite each other's point summaries.
        let e = parse_list("a/b,a_b,a b").unwrap_err().to_string();
        assert!(e.contains("\"a/b\" and \"a_b\" both become \"a_b\""), "{e}");
        assert!(parse_list("x y,x:y").is_err());
        // Different numbers and different words stay accepted.
        assert_eq!(parse_list("1,1.01,10,true,True").unwrap().len(), 5);
    }

    #[test]
    fn values_attach_to_the_param_before_them() {
        let params = vec![(1, "t_mid".to_string()), (5, "Skill Level".to_string())];
        let vals =
            vec![(7, ValueArg::List("0,20".into())), (3, ValueArg::Range("1:1.2:0.1".into()))];
        let got = assign(&params, &vals).unwrap();
        assert_eq!(
            got[0],
            SweptParam {
                name: "t_mid".into(),
                values: vec!["1.0".into(), "1.1".into(), "1.2".into()]
            }
        );
        assert_eq!(got[1].values, ["0", "20"]);
    }

    #[test]
    fn defaults_orphans_and_duplicates() {
        let got = assign(&[(1, "t_end".into()), (2, "t_mid".into())], &[]).unwrap();
        assert_eq!(got[0].values.len(), 9);
        assert_eq!(got[1].values.len(), 6);
        let e = assign(&[(1, "Hash".into())], &[]).unwrap_err();
        assert!(matches!(e, ValuesError::Missing { .. }), "{e}");
        let e = assign(&[(3, "x".into())], &[(1, ValueArg::List("1".into()))]).unwrap_err();
        assert!(matches!(e, ValuesError::Orphan { .. }), "{e}");
        let e = assign(
            &[(1, "x".into())],
            &[(3, ValueArg::List("1".into())), (5, ValueArg::Range("1:2:1".into()))],
        )
        .unwrap_err();
        assert!(matches!(e, ValuesError::Twice { .. }), "{e}");
        let e = assign(&[(1, "x".into()), (4, "x".into())], &[]).unwrap_err();
        assert!(matches!(e, ValuesError::DuplicateParam { .. }), "{e}");
        assert!(assign(&[(1, "a=b".into())], &[]).is_err());
    }

    #[test]
    fn grid_is_the_cartesian_product_first_param_slowest() {
        let ps = vec![
            SweptParam { name: "t_mid".into(), values: vec!["0.9".into(), "1.0".into()] },
            SweptParam {
                name: "t_end".into(),
                values: vec!["0.5".into(), "0.6".into(), "0.7".into()],
            },
        ];
        let g = grid(&ps).unwrap();
        assert_eq!(g.len(), 6);
        assert_eq!(g[0].label(), "t_mid=0.9,t_end=0.5");
        assert_eq!(g[1].label(), "t_mid=0.9,t_end=0.6");
        assert_eq!(g[5].label(), "t_mid=1.0,t_end=0.7");
        let big =
            vec![
                SweptParam { name: "a".into(), values: (0..200).map(|i| i.to_string()).collect() };
                2
            ];
        assert!(matches!(grid(&big), Err(ValuesError::TooBig { .. })));
    }

    #[test]
    fn fixed_and_dir_names() {
        assert_eq!(parse_fixed("t_end=1.0").unwrap(), ("t_end".into(), "1.0".into()));
        assert!(parse_fixed("t_end").is_err());
        assert!(parse_fixed("=1").is_err());
        let p = Point { assignments: vec![("Skill Level".into(), "5/x".into())] };
        assert_eq!(p.dir_name(), "Skill_Level=5_x");
    }
}
