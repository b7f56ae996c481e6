//! The coordinator's I/O shell: connections, frames and timers on a tokio
//! runtime of one thread, for any number of ranks.
//!
//! [`serve`] owns the listening socket (if any) and every control
//! connection. Each connection is two small tasks: a reader, which frames
//! the bytes with tokio-util's length-delimited codec — capped at
//! [`wire::PRE_AUTH_MAX_FRAME`] until the coordinator accepts its `Hello`,
//! and reading nothing more until it has decided — and a writer, which
//! writes the frames the coordinator queues, each within
//! [`WRITE_TIMEOUT`]. The coordinator ([`crate::coord`]) decides
//! everything; what only the embedding shell knows (a process ended, a
//! signal) comes in through [`Input`], and what only it can do (kill a
//! rank, print) goes out through [`Host`].

use std::collections::HashMap;
use std::io;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio_util::codec::{FramedRead, LengthDelimitedCodec};

use crate::coord::{Action, ConnId, Coordinator, Ended, Origin};
use crate::wire::{self, Kind};

/// Bound on writing one frame to a connection: a rank that stops reading
/// cannot hold the coordinator's memory or its attention.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// What the embedding shell tells the coordinator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A rank's process ended (from a launcher's process watcher).
    RankEnded(u32, Ended),
    /// The launcher received a signal.
    Signal(i32),
    /// Something the shell needs failed: end the job with code 1.
    Fail(String),
}

/// What the embedding shell does for the coordinator.
pub trait Host {
    /// Prints a coordinator message.
    fn message(&mut self, msg: &str);
    /// Kills rank `rank`'s processes (launchers only).
    fn kill(&mut self, rank: u32);
    /// Called after every step; returning true ends [`serve`].
    fn observe(&mut self, co: &Coordinator) -> bool;
}

/// Where a reader is in the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Its first frame is (or will be) with the coordinator.
    Pending,
    /// Authenticated: read frames up to [`wire::MAX_FRAME`].
    Open,
    /// Dropped: stop reading.
    Closed,
}

enum Out {
    Frame(Kind, Bytes),
    Close,
}

struct Handle {
    out: mpsc::UnboundedSender<Out>,
    phase: watch::Sender<Phase>,
}

enum Event {
    Frame(ConnId, Bytes),
    Closed(ConnId, Option<String>),
}

/// The connections and how to reach their tasks.
struct Conns {
    handles: HashMap<ConnId, Handle>,
    next: ConnId,
    events: mpsc::UnboundedSender<Event>,
}

impl Conns {
    /// Starts the reader and writer tasks of a new connection.
    fn add<S>(&mut self, stream: S, origin: Origin, co: &mut Coordinator)
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let conn = self.next;
        self.next += 1;
        let (read, write) = tokio::io::split(stream);
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let (phase_tx, phase_rx) = watch::channel(Phase::Pending);
        tokio::spawn(read_loop(conn, read, phase_rx, self.events.clone()));
        tokio::spawn(write_loop(write, out_rx));
        self.handles.insert(
            conn,
            Handle {
                out: out_tx,
                phase: phase_tx,
            },
        );
        co.connected(conn, origin, crate::random_bytes(), Instant::now());
    }

    fn close(&mut self, conn: ConnId) {
        if let Some(h) = self.handles.remove(&conn) {
            let _ = h.phase.send(Phase::Closed);
            let _ = h.out.send(Out::Close);
        }
    }
}

/// Serves the control plane: accepts on `listener` (if any), adopts the
/// ranks' `inherited` sockets, feeds `inputs` to the coordinator, and
/// carries out its actions, until [`Host::observe`] says to stop. Must run
/// inside a tokio runtime with I/O and time enabled.
pub async fn serve(
    co: &mut Coordinator,
    listener: Option<TcpListener>,
    inherited: Vec<(u32, std::os::unix::net::UnixStream)>,
    mut inputs: mpsc::UnboundedReceiver<Input>,
    host: &mut dyn Host,
) {
    raise_fd_limit();
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let mut conns = Conns {
        handles: HashMap::new(),
        next: 0,
        events: events_tx,
    };
    for (rank, s) in inherited {
        let adopted = s
            .set_nonblocking(true)
            .and_then(|()| tokio::net::UnixStream::from_std(s));
        match adopted {
            Ok(s) => conns.add(s, Origin::Inherited { rank }, co),
            Err(e) => co.fail(
                1,
                format!("cannot serve rank {rank}'s control socket: {e}"),
                Instant::now(),
            ),
        }
    }
    let mut inputs_open = true;
    // Accepting pauses when the process is out of descriptors and no
    // unauthenticated connection can be dropped; any connection's end
    // resumes it.
    let mut accept_paused = false;
    loop {
        for action in co.take_actions() {
            match action {
                Action::Send { conn, kind, body } => {
                    if let Some(h) = conns.handles.get(&conn) {
                        let _ = h.out.send(Out::Frame(kind, body));
                    }
                }
                Action::Authenticated { conn } => {
                    if let Some(h) = conns.handles.get(&conn) {
                        let _ = h.phase.send(Phase::Open);
                    }
                }
                Action::Close { conn } => conns.close(conn),
                Action::Kill { rank } => host.kill(rank),
                Action::Message(m) => host.message(&m),
            }
        }
        if host.observe(co) {
            break;
        }
        let deadline = co.next_deadline().map(tokio::time::Instant::from_std);
        let accepting = listener.as_ref().filter(|_| !accept_paused);
        tokio::select! {
            ev = events.recv() => match ev {
                Some(Event::Frame(conn, data)) => co.frame(conn, data, Instant::now()),
                Some(Event::Closed(conn, error)) => {
                    accept_paused = false;
                    if conns.handles.remove(&conn).is_some() {
                        co.closed(conn, error, Instant::now());
                    }
                }
                // `conns` holds a sender.
                None => {}
            },
            acc = accept(accepting) => match acc {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    conns.add(stream, Origin::Network { peer: peer.to_string() }, co);
                }
                Err(e) if out_of_descriptors(&e) => {
                    if !co.evict_oldest_pending(Instant::now()) {
                        accept_paused = true;
                    }
                }
                // A connection reset before it was accepted, and the like.
                Err(_) => {}
            },
            input = inputs.recv(), if inputs_open => match input {
                Some(Input::RankEnded(rank, how)) => co.rank_ended(rank, how, Instant::now()),
                Some(Input::Signal(sig)) => co.signal(sig, Instant::now()),
                Some(Input::Fail(msg)) => co.fail(1, msg, Instant::now()),
                None => inputs_open = false,
            },
            () = sleep_until(deadline) => co.tick(Instant::now()),
        }
    }
    for conn in conns.handles.keys().copied().collect::<Vec<_>>() {
        conns.close(conn);
    }
}

async fn accept(
    l: Option<&TcpListener>,
) -> io::Result<(tokio::net::TcpStream, std::net::SocketAddr)> {
    match l {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(t: Option<tokio::time::Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// Binds a TCP listener for the control plane with a long accept queue
/// (1024): ranks connecting at once, and strangers, must not overflow it
/// (an overflow costs a connecting rank a SYN retransmission, a second).
pub fn bind_tcp(addr: std::net::SocketAddr) -> io::Result<std::net::TcpListener> {
    let l = std::net::TcpListener::bind(addr)?;
    // SAFETY: listen on a socket this function owns; calling it again on a
    // listening socket only changes the length of its accept queue.
    if unsafe { libc::listen(std::os::fd::AsRawFd::as_raw_fd(&l), 1024) } != 0 {
        return Err(io::Error::last_os_error());
    }
    l.set_nonblocking(true)?;
    Ok(l)
}

fn out_of_descriptors(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// Raises this process's soft limit on open descriptors to its hard limit
/// (at most 2^20): a coordinator holds one per connection.
fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into `lim`, a valid rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return;
    }
    let want = lim.rlim_max.min(1 << 20);
    if lim.rlim_cur < want {
        lim.rlim_cur = want;
        // SAFETY: setrlimit only reads `lim`; raising the soft limit up to
        // the hard one is always allowed.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    }
}

/// The codec of control frames: `len: u32 LE`, then `len` bytes (the kind
/// byte and the body).
fn codec(max: usize) -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .little_endian()
        .length_field_length(4)
        .max_frame_length(max)
        .new_codec()
}

async fn read_loop<R: AsyncRead + Unpin>(
    conn: ConnId,
    read: R,
    mut phase: watch::Receiver<Phase>,
    events: mpsc::UnboundedSender<Event>,
) {
    let mut framed = FramedRead::new(read, codec(wire::PRE_AUTH_MAX_FRAME));
    loop {
        // Until the coordinator has decided on the first frame, read no
        // further: the cap applies to everything a stranger sends.
        let current = *phase.borrow_and_update();
        match current {
            Phase::Closed => return,
            Phase::Open => framed.decoder_mut().set_max_frame_length(wire::MAX_FRAME),
            Phase::Pending => {}
        }
        let next = tokio::select! {
            next = framed.next() => next,
            changed = phase.changed() => {
                if changed.is_err() {
                    return;
                }
                continue;
            }
        };
        let error = match next {
            Some(Ok(frame)) => {
                if frame.is_empty() {
                    Some("an empty control frame".to_string())
                } else {
                    let _ = events.send(Event::Frame(conn, frame.freeze()));
                    if current == Phase::Pending
                        && phase.wait_for(|p| *p != Phase::Pending).await.is_err()
                    {
                        return;
                    }
                    continue;
                }
            }
            // A hang-up (or a reset: a killed peer) is an ordinary end.
            None => None,
            Some(Err(e)) if e.kind() == io::ErrorKind::ConnectionReset => None,
            Some(Err(e)) => Some(e.to_string()),
        };
        let _ = events.send(Event::Closed(conn, error));
        return;
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(mut write: W, mut out: mpsc::UnboundedReceiver<Out>) {
    while let Some(o) = out.recv().await {
        let (kind, body) = match o {
            Out::Frame(kind, body) => (kind, body),
            Out::Close => break,
        };
        let Ok(len) = u32::try_from(body.len() + 1) else {
            break;
        };
        let mut head = [0u8; 5];
        head[..4].copy_from_slice(&len.to_le_bytes());
        head[4] = kind as u8;
        let wrote = tokio::time::timeout(WRITE_TIMEOUT, async {
            write.write_all(&head).await?;
            write.write_all(&body).await?;
            write.flush().await
        })
        .await;
        if !matches!(wrote, Ok(Ok(()))) {
            // Gone, or not reading: what it would have got no longer
            // matters; its end is decided elsewhere.
            break;
        }
    }
    let _ = tokio::time::timeout(WRITE_TIMEOUT, write.shutdown()).await;
}
