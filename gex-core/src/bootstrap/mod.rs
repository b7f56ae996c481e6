//! The start-up control plane, rank side: all-gather exchange, barrier and
//! job exit through the launcher.
//!
//! A process started by `gex-run` finds the launcher's socket in its
//! environment ([`wire::ENV_CTRL`]); a process started any other way is a
//! job of one rank ("singleton") and needs no launcher. The control plane is
//! slow (a socket round trip through the launcher) and is only used while
//! objects are created: client init, segment attach, team creation.

pub mod wire;

use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gex_types::{Error, Rank, Result};

use wire::Kind;

/// How long a rank waits for the launcher to acknowledge an exit request.
const EXIT_ACK_TIMEOUT: Duration = Duration::from_secs(10);

/// The rank side of the control plane.
pub struct Bootstrap {
    rank: Rank,
    size: Rank,
    job_id: String,
    conn: Option<Mutex<Conn>>,
}

struct Conn {
    stream: UnixStream,
    /// Bytes read but not yet consumed as a whole frame.
    pending: Vec<u8>,
}

impl std::fmt::Debug for Bootstrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bootstrap")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("job_id", &self.job_id)
            .field("launcher", &self.conn.is_some())
            .finish()
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl Bootstrap {
    /// A job of one rank with no launcher.
    pub fn singleton() -> Bootstrap {
        let job_id = format!("s{}", std::process::id());
        Bootstrap {
            rank: 0,
            size: 1,
            job_id,
            conn: None,
        }
    }

    /// Joins the job described by the environment: the launcher's job when
    /// `GEX_CTRL` is set, otherwise a singleton.
    pub fn from_env() -> Result<Bootstrap> {
        let Some(ctrl) = env_var(wire::ENV_CTRL) else {
            return Ok(Bootstrap::singleton());
        };
        let parse = |name: &str| -> Result<Rank> {
            let v = env_var(name).ok_or_else(|| {
                Error::not_init(format!("{} is set but {name} is not", wire::ENV_CTRL))
            })?;
            v.parse::<Rank>()
                .map_err(|_| Error::not_init(format!("{name}={v:?} is not a rank")))
        };
        let rank = parse(wire::ENV_RANK)?;
        let size = parse(wire::ENV_SIZE)?;
        if size == 0 || rank >= size {
            return Err(Error::not_init(format!(
                "rank {rank} is not in a job of {size} ranks"
            )));
        }
        let job_id = env_var(wire::ENV_JOB_ID)
            .ok_or_else(|| Error::not_init(format!("{} is not set", wire::ENV_JOB_ID)))?;
        let mut stream = UnixStream::connect(&ctrl)
            .map_err(|e| Error::resource(format!("cannot reach the launcher at {ctrl}: {e}")))?;
        wire::write_frame(
            &mut stream,
            Kind::Hello,
            &wire::hello_body(rank, std::process::id()),
        )
        .map_err(|e| Error::resource(format!("control plane: {e}")))?;
        stream
            .set_nonblocking(true)
            .map_err(|e| Error::resource(format!("control plane: {e}")))?;
        Ok(Bootstrap {
            rank,
            size,
            job_id,
            conn: Some(Mutex::new(Conn {
                stream,
                pending: Vec::new(),
            })),
        })
    }

    /// This process's rank in the job.
    pub fn rank(&self) -> Rank {
        self.rank
    }

    /// The number of ranks in the job.
    pub fn size(&self) -> Rank {
        self.size
    }

    /// The job's identifier (prefix of its shared-memory object names).
    pub fn job_id(&self) -> &str {
        &self.job_id
    }

    /// Whether a launcher serves this job.
    pub fn has_launcher(&self) -> bool {
        self.conn.is_some()
    }

    /// All-gather: every rank contributes `mine` and receives every rank's
    /// contribution, in rank order. Collective over the job. `progress` is
    /// called while waiting, so that a rank blocked here still serves
    /// messages its peers need.
    pub fn exchange(&self, mine: &[u8], progress: &mut dyn FnMut()) -> Result<Vec<Vec<u8>>> {
        let Some(conn) = &self.conn else {
            return Ok(vec![mine.to_vec()]);
        };
        let io_err = |e: io::Error| Error::resource(format!("control plane: {e}"));
        let lock = || conn.lock().unwrap_or_else(|p| p.into_inner());
        lock().send(Kind::Exchange, mine).map_err(io_err)?;
        loop {
            // The connection is locked only around each read, never while
            // progress runs handlers: a handler may call `exit`, which needs
            // the connection to tell the launcher.
            let frame = lock().try_recv().map_err(io_err)?;
            match frame {
                Some((Kind::ExchangeResult, body)) => {
                    let parts = wire::decode_exchange_result(&body).ok_or_else(|| {
                        Error::resource("control plane: malformed exchange result")
                    })?;
                    if parts.len() != self.size as usize {
                        return Err(Error::resource(format!(
                            "control plane: exchange returned {} parts for {} ranks",
                            parts.len(),
                            self.size
                        )));
                    }
                    return Ok(parts);
                }
                Some((Kind::Abort, body)) => {
                    return Err(Error::resource(format!(
                        "the launcher ended the job: {}",
                        String::from_utf8_lossy(&body)
                    )))
                }
                Some((kind, _)) => {
                    return Err(Error::resource(format!(
                        "control plane: unexpected {kind:?} frame"
                    )))
                }
                None => {
                    progress();
                    std::thread::yield_now();
                }
            }
        }
    }

    /// Barrier over the job (an exchange of nothing).
    pub fn barrier(&self, progress: &mut dyn FnMut()) -> Result<()> {
        self.exchange(&[], progress).map(|_| ())
    }

    /// Asks the launcher to end the whole job with `code`, and waits (at
    /// most [`EXIT_ACK_TIMEOUT`]) for its acknowledgement, so that the
    /// launcher has recorded the code before this process exits. Frames
    /// of a collective in progress are dropped: the job is ending.
    pub fn request_exit(&self, code: i32) {
        let Some(conn) = &self.conn else { return };
        let mut conn = conn.lock().unwrap_or_else(|p| p.into_inner());
        if conn.send(Kind::Exit, &code.to_le_bytes()).is_err() {
            return;
        }
        let deadline = Instant::now() + EXIT_ACK_TIMEOUT;
        while Instant::now() < deadline {
            match conn.try_recv() {
                Ok(Some((Kind::ExitAck, _))) | Err(_) => return,
                Ok(_) => std::thread::yield_now(),
            }
        }
    }
}

impl Conn {
    fn send(&mut self, kind: Kind, body: &[u8]) -> io::Result<()> {
        // The socket is non-blocking for reads; writes are small, so switch
        // to blocking for the write to avoid partial-frame bookkeeping.
        self.stream.set_nonblocking(false)?;
        let r = wire::write_frame(&mut self.stream, kind, body);
        self.stream.set_nonblocking(true)?;
        r
    }

    /// Returns a whole frame if one has arrived, without blocking.
    fn try_recv(&mut self) -> io::Result<Option<(Kind, Vec<u8>)>> {
        let mut buf = [0u8; 4096];
        loop {
            if self.pending.len() >= 4 {
                let len = u32::from_le_bytes(self.pending[0..4].try_into().unwrap()) as usize;
                if len == 0 || len > wire::MAX_FRAME {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "bad control frame length",
                    ));
                }
                if self.pending.len() >= 4 + len {
                    let frame: Vec<u8> = self.pending.drain(..4 + len).collect();
                    let (kind, body) = wire::read_frame(&mut &frame[..])?;
                    return Ok(Some((kind, body)));
                }
            }
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the launcher closed the control connection",
                    ))
                }
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}
