//! The control socket: accepting rank connections and reading their frames.
//!
//! Threads here only turn bytes into [`Event`]s; every decision is the
//! coordinator's (`job.rs`), which owns a write handle of each connection.

use std::io::{self, Read};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::Sender;
use gex_core::bootstrap::stream::Stream;
use gex_core::bootstrap::wire::{read_frame, CtrlAddr};

use crate::job::Event;

/// Identifies one accepted connection (ranks are only known after `Hello`).
pub(crate) type ConnId = usize;

/// Where the control socket listens.
pub(crate) enum Listen {
    /// A Unix socket file.
    Unix(PathBuf),
    /// A TCP address (port 0: any free port).
    Tcp(SocketAddr),
}

enum Listener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener),
}

impl Listener {
    fn accept(&self) -> io::Result<Stream> {
        match self {
            Listener::Unix(l, _) => l.accept().map(|(s, _)| Stream::Unix(s)),
            Listener::Tcp(l) => Stream::tcp(l.accept()?.0),
        }
    }
}

/// The listening control socket and its acceptor thread.
pub(crate) struct ControlSocket {
    /// What ranks are told to connect to (`GEX_CTRL`).
    advertised: CtrlAddr,
    /// Where the acceptor can be reached from here (to wake it up).
    local: CtrlAddr,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<Vec<JoinHandle<()>>>>,
}

impl ControlSocket {
    /// Binds and starts accepting. Each connection is announced with
    /// [`Event::Connected`] (carrying a write handle), then each frame read
    /// from it as [`Event::Frame`], and its end as [`Event::Closed`].
    pub(crate) fn start(at: &Listen, events: Sender<Event>) -> io::Result<ControlSocket> {
        let (listener, advertised, local) = match at {
            Listen::Unix(path) => {
                let l = UnixListener::bind(path)?;
                let addr = CtrlAddr::Unix(path.clone());
                (Listener::Unix(l, path.clone()), addr.clone(), addr)
            }
            Listen::Tcp(addr) => {
                let l = TcpListener::bind(addr)?;
                let bound = l.local_addr()?;
                let mut local = bound;
                let mut advertised = bound;
                if bound.ip().is_unspecified() {
                    local.set_ip(IpAddr::V4(Ipv4Addr::LOCALHOST));
                    let ip = crate::hosts::first_ipv4().unwrap_or(Ipv4Addr::LOCALHOST);
                    advertised.set_ip(IpAddr::V4(ip));
                }
                (
                    Listener::Tcp(l),
                    CtrlAddr::Tcp(advertised),
                    CtrlAddr::Tcp(local),
                )
            }
        };
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let acceptor = std::thread::Builder::new()
            .name("gex-run-accept".into())
            .spawn(move || accept_loop(listener, &stop2, &events))?;
        Ok(ControlSocket {
            advertised,
            local,
            stop,
            acceptor: Some(acceptor),
        })
    }

    /// The address ranks connect to (the value of `GEX_CTRL`).
    pub(crate) fn advertised(&self) -> &CtrlAddr {
        &self.advertised
    }

    /// Stops accepting and removes the socket file. Returns the reader
    /// threads, which end once their connections are shut down.
    pub(crate) fn stop(mut self) -> Vec<JoinHandle<()>> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Vec<JoinHandle<()>> {
        let Some(acceptor) = self.acceptor.take() else {
            return Vec::new();
        };
        self.stop.store(true, Ordering::SeqCst);
        // Wake the acceptor, blocked in accept(), with a connection of our
        // own; it sees the flag and returns. If connecting fails the
        // listener is already broken and accept() has returned anyway.
        match &self.local {
            CtrlAddr::Unix(path) => drop(UnixStream::connect(path)),
            CtrlAddr::Tcp(addr) => drop(TcpStream::connect(addr)),
        }
        // The acceptor drops the listener (removing a Unix socket's file)
        // before it returns.
        acceptor.join().unwrap_or_default()
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

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, path) = self {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn accept_loop(
    listener: Listener,
    stop: &AtomicBool,
    events: &Sender<Event>,
) -> Vec<JoinHandle<()>> {
    let mut readers = Vec::new();
    let mut next: ConnId = 0;
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
        let id = next;
        next += 1;
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
