//! The start-up control plane's wire format, shared by ranks and the
//! launcher (`gex-run`).
//!
//! Every frame is `len: u32 LE` (bytes that follow), `kind: u8`, then a
//! kind-specific body. A rank connects to the launcher's Unix socket, sends
//! `Hello`, and from then on each frame it sends is answered (or not) as
//! described on [`Kind`].

use std::io::{self, Read, Write};

/// Largest frame accepted (exchange payloads are small: addresses, names).
pub const MAX_FRAME: usize = 64 << 20;

/// Environment variable: this process's rank in the job.
pub const ENV_RANK: &str = "GEX_RANK";
/// Environment variable: number of ranks in the job.
pub const ENV_SIZE: &str = "GEX_SIZE";
/// Environment variable: path of the launcher's control socket.
pub const ENV_CTRL: &str = "GEX_CTRL";
/// Environment variable: the job's identifier, unique on the host; it
/// prefixes every shared-memory object of the job (`/dev/shm/gex-<id>-...`).
pub const ENV_JOB_ID: &str = "GEX_JOB_ID";
/// Environment variable: the job's secret key (16 hex digits): network
/// conduits put it in every datagram and drop datagrams without it.
pub const ENV_JOB_KEY: &str = "GEX_JOB_KEY";
/// Environment variable: the conduit chosen by the launcher (`smp`, ...).
pub const ENV_CONDUIT: &str = "GEX_CONDUIT";

/// The prefix of every shared-memory object name of job `job_id`, without the
/// leading slash: the launcher removes `/dev/shm/<prefix>*` when a job ends.
pub fn shm_prefix(job_id: &str) -> String {
    format!("gex-{job_id}-")
}

/// Frame kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// rank -> launcher, first frame: `rank: u32, pid: u32`.
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
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len == 0 || len > MAX_FRAME {
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

/// Encodes a `Hello` body.
pub fn hello_body(rank: u32, pid: u32) -> Vec<u8> {
    let mut b = rank.to_le_bytes().to_vec();
    b.extend_from_slice(&pid.to_le_bytes());
    b
}

/// Decodes a `Hello` body into (rank, pid).
pub fn parse_hello(body: &[u8]) -> Option<(u32, u32)> {
    if body.len() != 8 {
        return None;
    }
    Some((
        u32::from_le_bytes(body[0..4].try_into().ok()?),
        u32::from_le_bytes(body[4..8].try_into().ok()?),
    ))
}

/// Encodes an `ExchangeResult` body from every rank's contribution.
pub fn encode_exchange_result(parts: &[Vec<u8>]) -> Vec<u8> {
    let total: usize = parts.iter().map(|p| p.len() + 4).sum();
    let mut b = Vec::with_capacity(4 + total);
    b.extend_from_slice(&(parts.len() as u32).to_le_bytes());
    for p in parts {
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
