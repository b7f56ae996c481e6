//! The start-up control plane's wire format, shared by ranks and the
//! launcher (`gex-run`).
//!
//! Every frame is `len: u32 LE` (bytes that follow), `kind: u8`, then a
//! kind-specific body. A rank connects to the launcher's control socket (a
//! Unix socket path, or `tcp:IP:PORT`: see [`CtrlAddr`]), sends `Hello`, and
//! from then on each frame it sends is answered (or not) as described on
//! [`Kind`].
//!
//! The same protocol is served by the small coordinator that rank 0 runs
//! when the job was started by another launcher (Slurm's `srun`, `mpirun`)
//! and the ranks meet at [`ENV_RENDEZVOUS`]; that coordinator also uses
//! [`Kind::Bye`] and [`Kind::End`], which `gex-run` has no need for (it sees
//! its ranks' processes end, and kills them itself).

use std::io::{self, Read, Write};

/// Largest frame accepted (exchange payloads are small: addresses, names).
pub const MAX_FRAME: usize = 64 << 20;

/// Environment variable: this process's rank in the job.
pub const ENV_RANK: &str = "GEX_RANK";
/// Environment variable: number of ranks in the job.
pub const ENV_SIZE: &str = "GEX_SIZE";
/// Environment variable: where the launcher's control plane is (see
/// [`CtrlAddr`]): `fd:N:PID`, an inherited connected socket (ranks
/// `gex-run` starts on its own machine), or `tcp:IP:PORT`.
pub const ENV_CTRL: &str = "GEX_CTRL";
/// Environment variable: the job's identifier, unique on the host; it
/// prefixes every shared-memory object of the job (`/dev/shm/gex-<id>-...`).
pub const ENV_JOB_ID: &str = "GEX_JOB_ID";
/// Environment variable: the job's secret key, as an explicit opt-in only:
/// `gex-run` never sets it (it hands the key over through [`ENV_KEY_FD`]);
/// at a rendezvous (srun, mpirun) rank 0 uses it when set, and then only
/// accepts connections that present it. Network conduits derive their
/// datagram authentication key from the job key, which never goes on the
/// wire. Use 64 random hex digits (`openssl rand -hex 32`).
pub const ENV_JOB_KEY: &str = "GEX_JOB_KEY";
/// Environment variable set by `gex-run`: the number of an inherited file
/// descriptor from which the rank reads the job key, one line, once, at
/// bootstrap (then closes it). `0` means the first line of standard input
/// (ranks started through a spawner such as ssh): it is read byte by byte
/// up to the newline, so nothing after it is consumed. The key itself is
/// never in an environment or on a command line.
pub const ENV_KEY_FD: &str = "GEX_KEY_FD";
/// Environment variable: the conduit chosen by the launcher (`smp`, ...).
pub const ENV_CONDUIT: &str = "GEX_CONDUIT";
/// Environment variable: the launcher's name for the host a rank runs on
/// (set by `gex-run --hosts`; network conduits group ranks by it).
pub const ENV_HOST: &str = "GEX_HOST";
/// Environment variable: the number of hosts the job's ranks run on (set by
/// `gex-run --hosts`, and by the rendezvous bootstrap).
pub const ENV_HOSTS: &str = "GEX_HOSTS";
/// Environment variable: `IP:PORT` where the ranks of a job started by
/// another launcher (srun, mpirun) meet: rank 0 listens there and serves
/// the control plane, the others connect.
pub const ENV_RENDEZVOUS: &str = "GEX_RENDEZVOUS";
/// Environment variable: seconds a rank keeps trying to reach the
/// rendezvous before it gives up (default 60).
pub const ENV_RENDEZVOUS_TIMEOUT: &str = "GEX_RENDEZVOUS_TIMEOUT";

/// Environment variable: seconds the other ranks may take to exit after a
/// rank's exit (default [`EXIT_GRACE`]; see [`crate::exit_timeout`]).
pub const ENV_EXIT_TIMEOUT: &str = "GEX_EXIT_TIMEOUT";

/// How long the other ranks of a job may keep running after one rank's
/// exit before they are ended, as GASNet's exit timeout: after a rank
/// called exit, the others that call exit too (or end) within it finish on
/// their own, with their output, and the job's code is the first exit's;
/// after a rank exited with code 0 (returned from `main`), the job ends
/// with that code if the others still run after it. Ranks that finish a
/// job together exit well within it; a rank that leaves early while a peer
/// waits for it (a reply it will never send) no longer hangs the job.
/// `GEX_EXIT_TIMEOUT` and `gex-run --exit-grace` change it.
pub const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Where a rank reaches the control plane: the value of [`ENV_CTRL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CtrlAddr {
    /// A connected Unix socket the launcher passed down, written
    /// `fd:N:PID`: descriptor `N` of the rank process, one end of a socket
    /// pair the launcher (process `PID`) made for this rank alone. No
    /// address exists that another process could connect to, nor any file
    /// to leave behind. The rank checks the socket's peer credentials: the
    /// other end must belong to process `PID` of the same user.
    Fd {
        /// The descriptor number.
        fd: i32,
        /// The launcher's process id.
        pid: u32,
    },
    /// A Unix socket path (a plain path, or `unix:PATH`).
    Unix(std::path::PathBuf),
    /// A TCP address, written `tcp:IP:PORT` (`tcp:[V6]:PORT` for IPv6).
    Tcp(std::net::SocketAddr),
}

impl CtrlAddr {
    /// Parses a [`ENV_CTRL`] value.
    pub fn parse(s: &str) -> Option<CtrlAddr> {
        if let Some(addr) = s.strip_prefix("tcp:") {
            return addr.parse().ok().map(CtrlAddr::Tcp);
        }
        if let Some(rest) = s.strip_prefix("fd:") {
            let (fd, pid) = rest.split_once(':')?;
            let fd = fd.parse().ok().filter(|&n: &i32| n >= 0)?;
            return Some(CtrlAddr::Fd {
                fd,
                pid: pid.parse().ok()?,
            });
        }
        let path = s.strip_prefix("unix:").unwrap_or(s);
        (!path.is_empty()).then(|| CtrlAddr::Unix(path.into()))
    }
}

impl std::fmt::Display for CtrlAddr {
    /// The [`ENV_CTRL`] form: the path, or `tcp:IP:PORT`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CtrlAddr::Fd { fd, pid } => write!(f, "fd:{fd}:{pid}"),
            CtrlAddr::Unix(p) => write!(f, "{}", p.display()),
            CtrlAddr::Tcp(a) => write!(f, "tcp:{a}"),
        }
    }
}

/// The prefix of the name of every shared-memory object of job `job_id`
/// (`gex_core::shm`: nameless memfds, so the name shows only in
/// `/proc/<pid>/fd` links, never in `/dev/shm`).
pub fn shm_prefix(job_id: &str) -> String {
    format!("gex-{job_id}-")
}

/// Frame kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// rank -> coordinator, the rank's first frame, the answer to
    /// [`Kind::Challenge`]: `rank: u32, pid: u32, nonce: [u8; 16]`, then,
    /// when the challenge asked for one, `proof: [u8; 32]`
    /// ([`hello_proof`]: a MAC over both nonces, the rank and the pid under
    /// a key derived from the job key; the key itself never travels).
    Hello = 1,
    /// rank -> launcher: this rank's contribution to the next all-gather
    /// (any bytes; empty for a barrier). Rounds are implicit: the k-th
    /// `Exchange` of every rank belongs to round k.
    Exchange = 2,
    /// launcher -> rank: the result of a round: `count: u32`, then per rank
    /// in rank order `len: u32` and the bytes.
    ExchangeResult = 3,
    /// rank -> launcher: end the whole job with `code: i32` (gasnet_exit).
    /// The launcher answers `ExitAck` and then ends every other rank.
    Exit = 4,
    /// launcher -> rank: the exit code was recorded; the rank may exit.
    ExitAck = 5,
    /// launcher -> rank: the job is ending, or a collective cannot complete;
    /// body is a UTF-8 message.
    Abort = 6,
    /// rank -> rendezvous coordinator: this process is exiting with
    /// `code: i32` (sent from an exit hook; a rank whose connection closes
    /// without `Bye` or `Exit` died).
    Bye = 7,
    /// rendezvous coordinator -> rank: the job ended with `code: i32`
    /// (followed by a UTF-8 reason): the rank's process exits with that
    /// code at once.
    End = 8,
    /// coordinator -> rank, the first frame on every connection:
    /// `version: u8` ([`HANDSHAKE_VERSION`]), `flags: u8` (bit 0: a proof
    /// of the job key is required), `nonce: [u8; 16]` (fresh for this
    /// connection, so that a recorded `Hello` is worth nothing).
    Challenge = 9,
    /// coordinator -> rank: the `Hello` was accepted; body: the
    /// coordinator's own proof ([`welcome_proof`]) when a key is in use,
    /// else empty. From here on the connection carries the frames above.
    Welcome = 10,
}

impl Kind {
    /// Decodes a kind byte.
    pub fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Hello,
            2 => Kind::Exchange,
            3 => Kind::ExchangeResult,
            4 => Kind::Exit,
            5 => Kind::ExitAck,
            6 => Kind::Abort,
            7 => Kind::Bye,
            8 => Kind::End,
            9 => Kind::Challenge,
            10 => Kind::Welcome,
            _ => return None,
        })
    }
}

/// Writes one frame.
pub fn write_frame(w: &mut impl Write, kind: Kind, body: &[u8]) -> io::Result<()> {
    let len = u32::try_from(body.len() + 1)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    let mut buf = Vec::with_capacity(5 + body.len());
    buf.extend_from_slice(&len.to_le_bytes());
    buf.push(kind as u8);
    buf.extend_from_slice(body);
    w.write_all(&buf)?;
    w.flush()
}

/// Reads one frame (blocking).
pub fn read_frame(r: &mut impl Read) -> io::Result<(Kind, Vec<u8>)> {
    read_frame_max(r, MAX_FRAME)
}

/// Reads one frame of at most `max` bytes (blocking).
pub fn read_frame_max(r: &mut impl Read, max: usize) -> io::Result<(Kind, Vec<u8>)> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len == 0 || len > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bad control frame length {len}"),
        ));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    let kind = Kind::from_u8(body[0]).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unknown control frame kind {}", body[0]),
        )
    })?;
    body.remove(0);
    Ok((kind, body))
}

/// Largest frame a coordinator reads from a connection that has not
/// authenticated yet (a `Hello` is 57 bytes): a stranger cannot make it
/// buffer more than this.
pub const PRE_AUTH_MAX_FRAME: usize = 128;

/// The handshake's version byte in [`Kind::Challenge`].
pub const HANDSHAKE_VERSION: u8 = 1;

/// Length of the handshake nonces.
pub const NONCE_LEN: usize = 16;

/// Length of a handshake proof.
pub const PROOF_LEN: usize = 32;

/// A decoded [`Kind::Challenge`] body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// Whether the `Hello` must carry a proof of the job key.
    pub key_required: bool,
    /// The coordinator's nonce for this connection.
    pub nonce: [u8; NONCE_LEN],
}

/// Encodes a [`Kind::Challenge`] body.
pub fn challenge_body(c: &Challenge) -> Vec<u8> {
    let mut b = vec![HANDSHAKE_VERSION, u8::from(c.key_required)];
    b.extend_from_slice(&c.nonce);
    b
}

/// Decodes a [`Kind::Challenge`] body (`None`: malformed or another
/// version).
pub fn parse_challenge(body: &[u8]) -> Option<Challenge> {
    if body.len() != 2 + NONCE_LEN || body[0] != HANDSHAKE_VERSION || body[1] > 1 {
        return None;
    }
    Some(Challenge {
        key_required: body[1] == 1,
        nonce: body[2..].try_into().ok()?,
    })
}

/// A decoded `Hello` body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// The rank the process claims to be.
    pub rank: u32,
    /// Its process id (on its host).
    pub pid: u32,
    /// The rank's nonce.
    pub nonce: [u8; NONCE_LEN],
    /// Its proof of the job key ([`hello_proof`]), if it sent one.
    pub proof: Option<[u8; PROOF_LEN]>,
}

/// Encodes a `Hello` body.
pub fn hello_body(h: &Hello) -> Vec<u8> {
    let mut b = h.rank.to_le_bytes().to_vec();
    b.extend_from_slice(&h.pid.to_le_bytes());
    b.extend_from_slice(&h.nonce);
    if let Some(p) = &h.proof {
        b.extend_from_slice(p);
    }
    b
}

/// Decodes a `Hello` body.
pub fn parse_hello(body: &[u8]) -> Option<Hello> {
    const BASE: usize = 8 + NONCE_LEN;
    if body.len() != BASE && body.len() != BASE + PROOF_LEN {
        return None;
    }
    Some(Hello {
        rank: u32::from_le_bytes(body[0..4].try_into().ok()?),
        pid: u32::from_le_bytes(body[4..8].try_into().ok()?),
        nonce: body[8..BASE].try_into().ok()?,
        proof: if body.len() > BASE {
            Some(body[BASE..].try_into().ok()?)
        } else {
            None
        },
    })
}

/// What both proofs of a handshake cover: the two nonces, the rank and the
/// pid the rank claimed.
fn transcript(server: &[u8; NONCE_LEN], hello: &Hello) -> Vec<u8> {
    let mut t = Vec::with_capacity(2 * NONCE_LEN + 8);
    t.extend_from_slice(server);
    t.extend_from_slice(&hello.nonce);
    t.extend_from_slice(&hello.rank.to_le_bytes());
    t.extend_from_slice(&hello.pid.to_le_bytes());
    t
}

fn proof(context: &str, key: &str, server: &[u8; NONCE_LEN], hello: &Hello) -> [u8; PROOF_LEN] {
    let k = blake3::derive_key(context, key.as_bytes());
    *blake3::keyed_hash(&k, &transcript(server, hello)).as_bytes()
}

/// The rank's proof that it knows `key`, for the coordinator's nonce
/// `server` and the rest of `hello` (its `proof` field is ignored).
pub fn hello_proof(key: &str, server: &[u8; NONCE_LEN], hello: &Hello) -> [u8; PROOF_LEN] {
    proof("gex control plane 2026 hello v1", key, server, hello)
}

/// The coordinator's proof that it knows `key` too, sent in
/// [`Kind::Welcome`] (another derived key: a rank's proof cannot be
/// reflected back as the coordinator's).
pub fn welcome_proof(key: &str, server: &[u8; NONCE_LEN], hello: &Hello) -> [u8; PROOF_LEN] {
    proof("gex control plane 2026 welcome v1", key, server, hello)
}

/// Compares two keys in time independent of where they differ.
pub fn keys_match(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// How an `Abort` that drops a connection during the handshake starts when
/// the connection did nothing wrong (the coordinator had too many waiting,
/// or it took too long): the rank may connect again.
pub const RETRY_PREFIX: &str = "try again: ";

/// The error for an `Abort` during the handshake: `ConnectionAborted` when
/// it says to try again ([`RETRY_PREFIX`]), else `PermissionDenied`.
fn refused(body: &[u8]) -> io::Error {
    let text = String::from_utf8_lossy(body).into_owned();
    let kind = if text.starts_with(RETRY_PREFIX) {
        io::ErrorKind::ConnectionAborted
    } else {
        io::ErrorKind::PermissionDenied
    };
    io::Error::new(kind, text)
}

/// The rank side of the handshake, on a blocking stream: reads the
/// [`Kind::Challenge`], sends the `Hello` for `rank` (with a proof when
/// asked, which needs `key`), and reads the [`Kind::Welcome`], checking the
/// coordinator's proof. An `Abort` instead is an error carrying its text.
pub fn rank_handshake<S: Read + Write>(
    stream: &mut S,
    rank: u32,
    pid: u32,
    key: Option<&str>,
    nonce: [u8; NONCE_LEN],
) -> io::Result<()> {
    let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let (kind, body) = read_frame_max(stream, PRE_AUTH_MAX_FRAME)?;
    let ch = match kind {
        Kind::Challenge => parse_challenge(&body).ok_or_else(|| {
            bad("the control plane's challenge is malformed (another gex version?)".into())
        })?,
        Kind::Abort => return Err(refused(&body)),
        k => {
            return Err(bad(format!(
                "the control plane sent {k:?} before its challenge"
            )))
        }
    };
    let mut hello = Hello {
        rank,
        pid,
        nonce,
        proof: None,
    };
    if ch.key_required {
        let key = key.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                "the control plane requires the job key, and this process has none",
            )
        })?;
        hello.proof = Some(hello_proof(key, &ch.nonce, &hello));
    }
    write_frame(stream, Kind::Hello, &hello_body(&hello))?;
    let (kind, body) = read_frame(stream)?;
    match kind {
        Kind::Welcome => {}
        Kind::Abort => return Err(refused(&body)),
        Kind::End => {
            let text = parse_code_body(&body).map(|(_, r)| r).unwrap_or_default();
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, text));
        }
        k => return Err(bad(format!("the control plane answered Hello with {k:?}"))),
    }
    if let (true, Some(key)) = (ch.key_required, key) {
        let want = welcome_proof(key, &ch.nonce, &hello);
        if !keys_match(&body, &want) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "the control plane did not prove that it knows the job key",
            ));
        }
    }
    Ok(())
}

/// The reason of an `Exit` from a fatal error ([`crate::fatal`]): the job
/// ends at once, as an abort ends the reference's, instead of waiting for
/// the other ranks to exit too.
pub const EXIT_FATAL: &str = "fatal";

/// Encodes an `Exit`, `Bye` or `End` body: the code, then an optional
/// reason.
pub fn code_body(code: i32, reason: &str) -> Vec<u8> {
    let mut b = code.to_le_bytes().to_vec();
    b.extend_from_slice(reason.as_bytes());
    b
}

/// Decodes a body made by [`code_body`] into (code, reason).
pub fn parse_code_body(body: &[u8]) -> Option<(i32, String)> {
    let code = i32::from_le_bytes(body.get(..4)?.try_into().ok()?);
    Some((code, String::from_utf8_lossy(&body[4..]).into_owned()))
}

/// Encodes an `ExchangeResult` body from every rank's contribution.
pub fn encode_exchange_result<P: AsRef<[u8]>>(parts: &[P]) -> Vec<u8> {
    let total: usize = parts.iter().map(|p| p.as_ref().len() + 4).sum();
    let mut b = Vec::with_capacity(4 + total);
    b.extend_from_slice(&(parts.len() as u32).to_le_bytes());
    for p in parts {
        let p = p.as_ref();
        b.extend_from_slice(&(p.len() as u32).to_le_bytes());
        b.extend_from_slice(p);
    }
    b
}

/// Decodes an `ExchangeResult` body.
pub fn decode_exchange_result(body: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let s = body.get(at..at.checked_add(n)?)?;
        at += n;
        Some(s)
    };
    let count = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
    let mut parts = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        parts.push(take(len)?.to_vec());
    }
    if at != body.len() {
        return None;
    }
    Some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn frame_round_trip() {
        let mut buf = Vec::new();
        write_frame(&mut buf, Kind::Exit, &7i32.to_le_bytes()).unwrap();
        let (k, b) = read_frame(&mut &buf[..]).unwrap();
        assert_eq!(k, Kind::Exit);
        assert_eq!(b, 7i32.to_le_bytes());
    }

    #[test]
    fn hello_with_and_without_key() {
        let mut h = Hello {
            rank: 3,
            pid: 42,
            nonce: [5; NONCE_LEN],
            proof: None,
        };
        assert_eq!(parse_hello(&hello_body(&h)), Some(h.clone()));
        let server = [6; NONCE_LEN];
        h.proof = Some(hello_proof("k", &server, &h));
        assert_eq!(parse_hello(&hello_body(&h)), Some(h.clone()));
        assert!(parse_hello(&[1, 2, 3]).is_none());
        assert!(parse_hello(&hello_body(&h)[..30]).is_none());
        // Proofs depend on the key, both nonces, the rank and the pid, and
        // the two directions differ.
        let p = hello_proof("k", &server, &h);
        assert_ne!(p, hello_proof("K", &server, &h));
        assert_ne!(p, hello_proof("k", &[7; NONCE_LEN], &h));
        assert_ne!(p, welcome_proof("k", &server, &h));
        for change in [
            |h: &mut Hello| h.rank += 1,
            |h: &mut Hello| h.pid += 1,
            |h: &mut Hello| h.nonce[0] ^= 1,
        ] {
            let mut other = h.clone();
            change(&mut other);
            assert_ne!(p, hello_proof("k", &server, &other));
        }
        let c = Challenge {
            key_required: true,
            nonce: server,
        };
        assert_eq!(parse_challenge(&challenge_body(&c)), Some(c));
        assert!(parse_challenge(&[2, 1]).is_none());
        assert!(keys_match(b"abc", b"abc"));
        assert!(!keys_match(b"abc", b"abd"));
        assert!(!keys_match(b"abc", b"ab"));
        assert_eq!(
            parse_code_body(&code_body(-3, "why")),
            Some((-3, "why".into()))
        );
        assert_eq!(parse_code_body(&code_body(5, "")), Some((5, String::new())));
        assert!(parse_code_body(&[1, 2]).is_none());
    }

    #[test]
    fn control_addresses() {
        assert_eq!(
            CtrlAddr::parse("/tmp/x.sock"),
            Some(CtrlAddr::Unix("/tmp/x.sock".into()))
        );
        assert_eq!(
            CtrlAddr::parse("unix:/tmp/x.sock"),
            Some(CtrlAddr::Unix("/tmp/x.sock".into()))
        );
        let tcp = CtrlAddr::parse("tcp:10.0.0.1:4000").unwrap();
        assert_eq!(tcp, CtrlAddr::Tcp("10.0.0.1:4000".parse().unwrap()));
        assert_eq!(tcp.to_string(), "tcp:10.0.0.1:4000");
        assert_eq!(
            CtrlAddr::parse("tcp:[::1]:9").unwrap().to_string(),
            "tcp:[::1]:9"
        );
        assert_eq!(CtrlAddr::parse("tcp:nohost"), None);
        let fd = CtrlAddr::Fd { fd: 5, pid: 77 };
        assert_eq!(CtrlAddr::parse("fd:5:77"), Some(fd.clone()));
        assert_eq!(fd.to_string(), "fd:5:77");
        assert_eq!(CtrlAddr::parse("fd:5"), None);
        assert_eq!(CtrlAddr::parse("fd:-1:77"), None);
        assert_eq!(CtrlAddr::parse("fd:x:77"), None);
        assert_eq!(CtrlAddr::parse("fd:5:"), None);
        assert_eq!(CtrlAddr::parse(""), None);
    }

    #[test]
    fn bad_frames_are_rejected() {
        assert!(read_frame(&mut &[0u8, 0, 0, 0][..]).is_err());
        assert!(read_frame(&mut &[1u8, 0, 0, 0, 99][..]).is_err());
        assert!(read_frame(&mut &[5u8, 0, 0, 0, 2][..]).is_err());
    }

    proptest! {
        #[test]
        fn exchange_result_round_trip(parts in proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 0..40), 0..9)) {
            let enc = encode_exchange_result(&parts);
            prop_assert_eq!(decode_exchange_result(&enc), Some(parts));
        }

        #[test]
        fn exchange_result_decoder_never_panics(body in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_exchange_result(&body);
        }
    }
}
