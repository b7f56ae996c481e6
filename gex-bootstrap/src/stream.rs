//! A control-plane connection: a Unix stream on one machine, a TCP stream
//! between machines. Both carry the same frames ([`super::wire`]).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};

use super::wire::CtrlAddr;

/// One end of a control connection.
#[derive(Debug)]
pub enum Stream {
    /// Through a Unix socket (ranks on the launcher's machine, any network
    /// namespace).
    Unix(UnixStream),
    /// Through TCP (ranks on other machines); `TCP_NODELAY` is set.
    Tcp(TcpStream),
}

impl Stream {
    /// Connects to `addr` (blocking).
    pub fn connect(addr: &CtrlAddr) -> io::Result<Stream> {
        match addr {
            CtrlAddr::Fd { fd, pid } => take_inherited(*fd, *pid).map(Stream::Unix),
            CtrlAddr::Unix(path) => UnixStream::connect(path).map(Stream::Unix),
            CtrlAddr::Tcp(a) => Stream::tcp(TcpStream::connect(a)?),
        }
    }

    /// Wraps a TCP stream, turning Nagle's algorithm off: control frames
    /// are small and each one is waited for.
    pub fn tcp(s: TcpStream) -> io::Result<Stream> {
        s.set_nodelay(true)?;
        Ok(Stream::Tcp(s))
    }

    /// See [`UnixStream::set_nonblocking`].
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_nonblocking(on),
            Stream::Tcp(s) => s.set_nonblocking(on),
        }
    }

    /// See [`UnixStream::set_write_timeout`].
    pub fn set_write_timeout(&self, t: Option<std::time::Duration>) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_write_timeout(t),
            Stream::Tcp(s) => s.set_write_timeout(t),
        }
    }

    /// See [`UnixStream::set_read_timeout`].
    pub fn set_read_timeout(&self, t: Option<std::time::Duration>) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_read_timeout(t),
            Stream::Tcp(s) => s.set_read_timeout(t),
        }
    }

    /// See [`UnixStream::try_clone`].
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
        })
    }

    /// See [`UnixStream::shutdown`].
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.shutdown(how),
            Stream::Tcp(s) => s.shutdown(how),
        }
    }

    /// Whether this is a TCP connection.
    pub fn is_tcp(&self) -> bool {
        matches!(self, Stream::Tcp(_))
    }

    /// The peer, for messages: its `IP:PORT`, or `a local process`.
    pub fn peer(&self) -> String {
        match self {
            Stream::Unix(_) => "a local process".to_string(),
            Stream::Tcp(s) => s
                .peer_addr()
                .map_or_else(|_| "an unknown address".to_string(), |a| a.to_string()),
        }
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tcp(s) => s.as_raw_fd(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(buf),
            Stream::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.write(buf),
            Stream::Tcp(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.flush(),
            Stream::Tcp(s) => s.flush(),
        }
    }
}

/// Writes all of `buf` to `fd` with `MSG_NOSIGNAL`: a peer that hung up
/// yields an `EPIPE` error rather than a SIGPIPE, which would kill a host
/// process that (unlike a Rust binary) does not ignore that signal.
pub fn send_all_nosignal(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: `buf` is valid for reads of `buf.len()` bytes; the caller
        // owns `fd` for the duration of the call.
        let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}

/// A writer over a borrowed descriptor that never raises SIGPIPE (see
/// [`send_all_nosignal`]).
pub struct NoSigPipe<'a, T: AsRawFd>(pub &'a T);

impl<T: AsRawFd> Write for NoSigPipe<'_, T> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        send_all_nosignal(self.0.as_raw_fd(), buf).map(|()| buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Set once the inherited control socket has been taken: it is one
/// connection, and a second owner would close it under the first.
static INHERITED_TAKEN: AtomicBool = AtomicBool::new(false);

/// Takes ownership of descriptor `fd`, which the launcher (process
/// `launcher`) passed down as this rank's control connection
/// (`GEX_CTRL=fd:N:PID`), after checking that it is a Unix stream socket
/// whose other end that process of this user holds (its peer credentials:
/// a program that inherited the variable but not the descriptor must not
/// talk the protocol into some other socket); marks it close-on-exec, so
/// programs the rank starts do not inherit it. Only once per process.
fn take_inherited(fd: RawFd, launcher: u32) -> io::Result<UnixStream> {
    let bad = |why: String| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "descriptor {fd} is not the control socket gex-run passed down ({why}); a \
                 spawner that closes inherited descriptors needs --ctrl tcp"
            ),
        )
    };
    let opt = |name: libc::c_int| -> io::Result<libc::c_int> {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes into `v`; an
        // invalid or non-socket descriptor is an error, not a memory access.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                name,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(v)
    };
    let domain = opt(libc::SO_DOMAIN).map_err(|e| bad(e.to_string()))?;
    let ty = opt(libc::SO_TYPE).map_err(|e| bad(e.to_string()))?;
    if domain != libc::AF_UNIX || ty != libc::SOCK_STREAM {
        return Err(bad("not a Unix stream socket".into()));
    }
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(bad(io::Error::last_os_error().to_string()));
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    if cred.pid as u32 != launcher || cred.uid != uid {
        return Err(bad(format!(
            "its other end is process {} of user {}, not the launcher {launcher} of user {uid}",
            cred.pid, cred.uid
        )));
    }
    if INHERITED_TAKEN.swap(true, Ordering::SeqCst) {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("the inherited control socket (descriptor {fd}) is already in use"),
        ));
    }
    // SAFETY: fcntl on a descriptor just checked to be an open socket.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    // SAFETY: `fd` is an open Unix stream socket (checked above) that the
    // launcher handed to this process for this purpose, and the flag above
    // makes this the only place that takes ownership of it.
    Ok(unsafe { UnixStream::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::IntoRawFd;

    #[test]
    fn an_inherited_control_socket_is_checked_and_taken_once() {
        // Not a socket: refused, and nothing is taken.
        let file = std::fs::File::open("/dev/null").unwrap();
        let me = std::process::id();
        let e = take_inherited(file.as_raw_fd(), me).unwrap_err();
        assert!(e.to_string().contains("--ctrl tcp"), "{e}");
        // A datagram socket is not a control connection either.
        let (d, _d2) = std::os::unix::net::UnixDatagram::pair().unwrap();
        assert!(take_inherited(d.as_raw_fd(), me).is_err());
        // Nor a socket whose other end is not the launcher's (the pair was
        // made by this process, not by process 1).
        let (ours, theirs) = UnixStream::pair().unwrap();
        let e = take_inherited(theirs.as_raw_fd(), 1).unwrap_err();
        assert!(e.to_string().contains("not the launcher 1"), "{e}");
        // A connected stream socket from the launcher is taken, once, and
        // carries frames.
        let fd = theirs.into_raw_fd();
        let mut s = Stream::connect(&CtrlAddr::Fd { fd, pid: me }).unwrap();
        // SAFETY: F_GETFD on a descriptor we own.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        let (_a, b) = UnixStream::pair().unwrap();
        let e = take_inherited(b.as_raw_fd(), me).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        super::super::wire::write_frame(&mut s, super::super::wire::Kind::Exit, &[1, 0, 0, 0])
            .unwrap();
        let (k, body) = super::super::wire::read_frame(&mut &ours).unwrap();
        assert_eq!(
            (k, body),
            (super::super::wire::Kind::Exit, vec![1, 0, 0, 0])
        );
    }
}
