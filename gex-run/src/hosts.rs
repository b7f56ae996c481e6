//! Placing ranks on hosts and building the command that starts a rank on
//! its host.

use std::io;

use crate::{JobSpec, DEFAULT_SPAWN};

/// The host index of each rank: blocks of `ceil(ranks / hosts)` consecutive
/// ranks per host, in host order (so the last hosts may get fewer ranks, or
/// none).
pub fn placement(ranks: u32, hosts: usize) -> Vec<usize> {
    if hosts == 0 {
        return vec![0; ranks as usize];
    }
    let per = (ranks as usize).div_ceil(hosts).max(1);
    (0..ranks as usize).map(|r| r / per).collect()
}

/// How one rank is started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    /// The program itself, as a child of the launcher.
    Direct,
    /// Through a spawner: `argv` is the template's words with `{host}`
    /// replaced; the program and its arguments follow. With `ssh`, the
    /// rank's environment cannot travel as the spawner's own: it is put on
    /// the remote command line (`env K=V ... PROGRAM ARGS`, shell-quoted).
    Spawner { argv: Vec<String>, ssh: bool },
}

/// Where and how one rank runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    /// The host's name as given (`None` without `--hosts`).
    pub host: Option<String>,
    pub via: Via,
}

/// The place of every rank of `spec`, and the number of hosts used.
pub(crate) fn plan(spec: &JobSpec) -> io::Result<(Vec<Place>, usize)> {
    let invalid = |msg: String| io::Error::new(io::ErrorKind::InvalidInput, msg);
    if let Some(h) = spec.hosts.iter().find(|h| h.trim().is_empty()) {
        return Err(invalid(format!("empty host name {h:?} in the host list")));
    }
    for (host, var, _) in &spec.host_env {
        if !spec.hosts.contains(host) {
            return Err(invalid(format!(
                "host environment for '{host}' ({var}), which is not one of the hosts"
            )));
        }
        if var.is_empty() || var.contains('=') {
            return Err(invalid(format!(
                "bad variable name {var:?} in the environment of host '{host}'"
            )));
        }
    }
    if let Some(t) = &spec.spawn {
        if split_words(t).is_none_or(|w| w.is_empty()) {
            return Err(invalid(format!("bad spawn command template {t:?}")));
        }
    }
    if spec.hosts.is_empty() {
        let via = match &spec.spawn {
            // A template without hosts: {host} is this host.
            Some(t) => spawner(t, "localhost")?,
            None => Via::Direct,
        };
        let place = Place { host: None, via };
        return Ok((vec![place; spec.ranks as usize], 1));
    }
    let local = local_hostname();
    let index = placement(spec.ranks, spec.hosts.len());
    let used = index.iter().max().map_or(0, |m| m + 1);
    let mut places = Vec::with_capacity(index.len());
    for h in index {
        let host = &spec.hosts[h];
        let via = match &spec.spawn {
            Some(t) => spawner(t, host)?,
            None if host == "localhost" || Some(host) == local.as_ref() => Via::Direct,
            None => spawner(DEFAULT_SPAWN, host)?,
        };
        places.push(Place {
            host: Some(host.clone()),
            via,
        });
    }
    Ok((places, used))
}

fn spawner(template: &str, host: &str) -> io::Result<Via> {
    let argv: Vec<String> = split_words(template)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad spawn command template {template:?} (unbalanced quotes)"),
            )
        })?
        .into_iter()
        .map(|w| w.replace("{host}", host))
        .collect();
    let ssh = argv
        .first()
        .is_some_and(|p| p.rsplit('/').next() == Some("ssh"));
    Ok(Via::Spawner { argv, ssh })
}

/// Splits a command template into words the way a shell would for simple
/// cases: blanks separate words; single quotes keep everything, double
/// quotes keep everything but `\"` and `\\`; a backslash outside quotes
/// escapes the next character. `None` for unbalanced quotes.
pub(crate) fn split_words(s: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => cur.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\' | '$' | '`') => cur.push(c),
                            c => {
                                cur.push('\\');
                                cur.push(c);
                            }
                        },
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.push(chars.next()?);
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Some(words)
}

/// Quotes `s` for a POSIX shell (what ssh hands the remote command to).
pub(crate) fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./=:,+@%".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// This machine's hostname, if it has one.
pub(crate) fn local_hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned()).filter(|h| !h.is_empty())
}

pub(crate) use gex_bootstrap::net::first_ipv4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_placed_in_blocks() {
        assert_eq!(placement(5, 2), [0, 0, 0, 1, 1]);
        assert_eq!(placement(4, 2), [0, 0, 1, 1]);
        assert_eq!(placement(3, 2), [0, 0, 1]);
        assert_eq!(placement(2, 3), [0, 1]);
        assert_eq!(placement(1, 3), [0]);
        assert_eq!(placement(7, 3), [0, 0, 0, 1, 1, 1, 2]);
        assert_eq!(placement(3, 0), [0, 0, 0]);
    }

    #[test]
    fn templates_split_like_a_shell() {
        let w = |s: &str| split_words(s).unwrap();
        assert_eq!(
            w("ssh -o BatchMode=yes {host}"),
            ["ssh", "-o", "BatchMode=yes", "{host}"]
        );
        assert_eq!(
            w("  a  'b c'  \"d \\\" e\" f\\ g ''"),
            ["a", "b c", "d \" e", "f g", ""]
        );
        assert_eq!(w("sh -c 'exec \"$@\"' x"), ["sh", "-c", "exec \"$@\"", "x"]);
        assert_eq!(w(""), Vec::<String>::new());
        assert!(split_words("a 'b").is_none());
        assert!(split_words("a \"b").is_none());
    }

    #[test]
    fn quoting_survives_a_shell() {
        assert_eq!(shell_quote("GEX_RANK=3"), "GEX_RANK=3");
        assert_eq!(shell_quote("/a/b-c.d"), "/a/b-c.d");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's a b"), r"'it'\''s a b'");
        for s in ["x y", "it's", "$HOME", "a\"b", "", "tab\there", "*"] {
            let out = std::process::Command::new("sh")
                .args(["-c", &format!("printf %s {}", shell_quote(s))])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), s);
        }
    }

    #[test]
    fn plans_follow_hosts_and_spawners() {
        let mut spec = JobSpec::new(3, "prog");
        spec.hosts = vec!["a".into(), "b".into()];
        spec.spawn = Some("ip netns exec {host}".into());
        let (places, used) = plan(&spec).unwrap();
        assert_eq!(used, 2);
        let hosts: Vec<_> = places.iter().map(|p| p.host.clone().unwrap()).collect();
        assert_eq!(hosts, ["a", "a", "b"]);
        assert_eq!(
            places[2].via,
            Via::Spawner {
                argv: vec!["ip".into(), "netns".into(), "exec".into(), "b".into()],
                ssh: false
            }
        );

        spec.spawn = None;
        spec.hosts = vec!["localhost".into(), "far-away".into()];
        let (places, _) = plan(&spec).unwrap();
        assert_eq!(places[0].via, Via::Direct);
        assert!(matches!(&places[2].via, Via::Spawner { argv, ssh: true }
            if argv == &["ssh", "-o", "BatchMode=yes", "far-away"]));

        spec.host_env = vec![("nowhere".into(), "X".into(), "1".into())];
        assert_eq!(plan(&spec).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        spec.host_env.clear();
        spec.spawn = Some("'unbalanced".into());
        assert_eq!(plan(&spec).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }
}
