//! The control plane's connections: each local rank's own socket pair (the
//! rank inherits one end: no address, no file, nothing another process
//! could connect to), or a TCP listener for ranks on other machines; and
//! reading their frames.
//!
//! Threads here only turn bytes into [`Event`]s; every decision is the
//! coordinator's (`job.rs`), which owns a write handle of each connection.

use std::io::{self, Read};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::Sender;
use gex_bootstrap::stream::Stream;
use gex_bootstrap::wire::{read_frame, CtrlAddr};

use crate::job::Event;

/// Identifies one accepted connection (ranks are only known after `Hello`).
pub(crate) type ConnId = usize;

/// Where the control socket listens.
pub(crate) enum Listen {
    /// Nowhere: every rank gets a connected socket of its own
    /// ([`ControlSocket::adopt`]).
    Inherited,
    /// A TCP address (port 0: any free port).
    Tcp(SocketAddr),
}

struct Listener(TcpListener);

impl Listener {
    fn accept(&self) -> io::Result<Stream> {
        Stream::tcp(self.0.accept()?.0)
    }
}

/// The listening control socket and its acceptor thread.
pub(crate) struct ControlSocket {
    /// What ranks are told to connect to (`GEX_CTRL`); `None` when each
    /// rank inherits its connection.
    advertised: Option<CtrlAddr>,
    /// Where the acceptor can be reached from here (to wake it up).
    local: Option<CtrlAddr>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<Vec<JoinHandle<()>>>>,
    /// Identifiers for connections, from the acceptor or [`Self::adopt`].
    next: Arc<AtomicUsize>,
    events: Sender<Event>,
    /// Readers of adopted connections.
    adopted: Vec<JoinHandle<()>>,
}

impl ControlSocket {
    /// Binds and starts accepting. Each connection is announced with
    /// [`Event::Connected`] (carrying a write handle), then each frame read
    /// from it as [`Event::Frame`], and its end as [`Event::Closed`].
    pub(crate) fn start(at: &Listen, events: Sender<Event>) -> io::Result<ControlSocket> {
        let (listener, advertised, local) = match at {
            Listen::Inherited => {
                return Ok(ControlSocket {
                    advertised: None,
                    local: None,
                    stop: Arc::new(AtomicBool::new(true)),
                    acceptor: None,
                    next: Arc::new(AtomicUsize::new(0)),
                    events,
                    adopted: Vec::new(),
                })
            }
            Listen::Tcp(addr) => {
                let l = TcpListener::bind(addr)?;
                let bound = l.local_addr()?;
                let mut local = bound;
                let mut advertised = bound;
                if bound.ip().is_unspecified() {
                    local.set_ip(IpAddr::V4(Ipv4Addr::LOCALHOST));
                    let ip = gex_bootstrap::os::net::first_ipv4().unwrap_or(Ipv4Addr::LOCALHOST);
                    advertised.set_ip(IpAddr::V4(ip));
                }
                (Listener(l), CtrlAddr::Tcp(advertised), CtrlAddr::Tcp(local))
            }
        };
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let next = Arc::new(AtomicUsize::new(0));
        let (next2, events2) = (next.clone(), events.clone());
        let acceptor = std::thread::Builder::new()
            .name("gex-run-accept".into())
            .spawn(move || accept_loop(listener, &stop2, &next2, &events2))?;
        Ok(ControlSocket {
            advertised: Some(advertised),
            local: Some(local),
            stop,
            acceptor: Some(acceptor),
            next,
            events,
            adopted: Vec::new(),
        })
    }

    /// The address ranks connect to (the value of `GEX_CTRL`), if there is
    /// one.
    pub(crate) fn advertised(&self) -> Option<&CtrlAddr> {
        self.advertised.as_ref()
    }

    /// Makes a connected socket pair for rank `rank`: the launcher's end is
    /// announced and read like an accepted connection (bound to `rank`:
    /// its `Hello` must name that rank); the other end, returned, is for
    /// the rank process to inherit (close-on-exec, so only the spawn that
    /// clears the flag in its child passes it on).
    pub(crate) fn adopt(&mut self, rank: u32) -> io::Result<UnixStream> {
        let (ours, theirs) = UnixStream::pair()?;
        let stream = Stream::Unix(ours);
        let writer = stream.try_clone()?;
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let _ = self.events.send(Event::Connected {
            conn: id,
            stream: writer,
            rank: Some(rank),
        });
        let events = self.events.clone();
        self.adopted.push(
            std::thread::Builder::new()
                .name(format!("gex-run-ctrl-{id}"))
                .spawn(move || read_loop(id, stream, &events))?,
        );
        Ok(theirs)
    }

    /// Stops accepting. Returns the reader threads, which end once their
    /// connections are shut down.
    pub(crate) fn stop(mut self) -> Vec<JoinHandle<()>> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Vec<JoinHandle<()>> {
        let adopted = std::mem::take(&mut self.adopted);
        let Some(acceptor) = self.acceptor.take() else {
            return adopted;
        };
        self.stop.store(true, Ordering::SeqCst);
        // Wake the acceptor, blocked in accept(), with a connection of our
        // own; it sees the flag and returns. If connecting fails the
        // listener is already broken and accept() has returned anyway.
        match &self.local {
            Some(CtrlAddr::Tcp(addr)) => drop(TcpStream::connect(addr)),
            Some(CtrlAddr::Fd { .. } | CtrlAddr::Unix(_)) | None => {}
        }
        let mut readers = acceptor.join().unwrap_or_default();
        readers.extend(adopted);
        readers
    }
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        // Only reached on an early error path: still release the socket.
        for reader in self.stop_inner() {
            drop(reader);
        }
    }
}

fn accept_loop(
    listener: Listener,
    stop: &AtomicBool,
    next: &AtomicUsize,
    events: &Sender<Event>,
) -> Vec<JoinHandle<()>> {
    let mut readers = Vec::new();
    loop {
        let conn = listener.accept();
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let stream = match conn {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = events.send(Event::AcceptFailed(e.to_string()));
                break;
            }
        };
        let id: ConnId = next.fetch_add(1, Ordering::SeqCst);
        let writer = match stream.try_clone() {
            Ok(w) => w,
            Err(e) => {
                let _ = events.send(Event::AcceptFailed(e.to_string()));
                break;
            }
        };
        // Announce before the reader can report anything: the channel then
        // orders Connected before that connection's frames.
        let _ = events.send(Event::Connected {
            conn: id,
            stream: writer,
            rank: None,
        });
        let reader_events = events.clone();
        match std::thread::Builder::new()
            .name(format!("gex-run-ctrl-{id}"))
            .spawn(move || read_loop(id, stream, &reader_events))
        {
            Ok(h) => readers.push(h),
            Err(e) => {
                let _ = events.send(Event::AcceptFailed(e.to_string()));
                break;
            }
        }
    }
    readers
}

/// A reader that counts bytes, to tell a clean hang-up between frames from
/// one in the middle of a frame.
struct Counting<R> {
    inner: R,
    bytes: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

fn read_loop(conn: ConnId, stream: Stream, events: &Sender<Event>) {
    let mut r = Counting {
        inner: io::BufReader::new(stream),
        bytes: 0,
    };
    loop {
        let before = r.bytes;
        match read_frame(&mut r) {
            Ok((kind, body)) => {
                let _ = events.send(Event::Frame { conn, kind, body });
            }
            Err(e) => {
                // A hang-up (or reset: a killed peer) exactly between two
                // frames is an ordinary end; anything else is a bad frame.
                let clean = r.bytes == before
                    && matches!(
                        e.kind(),
                        io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset
                    );
                let error = (!clean).then(|| e.to_string());
                let _ = events.send(Event::Closed { conn, error });
                return;
            }
        }
    }
}
