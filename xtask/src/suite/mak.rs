//! Reading make variables: the installed `.mak` fragments and the
//! reference's `tests/Makefile.in`, without running make.
//!
//! Understood: `NAME = value` (also `:=`, `::=`, `?=`, `+=`, and an
//! `export` in front), lines continued with a backslash, `#` comments
//! (`\#` is a `#`), and references `$(NAME)`, `${NAME}`, `$X` and `$$`
//! when a value is read. Rules, recipes (lines starting with a tab),
//! `include` lines and conditionals are skipped. A `Makefile.in`'s
//! configure substitutions (`@NAME@`, and the `@NAME_TRUE@` /
//! `@NAME_FALSE@` line prefixes of automake conditionals) are replaced
//! first, see [`configure`].

use std::collections::BTreeMap;

/// The variables of one makefile, as written (expanded on reading).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vars {
    raw: BTreeMap<String, String>,
}

/// Reads the variable assignments of a makefile.
pub fn parse(text: &str) -> Vars {
    let mut vars = Vars::default();
    for line in logical_lines(text) {
        if line.starts_with('\t') {
            continue; // a recipe
        }
        let line = strip_comment(&line);
        let line = line.trim();
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        if line.is_empty() {
            continue;
        }
        // The first `=` or `:` decides: a `:` not part of an assignment
        // operator makes a rule.
        let Some(pos) = line.find(['=', ':']) else {
            continue;
        };
        let (name_part, op_and_value) = line.split_at(pos);
        let (op, value) = if let Some(v) = op_and_value.strip_prefix("::=") {
            (":=", v)
        } else if let Some(v) = op_and_value.strip_prefix(":=") {
            (":=", v)
        } else if let Some(v) = op_and_value.strip_prefix('=') {
            ("=", v)
        } else {
            continue; // a rule
        };
        let (name, op) = if let Some(n) = name_part.strip_suffix('?') {
            (n, "?=")
        } else if let Some(n) = name_part.strip_suffix('+') {
            (n, "+=")
        } else {
            (name_part, op)
        };
        let name = name.trim();
        if name.is_empty() || name.contains(char::is_whitespace) || name.contains('$') {
            continue;
        }
        let value = value.trim().to_string();
        match op {
            ":=" => {
                let expanded = vars.get_raw_expanded(&value);
                vars.raw
                    .insert(name.to_string(), expanded.replace('$', "$$"));
            }
            "?=" => {
                vars.raw.entry(name.to_string()).or_insert(value);
            }
            "+=" => {
                let entry = vars.raw.entry(name.to_string()).or_default();
                if !entry.is_empty() {
                    entry.push(' ');
                }
                entry.push_str(&value);
            }
            _ => {
                vars.raw.insert(name.to_string(), value);
            }
        }
    }
    vars
}

/// Joins backslash-continued lines (make replaces the backslash, the
/// newline and the blanks around them with one space).
fn logical_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let continued = line.ends_with('\\') && !line.ends_with("\\\\");
        let body = if continued {
            &line[..line.len() - 1]
        } else {
            line
        };
        let joined = match current.take() {
            Some(mut acc) => {
                let acc_trimmed = acc.trim_end().len();
                acc.truncate(acc_trimmed);
                acc.push(' ');
                acc.push_str(body.trim_start());
                acc
            }
            None => body.to_string(),
        };
        if continued {
            current = Some(joined);
        } else {
            out.push(joined);
        }
    }
    if let Some(acc) = current {
        out.push(acc);
    }
    out
}

/// The line up to its first unescaped `#`, with `\#` made a `#`.
fn strip_comment(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'#') => {
                out.push('#');
                chars.next();
            }
            '#' => break,
            _ => out.push(c),
        }
    }
    out
}

/// Replaces a `Makefile.in`'s configure substitutions: on each line the
/// automake conditional prefixes `@NAME_TRUE@` / `@NAME_FALSE@` become
/// nothing (kept) or `#` (commented out) as `cond(NAME)` says, then every
/// `@NAME@` becomes `subst(NAME)` (empty when unknown).
pub fn configure(
    text: &str,
    cond: &dyn Fn(&str) -> bool,
    subst: &dyn Fn(&str) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut rest = line;
        let mut commented = false;
        // Conditional prefixes (several may be stacked).
        loop {
            let trimmed = rest.trim_start();
            let Some(after) = trimmed.strip_prefix('@') else {
                break;
            };
            let Some(end) = after.find('@') else {
                break;
            };
            let name = &after[..end];
            let keep = if let Some(c) = name.strip_suffix("_TRUE") {
                cond(c)
            } else if let Some(c) = name.strip_suffix("_FALSE") {
                !cond(c)
            } else {
                break;
            };
            commented |= !keep;
            rest = &after[end + 1..];
        }
        if commented {
            out.push('#');
        }
        // Other substitutions.
        let mut s = rest;
        while let Some(start) = s.find('@') {
            out.push_str(&s[..start]);
            let after = &s[start + 1..];
            match after.find('@') {
                Some(end)
                    if end > 0
                        && after[..end]
                            .chars()
                            .all(|c| c == '_' || c.is_ascii_alphanumeric()) =>
                {
                    out.push_str(&subst(&after[..end]).unwrap_or_default());
                    s = &after[end + 1..];
                }
                _ => {
                    out.push('@');
                    s = after;
                }
            }
        }
        out.push_str(s);
        out.push('\n');
    }
    out
}

impl Vars {
    /// Whether the makefile assigns `name` (even an empty value).
    #[cfg(test)]
    pub fn defines(&self, name: &str) -> bool {
        self.raw.contains_key(name)
    }

    /// The value as written.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.raw.get(name).map(String::as_str)
    }

    /// The value of `name` with every reference expanded (empty when
    /// undefined), as make would hand it to a recipe's shell.
    pub fn get(&self, name: &str) -> String {
        self.expand_depth(self.raw(name).unwrap_or_default(), 0)
    }

    /// Expands `text` with these variables.
    pub fn get_raw_expanded(&self, text: &str) -> String {
        self.expand_depth(text, 0)
    }

    /// Sets a variable (for values given on make's command line).
    pub fn set(&mut self, name: &str, value: &str) {
        self.raw.insert(name.to_string(), value.to_string());
    }

    fn expand_depth(&self, text: &str, depth: usize) -> String {
        if depth > 32 {
            return String::new(); // a reference loop: make would fail
        }
        let mut out = String::with_capacity(text.len());
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c != '$' {
                out.push(c);
                continue;
            }
            match chars.peek().map(|&(_, c)| c) {
                Some('$') => {
                    out.push('$');
                    chars.next();
                }
                Some(open @ ('(' | '{')) => {
                    let close = if open == '(' { ')' } else { '}' };
                    // The matching close, counting nested opens.
                    let start = i + 2;
                    let mut level = 0;
                    let mut end = None;
                    for (j, c) in text[start..].char_indices() {
                        if c == open {
                            level += 1;
                        } else if c == close {
                            if level == 0 {
                                end = Some(start + j);
                                break;
                            }
                            level -= 1;
                        }
                    }
                    let Some(end) = end else {
                        out.push_str(&text[i..]);
                        break;
                    };
                    let inner = self.expand_depth(&text[start..end], depth + 1);
                    // Functions ($(patsubst ...)) are not supported: empty.
                    if !inner.contains(char::is_whitespace) {
                        out.push_str(
                            &self.expand_depth(self.raw(&inner).unwrap_or_default(), depth + 1),
                        );
                    }
                    while let Some(&(j, _)) = chars.peek() {
                        if j > end {
                            break;
                        }
                        chars.next();
                    }
                }
                Some(single) => {
                    chars.next();
                    out.push_str(&self.expand_depth(
                        self.raw(&single.to_string()).unwrap_or_default(),
                        depth + 1,
                    ));
                }
                None => out.push('$'),
            }
        }
        out
    }
}

/// `text` with runs of blanks made one space, trimmed (to compare flags).
#[cfg(test)]
pub fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_and_references() {
        let vars = parse(
            "# a fragment\n\
             PREFIX = /opt/x\n\
             CPPFLAGS = $(MISC) ${DEFS} -I$(PREFIX)/include  # comment\n\
             MISC = -D_GNU_SOURCE=1\n\
             DEFS = -DA \\\n   -DB\n\
             EMPTY =\n\
             LITERAL = a$$b \\# c\n\
             export EXPORTED = yes\n\
             ADD = one\n\
             ADD += two\n\
             MAYBE ?= first\n\
             MAYBE ?= second\n\
             NOW := $(PREFIX)/lib\n\
             PREFIX_LATER = $(PREFIX)\n\
             target: dep1 dep2\n\
             \t$(CC) -o $@ VAR=not-an-assignment\n\
             include $(other)\n",
        );
        assert_eq!(
            vars.get("CPPFLAGS"),
            "-D_GNU_SOURCE=1 -DA -DB -I/opt/x/include"
        );
        assert_eq!(vars.get("DEFS"), "-DA -DB");
        assert!(vars.defines("EMPTY"));
        assert_eq!(vars.get("EMPTY"), "");
        assert!(!vars.defines("UNDEFINED"));
        assert_eq!(vars.get("UNDEFINED"), "");
        assert_eq!(vars.get("LITERAL"), "a$b # c");
        assert_eq!(vars.get("EXPORTED"), "yes");
        assert_eq!(vars.get("ADD"), "one two");
        assert_eq!(vars.get("MAYBE"), "first");
        assert_eq!(vars.get("NOW"), "/opt/x/lib");
        assert!(!vars.defines("target"));
        assert!(!vars.defines("VAR"));
        assert!(!vars.defines("$(CC) -o $@ VAR"));
    }

    #[test]
    fn loops_and_functions_expand_to_nothing() {
        let vars = parse("A = $(B)\nB = $(A)x\nF = $(patsubst %,x,$(A))y\n");
        assert!(vars.get("A").chars().all(|c| c == 'x'));
        assert_eq!(vars.get("F"), "y");
    }

    #[test]
    fn configure_substitutions() {
        let text = "@HAVE_T_TRUE@ T = \\\n@HAVE_T_TRUE@   yes\n\
                    @HAVE_T_FALSE@ T = no\n\
                    @HAVE_F_TRUE@ F = yes\n\
                    INC = -I@TOP_SRCDIR@/other/amx @UNKNOWN@ a@b.c\n";
        let cond = |name: &str| name == "HAVE_T";
        let subst = |name: &str| (name == "TOP_SRCDIR").then(|| "/src".to_string());
        let vars = parse(&configure(text, &cond, &subst));
        assert_eq!(vars.get("T"), "yes");
        assert!(!vars.defines("F"));
        assert_eq!(vars.get("INC"), "-I/src/other/amx  a@b.c");
    }

    #[test]
    fn normalizing() {
        assert_eq!(normalize("  a \t b  "), "a b");
    }
}
