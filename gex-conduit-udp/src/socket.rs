//! The socket side: the protocol endpoint with its sockets, and sending
//! datagrams without blocking (connected sockets, `sendmsg` of two
//! parts).

use std::net::{SocketAddr, UdpSocket};
use std::time::Instant;

use crate::proto;
use crate::setup::set_buffer;

/// How this rank sends to one peer.
pub(crate) enum Sender {
    /// Not decided yet (nothing sent so far).
    Untried,
    /// Through a socket of its own, connected to the peer: the kernel then
    /// keeps the route instead of looking it up for every datagram (on
    /// loopback a round trip takes 3.4 us this way against 3.9 us with
    /// addressed sends from one socket).
    Connected(UdpSocket),
    /// Through the receiving socket, with the peer's address (past
    /// [`MAX_CONNECTED`] peers, or if a connected socket could not be made).
    Shared,
}

/// Peers that get a connected sending socket, at most (one descriptor
/// each); datagrams to the others go out through the receiving socket.
pub(crate) const MAX_CONNECTED: usize = 256;

/// The socket side: the protocol state machine and what it needs to talk.
pub(crate) struct Net {
    pub(crate) ep: proto::Endpoint,
    /// The socket every peer sends to (and, for some peers, sends from).
    pub(crate) sock: UdpSocket,
    pub(crate) addrs: Vec<RawAddr>,
    /// Every peer's address, for connecting sending sockets.
    pub(crate) peer_addrs: Vec<SocketAddr>,
    /// How this rank sends to each peer.
    pub(crate) senders: Vec<Sender>,
    /// Peers with a connected sending socket.
    pub(crate) connected: usize,
    pub(crate) tx: Vec<u8>,
    pub(crate) rx: Vec<u8>,
    /// When a poll next looks at the protocol's timers.
    pub(crate) next_timer_check: Instant,
    /// Polls since the last look at the timers.
    pub(crate) polls_since_timers: u32,
}

impl Net {
    /// Sends every datagram the protocol has ready. A datagram the kernel
    /// refuses (a full socket buffer) counts as lost: the protocol
    /// retransmits it.
    pub(crate) fn flush(&mut self, now: Instant) {
        use std::os::fd::AsRawFd;
        while let Some((peer, tail)) = self.ep.poll_transmit_gather(now, &mut self.tx) {
            let p = peer as usize;
            if matches!(self.senders[p], Sender::Untried) {
                self.senders[p] = self.connect(p);
            }
            match &self.senders[p] {
                Sender::Connected(s) => send_nowait(s.as_raw_fd(), &self.tx, &tail, None),
                _ => send_nowait(self.sock.as_raw_fd(), &self.tx, &tail, Some(&self.addrs[p])),
            }
        }
    }

    /// A sending socket connected to peer `p`, from this rank's address,
    /// while fewer than [`MAX_CONNECTED`] exist; else (or on failure) the
    /// shared socket.
    pub(crate) fn connect(&mut self, p: usize) -> Sender {
        if self.connected >= MAX_CONNECTED {
            return Sender::Shared;
        }
        let Ok(ip) = self.sock.local_addr().map(|a| a.ip()) else {
            return Sender::Shared;
        };
        let made = UdpSocket::bind((ip, 0)).and_then(|s| {
            s.connect(self.peer_addrs[p])?;
            Ok(s)
        });
        match made {
            Ok(s) => {
                set_buffer(&s, libc::SO_SNDBUF, 8 << 20);
                self.connected += 1;
                Sender::Connected(s)
            }
            Err(_) => Sender::Shared,
        }
    }

    /// One received datagram into `rx`, waiting up to the socket's read
    /// timeout when `wait`; its length, or `None`.
    pub(crate) fn recv(&mut self, wait: bool) -> Option<usize> {
        use std::os::fd::AsRawFd;
        let flags = if wait { 0 } else { libc::MSG_DONTWAIT };
        // SAFETY: rx is a writable buffer of rx.len() bytes; no address is
        // requested back.
        let n = unsafe {
            libc::recvfrom(
                self.sock.as_raw_fd(),
                self.rx.as_mut_ptr() as *mut libc::c_void,
                self.rx.len(),
                flags,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        (n >= 0).then_some(n as usize)
    }
}

/// A peer's socket address in the form `sendmsg` takes.
pub(crate) struct RawAddr {
    pub(crate) storage: libc::sockaddr_storage,
    pub(crate) len: libc::socklen_t,
}

impl RawAddr {
    pub(crate) fn new(to: &SocketAddr) -> RawAddr {
        // SAFETY: all-zero is a valid sockaddr_storage; each arm writes the
        // structure of its family, which fits in sockaddr_storage.
        unsafe {
            let mut storage: libc::sockaddr_storage = std::mem::zeroed();
            let len = match to {
                SocketAddr::V4(a) => {
                    let sin = &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in);
                    sin.sin_family = libc::AF_INET as libc::sa_family_t;
                    sin.sin_port = a.port().to_be();
                    sin.sin_addr = libc::in_addr {
                        s_addr: u32::from_ne_bytes(a.ip().octets()),
                    };
                    std::mem::size_of::<libc::sockaddr_in>()
                }
                SocketAddr::V6(a) => {
                    let sin6 = &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in6);
                    sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                    sin6.sin6_port = a.port().to_be();
                    sin6.sin6_addr = libc::in6_addr {
                        s6_addr: a.ip().octets(),
                    };
                    sin6.sin6_flowinfo = a.flowinfo();
                    sin6.sin6_scope_id = a.scope_id();
                    std::mem::size_of::<libc::sockaddr_in6>()
                }
            };
            RawAddr {
                storage,
                len: len as libc::socklen_t,
            }
        }
    }
}

/// Sends the datagram `head` + `tail` on `fd` without blocking, to `to`
/// (`None` for a connected socket), handing the two parts to the kernel as
/// they are (no copy into one buffer); a full socket buffer drops it (the
/// protocol retransmits), as does an error (a peer gone).
pub(crate) fn send_nowait(fd: std::os::fd::RawFd, head: &[u8], tail: &[u8], to: Option<&RawAddr>) {
    let (name, namelen) = match to {
        Some(a) => (&a.storage as *const libc::sockaddr_storage, a.len),
        None => (std::ptr::null(), 0),
    };
    if tail.is_empty() {
        // One buffer: sendto, which spares the kernel reading a msghdr and
        // an iovec array.
        // SAFETY: the address, if any, is valid for its exact size (a
        // connected socket takes none) and `head` is readable for its
        // length; the kernel only reads both.
        unsafe {
            libc::sendto(
                fd,
                head.as_ptr() as *const libc::c_void,
                head.len(),
                libc::MSG_DONTWAIT,
                name as *const libc::sockaddr,
                namelen,
            )
        };
        return;
    }
    let iov = [
        libc::iovec {
            iov_base: head.as_ptr() as *mut libc::c_void,
            iov_len: head.len(),
        },
        libc::iovec {
            iov_base: tail.as_ptr() as *mut libc::c_void,
            iov_len: tail.len(),
        },
    ];
    // SAFETY: all-zero is a valid msghdr (no control data, no flags).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = name as *mut libc::c_void;
    msg.msg_namelen = namelen;
    msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = 2;
    // SAFETY: the message names a valid address of its exact size, or none
    // for a connected socket, and two iovecs over readable buffers (the
    // kernel only reads them), all alive for the call.
    unsafe { libc::sendmsg(fd, &msg, libc::MSG_DONTWAIT) };
}
