//! The job's coordinator as a state machine that does no I/O.
//!
//! One coordinator serves every job's start-up control plane: `gex-run`'s
//! (which also sees its ranks' processes end, and kills them) and the one
//! rank 0 serves at a rendezvous under srun or mpirun (which learns how a
//! rank ends from the rank itself, and ends ranks by telling them). The
//! I/O shells ([`crate::serve`] for connections and timers, `gex-run` for
//! processes) feed it what happened — a connection, a frame, a hang-up, a
//! process's end, a signal, the time — and carry out the [`Action`]s it
//! queues. Everything it decides is here, and testable without sockets.
//!
//! # Rules
//!
//! * **Handshake.** Every connection first gets a [`Kind::Challenge`] with a
//!   fresh nonce; the only frame accepted before authentication is one
//!   `Hello` of at most [`wire::PRE_AUTH_MAX_FRAME`] bytes, proving the job
//!   key when the job has one ([`wire::hello_proof`]), naming a rank of the
//!   job not yet taken (and, on a rank's inherited connection, that rank).
//!   Anything else drops that connection, never the job: a stranger cannot
//!   end it. At most `max_pending` connections may be unauthenticated at
//!   once (a new one evicts the oldest), and each has `handshake_timeout`
//!   (a rank's inherited socket has neither limit: nobody else holds it).
//! * **Exchange.** The k-th `Exchange` of every rank belongs to round k; a
//!   round completes when every rank contributed, and its result (one
//!   buffer, shared) goes to every rank: N frames in, N out.
//! * **Ending.** The first `Exit` from any rank decides the job's code, and
//!   the job ends collectively, as GASNet's exit does: the other ranks get
//!   the exit grace (`GEX_EXIT_TIMEOUT`) to call exit too, or end, on
//!   their own, flushing their output; those still running after it are
//!   ended (killed, or sent `End`). A rank waiting in a start-up collective
//!   then (which can no longer complete), or starting one, is sent `End`
//!   at once: it ends itself with the job's code. A non-zero code is
//!   reported, naming the rank. A rank that ends non-zero or by a signal
//!   ends the job with its code (128 + signal) at once; a rank that ends
//!   while others wait in a collective it never joined ends it with code 1
//!   (the waiters get `Abort`); a rank that ends with 0 while others still
//!   run ends it with 0 after the exit grace. An `Exit` for a fatal error
//!   ([`wire::EXIT_FATAL`]) ends the others at once, as an abort would.
//!   Ranks spared (those that called exit, the aborted waiters) get the end
//!   grace to finish on their own.
//!
//! [`Mode::Launcher`] and [`Mode::Rendezvous`] differ only where they must:
//! a launcher hears of a rank's end from its process ([`Coordinator::rank_ended`])
//! and ends a rank with [`Action::Kill`]; at a rendezvous a rank says how it
//! ends (`Exit`, `Bye`), a connection lost without that is a rank that
//! died, and a rank is ended with an `End` frame.
//!
//!
//! Not protected: frames are not encrypted or authenticated after the
//! handshake, so someone who can rewrite a TCP stream between a remote rank
//! and the launcher can still disturb the job (the udp conduit's datagrams
//! carry their own MACs). A rendezvous without `GEX_JOB_KEY` has no key to
//! prove: any process that reaches the port first may pose as a rank.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::wire::{self, Challenge, Kind, NONCE_LEN};

/// Identifies one connection (ranks are known only after `Hello`).
pub type ConnId = u64;

/// How the coordinator learns that ranks end, and ends them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `gex-run`: it started the processes, sees them end and kills them.
    Launcher,
    /// Rank 0 at a rendezvous: ranks report their end over their
    /// connection; ranks are ended with `End` frames.
    Rendezvous,
}

/// The coordinator's settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Ranks in the job.
    pub size: usize,
    /// Launcher or rendezvous.
    pub mode: Mode,
    /// The job key: when set, every `Hello` must prove it.
    pub key: Option<String>,
    /// How long the other ranks may still run after a rank's exit before
    /// they are ended: after the first `Exit`, for the others to call exit
    /// too (or end); after a rank ended with 0, for the others to end
    /// ([`wire::EXIT_GRACE`]; `GEX_EXIT_TIMEOUT`, see
    /// [`crate::exit_timeout`]).
    pub exit_grace: Duration,
    /// How long spared ranks may take to finish once the job is ending.
    pub end_grace: Duration,
    /// The job's time limit (launcher), if any.
    pub timeout: Option<Duration>,
    /// Most connections that may be unauthenticated at once.
    pub max_pending: usize,
    /// How long a connection may take to authenticate.
    pub handshake_timeout: Duration,
}

impl Config {
    /// Defaults for a job of `size` ranks.
    pub fn new(size: usize, mode: Mode, key: Option<String>) -> Config {
        Config {
            size,
            mode,
            key,
            exit_grace: wire::EXIT_GRACE,
            end_grace: END_GRACE,
            timeout: None,
            max_pending: MAX_PENDING,
            handshake_timeout: HANDSHAKE_TIMEOUT,
        }
    }
}

/// Default of [`Config::end_grace`].
pub const END_GRACE: Duration = Duration::from_secs(10);
/// Default of [`Config::max_pending`].
pub const MAX_PENDING: usize = 256;
/// Default of [`Config::handshake_timeout`].
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// Messages about dropped strangers printed before they are only counted.
const STRANGER_MESSAGES: u64 = 10;

/// Where a connection comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A rank's own inherited socket: it may only say `Hello` as `rank`.
    Inherited {
        /// The rank it was made for.
        rank: u32,
    },
    /// Accepted from the network (anyone may connect).
    Network {
        /// The peer's address, for messages.
        peer: String,
    },
}

/// How a rank's process ended, as its launcher saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
}

/// What the shell must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Write a frame to a connection (in order with the others).
    Send {
        /// The connection.
        conn: ConnId,
        /// Frame kind.
        kind: Kind,
        /// Frame body (shared between the ranks that get the same one).
        body: Bytes,
    },
    /// The connection authenticated: lift its frame cap to
    /// [`wire::MAX_FRAME`] and read on.
    Authenticated {
        /// The connection.
        conn: ConnId,
    },
    /// Close the connection once the frames queued for it are written
    /// (bounded), and forget it: the coordinator already has.
    Close {
        /// The connection.
        conn: ConnId,
    },
    /// Kill rank `rank`'s processes ([`Mode::Launcher`] only).
    Kill {
        /// The rank.
        rank: u32,
    },
    /// Print a message (the shell adds its prefix and the newline).
    Message(String),
}

/// How a rank left the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Left {
    /// Its process ended (launcher) or it said `Bye` (rendezvous).
    Ended(Ended),
    /// It called exit (rendezvous: it sent `Exit`).
    Exit,
    /// Its connection closed without `Exit` or `Bye` (rendezvous).
    Lost,
}

#[derive(Clone, Debug, Default)]
struct RankState {
    conn: Option<ConnId>,
    /// `Exchange` frames sent: the next one joins that round.
    contributed: usize,
    left: Option<Left>,
    /// It said `Hello` once (a second one, on any connection, is refused).
    joined: bool,
    /// Its connection closed after it had joined.
    closed: bool,
    /// Left to finish on its own while the job ends.
    spared: bool,
    /// It sent `Exit`.
    exiting: bool,
    /// The job is ending by another rank's exit: it may still call exit,
    /// or end, on its own until the exit grace is over.
    awaited: bool,
}

#[derive(Clone, Debug)]
struct ConnState {
    origin: Origin,
    /// Set by its accepted `Hello`.
    rank: Option<usize>,
    nonce: [u8; NONCE_LEN],
    since: Instant,
}

impl ConnState {
    /// From the network and not authenticated (a rank's own inherited
    /// socket is no stranger: only it holds the other end, and a program
    /// that is not a gex rank may never speak on it).
    fn is_stranger(&self) -> bool {
        self.rank.is_none() && matches!(self.origin, Origin::Network { .. })
    }

    fn peer(&self) -> String {
        match &self.origin {
            Origin::Inherited { rank } => format!("rank {rank}'s own socket"),
            Origin::Network { peer } => peer.clone(),
        }
    }
}

/// The outcome of a job, once decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The job's exit code.
    pub code: i32,
    /// Why (for messages).
    pub reason: String,
    /// Whether it was the job's time limit.
    pub timed_out: bool,
}

/// The coordinator (see the module docs).
#[derive(Debug)]
pub struct Coordinator {
    cfg: Config,
    ranks: Vec<RankState>,
    conns: HashMap<ConnId, ConnState>,
    /// Open exchange rounds: contributions by rank.
    rounds: BTreeMap<usize, Vec<Option<Bytes>>>,
    /// Rounds completed (they complete in order).
    completed: usize,
    deadline: Option<Instant>,
    /// When the spared ranks' grace ends.
    grace: Option<Instant>,
    /// When the ranks awaited after an `Exit` are ended.
    exit_wait: Option<Instant>,
    /// The job is ending because a rank called exit.
    by_exit: bool,
    /// The first rank that ended with 0 while others ran, and when.
    early_exit: Option<(usize, Instant)>,
    /// Set once the job is ending: when, and its outcome.
    ending: Option<(Instant, Outcome)>,
    actions: Vec<Action>,
    stranger_drops: u64,
}

impl Coordinator {
    /// A coordinator for a job starting at `now`.
    pub fn new(cfg: Config, now: Instant) -> Coordinator {
        Coordinator {
            ranks: vec![RankState::default(); cfg.size],
            conns: HashMap::new(),
            rounds: BTreeMap::new(),
            completed: 0,
            deadline: cfg.timeout.map(|t| now + t),
            grace: None,
            exit_wait: None,
            by_exit: false,
            early_exit: None,
            ending: None,
            actions: Vec::new(),
            stranger_drops: 0,
            cfg,
        }
    }

    /// The actions queued since the last call, in order.
    pub fn take_actions(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.actions)
    }

    /// The job's outcome, once it is ending.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.ending.as_ref().map(|(_, o)| o)
    }

    /// When the job started to end.
    pub fn ending_since(&self) -> Option<Instant> {
        self.ending.as_ref().map(|(t, _)| *t)
    }

    /// Whether every rank has left ([`Mode::Launcher`]: every process ended).
    pub fn all_left(&self) -> bool {
        self.ranks.iter().all(|r| r.left.is_some())
    }

    /// Whether every rank but 0 has joined and its connection has closed
    /// (at a rendezvous, rank 0's exit waits for this).
    pub fn others_gone(&self) -> bool {
        self.ranks.iter().skip(1).all(|r| r.closed)
    }

    /// Connections not yet authenticated.
    pub fn pending(&self) -> usize {
        self.conns.values().filter(|c| c.rank.is_none()).count()
    }

    /// Connections dropped for not belonging to the job.
    pub fn stranger_drops(&self) -> u64 {
        self.stranger_drops
    }

    /// The next instant at which [`Coordinator::tick`] has work.
    pub fn next_deadline(&self) -> Option<Instant> {
        let live = self.ending.is_none();
        let handshake = self
            .conns
            .values()
            .filter(|c| c.is_stranger())
            .map(|c| c.since + self.cfg.handshake_timeout)
            .min();
        [
            self.deadline.filter(|_| live),
            self.early_exit.filter(|_| live).map(|e| e.1),
            self.exit_wait,
            self.grace,
            handshake,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn send(&mut self, conn: ConnId, kind: Kind, body: impl Into<Bytes>) {
        self.actions.push(Action::Send {
            conn,
            kind,
            body: body.into(),
        });
    }

    fn send_rank(&mut self, rank: usize, kind: Kind, body: impl Into<Bytes>) {
        if let Some(conn) = self.ranks[rank].conn {
            self.send(conn, kind, body);
        }
    }

    fn message(&mut self, msg: String) {
        self.actions.push(Action::Message(msg));
    }

    fn alive(&self) -> usize {
        self.ranks.iter().filter(|r| r.left.is_none()).count()
    }

    fn reason(&self) -> &str {
        self.ending.as_ref().map_or("", |(_, o)| o.reason.as_str())
    }

    // Inputs.

    /// A connection was made. `nonce` must be fresh and unpredictable
    /// (the shell draws it from the kernel).
    pub fn connected(
        &mut self,
        conn: ConnId,
        origin: Origin,
        nonce: [u8; NONCE_LEN],
        now: Instant,
    ) {
        let strangers = self.conns.values().filter(|c| c.is_stranger()).count();
        if matches!(origin, Origin::Network { .. }) && strangers >= self.cfg.max_pending {
            let n = self.cfg.max_pending;
            self.evict(&format!(
                "{n} connections were waiting to authenticate; this was the oldest"
            ));
        }
        self.conns.insert(
            conn,
            ConnState {
                origin,
                rank: None,
                nonce,
                since: now,
            },
        );
        let ch = Challenge {
            key_required: self.cfg.key.is_some(),
            nonce,
        };
        self.send(conn, Kind::Challenge, wire::challenge_body(&ch));
    }

    /// Drops the oldest connection from the network that has not
    /// authenticated (the shell ran out of descriptors). False if there is
    /// none.
    pub fn evict_oldest_pending(&mut self, now: Instant) -> bool {
        let _ = now;
        self.evict(
            "the coordinator ran out of file descriptors; this was the oldest waiting to \
             authenticate",
        )
    }

    fn evict(&mut self, why: &str) -> bool {
        let oldest = self
            .conns
            .iter()
            .filter(|(_, c)| c.is_stranger())
            .min_by_key(|(id, c)| (c.since, **id))
            .map(|(id, _)| *id);
        match oldest {
            Some(old) => {
                self.drop_waiting(old, why);
                true
            }
            None => false,
        }
    }

    /// Drops a connection that did not authenticate.
    fn drop_stranger(&mut self, conn: ConnId, why: &str) {
        self.drop_unauthenticated(conn, why, "");
    }

    /// Drops a connection that did nothing wrong but waited too long, or
    /// too many waited: a rank may connect again ([`wire::RETRY_PREFIX`]).
    fn drop_waiting(&mut self, conn: ConnId, why: &str) {
        self.drop_unauthenticated(conn, why, wire::RETRY_PREFIX);
    }

    fn drop_unauthenticated(&mut self, conn: ConnId, why: &str, prefix: &str) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        self.stranger_drops += 1;
        if self.stranger_drops <= STRANGER_MESSAGES {
            let more = if self.stranger_drops == STRANGER_MESSAGES {
                " (further drops are counted, not reported)"
            } else {
                ""
            };
            self.message(format!(
                "dropped a control connection from {}: {why}{more}",
                c.peer()
            ));
        }
        // Telling a stranger why reveals nothing secret, and tells a rank
        // that was misconfigured what to fix.
        let abort = format!("{prefix}the control plane dropped this connection: {why}");
        self.send(conn, Kind::Abort, abort.into_bytes());
        self.actions.push(Action::Close { conn });
    }

    /// Drops an authenticated rank's connection after a protocol error:
    /// the rank is told why; the job goes on (the rank's end decides).
    fn drop_rank_conn(&mut self, conn: ConnId, why: String, now: Instant) {
        self.message(why.clone());
        self.send(
            conn,
            Kind::Abort,
            format!("the control plane dropped this rank: {why}"),
        );
        self.actions.push(Action::Close { conn });
        self.forget(conn, now);
    }

    /// A whole frame (`data`: the kind byte, then the body) arrived.
    pub fn frame(&mut self, conn: ConnId, data: Bytes, now: Instant) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let kind = data.first().copied().and_then(Kind::from_u8);
        let body = if data.is_empty() {
            data
        } else {
            data.slice(1..)
        };
        let Some(rank) = c.rank else {
            return match kind {
                Some(Kind::Hello) => self.on_hello(conn, &body, now),
                Some(k) => {
                    self.drop_stranger(conn, &format!("its first frame was {k:?}, not Hello"))
                }
                None => self.drop_stranger(conn, "its first frame was not a control frame"),
            };
        };
        let Some(kind) = kind else {
            return self.drop_rank_conn(
                conn,
                format!("rank {rank} sent an unknown frame kind"),
                now,
            );
        };
        match kind {
            Kind::Exchange if self.ending.is_some() && self.by_exit => {
                // The job ends by exit: the rank ends itself with its code.
                let body = self.end_body();
                self.send(conn, Kind::End, body);
            }
            Kind::Exchange if self.ending.is_some() => {
                let why = format!("the job is ending: {}", self.reason());
                self.send(conn, Kind::Abort, why.into_bytes());
            }
            Kind::Exchange => self.on_exchange(rank, body, now),
            Kind::Exit => self.on_exit(conn, rank, &body, now),
            Kind::Bye if self.cfg.mode == Mode::Rendezvous => self.on_bye(conn, rank, &body, now),
            // A launcher sees the process end; a rank's exit hook only
            // speaks at a rendezvous.
            Kind::Bye => {}
            Kind::Hello => self.drop_rank_conn(conn, format!("rank {rank} sent Hello twice"), now),
            other => self.drop_rank_conn(
                conn,
                format!("rank {rank} sent a {other:?} frame, which only the coordinator sends"),
                now,
            ),
        }
    }

    fn on_hello(&mut self, conn: ConnId, body: &[u8], now: Instant) {
        let Some(hello) = wire::parse_hello(body) else {
            return self.drop_stranger(conn, "malformed Hello");
        };
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let server_nonce = c.nonce;
        let origin = c.origin.clone();
        let welcome = match &self.cfg.key {
            Some(key) => {
                let ok = hello.proof.is_some_and(|p| {
                    wire::keys_match(&p, &wire::hello_proof(key, &server_nonce, &hello))
                });
                if !ok {
                    let what = if hello.proof.is_some() {
                        "a wrong"
                    } else {
                        "no"
                    };
                    return self.drop_stranger(
                        conn,
                        &format!(
                            "its Hello (as rank {}) carried {what} proof of the job key",
                            hello.rank
                        ),
                    );
                }
                wire::welcome_proof(key, &server_nonce, &hello).to_vec()
            }
            None => Vec::new(),
        };
        let n = self.ranks.len();
        let r = hello.rank as usize;
        if r >= n {
            return self.drop_stranger(
                conn,
                &format!("it said Hello as rank {r}, but the job has {n} ranks"),
            );
        }
        if let Origin::Inherited { rank } = origin {
            if rank as usize != r {
                return self.drop_stranger(
                    conn,
                    &format!("it said Hello as rank {r} on the socket made for rank {rank}"),
                );
            }
        }
        if self.ranks[r].joined {
            return self.drop_stranger(conn, &format!("rank {r} had already said Hello"));
        }
        self.ranks[r].joined = true;
        self.ranks[r].conn = Some(conn);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.rank = Some(r);
        }
        self.actions.push(Action::Authenticated { conn });
        self.send(conn, Kind::Welcome, welcome);
        if let Some((_, o)) = &self.ending {
            // Too late: the job is ending.
            if self.cfg.mode == Mode::Rendezvous || self.by_exit {
                let body = wire::code_body(o.code, &o.reason);
                self.send(conn, Kind::End, body);
            } else {
                let why = format!("the job is ending: {}", o.reason);
                self.send(conn, Kind::Abort, why.into_bytes());
            }
        }
        let _ = now;
    }

    fn on_exchange(&mut self, rank: usize, body: Bytes, now: Instant) {
        let n = self.ranks.len();
        let k = self.ranks[rank].contributed;
        self.ranks[rank].contributed += 1;
        let round = self.rounds.entry(k).or_insert_with(|| vec![None; n]);
        round[rank] = Some(body);
        if round.iter().all(Option::is_some) {
            // Every rank contributed to k, hence to every earlier round.
            let parts: Vec<Bytes> = self
                .rounds
                .remove(&k)
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .collect();
            self.completed = k + 1;
            let size: usize = parts.iter().map(|p| p.len() + 4).sum::<usize>() + 4;
            if size >= wire::MAX_FRAME {
                return self.fail(
                    1,
                    format!(
                        "the result of start-up exchange round {k} is {size} bytes, over the \
                         control plane's {}-byte frame limit",
                        wire::MAX_FRAME
                    ),
                    now,
                );
            }
            let result = Bytes::from(wire::encode_exchange_result(&parts));
            for r in 0..n {
                self.send_rank(r, Kind::ExchangeResult, result.clone());
            }
        }
        self.check_stuck(None, now);
    }

    fn on_exit(&mut self, conn: ConnId, rank: usize, body: &[u8], now: Instant) {
        let Some((code, why)) = wire::parse_code_body(body) else {
            return self.drop_rank_conn(
                conn,
                format!(
                    "malformed Exit frame from rank {rank} ({} bytes)",
                    body.len()
                ),
                now,
            );
        };
        self.send(conn, Kind::ExitAck, Bytes::new());
        self.ranks[rank].exiting = true;
        if self.cfg.mode == Mode::Rendezvous && self.ranks[rank].left.is_none() {
            self.ranks[rank].left = Some(Left::Exit);
        }
        if self.ending.is_none() && why == wire::EXIT_FATAL {
            // A fatal error ends the others at once, as an abort would.
            let msg = format!("rank {rank} ended the job with a fatal error (code {code})");
            self.fail_sparing(code, msg, rank, now);
        } else if self.ending.is_none() {
            let why = format!("rank {rank} called exit with code {code}");
            if code != 0 {
                self.message(why.clone());
            }
            self.end_by_exit(code, why, rank, now);
        } else {
            self.joined_exit(rank, now);
        }
    }

    /// The first `Exit` (from `caller`) ends the job with `code`,
    /// collectively: every other rank still running may call exit too, or
    /// end, within the exit grace; the caller is spared for the end grace.
    /// A rank waiting in a start-up collective, which can no longer
    /// complete, is sent `End` at once.
    fn end_by_exit(&mut self, code: i32, reason: String, caller: usize, now: Instant) {
        self.ending = Some((
            now,
            Outcome {
                code,
                reason,
                timed_out: false,
            },
        ));
        self.by_exit = true;
        let end_body = self.end_body();
        let mut awaited = false;
        for r in 0..self.ranks.len() {
            if self.ranks[r].left.is_some() {
                continue;
            }
            if r == caller {
                self.ranks[r].spared = true;
                continue;
            }
            self.ranks[r].awaited = true;
            awaited = true;
            if self.ranks[r].contributed > self.completed {
                self.send_rank(r, Kind::End, end_body.clone());
            }
        }
        let bounded = |t: Instant, d: Option<Instant>| d.map_or(t, |d| d.min(t));
        let wait = now + self.cfg.exit_grace;
        self.exit_wait = awaited.then(|| match self.cfg.mode {
            Mode::Launcher => bounded(wait, self.deadline),
            Mode::Rendezvous => wait,
        });
        self.grace = match self.cfg.mode {
            Mode::Launcher if self.ranks[caller].spared && self.ranks[caller].left.is_none() => {
                Some(bounded(now + self.cfg.end_grace, self.deadline))
            }
            Mode::Launcher => None,
            // Connections still open after the awaited ranks were told to
            // end, and their end grace, are closed.
            Mode::Rendezvous => Some(wait + self.cfg.end_grace),
        };
    }

    /// Rank `rank` called exit once the job was already ending: if it was
    /// awaited it has joined the exit, and is spared for the end grace.
    fn joined_exit(&mut self, rank: usize, now: Instant) {
        let st = &mut self.ranks[rank];
        if !st.awaited {
            return;
        }
        st.awaited = false;
        if self.cfg.mode == Mode::Launcher && st.left.is_none() {
            st.spared = true;
            let until = now + self.cfg.end_grace;
            let until = self.deadline.map_or(until, |d| d.min(until));
            self.grace = Some(self.grace.map_or(until, |g| g.max(until)));
        }
        self.settle_exit_wait();
    }

    /// Forgets the exit wait once no awaited rank still runs.
    fn settle_exit_wait(&mut self) {
        if self.exit_wait.is_some() && !self.ranks.iter().any(|s| s.awaited && s.left.is_none()) {
            self.exit_wait = None;
        }
    }

    /// The exit grace is over: the awaited ranks still running, which did
    /// not call exit, are ended (killed, or sent `End`).
    fn end_awaited(&mut self) {
        let body = self.end_body();
        for r in 0..self.ranks.len() {
            let st = &mut self.ranks[r];
            if !st.awaited || st.left.is_some() {
                continue;
            }
            st.awaited = false;
            match self.cfg.mode {
                Mode::Launcher => self.actions.push(Action::Kill { rank: r as u32 }),
                Mode::Rendezvous => self.send_rank(r, Kind::End, body.clone()),
            }
        }
    }

    /// The body of the `End` frame of the job's outcome.
    fn end_body(&self) -> Bytes {
        self.ending.as_ref().map_or_else(Bytes::new, |(_, o)| {
            Bytes::from(wire::code_body(o.code, &o.reason))
        })
    }

    fn on_bye(&mut self, conn: ConnId, rank: usize, body: &[u8], now: Instant) {
        let Some((code, _)) = wire::parse_code_body(body) else {
            return self.drop_rank_conn(
                conn,
                format!(
                    "malformed Bye frame from rank {rank} ({} bytes)",
                    body.len()
                ),
                now,
            );
        };
        if self.ranks[rank].left.is_some() {
            return;
        }
        self.left(rank, Left::Ended(Ended::Code(code)), now);
    }

    /// A connection ended: cleanly (`error: None`) or with a malformed or
    /// truncated frame.
    pub fn closed(&mut self, conn: ConnId, error: Option<String>, now: Instant) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        match (c.rank, error) {
            (None, Some(e)) => return self.drop_stranger(conn, &format!("malformed frame: {e}")),
            (Some(r), Some(e)) => {
                self.message(format!("malformed control frame from rank {r}: {e}"))
            }
            _ => {}
        }
        self.forget(conn, now);
    }

    /// Forgets a connection; at a rendezvous, a rank that loses its
    /// connection without saying how it ends has died.
    fn forget(&mut self, conn: ConnId, now: Instant) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        let Some(r) = c.rank else { return };
        self.ranks[r].conn = None;
        self.ranks[r].closed = true;
        if self.cfg.mode != Mode::Rendezvous {
            return;
        }
        if self.ranks[r].left.is_none() {
            self.ranks[r].left = Some(Left::Lost);
            self.end(
                1,
                format!(
                    "rank {r} lost its connection to the rendezvous without exiting (killed by a \
                     signal?)"
                ),
                &[],
                now,
            );
        } else {
            self.check_stuck(Some(r), now);
        }
    }

    /// Rank `rank`'s process ended ([`Mode::Launcher`]).
    pub fn rank_ended(&mut self, rank: u32, how: Ended, now: Instant) {
        let r = rank as usize;
        if r >= self.ranks.len() || self.ranks[r].left.is_some() {
            return;
        }
        self.left(r, Left::Ended(how), now);
    }

    fn left(&mut self, r: usize, how: Left, now: Instant) {
        self.ranks[r].left = Some(how);
        if self.ending.is_some() {
            // Whatever happens once the job's fate is decided does not
            // count; the grace ends when no spared rank is left, the exit
            // wait when no awaited one is.
            if self.grace.is_some() && !self.ranks.iter().any(|s| s.spared && s.left.is_none()) {
                self.grace = None;
            }
            self.settle_exit_wait();
            return;
        }
        match how {
            Left::Ended(Ended::Signal(s)) => self.fail(
                128 + s,
                format!("rank {r} killed by signal {s} ({})", signal_name(s)),
                now,
            ),
            Left::Ended(Ended::Code(c)) if c != 0 => {
                self.fail_sparing(c, format!("rank {r} exited with code {c}"), r, now)
            }
            _ => {
                self.check_stuck(Some(r), now);
                // A rank that joined and leaves while others run ends the
                // job after the exit grace, as in GASNet.
                if self.ending.is_none()
                    && self.early_exit.is_none()
                    && self.ranks[r].joined
                    && self.alive() > 0
                {
                    self.early_exit = Some((r, now + self.cfg.exit_grace));
                }
            }
        }
    }

    /// The launcher got signal `sig` (SIGINT, SIGTERM).
    pub fn signal(&mut self, sig: i32, now: Instant) {
        let name = signal_name(sig);
        if self.ending.is_some() {
            // Asked again while ranks finish on their own: stop waiting.
            self.grace = None;
            self.exit_wait = None;
            self.end_awaited();
            self.expire_spared(&format!("still running at {name}"));
            return;
        }
        let alive = self.alive();
        self.fail(
            128 + sig,
            format!("received {name}; ending {alive} ranks"),
            now,
        );
    }

    /// Ends the job with `code` for a reason outside the protocol (a shell
    /// failure), printing `msg`.
    pub fn fail(&mut self, code: i32, msg: String, now: Instant) {
        if self.ending.is_some() {
            return;
        }
        self.message(msg.clone());
        self.end(code, msg, &[], now);
    }

    fn fail_sparing(&mut self, code: i32, msg: String, spare: usize, now: Instant) {
        if self.ending.is_some() {
            return;
        }
        self.message(msg.clone());
        self.end(code, msg, &[spare], now);
    }

    /// Handles every deadline that has passed at `now`.
    pub fn tick(&mut self, now: Instant) {
        let expired: Vec<ConnId> = self
            .conns
            .iter()
            .filter(|(_, c)| c.is_stranger() && now >= c.since + self.cfg.handshake_timeout)
            .map(|(id, _)| *id)
            .collect();
        for conn in expired {
            let secs = self.cfg.handshake_timeout.as_secs_f64();
            self.drop_waiting(conn, &format!("it did not authenticate within {secs} s"));
        }
        if self.ending.is_none() && self.deadline.is_some_and(|d| now >= d) {
            let secs = self.cfg.timeout.map(fmt_secs).unwrap_or_default();
            let alive = self.alive();
            self.fail(
                TIMEOUT_CODE,
                format!("job timed out after {secs} s; ending {alive} ranks"),
                now,
            );
            if let Some((_, o)) = &mut self.ending {
                o.timed_out = true;
            }
        }
        if let (None, Some((first, t))) = (&self.ending, self.early_exit) {
            if now >= t {
                self.on_early_exit(first, now);
            }
        }
        if self.exit_wait.is_some_and(|t| now >= t) {
            self.exit_wait = None;
            self.end_awaited();
        }
        if self.grace.is_some_and(|g| now >= g) {
            self.grace = None;
            self.expire_spared("did not exit within the grace period");
        }
    }

    fn on_early_exit(&mut self, first: usize, now: Instant) {
        let running: Vec<usize> = (0..self.ranks.len())
            .filter(|&r| self.ranks[r].left.is_none())
            .collect();
        if running.is_empty() {
            return;
        }
        self.fail(
            0,
            format!(
                "rank {first} exited with code 0 while ranks {running:?} still ran {} s later; \
                 a rank's exit ends the job",
                fmt_secs(self.cfg.exit_grace)
            ),
            now,
        );
    }

    /// The end grace is over: ranks still running are ended by force.
    fn expire_spared(&mut self, why: &str) {
        match self.cfg.mode {
            Mode::Launcher => {
                for r in 0..self.ranks.len() {
                    if self.ranks[r].spared && self.ranks[r].left.is_none() {
                        self.message(format!("rank {r} {why}; killing it"));
                        self.actions.push(Action::Kill { rank: r as u32 });
                        self.ranks[r].spared = false;
                    }
                }
            }
            Mode::Rendezvous => {
                // Rank 0 hosts this coordinator; the others lose their
                // connection, which ends them.
                for r in 1..self.ranks.len() {
                    if let Some(conn) = self.ranks[r].conn {
                        self.actions.push(Action::Close { conn });
                        self.conns.remove(&conn);
                        self.ranks[r].conn = None;
                        self.ranks[r].closed = true;
                    }
                }
            }
        }
    }

    /// Ends the job (once) with `code`: every rank still running except
    /// those in `spare` is ended now; the spared get the end grace.
    fn end(&mut self, code: i32, reason: String, spare: &[usize], now: Instant) {
        if self.ending.is_some() {
            return;
        }
        self.ending = Some((
            now,
            Outcome {
                code,
                reason: reason.clone(),
                timed_out: false,
            },
        ));
        let end_body = Bytes::from(wire::code_body(code, &reason));
        for r in 0..self.ranks.len() {
            if self.ranks[r].left.is_some() {
                continue;
            }
            if spare.contains(&r) {
                self.ranks[r].spared = true;
                continue;
            }
            match self.cfg.mode {
                Mode::Launcher => self.actions.push(Action::Kill { rank: r as u32 }),
                Mode::Rendezvous => self.send_rank(r, Kind::End, end_body.clone()),
            }
        }
        let grace = now + self.cfg.end_grace;
        self.grace = match self.cfg.mode {
            Mode::Launcher if self.ranks.iter().any(|r| r.spared && r.left.is_none()) => {
                // The job's own deadline bounds the grace too.
                Some(self.deadline.map_or(grace, |d| d.min(grace)))
            }
            Mode::Launcher => None,
            Mode::Rendezvous => Some(grace),
        };
    }

    /// Ends the job if an open exchange round can never complete because a
    /// rank left without joining it; the waiting ranks get `Abort` (their
    /// collective fails) and are spared. `trigger`: the rank whose end
    /// prompted the check.
    fn check_stuck(&mut self, trigger: Option<usize>, now: Instant) {
        if self.ending.is_some() {
            return;
        }
        let gone_before = |k: usize| -> Vec<usize> {
            (0..self.ranks.len())
                .filter(|&r| self.ranks[r].left.is_some() && self.ranks[r].contributed <= k)
                .collect()
        };
        let Some(gone) = self
            .rounds
            .keys()
            .map(|&k| gone_before(k))
            .find(|g| !g.is_empty())
        else {
            return;
        };
        // A rank waits if it contributed to a round that has not completed.
        let waiting: Vec<usize> = (0..self.ranks.len())
            .filter(|&r| self.ranks[r].left.is_none() && self.ranks[r].contributed > self.completed)
            .collect();
        if waiting.is_empty() {
            return;
        }
        let culprit = trigger.filter(|t| gone.contains(t)).unwrap_or(gone[0]);
        let msg =
            format!("rank {culprit} exited while ranks {waiting:?} wait in a start-up collective");
        self.message(msg.clone());
        let abort = format!(
            "a start-up collective cannot complete: rank {culprit} exited without joining it"
        );
        let abort = Bytes::from(abort.into_bytes());
        for &r in &waiting {
            self.send_rank(r, Kind::Abort, abort.clone());
        }
        self.end(1, msg, &waiting, now);
    }
}

/// Exit code of a job that ran out of time (as `timeout(1)`).
pub const TIMEOUT_CODE: i32 = 124;

/// Formats seconds without needless decimals: `2`, `0.5`, `1.25`.
pub fn fmt_secs(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        return d.as_secs().to_string();
    }
    let s = format!("{:.3}", d.as_secs_f64());
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The conventional name of signal `sig` (`SIGKILL`), or `SIG?` if unknown.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGSTKFLT => "SIGSTKFLT",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGTTIN => "SIGTTIN",
        libc::SIGTTOU => "SIGTTOU",
        libc::SIGURG => "SIGURG",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGWINCH => "SIGWINCH",
        libc::SIGIO => "SIGIO",
        libc::SIGPWR => "SIGPWR",
        libc::SIGSYS => "SIGSYS",
        _ => "SIG?",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Hello, PROOF_LEN};
    use proptest::prelude::*;

    const KEY: &str = "the job key";

    fn t0() -> Instant {
        Instant::now()
    }

    fn frame(kind: Kind, body: &[u8]) -> Bytes {
        let mut b = vec![kind as u8];
        b.extend_from_slice(body);
        Bytes::from(b)
    }

    fn nonce(conn: ConnId) -> [u8; NONCE_LEN] {
        [conn as u8 + 1; NONCE_LEN]
    }

    fn hello_for(conn: ConnId, rank: u32, key: Option<&str>) -> Bytes {
        let mut h = Hello {
            rank,
            pid: 100 + rank,
            nonce: [0xa0 | rank as u8; NONCE_LEN],
            proof: None,
        };
        if let Some(k) = key {
            h.proof = Some(wire::hello_proof(k, &nonce(conn), &h));
        }
        frame(Kind::Hello, &wire::hello_body(&h))
    }

    /// A coordinator of `n` ranks, each joined over its own network
    /// connection (conn = rank), actions cleared.
    fn joined(n: usize, mode: Mode) -> (Coordinator, Instant) {
        let now = t0();
        let mut co = Coordinator::new(Config::new(n, mode, Some(KEY.into())), now);
        for r in 0..n as u32 {
            let conn = ConnId::from(r);
            co.connected(
                conn,
                Origin::Network {
                    peer: format!("p{r}"),
                },
                nonce(conn),
                now,
            );
            co.frame(conn, hello_for(conn, r, Some(KEY)), now);
        }
        let acts = co.take_actions();
        let welcomed = acts
            .iter()
            .filter(|a| {
                matches!(
                    a,
                    Action::Send {
                        kind: Kind::Welcome,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(welcomed, n, "{acts:?}");
        (co, now)
    }

    fn sends(acts: &[Action], kind: Kind) -> Vec<(ConnId, Bytes)> {
        acts.iter()
            .filter_map(|a| match a {
                Action::Send {
                    conn,
                    kind: k,
                    body,
                } if *k == kind => Some((*conn, body.clone())),
                _ => None,
            })
            .collect()
    }

    fn kills(acts: &[Action]) -> Vec<u32> {
        acts.iter()
            .filter_map(|a| match a {
                Action::Kill { rank } => Some(*rank),
                _ => None,
            })
            .collect()
    }

    fn closes(acts: &[Action]) -> Vec<ConnId> {
        acts.iter()
            .filter_map(|a| match a {
                Action::Close { conn } => Some(*conn),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_hello_proving_the_key_is_welcomed_with_the_coordinators_proof() {
        let now = t0();
        let mut co = Coordinator::new(Config::new(2, Mode::Launcher, Some(KEY.into())), now);
        co.connected(5, Origin::Network { peer: "x".into() }, nonce(5), now);
        let acts = co.take_actions();
        let ch = sends(&acts, Kind::Challenge);
        let c = wire::parse_challenge(&ch[0].1).unwrap();
        assert!(c.key_required);
        assert_eq!(c.nonce, nonce(5));
        co.frame(5, hello_for(5, 1, Some(KEY)), now);
        let acts = co.take_actions();
        assert_eq!(acts[0], Action::Authenticated { conn: 5 });
        let w = sends(&acts, Kind::Welcome);
        let h = wire::parse_hello(&hello_for(5, 1, Some(KEY))[1..]).unwrap();
        assert_eq!(&w[0].1[..], &wire::welcome_proof(KEY, &nonce(5), &h)[..]);
        assert_eq!(co.pending(), 0);
    }

    #[test]
    fn strangers_are_dropped_and_the_job_goes_on() {
        let now = t0();
        let mut co = Coordinator::new(Config::new(3, Mode::Launcher, Some(KEY.into())), now);
        let net = |p: &str| Origin::Network { peer: p.into() };
        // Wrong key; no proof; a proof made for another connection's nonce
        // (a replay); a frame that is not Hello; garbage; a rank outside
        // the job; a malformed Hello.
        let cases: Vec<(ConnId, Bytes, &str)> = vec![
            (
                1,
                hello_for(1, 0, Some("not the key")),
                "carried a wrong proof",
            ),
            (2, hello_for(2, 0, None), "carried no proof"),
            (3, hello_for(4, 0, Some(KEY)), "carried a wrong proof"),
            (
                4,
                frame(Kind::Exchange, b"x"),
                "its first frame was Exchange",
            ),
            (5, Bytes::from_static(&[99, 1, 2]), "not a control frame"),
            (6, hello_for(6, 9, Some(KEY)), "but the job has 3 ranks"),
            (7, frame(Kind::Hello, &[1, 2, 3]), "malformed Hello"),
        ];
        for (conn, f, why) in cases {
            co.connected(conn, net("evil"), nonce(conn), now);
            co.take_actions();
            co.frame(conn, f, now);
            let acts = co.take_actions();
            assert_eq!(closes(&acts), [conn], "{why}: {acts:?}");
            let abort = sends(&acts, Kind::Abort);
            assert!(
                String::from_utf8_lossy(&abort[0].1).contains(why),
                "{why}: {acts:?}"
            );
            assert!(kills(&acts).is_empty());
            assert!(co.outcome().is_none(), "{why}");
            // Anything more from it is ignored.
            co.frame(conn, hello_for(conn, 0, Some(KEY)), now);
            assert!(co.take_actions().is_empty());
        }
        assert_eq!(co.stranger_drops(), 7);
        // Rank 0 can still join, once.
        co.connected(10, net("rank0"), nonce(10), now);
        co.frame(10, hello_for(10, 0, Some(KEY)), now);
        assert!(co
            .take_actions()
            .contains(&Action::Authenticated { conn: 10 }));
        co.connected(11, net("again"), nonce(11), now);
        co.frame(11, hello_for(11, 0, Some(KEY)), now);
        assert_eq!(closes(&co.take_actions()), [11]);
    }

    #[test]
    fn an_inherited_socket_speaks_only_for_its_rank() {
        let now = t0();
        let mut co = Coordinator::new(Config::new(2, Mode::Launcher, Some(KEY.into())), now);
        co.connected(0, Origin::Inherited { rank: 0 }, nonce(0), now);
        co.frame(0, hello_for(0, 1, Some(KEY)), now);
        let acts = co.take_actions();
        assert_eq!(closes(&acts), [0]);
        assert!(matches!(&acts[1], Action::Message(m) if m.contains("socket made for rank 0")));
    }

    #[test]
    fn unauthenticated_connections_are_bounded_and_timed_out() {
        let now = t0();
        let mut cfg = Config::new(2, Mode::Launcher, Some(KEY.into()));
        cfg.max_pending = 4;
        let mut co = Coordinator::new(cfg, now);
        co.connected(100, Origin::Inherited { rank: 0 }, nonce(100), now);
        for c in 0..10u64 {
            co.connected(
                c,
                Origin::Network { peer: "x".into() },
                nonce(c),
                now + Duration::from_millis(c),
            );
        }
        let acts = co.take_actions();
        // The oldest network connections went; the inherited one stays.
        assert_eq!(closes(&acts), [0, 1, 2, 3, 4, 5]);
        // They did nothing wrong: they are told to try again.
        for (_, why) in sends(&acts, Kind::Abort) {
            assert!(why.starts_with(wire::RETRY_PREFIX.as_bytes()));
        }
        assert_eq!(co.pending(), 5);
        assert!(acts
            .iter()
            .any(|a| matches!(a, Action::Message(m) if m.contains("4 connections were waiting"))));
        assert!(co.evict_oldest_pending(now));
        assert_eq!(closes(&co.take_actions()), [6]);
        // The handshake deadline drops the rest, but not a rank's own
        // socket (the program may not be a gex rank at all).
        let late = now + HANDSHAKE_TIMEOUT + Duration::from_secs(1);
        assert!(co.next_deadline().unwrap() <= late);
        co.tick(late);
        let mut closed = closes(&co.take_actions());
        closed.sort();
        assert_eq!(closed, [7, 8, 9]);
        assert_eq!(co.pending(), 1);
        assert!(co.outcome().is_none());
    }

    #[test]
    fn an_exchange_gathers_in_rank_order_and_rounds_complete_in_order() {
        let (mut co, now) = joined(3, Mode::Launcher);
        // Rank 2 runs two rounds ahead before the others join round 0.
        co.frame(2, frame(Kind::Exchange, b"r0-2"), now);
        co.frame(2, frame(Kind::Exchange, b"r1-2"), now);
        co.frame(0, frame(Kind::Exchange, b"r0-0"), now);
        assert!(co.take_actions().is_empty());
        co.frame(1, frame(Kind::Exchange, b"r0-1"), now);
        let res = sends(&co.take_actions(), Kind::ExchangeResult);
        assert_eq!(res.len(), 3);
        for (i, (conn, body)) in res.iter().enumerate() {
            assert_eq!(*conn, i as ConnId);
            assert_eq!(
                wire::decode_exchange_result(body).unwrap(),
                [b"r0-0".to_vec(), b"r0-1".to_vec(), b"r0-2".to_vec()]
            );
        }
        // One buffer for everyone.
        assert_eq!(res[0].1.as_ptr(), res[2].1.as_ptr());
        co.frame(0, frame(Kind::Exchange, b""), now);
        co.frame(1, frame(Kind::Exchange, b"r1-1"), now);
        let res = sends(&co.take_actions(), Kind::ExchangeResult);
        assert_eq!(
            wire::decode_exchange_result(&res[0].1).unwrap(),
            [b"".to_vec(), b"r1-1".to_vec(), b"r1-2".to_vec()]
        );
    }

    #[test]
    fn exit_ends_the_job_and_spares_the_caller_for_the_grace() {
        let (mut co, now) = joined(3, Mode::Launcher);
        co.frame(1, frame(Kind::Exit, &wire::code_body(5, "")), now);
        let acts = co.take_actions();
        assert_eq!(sends(&acts, Kind::ExitAck)[0].0, 1);
        // Nobody is killed yet: the others may still exit on their own.
        assert!(kills(&acts).is_empty(), "{acts:?}");
        // A non-zero exit is reported, naming the rank.
        assert!(
            acts.contains(&Action::Message("rank 1 called exit with code 5".into())),
            "{acts:?}"
        );
        assert_eq!(co.outcome().unwrap().code, 5);
        assert_eq!(
            co.outcome().unwrap().reason,
            "rank 1 called exit with code 5"
        );
        // Later failures do not change the code.
        co.rank_ended(0, Ended::Signal(9), now);
        co.rank_ended(2, Ended::Code(3), now);
        assert_eq!(co.outcome().unwrap().code, 5);
        assert!(co.take_actions().is_empty());
        // Rank 1 does not exit: after the grace it is killed.
        let g = co.next_deadline().unwrap();
        assert_eq!(g, now + END_GRACE);
        co.tick(g);
        assert_eq!(kills(&co.take_actions()), [1]);
        co.rank_ended(1, Ended::Signal(9), g);
        assert!(co.all_left());
    }

    #[test]
    fn ranks_that_exit_too_within_the_exit_grace_finish_on_their_own() {
        // The reproduction of issue #29's lost line: ranks 1 and 2 exit
        // right after a barrier, rank 0 a moment later.
        let (mut co, now) = joined(3, Mode::Launcher);
        co.frame(1, frame(Kind::Exit, &wire::code_body(0, "")), now);
        co.frame(2, frame(Kind::Exit, &wire::code_body(0, "")), now);
        let acts = co.take_actions();
        assert_eq!(sends(&acts, Kind::ExitAck).len(), 2);
        assert!(kills(&acts).is_empty(), "{acts:?}");
        // A zero exit is not reported.
        assert!(!acts.iter().any(|a| matches!(a, Action::Message(_))));
        assert_eq!(co.next_deadline(), Some(now + wire::EXIT_GRACE));
        co.rank_ended(1, Ended::Code(0), now);
        co.rank_ended(2, Ended::Code(0), now);
        let late = now + wire::EXIT_GRACE / 2;
        co.frame(0, frame(Kind::Exit, &wire::code_body(0, "")), late);
        let acts = co.take_actions();
        assert_eq!(sends(&acts, Kind::ExitAck)[0].0, 0);
        assert!(kills(&acts).is_empty(), "{acts:?}");
        // Rank 0 joined the exit: it has the end grace from its own exit.
        assert_eq!(co.next_deadline(), Some(late + END_GRACE));
        co.rank_ended(0, Ended::Code(0), late);
        assert!(co.all_left());
        assert_eq!(co.next_deadline(), None);
        co.tick(late + END_GRACE);
        assert!(kills(&co.take_actions()).is_empty());
        assert_eq!(co.outcome().unwrap().code, 0);
    }

    #[test]
    fn ranks_that_do_not_exit_are_ended_after_the_exit_grace() {
        let (mut co, now) = joined(4, Mode::Launcher);
        // Rank 3 waits in a start-up collective: told to end at once (a
        // launcher's rank reads frames only there).
        co.frame(3, frame(Kind::Exchange, b""), now);
        co.frame(0, frame(Kind::Exit, &wire::code_body(3, "")), now);
        let acts = co.take_actions();
        assert!(kills(&acts).is_empty(), "{acts:?}");
        let ends = sends(&acts, Kind::End);
        assert_eq!(ends.iter().map(|e| e.0).collect::<Vec<_>>(), [3]);
        assert_eq!(
            wire::parse_code_body(&ends[0].1).unwrap(),
            (3, "rank 0 called exit with code 3".to_string())
        );
        // Rank 2 starts a collective during the grace: End too.
        co.frame(2, frame(Kind::Exchange, b""), now);
        let ends = sends(&co.take_actions(), Kind::End);
        assert_eq!(ends.iter().map(|e| e.0).collect::<Vec<_>>(), [2]);
        co.rank_ended(3, Ended::Code(3), now);
        co.rank_ended(2, Ended::Code(3), now);
        // Rank 1 computes on: ended when the exit grace is over, rank 0
        // (which called exit and has not ended) after its end grace.
        let t = co.next_deadline().unwrap();
        assert_eq!(t, now + wire::EXIT_GRACE);
        co.tick(t);
        assert_eq!(kills(&co.take_actions()), [1]);
        co.rank_ended(1, Ended::Signal(9), t);
        co.tick(now + END_GRACE);
        assert_eq!(kills(&co.take_actions()), [0]);
        assert_eq!(co.outcome().unwrap().code, 3);
        // An exit grace of 0 ends the others at once (the job's time limit
        // bounds it too).
        let mut cfg = Config::new(2, Mode::Launcher, Some(KEY.into()));
        cfg.exit_grace = Duration::ZERO;
        let mut co = Coordinator::new(cfg, now);
        for r in 0..2 {
            co.connected(r, Origin::Network { peer: "p".into() }, nonce(r), now);
            co.frame(r, hello_for(r, r as u32, Some(KEY)), now);
        }
        co.frame(1, frame(Kind::Exit, &wire::code_body(0, "")), now);
        co.tick(now);
        assert_eq!(kills(&co.take_actions()), [0]);
    }

    #[test]
    fn a_fatal_error_ends_the_others_at_once() {
        for mode in [Mode::Launcher, Mode::Rendezvous] {
            let (mut co, now) = joined(3, mode);
            co.frame(
                2,
                frame(Kind::Exit, &wire::code_body(1, wire::EXIT_FATAL)),
                now,
            );
            let acts = co.take_actions();
            assert_eq!(sends(&acts, Kind::ExitAck)[0].0, 2);
            let ended: Vec<u32> = match mode {
                Mode::Launcher => kills(&acts),
                Mode::Rendezvous => sends(&acts, Kind::End).iter().map(|e| e.0 as u32).collect(),
            };
            assert_eq!(ended, [0, 1], "{mode:?}: {acts:?}");
            assert!(acts.contains(&Action::Message(
                "rank 2 ended the job with a fatal error (code 1)".into()
            )));
            assert_eq!(co.outcome().unwrap().code, 1);
        }
    }

    #[test]
    fn a_failing_rank_ends_the_job_with_its_code() {
        let (mut co, now) = joined(3, Mode::Launcher);
        co.rank_ended(2, Ended::Code(3), now);
        let acts = co.take_actions();
        assert_eq!(kills(&acts), [0, 1]);
        assert_eq!(co.outcome().unwrap().code, 3);
        let (mut co, now) = joined(2, Mode::Launcher);
        co.rank_ended(0, Ended::Signal(libc::SIGSEGV), now);
        assert_eq!(co.outcome().unwrap().code, 128 + libc::SIGSEGV);
        assert!(co.outcome().unwrap().reason.contains("SIGSEGV"));
        let (mut co, now) = joined(2, Mode::Launcher);
        co.signal(libc::SIGINT, now);
        assert_eq!(co.outcome().unwrap().code, 130);
    }

    #[test]
    fn an_early_exit_ends_the_job_after_the_exit_grace() {
        let (mut co, now) = joined(3, Mode::Launcher);
        co.rank_ended(0, Ended::Code(0), now);
        assert!(co.outcome().is_none());
        let t = co.next_deadline().unwrap();
        assert_eq!(t, now + wire::EXIT_GRACE);
        co.tick(t);
        let o = co.outcome().unwrap();
        assert_eq!(o.code, 0);
        assert!(
            o.reason
                .contains("rank 0 exited with code 0 while ranks [1, 2]"),
            "{o:?}"
        );
        assert_eq!(kills(&co.take_actions()), [1, 2]);
        // Ranks that finish together do not end anything.
        let (mut co, now) = joined(2, Mode::Launcher);
        co.rank_ended(0, Ended::Code(0), now);
        co.rank_ended(1, Ended::Code(0), now);
        co.tick(now + wire::EXIT_GRACE);
        assert!(co.outcome().is_none());
        assert!(co.all_left());
    }

    #[test]
    fn a_rank_leaving_a_collective_aborts_the_waiters() {
        let (mut co, now) = joined(3, Mode::Launcher);
        co.frame(0, frame(Kind::Exchange, b""), now);
        co.frame(1, frame(Kind::Exchange, b""), now);
        co.take_actions();
        co.rank_ended(2, Ended::Code(0), now);
        let acts = co.take_actions();
        let aborted: Vec<ConnId> = sends(&acts, Kind::Abort).iter().map(|a| a.0).collect();
        assert_eq!(aborted, [0, 1]);
        assert!(kills(&acts).is_empty(), "the waiters are spared");
        let o = co.outcome().unwrap();
        assert_eq!(
            (o.code, o.reason.as_str()),
            (
                1,
                "rank 2 exited while ranks [0, 1] wait in a start-up collective"
            )
        );
    }

    #[test]
    fn the_time_limit_ends_the_job_with_124() {
        let now = t0();
        let mut cfg = Config::new(2, Mode::Launcher, Some(KEY.into()));
        cfg.timeout = Some(Duration::from_millis(1500));
        let mut co = Coordinator::new(cfg, now);
        let t = co.next_deadline().unwrap();
        co.tick(t);
        let o = co.outcome().unwrap();
        assert_eq!((o.code, o.timed_out), (TIMEOUT_CODE, true));
        assert!(o.reason.contains("after 1.5 s"), "{o:?}");
    }

    #[test]
    fn at_a_rendezvous_ranks_say_how_they_end() {
        // A Bye with a code ends the others with End carrying it.
        let (mut co, now) = joined(3, Mode::Rendezvous);
        co.frame(1, frame(Kind::Bye, &wire::code_body(4, "")), now);
        let acts = co.take_actions();
        let ends = sends(&acts, Kind::End);
        assert_eq!(ends.iter().map(|e| e.0).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(wire::parse_code_body(&ends[0].1).unwrap().0, 4);
        assert!(kills(&acts).is_empty());
        // A connection lost without Bye is a rank that died.
        let (mut co, now) = joined(3, Mode::Rendezvous);
        co.closed(2, None, now);
        let o = co.outcome().unwrap();
        assert_eq!(o.code, 1);
        assert!(o.reason.contains("rank 2 lost its connection"));
        // Everyone leaving with 0 ends nothing; rank 0 then sees the others
        // gone.
        let (mut co, now) = joined(3, Mode::Rendezvous);
        for r in 0..3 {
            co.frame(r, frame(Kind::Bye, &wire::code_body(0, "")), now);
        }
        for r in 1..3 {
            co.closed(r, None, now);
        }
        assert!(co.outcome().is_none());
        assert!(co.others_gone());
        // After an exit, the others have the exit grace to exit too, then
        // get End; after the end grace the ranks that linger are
        // disconnected, but not rank 0 (which hosts the coordinator).
        let (mut co, now) = joined(3, Mode::Rendezvous);
        co.frame(0, frame(Kind::Exit, &wire::code_body(2, "")), now);
        let acts = co.take_actions();
        assert!(sends(&acts, Kind::End).is_empty(), "{acts:?}");
        co.tick(now + wire::EXIT_GRACE);
        let ends = sends(&co.take_actions(), Kind::End);
        assert_eq!(ends.iter().map(|e| e.0).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(wire::parse_code_body(&ends[0].1).unwrap().0, 2);
        co.tick(now + wire::EXIT_GRACE + END_GRACE);
        assert_eq!(closes(&co.take_actions()), [1, 2]);
        // Ranks that exit too within the grace get no End.
        let (mut co, now) = joined(3, Mode::Rendezvous);
        co.frame(1, frame(Kind::Exit, &wire::code_body(0, "")), now);
        co.frame(2, frame(Kind::Exit, &wire::code_body(0, "")), now);
        co.frame(0, frame(Kind::Exit, &wire::code_body(0, "")), now);
        co.tick(now + wire::EXIT_GRACE);
        assert!(sends(&co.take_actions(), Kind::End).is_empty());
    }

    #[test]
    fn a_rank_breaking_the_protocol_loses_its_connection_not_the_job() {
        let (mut co, now) = joined(2, Mode::Launcher);
        co.frame(1, frame(Kind::ExchangeResult, b""), now);
        let acts = co.take_actions();
        assert_eq!(closes(&acts), [1]);
        assert!(co.outcome().is_none());
        // Its process's end decides.
        co.rank_ended(1, Ended::Code(1), now);
        assert_eq!(co.outcome().unwrap().code, 1);
    }

    #[test]
    fn names() {
        assert_eq!(fmt_secs(Duration::from_secs(2)), "2");
        assert_eq!(fmt_secs(Duration::from_millis(500)), "0.5");
        assert_eq!(fmt_secs(Duration::from_millis(1250)), "1.25");
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(1000), "SIG?");
        let _ = PROOF_LEN;
    }

    proptest! {
        /// Whatever strangers send, in any order and split, they never
        /// end the job, take a rank, or get anything but a challenge and
        /// an Abort.
        #[test]
        fn strangers_never_touch_the_job(frames in proptest::collection::vec(
            (0u64..6, proptest::collection::vec(any::<u8>(), 0..80)), 0..60)) {
            let (mut co, now) = joined(2, Mode::Rendezvous);
            for c in 10..16u64 {
                co.connected(c, Origin::Network { peer: "evil".into() }, nonce(c), now);
            }
            for (c, data) in frames {
                co.frame(10 + c, Bytes::from(data), now);
            }
            prop_assert!(co.outcome().is_none());
            for a in co.take_actions() {
                match a {
                    Action::Send { conn, kind, .. } => {
                        prop_assert!(conn >= 10);
                        prop_assert!(matches!(kind, Kind::Challenge | Kind::Abort), "{:?}", kind);
                    }
                    Action::Close { conn } => prop_assert!(conn >= 10),
                    Action::Message(_) => {}
                    other => prop_assert!(false, "{:?}", other),
                }
            }
        }
    }
}
