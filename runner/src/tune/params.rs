//! `--param name,start,min,max,c_end,r_end` (fishtest's format) and the checks against the
//! engine's option declarations: an undeclared name is an error before any game, and `type spin`
//! options are tuned as integers, every other type as floats.

/// One tuned parameter (tune.jsonl, tune.json).
pub use crate::store::formats::TuneParam;

/// Largest magnitude of any `--param` number. With it, c_end <= max - min and the gains of
/// [`crate::tune::spsa`] stay finite (r_end * c_end^2 is at most 1e36), so no NaN or infinity
/// reaches a step, an engine option or the JSON files.
pub const MAX_MAGNITUDE: f64 = 1e12;

/// Parses one `--param` value; errors are one line naming the parameter.
pub fn parse_param(text: &str) -> Result<TuneParam, String> {
    let fields: Vec<&str> = text.split(',').map(str::trim).collect();
    let bad = |why: String| format!("bad --param {text:?}: {why}");
    if fields.len() != 6 {
        return Err(bad(format!(
            "expected name,start,min,max,c_end,r_end (6 fields), got {}",
            fields.len()
        )));
    }
    let name = fields[0];
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(bad("the option name is empty or holds control characters".into()));
    }
    let mut nums = [0f64; 5];
    for (slot, (field, what)) in
        nums.iter_mut().zip(fields[1..].iter().zip(["start", "min", "max", "c_end", "r_end"]))
    {
        *slot = field
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| bad(format!("{what} {field:?} is not a finite number")))?;
        if slot.abs() > MAX_MAGNITUDE {
            return Err(bad(format!("{what} {field} is beyond +-{MAX_MAGNITUDE:e}")));
        }
    }
    let [start, min, max, c_end, r_end] = nums;
    if min >= max {
        return Err(bad(format!("min {min} must be below max {max}")));
    }
    if !(min..=max).contains(&start) {
        return Err(bad(format!("start {start} is outside [{min}, {max}]")));
    }
    if c_end <= 0.0 {
        return Err(bad(format!("c_end must be > 0, got {c_end}")));
    }
    if r_end <= 0.0 {
        return Err(bad(format!("r_end must be > 0, got {r_end}")));
    }
    if c_end > max - min {
        return Err(bad(format!(
            "c_end {c_end} is wider than the whole range max - min = {}",
            max - min
        )));
    }
    Ok(TuneParam { name: name.to_string(), start, min, max, c_end, r_end })
}

/// Parses every `--param`; at least one, no name twice (case-insensitive, as UCI names are).
pub fn parse_params(texts: &[String]) -> Result<Vec<TuneParam>, String> {
    if texts.is_empty() {
        return Err("tune needs at least one --param name,start,min,max,c_end,r_end".into());
    }
    let params: Vec<TuneParam> = texts.iter().map(|t| parse_param(t)).collect::<Result<_, _>>()?;
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.name.eq_ignore_ascii_case(&p.name)) {
            return Err(format!("--param {} is given twice", p.name));
        }
    }
    Ok(params)
}

/// Whether each parameter is an integer (`type spin`), from the engine's declarations
/// `(name, type)`; a parameter the engine does not declare is an error naming what it declares.
pub fn integer_flags(
    params: &[TuneParam],
    engine: &str,
    declared: &[(String, String)],
) -> Result<Vec<bool>, String> {
    params
        .iter()
        .map(|p| match declared.iter().find(|(n, _)| n.eq_ignore_ascii_case(&p.name)) {
            Some((_, ty)) => Ok(ty.eq_ignore_ascii_case("spin")),
            None => Err(format!(
                "engine {engine} does not declare the option {}: a typo? (it declares: {})",
                p.name,
                declared.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fishtest_format() {
        let p = parse_param("X,80,0,100,10,0.002").unwrap();
        assert_eq!(
            p,
            TuneParam {
                name: "X".into(),
                start: 80.0,
                min: 0.0,
                max: 100.0,
                c_end: 10.0,
                r_end: 0.002
            }
        );
        assert_eq!(parse_param(" t_mid , 1.0, 0.5, 1.5, 0.1, 0.0025").unwrap().name, "t_mid");
    }

    #[test]
    fn bad_params_are_one_line_errors() {
        for (text, needle) in [
            ("X,80,0,100,10", "6 fields"),
            ("X,80,0,100,10,0.002,1", "6 fields"),
            (",80,0,100,10,0.002", "name is empty"),
            ("X,eighty,0,100,10,0.002", "start \"eighty\""),
            ("X,80,0,inf,10,0.002", "max \"inf\""),
            ("X,NaN,0,100,10,0.002", "start \"NaN\""),
            ("X,50,100,0,10,0.002", "min 100 must be below max 0"),
            ("X,50,5,5,10,0.002", "must be below"),
            ("X,120,0,100,10,0.002", "start 120 is outside [0, 100]"),
            ("X,80,0,100,0,0.002", "c_end must be > 0"),
            ("X,80,0,100,10,-1", "r_end must be > 0"),
            // Finite but absurd: the gains would overflow to infinity, then NaN in the JSON.
            ("t_mid,1,0.5,1.5,1e200,1", "c_end 1e200 is beyond +-1e12"),
            ("t_mid,1,0.5,1.5,2,1", "c_end 2 is wider than the whole range"),
            ("X,0,-1e300,1e300,1,1", "min -1e300 is beyond"),
            ("X,1,0,2,1,1e200", "r_end 1e200 is beyond"),
        ] {
            let e = parse_param(text).unwrap_err();
            assert!(e.contains(needle) && !e.contains('\n'), "{text}: {e}");
        }
        assert!(parse_params(&[]).unwrap_err().contains("at least one"));
        let twice = ["X,1,0,2,1,1".to_string(), "x,1,0,2,1,1".to_string()];
        assert!(parse_params(&twice).unwrap_err().contains("given twice"));
    }

    #[test]
    fn types_come_from_the_declarations() {
        let params = parse_params(&["X,5,0,9,1,1".into(), "t_mid,1,0,2,0.1,1".into()]).unwrap();
        let decl = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
        };
        let d = decl(&[("x", "spin"), ("t_mid", "string"), ("Hash", "spin")]);
        assert_eq!(integer_flags(&params, "e", &d).unwrap(), [true, false]);
        let e = integer_flags(&params, "e", &decl(&[("Hash", "spin")])).unwrap_err();
        assert!(e.contains("does not declare the option X") && e.contains("Hash"), "{e}");
    }
}
