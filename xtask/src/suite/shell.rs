//! Splitting text into words as a POSIX shell would: what a make recipe's
//! shell does with `$(GASNET_CPPFLAGS)`, what `run-tests` does with a
//! test's arguments, what a caller does with `pkg-config --cflags`.
//!
//! Supported: blanks between words, `'...'`, `"..."` (with `\"`, `\\`,
//! `\$` and `` \` `` escapes), a backslash outside quotes, `;` between
//! commands, and parameter expansion `$NAME`, `${NAME}` and
//! `${NAME:-WORD}` (from the lookup given; unset is empty). No globbing,
//! no command substitution.

/// A piece of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Word(String),
    /// An unquoted `;`.
    Separator,
}

/// Splits `text` into words and separators; `env` answers parameter
/// expansions.
pub fn tokens(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    // A word exists once anything (even an empty quoted string) was seen.
    let mut in_word = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    out.push(Token::Word(std::mem::take(&mut word)));
                    in_word = false;
                }
                i += 1;
            }
            ';' => {
                if in_word {
                    out.push(Token::Word(std::mem::take(&mut word)));
                    in_word = false;
                }
                out.push(Token::Separator);
                i += 1;
            }
            '\'' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '\'')
                    .ok_or_else(|| format!("unterminated ' in `{text}`"))?;
                word.extend(&chars[i + 1..i + 1 + end]);
                in_word = true;
                i += end + 2;
            }
            '"' => {
                in_word = true;
                i += 1;
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err(format!("unterminated \" in `{text}`"));
                    };
                    match c {
                        '"' => {
                            i += 1;
                            break;
                        }
                        '\\' if matches!(chars.get(i + 1), Some('"' | '\\' | '$' | '`')) => {
                            word.push(chars[i + 1]);
                            i += 2;
                        }
                        '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
                        '$' => i = expand(&chars, i, env, &mut word)?,
                        _ => {
                            word.push(c);
                            i += 1;
                        }
                    }
                }
            }
            '\\' => {
                match chars.get(i + 1) {
                    Some('\n') => {}
                    Some(&next) => {
                        word.push(next);
                        in_word = true;
                    }
                    None => {
                        word.push('\\');
                        in_word = true;
                    }
                }
                i += 2;
            }
            '$' => {
                let before = word.len();
                i = expand(&chars, i, env, &mut word)?;
                // An unquoted expansion to nothing makes no word.
                in_word |= word.len() > before;
            }
            _ => {
                word.push(c);
                in_word = true;
                i += 1;
            }
        }
    }
    if in_word {
        out.push(Token::Word(word));
    }
    Ok(out)
}

/// Expands the parameter at `chars[at]` (a `$`) into `out`; returns the
/// index after it. A `$` that starts no parameter is itself.
fn expand(
    chars: &[char],
    at: usize,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut String,
) -> Result<usize, String> {
    let is_name = |c: char| c == '_' || c.is_ascii_alphanumeric();
    match chars.get(at + 1) {
        Some('{') => {
            let close = chars[at + 2..]
                .iter()
                .position(|&c| c == '}')
                .ok_or_else(|| "unterminated ${".to_string())?;
            let inner: String = chars[at + 2..at + 2 + close].iter().collect();
            let (name, default) = match inner.split_once(":-") {
                Some((n, d)) => (n.to_string(), Some(d.to_string())),
                None => (inner.clone(), None),
            };
            if name.is_empty() || !name.chars().all(is_name) {
                return Err(format!("unsupported expansion ${{{inner}}}"));
            }
            match (env(&name).filter(|v| !v.is_empty()), default) {
                (Some(v), _) => out.push_str(&v),
                (None, Some(d)) => out.push_str(&d),
                (None, None) => {}
            }
            Ok(at + 3 + close)
        }
        Some(&c) if c == '_' || c.is_ascii_alphabetic() => {
            let len = chars[at + 1..].iter().take_while(|&&c| is_name(c)).count();
            let name: String = chars[at + 1..at + 1 + len].iter().collect();
            out.push_str(&env(&name).unwrap_or_default());
            Ok(at + 1 + len)
        }
        _ => {
            out.push('$');
            Ok(at + 1)
        }
    }
}

/// The words of `text` (parameters from the process environment); a `;`
/// is an error.
pub fn words(text: &str) -> Result<Vec<String>, String> {
    words_with(text, &|name| std::env::var(name).ok())
}

/// The words of `text` with parameters from `env`.
pub fn words_with(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<String>, String> {
    tokens(text, env)?
        .into_iter()
        .map(|t| match t {
            Token::Word(w) => Ok(w),
            Token::Separator => Err(format!("unexpected `;` in `{text}`")),
        })
        .collect()
}

/// `text` quoted for a reader (and a shell), only when it needs it.
pub fn quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<String> {
        None
    }

    fn w(text: &str) -> Vec<String> {
        words_with(text, &none).unwrap()
    }

    #[test]
    fn blanks_and_quotes() {
        assert_eq!(w("  -O2   -I/x\t-DA=1 "), ["-O2", "-I/x", "-DA=1"]);
        assert_eq!(
            w(r#"GASNet is "Global Address Space Networking""#),
            ["GASNet", "is", "Global Address Space Networking"]
        );
        assert_eq!(w(r#"a'b c'd "e\"f" '' """#), ["ab cd", "e\"f", "", ""]);
        assert_eq!(w(r#"a\ b \"c\""#), ["a b", "\"c\""]);
        assert_eq!(w(r#""\a\\""#), [r"\a\"]);
        assert!(words_with("'open", &none).is_err());
        assert!(words_with("\"open", &none).is_err());
        assert!(words_with("a;b", &none).is_err());
        assert!(w("").is_empty());
    }

    #[test]
    fn separators() {
        assert_eq!(
            tokens("a=1; b='x; y' c=2 ;", &none).unwrap(),
            [
                Token::Word("a=1".into()),
                Token::Separator,
                Token::Word("b=x; y".into()),
                Token::Word("c=2".into()),
                Token::Separator,
            ]
        );
    }

    #[test]
    fn parameters() {
        let env = |name: &str| (name == "HOME").then(|| "/root".to_string());
        let w = |t: &str| words_with(t, &env).unwrap();
        assert_eq!(w("$HOME/x ${HOME}y"), ["/root/x", "/rooty"]);
        assert_eq!(w("${NOPE:-1000000} \"${HOME:-z}\""), ["1000000", "/root"]);
        assert_eq!(w("$NOPE a"), ["a"]);
        assert_eq!(w("\"$NOPE\""), [""]);
        assert_eq!(w("cost$ $1"), ["cost$", "$1"]);
        assert!(words_with("${a b}", &env).is_err());
    }

    #[test]
    fn quoting_round_trips() {
        for s in ["plain", "a b", "it's", "", "-DX=\"y\""] {
            assert_eq!(w(&quote(s)), [s]);
        }
        assert_eq!(quote("-I/x/y"), "-I/x/y");
    }
}
