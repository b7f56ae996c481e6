//! The header of every message the conduit SENDs (Active Messages and the
//! one-sided messages for created endpoints' segments), in the first bytes
//! of a receive buffer. Little-endian:
//!
//! ```text
//! 0      kind: AM, RMA_PUT, RMA_GET (requests), RMA_PUT_ACK, RMA_GET_DATA (replies),
//!        LONG_PIECE (either)
//! 1      flags: bit 0 request, bits 1-2 AM category, bit 3 Long payload already in the
//!        segment (written by RDMA WRITE, or by LONG_PIECE messages before it)
//! 2      handler
//! 3      argument count (at most 16)
//! 4      source endpoint index
//! 5      destination endpoint index
//! 6..8   zero
//! 8..12  payload length (u32)
//! 12..16 zero
//! 16..24 Long: destination offset in the target's segment; RMA: offset
//! 24..32 Long: the destination as the initiator named it; RMA: operation id
//! 32..   arguments (4 bytes each), then the payload (unless written by RDMA)
//! ```
//!
//! [`decode`] checks every field against the received length and the
//! limits before anything is used; what it returns holds no pointer.

use gex_conduit::OutgoingAm;
use gex_types::{AmArg, AmCategory, AmIndex, EpIndex};

/// Header bytes before the arguments.
pub const FIXED: usize = 32;
/// The largest header (16 arguments).
pub const MAX_HEADER: usize = FIXED + 16 * 4;

/// An Active Message.
pub const K_AM: u8 = 0;
/// A put to a created endpoint's segment (payload in the message).
pub const K_RMA_PUT: u8 = 1;
/// A get from a created endpoint's segment.
pub const K_RMA_GET: u8 = 2;
/// The answer to a put.
pub const K_RMA_PUT_ACK: u8 = 3;
/// The answer to a get, with the bytes.
pub const K_RMA_GET_DATA: u8 = 4;
/// A piece of a Long payload for a created segment (bound to a created
/// endpoint, or to the primordial one in a job that did not attach), which
/// the conduit cannot write by RDMA: written at arrival, unanswered; the Long
/// follows on the same queue pair and lane, marked placed. Sent on the
/// Long's lane (request or reply flag as the Long).
pub const K_LONG_PIECE: u8 = 5;

const F_REQUEST: u8 = 1;
const F_PLACED: u8 = 8;

fn cat_code(c: AmCategory) -> u8 {
    match c {
        AmCategory::Short => 0,
        AmCategory::Medium => 1,
        AmCategory::Long => 2,
    }
}

/// A decoded message; `payload` is a range of the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    pub kind: u8,
    pub is_request: bool,
    pub category: AmCategory,
    pub placed: bool,
    pub handler: AmIndex,
    pub nargs: usize,
    pub args: [AmArg; 16],
    pub src_ep: EpIndex,
    pub dest_ep: EpIndex,
    /// Payload length (of the bytes in the segment when `placed`).
    pub len: usize,
    pub offset: u64,
    pub addr: u64,
    /// Where the payload starts in the buffer (when not placed).
    pub payload_at: usize,
}

/// Bytes an AM header with `nargs` arguments takes.
pub fn header_len(nargs: usize) -> usize {
    FIXED + 4 * nargs
}

/// Encodes the header of `msg` into `out` (at least [`header_len`] bytes);
/// `placed`: its Long payload goes by RDMA WRITE, not in the message.
/// Returns the header length.
pub fn encode_am(msg: &OutgoingAm<'_>, placed: bool, out: &mut [u8]) -> usize {
    let n = msg.args.len();
    let h = &mut out[..header_len(n)];
    h.fill(0);
    h[0] = K_AM;
    h[1] = u8::from(msg.is_request)
        | (cat_code(msg.category) << 1)
        | if placed { F_PLACED } else { 0 };
    h[2] = msg.handler;
    h[3] = n as u8;
    h[4] = msg.src_ep as u8;
    h[5] = msg.dest_ep as u8;
    h[8..12].copy_from_slice(&(msg.payload.len() as u32).to_le_bytes());
    h[16..24].copy_from_slice(&(msg.dest_offset as u64).to_le_bytes());
    h[24..32].copy_from_slice(&(msg.dest_addr as u64).to_le_bytes());
    for (i, a) in msg.args.iter().enumerate() {
        h[FIXED + 4 * i..FIXED + 4 * i + 4].copy_from_slice(&a.to_le_bytes());
    }
    header_len(n)
}

/// Encodes a one-sided message's header (`kind` RMA_*) into `out`.
pub fn encode_rma(kind: u8, ep: EpIndex, offset: u64, op: u64, len: usize, out: &mut [u8]) {
    let h = &mut out[..FIXED];
    h.fill(0);
    h[0] = kind;
    h[1] = u8::from(matches!(kind, K_RMA_PUT | K_RMA_GET));
    h[5] = ep as u8;
    h[8..12].copy_from_slice(&(len as u32).to_le_bytes());
    h[16..24].copy_from_slice(&offset.to_le_bytes());
    h[24..32].copy_from_slice(&op.to_le_bytes());
}

/// Encodes the header of a [`K_LONG_PIECE`] of `len` bytes for endpoint
/// `ep`'s segment at `offset`, on the request lane or the reply lane.
pub fn encode_piece(ep: EpIndex, offset: u64, is_request: bool, len: usize, out: &mut [u8]) {
    encode_rma(K_LONG_PIECE, ep, offset, 0, len, out);
    out[1] = u8::from(is_request);
}

/// Decodes a received message of `buf.len()` bytes; `None` if anything is
/// inconsistent (kind, flags, argument count, lengths, endpoint indices).
pub fn decode(buf: &[u8]) -> Option<Msg> {
    let h = buf.get(..FIXED)?;
    let kind = h[0];
    let flags = h[1];
    if kind > K_LONG_PIECE || flags & !(F_REQUEST | 6 | F_PLACED) != 0 {
        return None;
    }
    let is_request = flags & F_REQUEST != 0;
    let category = match (flags >> 1) & 3 {
        0 => AmCategory::Short,
        1 => AmCategory::Medium,
        2 => AmCategory::Long,
        _ => return None,
    };
    let placed = flags & F_PLACED != 0;
    let nargs = h[3] as usize;
    let (src_ep, dest_ep) = (h[4] as EpIndex, h[5] as EpIndex);
    if nargs > 16 || (src_ep | dest_ep) as usize >= gex_types::MAX_EPS {
        return None;
    }
    let len = u32::from_le_bytes(h[8..12].try_into().ok()?) as usize;
    let offset = u64::from_le_bytes(h[16..24].try_into().ok()?);
    let addr = u64::from_le_bytes(h[24..32].try_into().ok()?);
    let mut args = [0; 16];
    for (i, a) in args.iter_mut().enumerate().take(nargs) {
        *a = AmArg::from_le_bytes(buf.get(FIXED + 4 * i..FIXED + 4 * i + 4)?.try_into().ok()?);
    }
    let payload_at = header_len(nargs);
    if kind == K_AM {
        if category == AmCategory::Short && len != 0 {
            return None;
        }
        if placed && category != AmCategory::Long {
            return None;
        }
    } else if kind == K_LONG_PIECE {
        if nargs != 0 || placed || category != AmCategory::Short {
            return None;
        }
    } else if nargs != 0
        || placed
        || category != AmCategory::Short
        || matches!(kind, K_RMA_PUT | K_RMA_GET) != is_request
    {
        return None;
    }
    // What the buffer must hold: the payload unless it was placed, and
    // nothing for a GET (whose length is what it asks for).
    let carried = if placed || kind == K_RMA_GET || kind == K_RMA_PUT_ACK {
        0
    } else {
        len
    };
    if payload_at.checked_add(carried)? != buf.len() {
        return None;
    }
    Some(Msg {
        kind,
        is_request,
        category,
        placed,
        handler: h[2],
        nargs,
        args,
        src_ep,
        dest_ep,
        len,
        offset,
        addr,
        payload_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_am_round_trips_and_a_truncated_one_is_refused() {
        let args = [1, -2, 3];
        let m = OutgoingAm::new(AmCategory::Long, true, 200, &args, b"hello")
            .to_offset(64, 0x1234)
            .between(2, 3);
        let mut buf = vec![0u8; 128];
        let h = encode_am(&m, false, &mut buf);
        buf.truncate(h);
        buf.extend_from_slice(b"hello");
        let d = decode(&buf).unwrap();
        assert_eq!(
            (d.kind, d.is_request, d.category, d.handler, d.nargs),
            (K_AM, true, AmCategory::Long, 200, 3)
        );
        assert_eq!(&d.args[..3], &args);
        assert_eq!((d.src_ep, d.dest_ep, d.offset, d.addr), (2, 3, 64, 0x1234));
        assert_eq!(&buf[d.payload_at..], b"hello");
        for cut in 0..buf.len() {
            assert!(decode(&buf[..cut]).is_none(), "{cut}");
        }
        // Placed: the payload is not in the message.
        let m0 = m.between(0, 0);
        let h = encode_am(&m0, true, &mut buf);
        let d = decode(&buf[..h]).unwrap();
        assert!(d.placed && d.len == 5);
        // Placed to a created endpoint's segment (after its pieces).
        let h = encode_am(&m, true, &mut buf);
        let d = decode(&buf[..h]).unwrap();
        assert!(d.placed && d.dest_ep == 3);
        // A placed Medium is refused.
        let med = OutgoingAm::new(AmCategory::Medium, true, 200, &args, b"hello");
        let h = encode_am(&med, true, &mut buf);
        assert!(decode(&buf[..h]).is_none());
    }

    #[test]
    fn long_pieces_round_trip_on_either_lane() {
        for is_request in [true, false] {
            let mut buf = vec![0u8; FIXED];
            encode_piece(7, 65536, is_request, 4, &mut buf);
            buf.extend_from_slice(b"wxyz");
            let d = decode(&buf).unwrap();
            assert_eq!(
                (d.kind, d.is_request, d.dest_ep, d.offset, d.len),
                (K_LONG_PIECE, is_request, 7, 65536, 4)
            );
            assert_eq!(&buf[d.payload_at..], b"wxyz");
            // Truncated, or lengthened, it is refused.
            assert!(decode(&buf[..buf.len() - 1]).is_none());
            buf.push(0);
            assert!(decode(&buf).is_none());
        }
        // A piece with arguments is refused.
        let mut buf = vec![0u8; FIXED];
        encode_piece(0, 0, true, 0, &mut buf);
        assert!(decode(&buf).is_some());
        buf[3] = 1;
        buf.extend_from_slice(&[0; 4]);
        assert!(decode(&buf).is_none());
    }

    #[test]
    fn one_sided_messages_round_trip() {
        let mut buf = vec![0u8; FIXED];
        encode_rma(K_RMA_GET, 5, 4096, 77, 100, &mut buf);
        let d = decode(&buf).unwrap();
        assert_eq!((d.kind, d.is_request, d.dest_ep), (K_RMA_GET, true, 5));
        assert_eq!((d.offset, d.addr, d.len), (4096, 77, 100));
        encode_rma(K_RMA_GET_DATA, 0, 0, 77, 3, &mut buf);
        buf.extend_from_slice(b"abc");
        let d = decode(&buf).unwrap();
        assert!(!d.is_request && d.len == 3);
        // A reply kind flagged as a request is refused.
        buf[1] = 1;
        assert!(decode(&buf).is_none());
    }

    proptest::proptest! {
        /// Arbitrary bytes never panic the decoder, and what it accepts
        /// is consistent with the buffer's length.
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            if let Some(m) = decode(&bytes) {
                proptest::prop_assert!(m.payload_at <= bytes.len());
                proptest::prop_assert!(m.nargs <= 16);
            }
        }
    }
}
