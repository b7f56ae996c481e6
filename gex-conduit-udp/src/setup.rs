//! Set-up: the conduit's settings (`GEX_UDP_*`) and factory, joining
//! the job (the socket and its buffers, the window, addresses and keys
//! exchanged, the progress and heartbeat threads) and attaching the
//! segment.

use std::collections::VecDeque;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use gex_bootstrap::vars::Lookup;
use gex_bootstrap::Bootstrap;
use gex_conduit::{AmSink, Conduit, ConduitFactory, Layout, PollScope, SegmentDesc};
use gex_conduit_smp::{hostname, SmpTransport};
use gex_types::{Error, Rank, Result};

use crate::liveness::{heartbeat_thread, linger_on_exit, HEARTBEAT_TICK_MAX, HEARTBEAT_TICK_MIN};
use crate::progress::{progress_thread, Link};
use crate::socket::{Net, RawAddr, Sender};
use crate::{proto, rma, UdpConduit, DEFAULT_SPIN, ENV_UDP_AUTH, INBOX_LIMIT, MAX_SLEEP};

/// The longest `GEX_UDP_PEER_TIMEOUT` accepted (one day).
const MAX_PEER_TIMEOUT_SECS: f64 = 86_400.0;

/// Parses `GEX_UDP_PEER_TIMEOUT`: seconds, finite, above zero and at most
/// one day (so that a quarter of it is a sane heartbeat period); anything
/// else is an error naming the variable.
fn parse_peer_timeout(v: &str) -> Result<Duration> {
    let secs = v
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_PEER_TIMEOUT_SECS)
        .ok_or_else(|| {
            Error::bad_arg(format!(
                "GEX_UDP_PEER_TIMEOUT={v:?}: expected seconds, more than 0 and at most {MAX_PEER_TIMEOUT_SECS}"
            ))
        })?;
    // At least a millisecond: the protocol's timers are that coarse.
    Ok(Duration::from_secs_f64(secs).max(Duration::from_millis(1)))
}

/// The udp conduit's settings. `Default` is what an empty environment
/// gives; [`UdpSettings::from_env`] reads the variables named on each field
/// (what `gex::init` does), and an embedding runtime may build the struct
/// in code and pass it to [`UdpFactory::new`] instead:
///
/// ```
/// use gex_conduit_udp::{UdpFactory, UdpSettings};
///
/// let mut settings = UdpSettings::default();
/// settings.mtu = Some(1472);
/// settings.bypass = false;
/// let factory = UdpFactory::new(settings);
/// assert_eq!(factory.settings().unwrap().mtu, Some(1472));
/// ```
///
/// Values set in code are checked when the conduit is created, with the
/// same bounds as the variables.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct UdpSettings {
    /// `GEX_UDP_BYPASS` (default on): ranks on the same host talk through
    /// shared memory; off (`0`), every peer is reached over UDP.
    pub bypass: bool,
    /// `GEX_UDP_AUTH` (default on): every datagram carries a MAC; off
    /// (`0`) only on a trusted network. Every rank must agree (checked at
    /// start-up).
    pub auth: bool,
    /// `GEX_UDP_MTU` (default `None`: 65507 when the job is on one host,
    /// else 1472): the largest datagram in bytes, 512 to 65507.
    pub mtu: Option<usize>,
    /// `GEX_UDP_WINDOW` (default `None`: sized to the receive buffers):
    /// datagrams in flight per peer and lane, 1 to 2^20.
    pub window: Option<usize>,
    /// `GEX_UDP_ADDR` (default `None`: 127.0.0.1 when the job is on one
    /// host, else the first non-loopback IPv4 address): the address this
    /// rank binds and publishes.
    pub addr: Option<String>,
    /// `GEX_HOST` (default `None`: the host name): the host this rank
    /// counts as being on; ranks of one host share memory (the bypass).
    pub host: Option<String>,
    /// `GEX_UDP_PEER_TIMEOUT` (default 30 s; more than 0, at most a day): a
    /// peer silent this long ends the job.
    pub peer_timeout: Duration,
    /// `GEX_UDP_PROGRESS_THREAD` (default off): a thread receives and
    /// acknowledges datagrams while the program computes (handlers still
    /// run only in polls).
    pub progress_thread: bool,
    /// `GEX_UDP_SPIN_US` (default 200 us): how long an idle poll spins
    /// before it may wait in the kernel (0: wait at the first empty poll).
    pub spin: Duration,
    /// `GEX_UDP_INBOX_LIMIT` (default 65536, 1 to 2^24): complete messages
    /// waiting for handlers beyond which request DATA is refused.
    pub inbox_limit: usize,
}

/// Bounds of [`UdpSettings::mtu`].
const MTU_RANGE: std::ops::RangeInclusive<usize> = 512..=65507;
/// Bounds of [`UdpSettings::window`].
const WINDOW_RANGE: std::ops::RangeInclusive<usize> = 1..=1 << 20;
/// Bounds of [`UdpSettings::inbox_limit`].
const INBOX_RANGE: std::ops::RangeInclusive<usize> = 1..=1 << 24;

impl Default for UdpSettings {
    fn default() -> UdpSettings {
        UdpSettings {
            bypass: true,
            auth: true,
            mtu: None,
            window: None,
            addr: None,
            host: None,
            peer_timeout: proto::Config::default().peer_timeout,
            progress_thread: false,
            spin: DEFAULT_SPIN,
            inbox_limit: INBOX_LIMIT,
        }
    }
}

impl UdpSettings {
    /// The settings this process's environment gives. A value that does
    /// not parse or is out of bounds is an error naming the variable and
    /// the value (`GEX_UDP_MTU="abc": expected 512 to 65507`).
    pub fn from_env() -> Result<UdpSettings> {
        Self::from_lookup(Lookup::env())
    }

    /// The settings `vars` gives (see [`UdpSettings::from_env`]).
    pub fn from_lookup(vars: Lookup<'_>) -> Result<UdpSettings> {
        let d = UdpSettings::default();
        Ok(UdpSettings {
            bypass: vars.flag("GEX_UDP_BYPASS", d.bypass)?,
            auth: match vars.value(ENV_UDP_AUTH).as_deref() {
                None | Some("1") => true,
                Some("0") => false,
                Some(v) => {
                    return Err(Error::bad_arg(format!(
                        "{ENV_UDP_AUTH}={v:?}: expected 0 (off, trusted networks only) or 1 (on, the default)"
                    )))
                }
            },
            mtu: vars.parse("GEX_UDP_MTU", "512 to 65507", |m| MTU_RANGE.contains(m))?,
            window: vars.parse(
                "GEX_UDP_WINDOW",
                &format!(
                    "datagrams in flight per peer and lane, 1 to {}",
                    WINDOW_RANGE.end()
                ),
                |w| WINDOW_RANGE.contains(w),
            )?,
            addr: vars.value("GEX_UDP_ADDR"),
            host: vars.value("GEX_HOST"),
            peer_timeout: match vars.value("GEX_UDP_PEER_TIMEOUT") {
                None => d.peer_timeout,
                Some(t) => parse_peer_timeout(&t)?,
            },
            progress_thread: vars.flag("GEX_UDP_PROGRESS_THREAD", d.progress_thread)?,
            spin: vars
                .parse::<u64>("GEX_UDP_SPIN_US", "microseconds", |_| true)?
                .map_or(d.spin, Duration::from_micros),
            inbox_limit: vars
                .parse(
                    "GEX_UDP_INBOX_LIMIT",
                    &format!("a message count from 1 to {}", INBOX_RANGE.end()),
                    |m| INBOX_RANGE.contains(m),
                )?
                .unwrap_or(d.inbox_limit),
        })
    }

    /// Checks values set in code against the bounds the variables have;
    /// the error names the field and its variable.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, var: &str, what: String| {
            Err(Error::bad_arg(format!(
                "udp conduit: UdpSettings::{field} ({var}) {what}"
            )))
        };
        if let Some(m) = self.mtu.filter(|m| !MTU_RANGE.contains(m)) {
            return bad(
                "mtu",
                "GEX_UDP_MTU",
                format!("= {m}: expected 512 to 65507"),
            );
        }
        if let Some(w) = self.window.filter(|w| !WINDOW_RANGE.contains(w)) {
            return bad(
                "window",
                "GEX_UDP_WINDOW",
                format!("= {w}: expected 1 to {}", WINDOW_RANGE.end()),
            );
        }
        if !INBOX_RANGE.contains(&self.inbox_limit) {
            return bad(
                "inbox_limit",
                "GEX_UDP_INBOX_LIMIT",
                format!(
                    "= {}: expected 1 to {}",
                    self.inbox_limit,
                    INBOX_RANGE.end()
                ),
            );
        }
        let t = self.peer_timeout.as_secs_f64();
        if !(t > 0.0 && t <= MAX_PEER_TIMEOUT_SECS) {
            return bad(
                "peer_timeout",
                "GEX_UDP_PEER_TIMEOUT",
                format!(
                    "= {:?}: expected more than 0 and at most {MAX_PEER_TIMEOUT_SECS} s",
                    self.peer_timeout
                ),
            );
        }
        Ok(())
    }
}

/// Creates the udp conduit, with the settings it was given or, by default
/// ([`UdpFactory::from_env`]), the environment's, read when the conduit is
/// created.
#[derive(Clone, Debug, Default)]
pub struct UdpFactory {
    settings: Option<UdpSettings>,
}

impl UdpFactory {
    /// A factory whose conduit reads its settings from the environment
    /// ([`UdpSettings::from_env`]) when it is created (client init).
    pub fn from_env() -> UdpFactory {
        UdpFactory { settings: None }
    }

    /// A factory whose conduit uses `settings` (nothing is read from the
    /// environment but the launcher's description of the job).
    pub fn new(settings: UdpSettings) -> UdpFactory {
        UdpFactory {
            settings: Some(settings),
        }
    }

    /// The settings given, `None` when they come from the environment.
    pub fn settings(&self) -> Option<&UdpSettings> {
        self.settings.as_ref()
    }
}

impl ConduitFactory for UdpFactory {
    fn name(&self) -> &'static str {
        "udp"
    }

    fn create(&self, boot: Bootstrap) -> Result<Box<dyn Conduit>> {
        let conduit = match &self.settings {
            Some(s) => UdpConduit::with_settings(boot, s)?,
            None => UdpConduit::new(boot)?,
        };
        Ok(Box::new(conduit))
    }
}

/// The window (DATA datagrams in flight per peer and lane) that keeps every
/// receiver's socket buffer from overflowing when all its UDP peers send
/// on both lanes at once, as in an all-to-all flood: the smallest
/// per-sender, per-lane share of five eighths of a receive buffer (the
/// kernel charges a datagram more than its payload: an 8 MiB buffer holds
/// about 120 datagrams of 64 KiB), in datagrams of `max_datagram` bytes,
/// from 4 to `most`. `rcvbuf[r]` is rank r's receive buffer as the kernel
/// granted it and `remote[r]` how many ranks reach r over UDP. A window
/// past what the buffer holds only turns into drops and retransmissions:
/// 256 in flight from each of 3 peers lost a quarter of them, and with 2
/// ranks a flood of 64 KiB messages lost a quarter of its datagrams too.
fn window_for(rcvbuf: &[usize], remote: &[usize], max_datagram: usize, most: usize) -> usize {
    let share = rcvbuf
        .iter()
        .zip(remote)
        .filter(|(_, &peers)| peers > 0)
        .map(|(&buf, &peers)| buf / 8 * 5 / (2 * peers))
        .min();
    match share {
        None => most,
        Some(bytes) => (bytes / max_datagram.max(1)).clamp(4, most.max(4)),
    }
}

/// The size the kernel gave a socket buffer (`opt`), in bytes.
pub(crate) fn get_buffer(sock: &UdpSocket, opt: libc::c_int) -> usize {
    use std::os::fd::AsRawFd;
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt on a socket we own, into a c_int whose size we
    // pass; on failure v stays 0.
    unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            &mut v as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        );
    }
    v.max(0) as usize
}

pub(crate) fn set_buffer(sock: &UdpSocket, opt: libc::c_int, bytes: libc::c_int) {
    use std::os::fd::AsRawFd;
    // SAFETY: setsockopt on a socket we own, with a pointer to a c_int of
    // the size we pass; failure only leaves the default buffer size.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            &bytes as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

impl UdpConduit {
    /// Joins the job with the environment's settings
    /// ([`UdpSettings::from_env`]); see [`UdpConduit::with_settings`].
    pub fn new(boot: Bootstrap) -> Result<UdpConduit> {
        Self::with_settings(boot, &UdpSettings::from_env()?)
    }

    /// Joins the job: opens the socket, learns every rank's address and
    /// host, builds the shared-memory transport for this rank's
    /// neighbourhood. Collective over the job. `settings` are checked
    /// first ([`UdpSettings::validate`]); the number of hosts (which picks
    /// the default address and datagram size) is the bootstrap's
    /// ([`Bootstrap::hosts`]).
    pub fn with_settings(boot: Bootstrap, settings: &UdpSettings) -> Result<UdpConduit> {
        settings.validate()?;
        let me = boot.rank();
        let n = boot.size();
        let bypass = settings.bypass;
        // The job's secret: from the launcher (or the rendezvous), never
        // from this process's environment; a job of one rank makes one up.
        let key = match boot.job_key() {
            Some(k) => proto::key_from_text(k.as_bytes()),
            None if boot.has_launcher() => {
                return Err(Error::not_init(
                    "the udp conduit needs the job key, but the launcher gave none",
                ))
            }
            None => gex_bootstrap::os::random::random_bytes::<32>(),
        };
        let auth = settings.auth;
        let mut cfg = proto::Config {
            key,
            auth,
            peer_timeout: settings.peer_timeout.max(Duration::from_millis(1)),
            ..proto::Config::default()
        };
        let multi_host = boot.hosts().is_some_and(|h| h > 1);
        // On one host every datagram crosses loopback, where the largest
        // datagrams cost the fewest system calls; between hosts, stay
        // within an Ethernet MTU.
        if !multi_host {
            cfg.max_datagram = 65507;
        }
        if let Some(m) = settings.mtu {
            cfg.max_datagram = m;
        }

        let cfg_timeout = cfg.peer_timeout;
        let inbox_limit = settings.inbox_limit;
        let host_ip = match &settings.addr {
            Some(a) => a.clone(),
            None if multi_host => gex_bootstrap::os::net::first_ipv4()
                .map(|ip| ip.to_string())
                .ok_or_else(|| {
                    Error::resource("udp conduit: no IPv4 address to publish; set GEX_UDP_ADDR")
                })?,
            None => "127.0.0.1".to_string(),
        };
        let sock = UdpSocket::bind((host_ip.as_str(), 0))
            .map_err(|e| Error::resource(format!("udp conduit: cannot bind {host_ip}: {e}")))?;
        // Blocking, with a read timeout: ordinary receives pass
        // MSG_DONTWAIT, an idle poll waits in the kernel for at most this.
        sock.set_read_timeout(Some(MAX_SLEEP))
            .map_err(|e| Error::resource(format!("udp conduit: {e}")))?;
        set_buffer(&sock, libc::SO_RCVBUF, 8 << 20);
        set_buffer(&sock, libc::SO_SNDBUF, 8 << 20);
        // What the kernel granted (capped by net.core.rmem_max): the
        // window is sized so that the job's senders cannot overflow it.
        let rcvbuf = get_buffer(&sock, libc::SO_RCVBUF);
        let window_override = settings.window;
        let addr = sock
            .local_addr()
            .map_err(|e| Error::resource(format!("udp conduit: {e}")))?;

        // The host identity: the launcher's name for the host when it
        // placed ranks on several (network namespaces on one machine share a
        // hostname, yet must not be grouped into one neighbourhood), else
        // the hostname.
        let host_name = settings.host.clone().unwrap_or_else(hostname);
        // Every rank's setting of GEX_UDP_AUTH travels with its address:
        // ranks that disagree could not talk, so they fail together here.
        // Its receive buffer too, for sizing the window (see below).
        let mine = format!("{host_name}\n{addr}\n{}\n{rcvbuf}", u8::from(auth));
        let all = boot.exchange(mine.as_bytes(), &mut || {})?;
        let mut hosts: Vec<String> = Vec::with_capacity(all.len());
        let mut addrs = Vec::with_capacity(all.len());
        let mut rcvbufs = Vec::with_capacity(all.len());
        for (r, a) in all.iter().enumerate() {
            let s = String::from_utf8_lossy(a);
            let mut fields = s.splitn(4, '\n');
            let (Some(h), Some(ad), Some(their_auth), Some(Ok(their_rcvbuf))) = (
                fields.next(),
                fields.next(),
                fields.next(),
                fields.next().map(str::parse::<usize>),
            ) else {
                return Err(Error::resource(format!(
                    "udp conduit: rank {r} sent a malformed address"
                )));
            };
            rcvbufs.push(their_rcvbuf);
            if their_auth != u8::from(auth).to_string() {
                return Err(Error::bad_arg(format!(
                    "udp conduit: datagram authentication is {} on rank {me} but {} on rank {r}: \
                     set {ENV_UDP_AUTH} the same for every rank (0 off, 1 on, the default)",
                    if auth { "on" } else { "off" },
                    if auth { "off" } else { "on" },
                )));
            }
            hosts.push(h.to_string());
            addrs.push(ad.parse::<SocketAddr>().map_err(|_| {
                Error::resource(format!("udp conduit: rank {r} has a bad address {ad:?}"))
            })?);
        }
        let my_host = &hosts[me as usize];
        let host: Vec<Rank> = (0..n).filter(|&r| &hosts[r as usize] == my_host).collect();
        let mut distinct: Vec<&String> = Vec::new();
        for h in &hosts {
            if !distinct.contains(&h) {
                distinct.push(h);
            }
        }
        let host_set = (
            distinct.len() as Rank,
            distinct.iter().position(|h| *h == my_host).unwrap_or(0) as Rank,
        );
        let (nbrhd, nbrhd_set) = if bypass {
            (host.clone(), host_set)
        } else {
            (vec![me], (n, me))
        };
        cfg.window = window_override.unwrap_or_else(|| {
            let remote: Vec<usize> = (0..n as usize)
                .map(|r| {
                    if bypass {
                        hosts.iter().filter(|h| **h != hosts[r]).count()
                    } else {
                        n as usize - 1
                    }
                })
                .collect();
            window_for(&rcvbufs, &remote, cfg.max_datagram, cfg.window)
        });
        let smp = SmpTransport::new(&boot, &nbrhd)?;
        let spin = settings.spin;
        let conduit = UdpConduit {
            idle_polls: AtomicU32::new(0),
            idle_since: AtomicU64::new(0),
            epoch: Instant::now(),
            spin,
            layout: Layout::new(nbrhd, host, nbrhd_set, host_set),
            me,
            smp,
            link: Arc::new(Link {
                fd: std::os::fd::AsRawFd::as_raw_fd(&sock),
                net: Mutex::new(Net {
                    ep: proto::Endpoint::new(me, n, cfg),
                    sock,
                    addrs: addrs.iter().map(RawAddr::new).collect(),
                    senders: (0..n).map(|_| Sender::Untried).collect(),
                    connected: 0,
                    peer_addrs: addrs,
                    tx: Vec::with_capacity(65536),
                    rx: vec![0u8; 65536],
                    next_timer_check: Instant::now(),
                    polls_since_timers: 0,
                }),
                inbox: Mutex::new(VecDeque::new()),
                segment: OnceLock::new(),
                ops: rma::Ops::default(),
                inbox_len: AtomicUsize::new(0),
                inbox_bytes: AtomicUsize::new(0),
                stop: AtomicBool::new(false),
                app_polls: AtomicU64::new(0),
                inbox_limit,
            }),
            delivering: AtomicBool::new(false),
            boot,
        };
        // A rank that ends stays long enough to acknowledge its peers' last
        // datagrams and get its own acknowledged (see `Link::linger`).
        linger_on_exit(&conduit.link);
        let tick = (cfg_timeout / 8).clamp(HEARTBEAT_TICK_MIN, HEARTBEAT_TICK_MAX);
        {
            let mut net = conduit.link.net.lock().unwrap_or_else(|p| p.into_inner());
            net.ep.start_keepalive(Instant::now());
        }
        let link = conduit.link.clone();
        std::thread::Builder::new()
            .name("gex-udp-heartbeat".into())
            .spawn(move || heartbeat_thread(link, tick))
            .map_err(|e| Error::resource(format!("udp conduit: heartbeat thread: {e}")))?;
        if settings.progress_thread {
            let link = conduit.link.clone();
            std::thread::Builder::new()
                .name("gex-udp-progress".into())
                .spawn(move || progress_thread(link))
                .map_err(|e| Error::resource(format!("udp conduit: progress thread: {e}")))?;
        }
        Ok(conduit)
    }

    /// `Conduit::attach_segment`: the smp segment, whose local mapping is
    /// where Long payloads and puts land.
    pub(crate) fn attach(&self, size: usize, sink: &dyn AmSink) -> Result<Vec<SegmentDesc>> {
        let table = self.smp.attach_segment(&self.boot, size, &mut || {
            self.poll(sink, PollScope::All);
        })?;
        let mine = table[self.me as usize];
        let base = mine
            .local_base
            .ok_or_else(|| Error::resource("udp conduit: the local segment is not mapped"))?;
        let _ = self.link.segment.set((base, mine.size));
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn window_keeps_every_receive_buffer_from_overflowing() {
        let b = 8 << 20;
        // 2 ranks: 2.5 MiB per lane, 40 datagrams of 64 KiB.
        assert_eq!(super::window_for(&[b, b], &[1, 1], 65507, 256), 40);
        // 3 ranks: 1.25 MiB per sender and lane.
        assert_eq!(super::window_for(&[b; 3], &[2; 3], 65507, 256), 20);
        // 4 ranks: the receivers' 3 peers share it.
        assert_eq!(super::window_for(&[b; 4], &[3; 4], 65507, 256), 13);
        // The smallest receiver decides; a rank nobody reaches over UDP
        // (everyone on its host, with the bypass) does not.
        assert_eq!(
            super::window_for(&[b, 208 << 10, b], &[2, 2, 0], 65507, 256),
            4
        );
        assert_eq!(
            super::window_for(&[b, 1 << 30, b], &[2, 0, 2], 1472, 256),
            256
        );
        // Nobody over UDP: the configured window.
        assert_eq!(super::window_for(&[b], &[0], 65507, 256), 256);
    }

    use super::*;

    #[test]
    fn peer_timeout_is_parsed_strictly() {
        assert_eq!(parse_peer_timeout("2").unwrap(), Duration::from_secs(2));
        assert_eq!(
            parse_peer_timeout(" 0.5 ").unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(
            parse_peer_timeout("86400").unwrap(),
            Duration::from_secs(86400)
        );
        for bad in [
            "inf", "-inf", "NaN", "infinity", "0", "-1", "", "abc", "1e300", "86401", "2s",
        ] {
            let e = parse_peer_timeout(bad).expect_err(bad);
            assert!(e.message().contains("GEX_UDP_PEER_TIMEOUT"), "{bad:?}: {e}");
        }
    }

    fn settings(pairs: &[(&str, &str)]) -> gex_types::Result<UdpSettings> {
        UdpSettings::from_lookup(Lookup::pairs(pairs))
    }

    /// Every variable lands in its field; unset (or empty) ones keep the
    /// default.
    #[test]
    fn settings_are_read_from_the_variables() {
        assert_eq!(settings(&[]).unwrap(), UdpSettings::default());
        assert_eq!(
            settings(&[("GEX_UDP_MTU", ""), ("GEX_UDP_BYPASS", "")]).unwrap(),
            UdpSettings::default()
        );
        let s = settings(&[
            ("GEX_UDP_BYPASS", "0"),
            ("GEX_UDP_AUTH", "0"),
            ("GEX_UDP_MTU", "1472"),
            ("GEX_UDP_WINDOW", "16"),
            ("GEX_UDP_ADDR", "10.0.0.7"),
            ("GEX_HOST", "node3"),
            ("GEX_UDP_PEER_TIMEOUT", "2.5"),
            ("GEX_UDP_PROGRESS_THREAD", "1"),
            ("GEX_UDP_SPIN_US", "0"),
            ("GEX_UDP_INBOX_LIMIT", "8"),
        ])
        .unwrap();
        let want = UdpSettings {
            bypass: false,
            auth: false,
            mtu: Some(1472),
            window: Some(16),
            addr: Some("10.0.0.7".into()),
            host: Some("node3".into()),
            peer_timeout: Duration::from_millis(2500),
            progress_thread: true,
            spin: Duration::ZERO,
            inbox_limit: 8,
        };
        assert_eq!(s, want);
        assert!(want.validate().is_ok());
    }

    /// A value that does not parse, or is out of bounds, is an error naming
    /// the variable and the value.
    #[test]
    fn bad_values_are_errors_naming_the_variable_and_value() {
        for (var, bad) in [
            ("GEX_UDP_MTU", "abc"),
            ("GEX_UDP_MTU", "511"),
            ("GEX_UDP_MTU", "65508"),
            ("GEX_UDP_WINDOW", "0"),
            ("GEX_UDP_WINDOW", "many"),
            ("GEX_UDP_PEER_TIMEOUT", "inf"),
            ("GEX_UDP_PEER_TIMEOUT", "0"),
            ("GEX_UDP_SPIN_US", "-1"),
            ("GEX_UDP_INBOX_LIMIT", "0"),
            ("GEX_UDP_INBOX_LIMIT", "16777217"),
            ("GEX_UDP_BYPASS", "no"),
            ("GEX_UDP_AUTH", "off"),
            ("GEX_UDP_PROGRESS_THREAD", "yes"),
        ] {
            let e = settings(&[(var, bad)]).expect_err(bad);
            let want = format!("{var}={bad:?}");
            assert!(e.message().contains(&want), "{var}={bad}: {e}");
        }
    }

    /// Values set in code meet the variables' bounds when the conduit is
    /// created; the error names the field and its variable.
    #[test]
    fn settings_made_in_code_are_checked() {
        let d = UdpSettings::default;
        let cases = [
            (
                UdpSettings {
                    mtu: Some(100),
                    ..d()
                },
                "mtu (GEX_UDP_MTU) = 100",
            ),
            (
                UdpSettings {
                    window: Some(0),
                    ..d()
                },
                "window (GEX_UDP_WINDOW) = 0",
            ),
            (
                UdpSettings {
                    inbox_limit: 0,
                    ..d()
                },
                "inbox_limit (GEX_UDP_INBOX_LIMIT) = 0",
            ),
            (
                UdpSettings {
                    peer_timeout: Duration::ZERO,
                    ..d()
                },
                "peer_timeout (GEX_UDP_PEER_TIMEOUT) = 0ns",
            ),
        ];
        for (s, want) in cases {
            let e = s.validate().unwrap_err();
            assert!(e.message().contains(want), "{want}: {e}");
        }
        // A factory built from settings keeps them; one from the
        // environment has none until it creates its conduit.
        let s = UdpSettings {
            mtu: Some(600),
            ..d()
        };
        assert_eq!(UdpFactory::new(s.clone()).settings(), Some(&s));
        assert_eq!(UdpFactory::from_env().settings(), None);
    }

    /// The defaults are the ones the table of variables (and so the README)
    /// gives.
    #[test]
    fn defaults_match_the_table_of_variables() {
        let d = UdpSettings::default();
        let table = |name: &str| gex_bootstrap::vars::var(name).unwrap().default;
        let on_off = |b: bool| if b { "on" } else { "off" };
        assert_eq!(table("GEX_UDP_BYPASS"), on_off(d.bypass));
        assert_eq!(table("GEX_UDP_AUTH"), on_off(d.auth));
        assert_eq!(table("GEX_UDP_PROGRESS_THREAD"), on_off(d.progress_thread));
        assert_eq!(
            table("GEX_UDP_PEER_TIMEOUT"),
            format!("{} (seconds)", d.peer_timeout.as_secs())
        );
        assert_eq!(table("GEX_UDP_SPIN_US"), d.spin.as_micros().to_string());
        assert_eq!(table("GEX_UDP_INBOX_LIMIT"), d.inbox_limit.to_string());
        assert_eq!(d.mtu, None);
        assert_eq!(table("GEX_UDP_MTU"), "65507 on one host, else 1472");
        assert_eq!(d.window, None);
        assert_eq!(d.addr, None);
        assert_eq!(d.host, None);
    }
}
