//! Every `GEX_*` environment variable gex reads, in one table: its
//! default and its meaning (the README's table of variables is checked
//! against it by a test), and the check at init that warns, once, on rank
//! 0, about a `GEX_*` variable that gex does not know: a misspelling would
//! otherwise be silently ignored.
//!
//! Layers and conduits do not read variables where they use them: each has
//! a settings struct (`gex_conduit_udp::UdpSettings`,
//! `gex_core::ClientSettings`, `gex_rma::RmaSettings`,
//! `gex_coll::CollSettings`) whose `from_env` reads its variables through a
//! [`Lookup`] once, at init, and whose `Default` is the table's default.
//! An embedding runtime builds the structs in code instead.

use gex_types::{Error, Result};

/// Who sets a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetBy {
    /// The user (or a test) may set it.
    User,
    /// A launcher sets it for the ranks it starts (`gex-run`, or a
    /// rendezvous helper); users set it only to launch ranks by hand.
    Launcher,
    /// gex's own tests set it for the programs they run.
    Test,
}

/// One environment variable.
#[derive(Clone, Copy, Debug)]
pub struct Var {
    /// Its name.
    pub name: &'static str,
    /// Its default, in words.
    pub default: &'static str,
    /// What it does.
    pub meaning: &'static str,
    /// Who sets it.
    pub set_by: SetBy,
}

const fn user(name: &'static str, default: &'static str, meaning: &'static str) -> Var {
    Var {
        name,
        default,
        meaning,
        set_by: SetBy::User,
    }
}

const fn launcher(name: &'static str, default: &'static str, meaning: &'static str) -> Var {
    Var {
        name,
        default,
        meaning,
        set_by: SetBy::Launcher,
    }
}

const fn test(name: &'static str, default: &'static str, meaning: &'static str) -> Var {
    Var {
        name,
        default,
        meaning,
        set_by: SetBy::Test,
    }
}

/// Every variable gex reads, in the README's order.
pub const VARS: &[Var] = &[
    user(
        "GEX_CONDUIT",
        "smp",
        "The conduit a program started without `--conduit` uses (`smp`, `udp` or `ibv`).",
    ),
    user(
        "GEX_STATS",
        "off",
        "`1`: every rank prints its conduit's counters at exit.",
    ),
    user(
        "GEX_RMA_FORCE_AM",
        "off",
        "`1`: every put, get and remote atomic goes through Active Messages.",
    ),
    user(
        "GEX_VIS_FORCE_AM",
        "off",
        "`1`: every vector, indexed and strided transfer goes through Active Messages.",
    ),
    user(
        "GEX_COLL_FORCE_AM",
        "off",
        "`1`: collectives move data with Active Messages even within a neighbourhood.",
    ),
    user(
        "GEX_COLL_FORCE_DEFER",
        "off",
        "`1`: collective handlers defer every message they forward to the progress hook.",
    ),
    user(
        "GEX_COLL_SINGLE_COPY",
        "on",
        "`0`: large blocking broadcasts and scatters copy through shared memory instead of letting readers copy out of the root's memory.",
    ),
    user(
        "GEX_COLL_HIER",
        "on",
        "`0`: teams spanning neighbourhoods use the flat Active Message algorithms instead of the hierarchical broadcast, reductions, barrier, scatter, gather, gather-all and exchange (shared memory inside each neighbourhood, Active Messages between one representative of each); if any rank turns it off, no rank uses them.",
    ),
    user(
        "GEX_COLL_REDUCE_SCATTER",
        "by rank count and size",
        "`0`: reductions over shared memory above 1 KiB combine every member's vector on every reader (flat); `1`: by reduce-scatter (each member reduces a share of each chunk, then the shares are gathered), reduce-to-one too, whatever the rank count and size; default: reduce-to-all by reduce-scatter from 16 KiB, reduce-to-one flat; set alike on every rank.",
    ),
    user(
        "GEX_UDP_BYPASS",
        "on",
        "`0`: the udp conduit sends to ranks on the same host over UDP too, instead of shared memory.",
    ),
    user(
        "GEX_UDP_AUTH",
        "on",
        "`0`: udp datagrams carry no MAC (a trusted network only; every rank must agree).",
    ),
    user(
        "GEX_UDP_MTU",
        "65507 on one host, else 1472",
        "Largest udp datagram in bytes, 512 to 65507.",
    ),
    user(
        "GEX_UDP_WINDOW",
        "sized to the receive buffers",
        "Datagrams in flight per peer and lane.",
    ),
    user(
        "GEX_UDP_ADDR",
        "127.0.0.1 on one host, else the first non-loopback IPv4 address",
        "The IP address a udp rank binds and publishes.",
    ),
    user(
        "GEX_UDP_PEER_TIMEOUT",
        "30 (seconds)",
        "A peer silent this long (no datagram, no heartbeat) ends the job.",
    ),
    user(
        "GEX_UDP_PROGRESS_THREAD",
        "off",
        "`1`: a thread per udp rank receives and acknowledges datagrams while the program computes.",
    ),
    user(
        "GEX_UDP_SPIN_US",
        "200",
        "Microseconds an idle udp poll spins before it may wait in the kernel.",
    ),
    user(
        "GEX_UDP_INBOX_LIMIT",
        "65536",
        "Complete messages waiting for handlers beyond which a udp rank refuses new requests.",
    ),
    user(
        "GEX_IBV_PROVIDER",
        "rdma-sys when built with it, else sim",
        "The ibv conduit's verbs provider: `rdma-sys` (libibverbs) or `sim` (a simulated device on one host).",
    ),
    user(
        "GEX_IBV_BYPASS",
        "on",
        "`0`: the ibv conduit sends Active Messages to ranks on the same host through the device too, instead of shared memory.",
    ),
    user(
        "GEX_IBV_CREDITS",
        "16",
        "ibv Active Messages in flight per peer and lane, at most, 1 to 1024.",
    ),
    user(
        "GEX_IBV_BUF",
        "65632",
        "Bytes of an ibv receive buffer (the Medium limit is 96 less), 608 to 1048672.",
    ),
    user(
        "GEX_IBV_SRQ",
        "on",
        "`0`: the ibv conduit posts `2 * GEX_IBV_CREDITS` receive buffers per peer instead of one pool in a shared receive queue.",
    ),
    user(
        "GEX_IBV_SRQ_POOL",
        "256",
        "ibv receive (and send) buffers in the shared pool, 2 to 65536; raised to 2 per peer reached over the device, cut to what full credits would use.",
    ),
    user(
        "GEX_IBV_PEER_TIMEOUT",
        "30 (seconds)",
        "An ibv peer that answers nothing this long while a rank waits on it ends the job.",
    ),
    user(
        "GEX_IBV_SIM_FAULT",
        "none",
        "Tests: `KIND@RANK:AFTER` makes the simulated ibv device of rank RANK fail (`qp_error`, `rnr`, `access`) after AFTER sends.",
    ),
    user(
        "GEX_IBV_SIM_MAX_MSG",
        "1073741824",
        "Tests: the simulated ibv device's longest work request in bytes (65536 to 1073741824), so that transfers are split at it.",
    ),
    user(
        "GEX_RENDEZVOUS",
        "unset: found through PMIx where a PMIx server started the job",
        "`HOST:PORT` where ranks started by `mpirun`/`srun` meet (rank 0 listens there).",
    ),
    user(
        "GEX_RENDEZVOUS_TIMEOUT",
        "60 (seconds)",
        "How long ranks wait for each other at a rendezvous.",
    ),
    user(
        "GEX_EXIT_TIMEOUT",
        "2 (seconds)",
        "After a rank's exit (`gex::exit`, `gasnet_exit`, or returning from `main`), how long the other ranks may take to exit too before they are ended; read by `gex-run` (whose `--exit-grace` overrides it) and by rank 0 at a rendezvous.",
    ),
    user(
        "GEX_RUN_TIMEOUT",
        "none",
        "`gex-run`: end the job (exit code 124) after this many seconds.",
    ),
    user(
        "GEX_TEST_WAIT_SECS",
        "60",
        "Test programs: the bound on every wait of theirs.",
    ),
    user(
        "GEX_TEST_SIMNIC",
        "0",
        "test-ratomic: `1` runs it over a simulated NIC (a conduit wrapper with its own remote atomics).",
    ),
    user(
        "GEX_LEAK_KILLS",
        "20",
        "The launcher-kill test: how many jobs it kills at random moments.",
    ),
    user(
        "GEX_LEAK_SEED",
        "random (printed)",
        "The launcher-kill test: the seed of its kill moments, to replay a run.",
    ),
    user(
        "GEX_JOB_KEY",
        "a fresh random key per job",
        "The job's secret as hex text, for ranks started by hand or at a rendezvous.",
    ),
    launcher("GEX_RANK", "set by the launcher", "This process's rank."),
    launcher("GEX_SIZE", "set by the launcher", "Ranks in the job."),
    launcher(
        "GEX_CTRL",
        "set by the launcher",
        "Where a rank reaches the control plane (`fd:N` or `tcp:IP:PORT`).",
    ),
    launcher(
        "GEX_JOB_ID",
        "set by the launcher",
        "The job's identifier.",
    ),
    launcher(
        "GEX_KEY_FD",
        "set by the launcher",
        "A descriptor the job key is read from (then closed).",
    ),
    launcher(
        "GEX_HOST",
        "the machine's host name",
        "The host a rank counts as being on (ranks of one host share memory).",
    ),
    launcher(
        "GEX_HOSTS",
        "set by the launcher; else counted at a rendezvous",
        "How many distinct hosts the job spans (the udp conduit picks its address and datagram size from it).",
    ),
    test(
        "GEX_LEAK_DIR",
        "unset",
        "Where the fault-injection program records its job's identifier.",
    ),
    test(
        "GEX_LEAK_ROLE",
        "unset",
        "The launcher-kill test's role for the process it starts.",
    ),
    test(
        "GEX_LEAK_MARK",
        "unset",
        "The launcher-kill test's marker for the jobs it starts.",
    ),
    test(
        "GEX_FAKE_HOST",
        "unset",
        "The host a spawned rank pretends to be on (multi-host tests on one machine).",
    ),
    test(
        "GEX_RUN_TEST_ROLE",
        "unset",
        "gex-run's tests: the role a fake rank plays.",
    ),
    test(
        "GEX_RUN_TEST_CODE",
        "unset",
        "gex-run's tests: the exit code a fake rank returns.",
    ),
];

/// Whether `name` is a variable gex reads.
pub fn is_known(name: &str) -> bool {
    VARS.iter().any(|v| v.name == name)
}

/// The table's entry for `name`.
pub fn var(name: &str) -> Option<&'static Var> {
    VARS.iter().find(|v| v.name == name)
}

/// Where settings structs read their variables from: this process's
/// environment ([`Lookup::env`], what `from_env` constructors use), a
/// list of pairs ([`Lookup::pairs`], for tests), or any function
/// ([`Lookup::func`], for an embedder that keeps its configuration
/// elsewhere). An empty value counts as unset.
///
/// Each layer and conduit parses its own variables with
/// [`Lookup::flag`] and [`Lookup::parse`], so that a value that does not
/// parse is an error naming the variable and the value.
#[derive(Clone, Copy)]
pub struct Lookup<'a>(Src<'a>);

#[derive(Clone, Copy)]
enum Src<'a> {
    Env,
    Pairs(&'a [(&'a str, &'a str)]),
    Func(&'a dyn Fn(&str) -> Option<String>),
}

impl std::fmt::Debug for Lookup<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Src::Env => f.write_str("Lookup::env()"),
            Src::Pairs(p) => f.debug_tuple("Lookup::pairs").field(&p).finish(),
            Src::Func(_) => f.write_str("Lookup::func(..)"),
        }
    }
}

impl<'a> Lookup<'a> {
    /// This process's environment.
    pub fn env() -> Lookup<'static> {
        Lookup(Src::Env)
    }

    /// The values in `pairs` (name, value); every other variable is unset.
    pub fn pairs(pairs: &'a [(&'a str, &'a str)]) -> Lookup<'a> {
        Lookup(Src::Pairs(pairs))
    }

    /// The values `f` returns.
    pub fn func(f: &'a dyn Fn(&str) -> Option<String>) -> Lookup<'a> {
        Lookup(Src::Func(f))
    }

    /// The value of `name`, `None` when unset or empty. `name` must be in
    /// [`VARS`] (checked in debug builds), so that the table stays the one
    /// list of what gex reads.
    pub fn value(&self, name: &str) -> Option<String> {
        debug_assert!(is_known(name), "{name} is not in gex_bootstrap::vars::VARS");
        let v = match self.0 {
            Src::Env => std::env::var(name).ok(),
            Src::Pairs(p) => p
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string()),
            Src::Func(f) => f(name),
        };
        v.filter(|v| !v.is_empty())
    }

    /// A switch: `1` is on, `0` off, unset (or empty) `default`; anything
    /// else is an error naming the variable and its value.
    pub fn flag(&self, name: &str, default: bool) -> Result<bool> {
        match self.value(name).as_deref() {
            None => Ok(default),
            Some("1") => Ok(true),
            Some("0") => Ok(false),
            Some(v) => Err(Error::bad_arg(format!(
                "{name}={v:?}: expected 0 (off) or 1 (on; default {})",
                if default { "on" } else { "off" }
            ))),
        }
    }

    /// A value parsed as `T` (surrounding blanks ignored) and accepted by
    /// `ok`, `None` when unset; otherwise an error naming the variable, its
    /// value and what was `expected`.
    pub fn parse<T: std::str::FromStr>(
        &self,
        name: &str,
        expected: &str,
        ok: impl Fn(&T) -> bool,
    ) -> Result<Option<T>> {
        let Some(v) = self.value(name) else {
            return Ok(None);
        };
        match v.trim().parse::<T>() {
            Ok(t) if ok(&t) => Ok(Some(t)),
            _ => Err(Error::bad_arg(format!("{name}={v:?}: expected {expected}"))),
        }
    }
}

/// The `GEX_*` names among `names` that gex does not read, each with the
/// known name it most likely misspells (if one is close), in input order.
pub fn unknown<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Vec<(&'a str, Option<&'static str>)> {
    names
        .into_iter()
        .filter(|n| n.starts_with("GEX_") && !is_known(n))
        .map(|n| (n, closest(n)))
        .collect()
}

/// The known name within edit distance 2 of `name`, the nearest first.
fn closest(name: &str) -> Option<&'static str> {
    VARS.iter()
        .map(|v| (distance(name, v.name), v.name))
        .filter(|&(d, _)| d <= 2)
        .min()
        .map(|(_, n)| n)
}

/// Levenshtein distance (names are short).
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &y) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(x != y))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The warning for each unknown `GEX_*` variable of this process's
/// environment (see [`unknown`]).
pub fn warnings() -> Vec<String> {
    let names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .collect();
    unknown(names.iter().map(String::as_str))
        .into_iter()
        .map(|(n, near)| match near {
            Some(k) => {
                format!("gex: warning: {n} is not a gex variable (did you mean {k}?); ignored")
            }
            None => format!("gex: warning: {n} is not a gex variable; ignored"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspellings_are_named_with_the_likely_variable() {
        let got = unknown([
            "GEX_UDP_BYPAS",
            "GEX_UDP_BYPASS",
            "PATH",
            "GEX_FROB",
            "GEX_STAT",
        ]);
        assert_eq!(
            got,
            vec![
                ("GEX_UDP_BYPAS", Some("GEX_UDP_BYPASS")),
                ("GEX_FROB", None),
                ("GEX_STAT", Some("GEX_STATS")),
            ]
        );
    }

    #[test]
    fn lookups_read_flags_and_numbers_strictly() {
        let pairs = [
            ("GEX_STATS", "1"),
            ("GEX_RMA_FORCE_AM", "0"),
            ("GEX_COLL_FORCE_AM", ""),
            ("GEX_UDP_MTU", " 1500 "),
            ("GEX_UDP_WINDOW", "x"),
        ];
        let l = Lookup::pairs(&pairs);
        assert!(l.flag("GEX_STATS", false).unwrap());
        assert!(!l.flag("GEX_RMA_FORCE_AM", true).unwrap());
        // Empty and unset are the default.
        assert!(l.flag("GEX_COLL_FORCE_AM", true).unwrap());
        assert!(!l.flag("GEX_COLL_FORCE_DEFER", false).unwrap());
        assert_eq!(l.value("GEX_COLL_FORCE_AM"), None);
        assert_eq!(
            l.parse::<usize>("GEX_UDP_MTU", "bytes", |_| true).unwrap(),
            Some(1500)
        );
        assert_eq!(
            l.parse::<usize>("GEX_UDP_SPIN_US", "us", |_| true).unwrap(),
            None
        );
        let e = l.parse::<usize>("GEX_UDP_MTU", "100 or less", |&m| m <= 100);
        assert_eq!(
            e.unwrap_err().message(),
            "GEX_UDP_MTU=\" 1500 \": expected 100 or less"
        );
        let e = l.parse::<usize>("GEX_UDP_WINDOW", "a count", |_| true);
        assert!(e.unwrap_err().message().contains("GEX_UDP_WINDOW=\"x\""));
        let bad = [("GEX_STATS", "true")];
        let e = Lookup::pairs(&bad).flag("GEX_STATS", false).unwrap_err();
        assert_eq!(
            e.message(),
            "GEX_STATS=\"true\": expected 0 (off) or 1 (on; default off)"
        );
        let f = |name: &str| (name == "GEX_STATS").then(|| "1".to_string());
        assert!(Lookup::func(&f).flag("GEX_STATS", false).unwrap());
        assert_eq!(var("GEX_UDP_MTU").unwrap().name, "GEX_UDP_MTU");
        assert!(var("GEX_NOPE").is_none());
    }

    #[test]
    fn names_are_unique_and_well_formed() {
        for (i, v) in VARS.iter().enumerate() {
            assert!(v.name.starts_with("GEX_"), "{}", v.name);
            assert!(
                VARS[..i].iter().all(|w| w.name != v.name),
                "{} twice",
                v.name
            );
            assert!(!v.default.is_empty() && !v.meaning.is_empty());
        }
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    /// The README's table of variables lists exactly these, in this order,
    /// with these defaults and meanings.
    #[test]
    fn the_readme_table_matches() {
        let readme = include_str!("../../README.md");
        let rows: Vec<&str> = readme
            .lines()
            .filter(|l| l.starts_with("| `GEX_"))
            .collect();
        let want: Vec<String> = VARS.iter().map(readme_row).collect();
        assert_eq!(
            rows,
            want,
            "README.md's table of variables differs from gex_bootstrap::vars::VARS; the rows should read:\n{}",
            want.join("\n")
        );
    }

    fn readme_row(v: &Var) -> String {
        format!(
            "| `{}` | {} | {} | {} |",
            v.name,
            v.default,
            match v.set_by {
                SetBy::User => "user",
                SetBy::Launcher => "launcher",
                SetBy::Test => "tests",
            },
            v.meaning
        )
    }
}
