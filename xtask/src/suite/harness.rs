//! Reading the reference's `tests/harness/gasnet-tests/harness.conf`: one
//! entry per `TestName:` (`testam-seq`, `testam_async-seq`, ...), each
//! starting from the latest `BEGIN_DEFAULT_CONFIG` block, with lines
//! `Key: value` or `Key: condition ; value`. A condition is an expression
//! over features (`network_udp`, `cc_gnu`, ...) and `_threads` (the
//! process count): `!`, `&&`, `||`, `,` (and), parentheses, and the
//! comparisons `< <= > >= == !=` with numbers. An unknown feature is
//! false.
//!
//! A key given in an entry replaces the default block's lines for that
//! key; the lines of a key whose condition holds add up (`AppArgs` and
//! `AppEnv` are additive in the reference's harness).

use std::collections::{BTreeMap, BTreeSet};

/// One `Key: [condition ;] value` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub cond: Option<String>,
    pub value: String,
}

/// One `TestName:` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    keys: BTreeMap<String, Vec<Line>>,
    defaults: BTreeMap<String, Vec<Line>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HarnessConf {
    pub entries: Vec<Entry>,
}

/// The line without a trailing comment (`#` after a blank, or at the
/// start).
fn strip_comment(line: &str) -> &str {
    if line.trim_start().starts_with('#') {
        return "";
    }
    let bytes = line.as_bytes();
    for i in 1..bytes.len() {
        if bytes[i] == b'#' && (bytes[i - 1] == b' ' || bytes[i - 1] == b'\t') {
            return &line[..i];
        }
    }
    line
}

pub fn parse(text: &str) -> HarnessConf {
    let mut conf = HarnessConf::default();
    let mut defaults: BTreeMap<String, Vec<Line>> = BTreeMap::new();
    let mut in_defaults = false;
    let mut current: Option<Entry> = None;
    for raw in text.lines() {
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if line == "BEGIN_DEFAULT_CONFIG" {
            if let Some(entry) = current.take() {
                conf.entries.push(entry);
            }
            defaults.clear();
            in_defaults = true;
            continue;
        }
        if line == "END_DEFAULT_CONFIG" {
            in_defaults = false;
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue; // a directive such as KnownFailureAnySpec
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let value = value.trim();
        if key == "TestName" {
            if let Some(entry) = current.take() {
                conf.entries.push(entry);
            }
            in_defaults = false;
            current = Some(Entry {
                name: value.to_string(),
                keys: BTreeMap::new(),
                defaults: defaults.clone(),
            });
            continue;
        }
        let parsed = match value.split_once(';') {
            Some((cond, v)) if key != "WarningFilter" => Line {
                cond: Some(cond.trim().to_string()),
                value: v.trim().to_string(),
            },
            _ => Line {
                cond: None,
                value: value.to_string(),
            },
        };
        if in_defaults {
            defaults.entry(key.to_string()).or_default().push(parsed);
        } else if let Some(entry) = current.as_mut() {
            entry.keys.entry(key.to_string()).or_default().push(parsed);
        }
    }
    if let Some(entry) = current.take() {
        conf.entries.push(entry);
    }
    conf
}

impl HarnessConf {
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }
}

/// An entry's name split: (`testam`, Some(`async`), `seq`) for
/// `testam_async-seq`; None for names without a thread mode.
pub fn split_name(name: &str) -> Option<(&str, Option<&str>, &str)> {
    let (stem, mode) = name.rsplit_once('-')?;
    if !["seq", "par", "parsync"].contains(&mode) {
        return None;
    }
    Some(match stem.split_once('_') {
        Some((base, variant)) => (base, Some(variant), mode),
        None => (stem, None, mode),
    })
}

impl Entry {
    /// Whether the entry (not its default block) sets `key`.
    pub fn sets(&self, key: &str) -> bool {
        self.keys.contains_key(key)
    }

    /// The lines of `key`: the entry's own, else its default block's.
    pub fn lines(&self, key: &str) -> &[Line] {
        self.keys
            .get(key)
            .or_else(|| self.defaults.get(key))
            .map_or(&[], Vec::as_slice)
    }

    /// The values of `key` whose condition holds; errors name the bad
    /// condition.
    pub fn values(&self, key: &str, features: &Features) -> Result<Vec<&str>, String> {
        let mut out = Vec::new();
        for line in self.lines(key) {
            let holds = match &line.cond {
                None => true,
                Some(c) => {
                    eval(c, features).map_err(|e| format!("{}: {key}: `{c}`: {e}", self.name))?
                }
            };
            if holds {
                out.push(line.value.as_str());
            }
        }
        Ok(out)
    }

    /// Whether a requirement key (`RequireFeature`, `ProhibitFeature`)
    /// holds: every value that applies must be true. None when no value
    /// applies.
    pub fn all_true(&self, key: &str, features: &Features) -> Result<Option<bool>, String> {
        let values = self.values(key, features)?;
        if values.is_empty() {
            return Ok(None);
        }
        for v in values {
            if !eval(v, features).map_err(|e| format!("{}: {key}: `{v}`: {e}", self.name))? {
                return Ok(Some(false));
            }
        }
        Ok(Some(true))
    }
}

/// The features a condition is evaluated against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Features {
    pub set: BTreeSet<String>,
    /// `_threads`: the number of processes.
    pub threads: i64,
}

impl Features {
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(set: I, threads: u32) -> Self {
        Features {
            set: set.into_iter().map(Into::into).collect(),
            threads: i64::from(threads),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Num(i64),
    Op(&'static str),
}

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    const OPS: [&str; 13] = [
        "&&", "||", "<=", ">=", "==", "!=", "<", ">", "!", "(", ")", ",", "&",
    ];
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let c = rest.chars().next().unwrap_or(' ');
        if c.is_ascii_digit() {
            let len = rest.chars().take_while(|c| c.is_ascii_digit()).count();
            out.push(Tok::Num(
                rest[..len].parse().map_err(|_| "number too large")?,
            ));
            rest = &rest[len..];
        } else if c == '_' || c.is_ascii_alphabetic() {
            let len = rest
                .chars()
                .take_while(|&c| c == '_' || c.is_ascii_alphanumeric())
                .count();
            out.push(Tok::Ident(rest[..len].to_string()));
            rest = &rest[len..];
        } else if let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) {
            if *op == "&" {
                return Err("`&` (did you mean `&&`?)".into());
            }
            out.push(Tok::Op(op));
            rest = &rest[op.len()..];
        } else {
            return Err(format!("unexpected `{c}`"));
        }
        rest = rest.trim_start();
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    features: &'a Features,
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn or(&mut self) -> Result<i64, String> {
        let mut v = self.and()?;
        while self.peek_op() == Some("||") {
            self.pos += 1;
            let r = self.and()?;
            v = i64::from(v != 0 || r != 0);
        }
        Ok(v)
    }

    fn and(&mut self) -> Result<i64, String> {
        let mut v = self.cmp()?;
        while matches!(self.peek_op(), Some("&&" | ",")) {
            self.pos += 1;
            let r = self.cmp()?;
            v = i64::from(v != 0 && r != 0);
        }
        Ok(v)
    }

    fn cmp(&mut self) -> Result<i64, String> {
        let l = self.unary()?;
        let Some(op) = self
            .peek_op()
            .filter(|op| ["<", "<=", ">", ">=", "==", "!="].contains(op))
        else {
            return Ok(l);
        };
        self.pos += 1;
        let r = self.unary()?;
        Ok(i64::from(match op {
            "<" => l < r,
            "<=" => l <= r,
            ">" => l > r,
            ">=" => l >= r,
            "==" => l == r,
            _ => l != r,
        }))
    }

    fn unary(&mut self) -> Result<i64, String> {
        match self.toks.get(self.pos).cloned() {
            Some(Tok::Op("!")) => {
                self.pos += 1;
                Ok(i64::from(self.unary()? == 0))
            }
            Some(Tok::Op("(")) => {
                self.pos += 1;
                let v = self.or()?;
                if self.peek_op() != Some(")") {
                    return Err("missing `)`".into());
                }
                self.pos += 1;
                Ok(v)
            }
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Ok(n)
            }
            Some(Tok::Ident(name)) => {
                self.pos += 1;
                Ok(if name == "_threads" {
                    self.features.threads
                } else {
                    i64::from(self.features.set.contains(&name))
                })
            }
            Some(Tok::Op(op)) => Err(format!("unexpected `{op}`")),
            None => Err("unexpected end".into()),
        }
    }
}

/// Evaluates a condition.
pub fn eval(cond: &str, features: &Features) -> Result<bool, String> {
    let toks = lex(cond)?;
    if toks.is_empty() {
        return Err("empty condition".into());
    }
    let mut p = Parser {
        toks,
        pos: 0,
        features,
    };
    let v = p.or()?;
    if p.pos != p.toks.len() {
        return Err(format!("unexpected {:?}", p.toks[p.pos]));
    }
    Ok(v != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = "\
# comment
KnownFailureAnySpec

BEGIN_DEFAULT_CONFIG
AppArgs:
AppEnv: \tnetwork_smp && nopshm ; DOWNGRADE=1
TimeLimit:      1.5 * $DEFAULT$
RequireFeature: gasnet
END_DEFAULT_CONFIG

TestName:       testam-seq
AppArgs:        -sync-req
DynamicThreads: 1,$DEFAULT$ # test loopback and parallel
WarningFilter: cc_clang ; .*? warning: x ; y

TestName:       testimm-seq
AppArgs:        (network_udp || network_mpi); 5000   # half
AppArgs:        network_smp                 ; 7

TestName:       testcollperf-seq
AppArgs:        (_threads <= 4)                  ; -szfactor 4 16384 2 25 0
AppArgs:        (_threads  > 4 && _threads <= 8) ; -szfactor 4 16384 2 10 0

BEGIN_DEFAULT_CONFIG
TimeLimit:      2 * $DEFAULT$
RequireFeature: gasnet_has_par
END_DEFAULT_CONFIG

TestName:       testthreads-par
AppArgs:  2
";

    fn feats(network: &str, threads: u32) -> Features {
        Features::new(
            [format!("network_{network}"), "gasnet".to_string()],
            threads,
        )
    }

    #[test]
    fn entries_inherit_their_default_block() {
        let conf = parse(CONF);
        let names: Vec<_> = conf.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "testam-seq",
                "testimm-seq",
                "testcollperf-seq",
                "testthreads-par"
            ]
        );
        let am = conf.entry("testam-seq").unwrap();
        let f = feats("smp", 2);
        assert_eq!(am.values("AppArgs", &f).unwrap(), ["-sync-req"]);
        assert_eq!(am.values("TimeLimit", &f).unwrap(), ["1.5 * $DEFAULT$"]);
        assert_eq!(am.values("DynamicThreads", &f).unwrap(), ["1,$DEFAULT$"]);
        assert!(am.values("AppEnv", &f).unwrap().is_empty());
        assert!(!am.sets("AppEnv") && am.sets("AppArgs"));
        assert_eq!(am.lines("WarningFilter")[0].cond, None);
        assert_eq!(am.all_true("RequireFeature", &f), Ok(Some(true)));
        let threads = conf.entry("testthreads-par").unwrap();
        assert_eq!(threads.values("TimeLimit", &f).unwrap(), ["2 * $DEFAULT$"]);
        assert_eq!(threads.all_true("RequireFeature", &f), Ok(Some(false)));
        assert_eq!(threads.all_true("ProhibitFeature", &f), Ok(None));
    }

    #[test]
    fn conditional_values_follow_the_conduit_and_the_process_count() {
        let conf = parse(CONF);
        let imm = conf.entry("testimm-seq").unwrap();
        assert_eq!(imm.values("AppArgs", &feats("udp", 2)).unwrap(), ["5000"]);
        assert_eq!(imm.values("AppArgs", &feats("smp", 2)).unwrap(), ["7"]);
        let perf = conf.entry("testcollperf-seq").unwrap();
        assert_eq!(
            perf.values("AppArgs", &feats("smp", 4)).unwrap(),
            ["-szfactor 4 16384 2 25 0"]
        );
        assert_eq!(
            perf.values("AppArgs", &feats("smp", 5)).unwrap(),
            ["-szfactor 4 16384 2 10 0"]
        );
        assert!(perf.values("AppArgs", &feats("smp", 9)).unwrap().is_empty());
    }

    #[test]
    fn names() {
        assert_eq!(split_name("testam-seq"), Some(("testam", None, "seq")));
        assert_eq!(
            split_name("testcollperf_src_out-par"),
            Some(("testcollperf", Some("src_out"), "par"))
        );
        assert_eq!(split_name("check-exports"), None);
        assert_eq!(split_name("parsync"), None);
    }

    #[test]
    fn conditions() {
        let f = Features::new(["a", "b"], 3);
        let e = |c: &str| eval(c, &f).unwrap();
        assert!(e("a"));
        assert!(!e("c"));
        assert!(e("a && b"));
        assert!(e("a,b"));
        assert!(!e("a, c"));
        assert!(e("c || b"));
        assert!(e("!c"));
        assert!(e("!(a && c) && (b || c)"));
        assert!(e("(_threads > 2 && _threads <= 4)"));
        assert!(!e("_threads == 4"));
        assert!(e("_threads != 4"));
        assert!(e("a && b || c"));
        for bad in ["", "a &&", "(a", "a & b", "a b", "a $ b"] {
            assert!(eval(bad, &f).is_err(), "{bad}");
        }
    }
}
