//! A fastchess command line split the way fastchess reads it: an option is a word starting with
//! `-`; its values are the words after it up to the next option (a word starting with `-` and a
//! digit is a negative number, a value). Key=value lists (`-engine cmd=X name=Y`) split on the
//! first `=`. Also the one-line shell form of the translated command.

/// One option of the command line and the words after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opt {
    /// As written, dash included (`-engine`).
    pub name: String,
    pub values: Vec<String>,
}

/// Splits `args` into options. A first word that is not an option is refused.
pub fn split(args: &[String]) -> Result<Vec<Opt>, String> {
    let mut opts: Vec<Opt> = Vec::new();
    for word in args {
        let negative_number = word.len() > 1 && word.as_bytes()[1].is_ascii_digit();
        if word.starts_with('-') && word.len() > 1 && !negative_number {
            opts.push(Opt { name: word.clone(), values: Vec::new() });
        } else if let Some(last) = opts.last_mut() {
            last.values.push(word.clone());
        } else {
            return Err(format!("{word:?} is not a fastchess option (options start with -)"));
        }
    }
    Ok(opts)
}

impl Opt {
    /// The values as key=value pairs (an empty list when none are given).
    pub fn pairs(&self) -> Result<Vec<(String, String)>, String> {
        self.values
            .iter()
            .map(|v| match v.split_once('=') {
                Some((k, val)) if !k.is_empty() && !val.is_empty() => {
                    Ok((k.to_string(), val.to_string()))
                }
                _ => Err(format!("{}: expected key=value, got {v:?}", self.name)),
            })
            .collect()
    }

    /// The key=value pairs of an option that needs at least one.
    pub fn some_pairs(&self) -> Result<Vec<(String, String)>, String> {
        if self.values.is_empty() {
            return Err(format!("{}: expects key=value settings", self.name));
        }
        self.pairs()
    }

    /// The one value of an option that takes exactly one.
    pub fn single(&self) -> Result<&str, String> {
        match self.values.as_slice() {
            [v] => Ok(v),
            _ => Err(format!("{}: expects exactly one value", self.name)),
        }
    }

    /// Refuses values given to an option that takes none.
    pub fn none(&self) -> Result<(), String> {
        match self.values.is_empty() {
            true => Ok(()),
            false => Err(format!("{}: takes no value, got {:?}", self.name, self.values.join(" "))),
        }
    }
}

/// A whole number of an option or key, as fastchess parses it.
pub fn number<T: std::str::FromStr>(what: &str, v: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("{what}: expected a whole number, got {v:?}"))
}

/// `true` or `false`.
pub fn boolean(what: &str, v: &str) -> Result<bool, String> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("{what}: expected true or false, got {v:?}")),
    }
}

/// The command as a user types it in a POSIX shell: words with characters a shell reads
/// specially are single-quoted.
pub fn shell_line(words: &[String]) -> String {
    let quote = |w: &String| {
        let plain = !w.is_empty()
            && w.chars().all(|c| c.is_ascii_alphanumeric() || "_-+=,.:/@%^".contains(c));
        match plain {
            true => w.clone(),
            false => format!("'{}'", w.replace('\'', r"'\''")),
        }
    };
    words.iter().map(quote).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_take_the_words_up_to_the_next_option() {
        let opts =
            split(&words("-engine cmd=a name=b -rounds 5 -noswap -draw score=-5 -x -3")).unwrap();
        let names: Vec<&str> = opts.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["-engine", "-rounds", "-noswap", "-draw", "-x"]);
        assert_eq!(opts[0].values, ["cmd=a", "name=b"]);
        assert_eq!(opts[2].values, Vec::<String>::new());
        assert_eq!(opts[4].values, ["-3"], "a negative number is a value");
        assert_eq!(opts[0].pairs().unwrap()[1], ("name".into(), "b".into()));
    }

    #[test]
    fn malformed_words_are_refused() {
        assert!(split(&words("games 5")).unwrap_err().contains("\"games\" is not a fastchess"));
        let o = &split(&words("-engine cmd")).unwrap()[0];
        assert!(o.pairs().unwrap_err().contains("-engine: expected key=value, got \"cmd\""));
        let o = &split(&words("-sprt")).unwrap()[0];
        assert!(o.some_pairs().unwrap_err().contains("expects key=value"));
        let o = &split(&words("-games 1 2")).unwrap()[0];
        assert!(o.single().unwrap_err().contains("exactly one"));
        let o = &split(&words("-noswap x")).unwrap()[0];
        assert!(o.none().unwrap_err().contains("takes no value"));
    }

    #[test]
    fn shell_line_quotes_what_a_shell_would_read() {
        let w: Vec<String> = ["runner", "--engine", "name=a b,cmd=./x", "--event", "it's", ""]
            .map(Into::into)
            .into();
        assert_eq!(shell_line(&w), r#"runner --engine 'name=a b,cmd=./x' --event 'it'\''s' ''"#);
    }
}
