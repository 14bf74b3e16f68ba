//! Search variants: `NAME:OPT=V[,OPT=V]...`, one engine configuration each, optionally with its
//! own search limit (`limit.nodes=N`, `limit.depth=D`, `limit.movetime=MS`).

use crate::play::probe::Limit;
/// A named set of UCI option values (a type of the run's files, `plan.json`).
pub use crate::store::formats::SearchVariant as Variant;

/// Parses `NAME:OPT=V[,OPT=V]...`; `NAME` alone is the engine with its own defaults. The keys
/// `limit.nodes`, `limit.depth` and `limit.movetime` set the variant's own search limit.
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
    let mut limit = None;
    for item in opts.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| format!("variant {text:?}: option {item:?} is not OPT=VALUE"))?;
        let k = k.trim().strip_prefix("option.").unwrap_or(k.trim());
        if k.is_empty() {
            return Err(format!("variant {text:?}: empty option name in {item:?}"));
        }
        if let Some(kind) = k.strip_prefix("limit.") {
            let n: u64 = v.trim().parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                format!("variant {text:?}: {item:?} needs a positive whole number")
            })?;
            let l = match kind {
                "nodes" => Limit::Nodes(n),
                "depth" if n <= 64 => Limit::Depth(n as u32),
                "movetime" if n <= 3_600_000 => Limit::Movetime(n),
                "depth" | "movetime" => {
                    return Err(format!("variant {text:?}: {item:?} is out of range"));
                }
                _ => {
                    return Err(format!(
                        "variant {text:?}: {item:?}: expected limit.nodes, limit.depth or \
                         limit.movetime"
                    ));
                }
            };
            if limit.replace(l).is_some() {
                return Err(format!("variant {text:?}: two limits"));
            }
            continue;
        }
        options.push((k.to_string(), v.trim().to_string()));
    }
    Ok(Variant { name: name.to_string(), options, limit })
}

/// The options as shown in tables: the UCI options, then the variant's own limit if any.
pub fn shown_options(v: &Variant) -> Vec<(String, String)> {
    let mut o = v.options.clone();
    match v.limit {
        Some(Limit::Nodes(n)) => o.push(("limit.nodes".into(), n.to_string())),
        Some(Limit::Depth(d)) => o.push(("limit.depth".into(), d.to_string())),
        Some(Limit::Movetime(ms)) => o.push(("limit.movetime".into(), ms.to_string())),
        None => {}
    }
    o
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
        let small = parse_variant("small:limit.nodes=50,MPC=false").unwrap();
        assert_eq!((small.limit, small.options.len()), (Some(Limit::Nodes(50)), 1));
        assert_eq!(parse_variant("d:limit.depth=3").unwrap().limit, Some(Limit::Depth(3)));
        for bad in [
            "",
            ":MPC=true",
            "a:MPC",
            "a:=3",
            "a/b:X=1",
            "a:limit.nodes=0",
            "a:limit.depth=65",
            "a:limit.nodes=5,limit.depth=3",
            "a:limit.time=5",
        ] {
            assert!(parse_variant(bad).is_err(), "{bad}");
        }
        let two = ["a:MPC=false".to_string(), "b:MPC=true".to_string()];
        assert_eq!(parse_variants(&two).unwrap().len(), 2);
        assert!(parse_variants(&two[..1]).is_err());
        assert!(parse_variants(&[two[0].clone(), two[0].clone()]).is_err());
    }
}
