//! Search variants: `NAME:OPT=V[,OPT=V]...`, one engine configuration each.

use serde::{Deserialize, Serialize};

/// A named set of UCI option values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Variant {
    pub name: String,
    pub options: Vec<(String, String)>,
}

/// Parses `NAME:OPT=V[,OPT=V]...`; `NAME` alone is the engine with its own defaults.
pub fn parse_variant(text: &str) -> Result<Variant, String> {
    let (name, opts) = match text.split_once(':') {
        Some((n, o)) => (n.trim(), o),
        None => (text.trim(), ""),
    };
    if name.is_empty() || name.contains(['/', '\\']) {
        return Err(format!(
            "variant {text:?}: expected NAME:OPT=V[,OPT=V]... with a name (no slashes)"
        ));
    }
    let mut options = Vec::new();
    for item in opts.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| format!("variant {text:?}: option {item:?} is not OPT=VALUE"))?;
        let k = k.trim().strip_prefix("option.").unwrap_or(k.trim());
        if k.is_empty() {
            return Err(format!("variant {text:?}: empty option name in {item:?}"));
        }
        options.push((k.to_string(), v.trim().to_string()));
    }
    Ok(Variant { name: name.to_string(), options })
}

/// Parses all `--variant` values; at least two, names unique.
pub fn parse_variants(texts: &[String]) -> Result<Vec<Variant>, String> {
    let vs = texts.iter().map(|t| parse_variant(t)).collect::<Result<Vec<_>, _>>()?;
    if vs.len() < 2 {
        return Err("give at least two --variant NAME:OPT=V,... to compare".into());
    }
    for (i, v) in vs.iter().enumerate() {
        if vs[..i].iter().any(|w| w.name == v.name) {
            return Err(format!("variant name {:?} is given twice", v.name));
        }
    }
    Ok(vs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_variants() {
        let v = parse_variant("mpc:MPC=true, t_mid=1.2,option.Hash=32").unwrap();
        assert_eq!(v.name, "mpc");
        assert_eq!(
            v.options,
            [
                ("MPC".to_string(), "true".to_string()),
                ("t_mid".into(), "1.2".into()),
                ("Hash".into(), "32".into())
            ]
        );
        assert_eq!(parse_variant("plain").unwrap().options, []);
        for bad in ["", ":MPC=true", "a:MPC", "a:=3", "a/b:X=1"] {
            assert!(parse_variant(bad).is_err(), "{bad}");
        }
        let two = ["a:MPC=false".to_string(), "b:MPC=true".to_string()];
        assert_eq!(parse_variants(&two).unwrap().len(), 2);
        assert!(parse_variants(&two[..1]).is_err());
        assert!(parse_variants(&[two[0].clone(), two[0].clone()]).is_err());
    }
}
