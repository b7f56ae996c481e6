//! How an Active Message travels inside one protocol message.
//!
//! | bytes | field |
//! | --- | --- |
//! | 1 | category (0 Short, 1 Medium, 2 Long) |
//! | 1 | 1 for a request, 0 for a reply |
//! | 1 | handler index |
//! | 1 | argument count (0..=16) |
//! | 4 | payload length (LE) |
//! | 1 | sending endpoint's index (below `gex_types::MAX_EPS`) |
//! | 1 | destination endpoint's index (below `gex_types::MAX_EPS`) |
//! | 2 | 0 |
//! | 16 | Long only: destination offset in the target segment, destination as named (LE u64 each) |
//! | 4 × nargs | arguments (LE i32) |
//! | len | payload |
//!
//! One-sided operations (the conduit's RMA capability, handled by the
//! receiving shell with no AM handler) use first bytes 3 to 8. Puts and
//! gets have a fixed header of [`RMA_HEADER`] bytes:
//!
//! | bytes | field |
//! | --- | --- |
//! | 1 | kind: 3 PUT, 4 PUT_ACK, 5 GET, 6 GET_DATA |
//! | 1 | 1 for PUT and GET (request lane), 0 for the answers |
//! | 1 | PUT, GET: the target endpoint's index, whose bound segment the offset is in (0: the primordial one); else 0 |
//! | 1 | 0 |
//! | 4 | payload length (PUT, GET_DATA; else 0) (LE) |
//! | 8 | offset in the target segment (PUT, GET; else 0) |
//! | 8 | operation id at the initiator (slot and generation) |
//! | 8 | GET: bytes wanted; else 0 |
//! | len | payload |
//!
//! Remote atomics are as short as an Active Message with a few
//! arguments: a round trip's cost grows with its datagrams' bytes (their
//! MACs and copies), and the atomic is meant to cost no more than an
//! AMShort round trip. An ATOMIC ([`ATOMIC_HEADER`] bytes, then the
//! operands):
//!
//! | bytes | field |
//! | --- | --- |
//! | 1 | 7 |
//! | 1 | 1 (request lane) |
//! | 1 | the data type: its index in `gex_types::Dt::BUILTIN` |
//! | 1 | the operation: its index in `gex_types::Op::ALL` |
//! | 4 | operation id at the initiator ([`compact_id`]) (LE) |
//! | 8 | offset in the target's primordial segment (LE) |
//! | n × size | the operands the operation takes (0, 1 or 2), each the data type's size, its bits (LE) |
//!
//! and its ATOMIC_RESULT ([`ATOMIC_RESULT_HEADER`] bytes, then the value):
//!
//! | bytes | field |
//! | --- | --- |
//! | 1 | 8 |
//! | 1 | 0 (reply lane) |
//! | 1 | bytes of the value: the data type's size for a fetching operation, else 0 |
//! | 1 | 0 |
//! | 4 | the ATOMIC's operation id (LE) |
//! | size | the value before the operation, its bits (LE) |

use gex_conduit::OutgoingAm;
use gex_types::{AmArg, AmCategory, AmIndex, Dt, EpIndex, Op, AM_MAX_ARGS};

/// Bytes of an AM's header before a Long's destination and the arguments.
pub const AM_HEADER: usize = 12;

/// An AM decoded from a message; the payload borrows the message.
#[derive(Debug, PartialEq, Eq)]
pub struct Am<'a> {
    /// Short, Medium or Long.
    pub category: AmCategory,
    /// Request or reply.
    pub is_request: bool,
    /// Handler index.
    pub handler: AmIndex,
    /// The sending endpoint's index (as the bytes say: unchecked).
    pub src_ep: EpIndex,
    /// The destination endpoint's index (as the bytes say: unchecked).
    pub dest_ep: EpIndex,
    /// Arguments.
    pub args: [AmArg; AM_MAX_ARGS],
    /// Number of arguments.
    pub nargs: usize,
    /// Long: offset in the target's segment.
    pub dest_offset: usize,
    /// Long: destination as named by the sender.
    pub dest_addr: usize,
    /// The payload.
    pub payload: &'a [u8],
}

/// Encodes `msg` into `out` (cleared first).
pub fn encode(msg: &OutgoingAm<'_>, out: &mut Vec<u8>) {
    out.clear();
    // Exactly the encoded length, so that the buffer becomes the protocol's
    // shared message bytes without reallocating.
    out.reserve_exact(encoded_len(msg));
    encode_append(msg, out);
}

/// The length of `msg` encoded.
pub fn encoded_len(msg: &OutgoingAm<'_>) -> usize {
    encoded_len_of(msg.category, msg.args.len(), msg.payload.len())
}

/// [`encoded_len`] of an AM of `category` with `nargs` arguments and a
/// `len`-byte payload.
pub fn encoded_len_of(category: AmCategory, nargs: usize, len: usize) -> usize {
    let long = if category == AmCategory::Long { 16 } else { 0 };
    AM_HEADER + long + 4 * nargs + len
}

/// Appends the encoding of `msg` ([`encoded_len`] bytes) to `out`.
pub fn encode_append(msg: &OutgoingAm<'_>, out: &mut Vec<u8>) {
    out.push(msg.category as u8);
    out.push(msg.is_request as u8);
    out.push(msg.handler);
    out.push(msg.args.len() as u8);
    out.extend_from_slice(&(msg.payload.len() as u32).to_le_bytes());
    // Indices below MAX_EPS <= 256 (the AM layer's guarantee).
    out.extend_from_slice(&[msg.src_ep as u8, msg.dest_ep as u8, 0, 0]);
    if msg.category == AmCategory::Long {
        out.extend_from_slice(&(msg.dest_offset as u64).to_le_bytes());
        out.extend_from_slice(&(msg.dest_addr as u64).to_le_bytes());
    }
    for a in msg.args {
        out.extend_from_slice(&a.to_le_bytes());
    }
    out.extend_from_slice(msg.payload);
}

/// A one-sided put: data for the target's segment.
pub const RMA_PUT: u8 = 3;
/// A put's data is in the target segment.
pub const RMA_PUT_ACK: u8 = 4;
/// A one-sided get: bytes wanted from the target's segment.
pub const RMA_GET: u8 = 5;
/// A get's bytes.
pub const RMA_GET_DATA: u8 = 6;
/// A remote atomic the target's shell performs with CPU atomics.
pub const RMA_ATOMIC: u8 = 7;
/// An atomic's fetched value.
pub const RMA_ATOMIC_RESULT: u8 = 8;
/// Length of a put's or get's header.
pub const RMA_HEADER: usize = 32;
/// Bytes of an ATOMIC before its operands.
pub const ATOMIC_HEADER: usize = 16;
/// Bytes of an ATOMIC_RESULT before its value.
pub const ATOMIC_RESULT_HEADER: usize = 8;

/// A one-sided message decoded; the payload borrows the message (empty
/// when it was placed in the segment as it arrived).
#[derive(Debug, PartialEq, Eq)]
pub struct Rma<'a> {
    /// [`RMA_PUT`], [`RMA_PUT_ACK`], [`RMA_GET`] or [`RMA_GET_DATA`].
    pub kind: u8,
    /// PUT, GET: the index of the endpoint whose bound segment `offset` is
    /// in (untrusted: the target checks it has one).
    pub ep: EpIndex,
    /// Offset in the target segment (PUT, GET).
    pub offset: usize,
    /// The operation's id at the initiator.
    pub op: u64,
    /// GET: bytes wanted.
    pub want: usize,
    /// Declared payload length.
    pub len: usize,
    /// The payload (PUT, GET_DATA), unless placed.
    pub payload: &'a [u8],
}

/// Whether a message is a one-sided one (by its first byte).
pub fn is_rma(m: &[u8]) -> bool {
    m.first()
        .is_some_and(|&k| (RMA_PUT..=RMA_ATOMIC_RESULT).contains(&k))
}

/// Whether `kind` travels on the request lane.
fn is_request_kind(kind: u8) -> bool {
    matches!(kind, RMA_PUT | RMA_GET)
}

/// Appends a one-sided message to `out` (`ep`: 0 for the answers).
pub fn encode_rma_append(
    kind: u8,
    ep: EpIndex,
    offset: usize,
    op: u64,
    want: usize,
    payload: &[u8],
    out: &mut Vec<u8>,
) {
    encode_rma_header(kind, ep, offset, op, want, payload.len(), out);
    out.extend_from_slice(payload);
}

/// Appends the header of a one-sided message whose `len` payload bytes
/// follow separately (a put sent from the client's source).
pub fn encode_rma_header(
    kind: u8,
    ep: EpIndex,
    offset: usize,
    op: u64,
    want: usize,
    len: usize,
    out: &mut Vec<u8>,
) {
    debug_assert!((ep as usize) < gex_types::MAX_EPS);
    out.push(kind);
    out.push(u8::from(is_request_kind(kind)));
    out.extend_from_slice(&[ep as u8, 0]);
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(&(offset as u64).to_le_bytes());
    out.extend_from_slice(&op.to_le_bytes());
    out.extend_from_slice(&(want as u64).to_le_bytes());
}

/// The low 32 bits that an ATOMIC carries of the operation table's id
/// `id` (generation in the high 32 bits, slot in the low): the low 8
/// bits of the generation, then 24 bits of slot; `None` for a slot at or
/// above 2^24 (no table grows that far: the protocol's windows bound the
/// operations in flight). See [`crate::rma::Ops::take_atomic`].
pub fn compact_id(id: u64) -> Option<u32> {
    let slot = id as u32;
    (slot < 1 << 24).then_some(((id >> 32) as u32 & 0xff) << 24 | slot)
}

/// The length of an ATOMIC of `op` on `dt` (a built-in type).
pub fn atomic_len(dt: Dt, op: Op) -> usize {
    ATOMIC_HEADER + op.operand_count() * dt.size().unwrap_or(8)
}

/// Appends an ATOMIC ([`atomic_len`] bytes): `op` on the `dt` (a built-in
/// type) at `offset` in the target's segment, the operation `id`
/// ([`compact_id`]) and the operands the operation takes (low-order bytes
/// of their bits for 32-bit types).
pub fn encode_atomic(
    dt: Dt,
    op: Op,
    id: u32,
    offset: usize,
    operands: [u64; 2],
    out: &mut Vec<u8>,
) {
    let size = dt.size().expect("a built-in type");
    out.push(RMA_ATOMIC);
    out.push(1);
    // Each code is one bit, at its index in `Dt::BUILTIN` and `Op::ALL`
    // (a test checks this): the index without a search on the atomic's
    // path.
    out.push((dt as u32).trailing_zeros() as u8);
    out.push((op as u64).trailing_zeros() as u8);
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&(offset as u64).to_le_bytes());
    for o in &operands[..op.operand_count()] {
        out.extend_from_slice(&o.to_le_bytes()[..size]);
    }
}

/// An ATOMIC decoded: a built-in type, an operation valid on it, and the
/// operands it takes (zero-extended bits; the others 0). The offset is
/// the sender's word, unchecked.
#[derive(Debug, PartialEq, Eq)]
pub struct AtomicRequest {
    /// The data type.
    pub dt: Dt,
    /// The operation.
    pub op: Op,
    /// The initiator's operation id ([`compact_id`]).
    pub id: u32,
    /// Offset in the target's primordial segment.
    pub offset: usize,
    /// The operands' bits.
    pub operands: [u64; 2],
}

/// Decodes an ATOMIC; what is wrong with it otherwise (a wrong lane byte,
/// an unknown data type or operation, an operation not valid on the type,
/// or a length that does not fit them), for the fatal message naming the
/// sender.
pub fn decode_atomic(b: &[u8]) -> Result<AtomicRequest, String> {
    if b.len() < ATOMIC_HEADER || b[0] != RMA_ATOMIC || b[1] != 1 {
        return Err(format!("is a malformed atomic ({} bytes)", b.len()));
    }
    let dt = *Dt::BUILTIN
        .get(b[2] as usize)
        .ok_or_else(|| format!("is an atomic on data type {}, not a built-in type", b[2]))?;
    let op = *Op::ALL
        .get(b[3] as usize)
        .filter(|o| o.valid_for_atomic(dt))
        .ok_or_else(|| {
            format!(
                "is an atomic with operation {}, not an atomic operation on {}",
                b[3],
                dt.name()
            )
        })?;
    let size = dt.size().expect("a built-in type");
    if b.len() != atomic_len(dt, op) {
        return Err(format!(
            "is an atomic {} on {} of {} bytes, not {}",
            op.name(),
            dt.name(),
            b.len(),
            atomic_len(dt, op)
        ));
    }
    let mut operands = [0u64; 2];
    for (i, o) in operands.iter_mut().take(op.operand_count()).enumerate() {
        let at = ATOMIC_HEADER + i * size;
        let mut bits = [0u8; 8];
        bits[..size].copy_from_slice(&b[at..at + size]);
        *o = u64::from_le_bytes(bits);
    }
    Ok(AtomicRequest {
        dt,
        op,
        id: u32::from_le_bytes(b[4..8].try_into().expect("4 bytes")),
        offset: usize::try_from(u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")))
            .map_err(|_| "is an atomic at an offset beyond this machine's addresses".to_string())?,
        operands,
    })
}

/// Appends the ATOMIC_RESULT of the ATOMIC `id`: `value` (the low `len`
/// bytes of its bits; `len` 0 for an operation that does not fetch).
pub fn encode_atomic_result(id: u32, value: u64, len: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(&[RMA_ATOMIC_RESULT, 0, len as u8, 0]);
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&value.to_le_bytes()[..len]);
}

/// Decodes an ATOMIC_RESULT: the operation id and the value's bytes (0,
/// 4 or 8 of them), if well formed.
pub fn decode_atomic_result(b: &[u8]) -> Option<(u32, &[u8])> {
    let head = b.get(..ATOMIC_RESULT_HEADER)?;
    let len = head[2] as usize;
    if head[0] != RMA_ATOMIC_RESULT
        || head[1] != 0
        || head[3] != 0
        || !matches!(len, 0 | 4 | 8)
        || b.len() != ATOMIC_RESULT_HEADER + len
    {
        return None;
    }
    Some((
        u32::from_le_bytes(head[4..8].try_into().expect("4 bytes")),
        &b[ATOMIC_RESULT_HEADER..],
    ))
}

/// Decodes a one-sided message; with `placed`, `b` is its header alone
/// (a PUT whose payload went into the segment as it arrived, or a
/// GET_DATA whose payload went into the get's destination). `None` if
/// malformed: a wrong kind, request byte or padding, a payload on a kind
/// without one, or a length that disagrees.
pub fn decode_rma(b: &[u8], placed: bool) -> Option<Rma<'_>> {
    let kind = *b.first()?;
    let request = is_request_kind(kind);
    let ep = *b.get(2)?;
    if !(RMA_PUT..=RMA_GET_DATA).contains(&kind)
        || *b.get(1)? != u8::from(request)
        || *b.get(3)? != 0
        || (!request && ep != 0)
    {
        return None;
    }
    let word = |at: usize| Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?));
    let len = u32::from_le_bytes(b.get(4..8)?.try_into().ok()?) as usize;
    let (offset, op, want) = (word(8)?, word(16)?, word(24)?);
    let with_payload = kind == RMA_PUT || kind == RMA_GET_DATA;
    let payload = b.get(RMA_HEADER..)?;
    // Only PUT and GET_DATA payloads are ever placed as they arrive.
    let whole = if placed {
        with_payload && payload.is_empty()
    } else {
        payload.len() == len
    };
    if !whole || (!with_payload && len != 0) || (kind != RMA_GET && want != 0) {
        return None;
    }
    Some(Rma {
        kind,
        ep: EpIndex::from(ep),
        offset: usize::try_from(offset).ok()?,
        op,
        want: usize::try_from(want).ok()?,
        len,
        payload,
    })
}

/// Where the payload of a Long AM or a one-sided PUT starts in its
/// message, its length and its destination offset, if `first` (the
/// message's first bytes) is such a header and holds all of it.
pub fn long_payload(first: &[u8]) -> Option<(usize, usize, usize)> {
    if *first.first()? == RMA_PUT {
        // Only a PUT to the primordial endpoint's segment is placed: one
        // to a created endpoint's is checked and copied at delivery.
        let r = decode_rma(first.get(..RMA_HEADER)?, true)?;
        return (r.ep == 0).then_some((RMA_HEADER, r.len, r.offset));
    }
    if AmCategory::from_u8(*first.first()?)? != AmCategory::Long {
        return None;
    }
    let nargs = *first.get(3)? as usize;
    if nargs > AM_MAX_ARGS {
        return None;
    }
    // A Long for a created endpoint is not placed: delivery checks its
    // range against that endpoint's bound segment and copies it.
    if *first.get(9)? != 0 {
        return None;
    }
    let len = u32::from_le_bytes(first.get(4..8)?.try_into().ok()?) as usize;
    let off = u64::from_le_bytes(first.get(AM_HEADER..AM_HEADER + 8)?.try_into().ok()?) as usize;
    let start = AM_HEADER + 16 + 4 * nargs;
    (first.len() >= start).then_some((start, len, off))
}

/// Decodes a Long AM whose payload was placed in the segment while it
/// arrived (`b` is its header only); the payload in the result is empty
/// and the second value is its length.
pub fn decode_placed(b: &[u8]) -> Option<(Am<'static>, usize)> {
    let (am, at, len) = parse_header(b)?;
    (am.category == AmCategory::Long && b.len() == at).then_some((am, len))
}

/// Decodes a message; `None` if it is not a well-formed AM.
pub fn decode(b: &[u8]) -> Option<Am<'_>> {
    let (am, at, len) = parse_header(b)?;
    let payload = b.get(at..)?;
    if payload.len() != len || (am.category == AmCategory::Short && len != 0) {
        return None;
    }
    Some(Am { payload, ..am })
}

/// The header of a message: the AM with an empty payload, where the
/// payload starts, and its declared length.
fn parse_header(b: &[u8]) -> Option<(Am<'static>, usize, usize)> {
    let category = AmCategory::from_u8(*b.first()?)?;
    let is_request = match *b.get(1)? {
        0 => false,
        1 => true,
        _ => return None,
    };
    let handler = *b.get(2)?;
    let nargs = *b.get(3)? as usize;
    if nargs > AM_MAX_ARGS {
        return None;
    }
    let len = u32::from_le_bytes(b.get(4..8)?.try_into().ok()?) as usize;
    let (src_ep, dest_ep) = (EpIndex::from(*b.get(8)?), EpIndex::from(*b.get(9)?));
    if b.get(10..12)? != [0, 0] {
        return None;
    }
    let mut at = AM_HEADER;
    let (mut dest_offset, mut dest_addr) = (0, 0);
    if category == AmCategory::Long {
        dest_offset = u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?) as usize;
        dest_addr = u64::from_le_bytes(b.get(at + 8..at + 16)?.try_into().ok()?) as usize;
        at += 16;
    }
    let mut args = [0; AM_MAX_ARGS];
    for a in args.iter_mut().take(nargs) {
        *a = AmArg::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?);
        at += 4;
    }
    Some((
        Am {
            category,
            is_request,
            handler,
            src_ep,
            dest_ep,
            args,
            nargs,
            dest_offset,
            dest_addr,
            payload: &[],
        },
        at,
        len,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// One-sided messages round-trip; any other bytes decode to
        /// nothing or to a message whose fields are what the bytes say,
        /// never a panic.
        #[test]
        fn rma_messages_round_trip_and_garbage_never_panics(
            kind in RMA_PUT..=RMA_GET_DATA,
            ep in 0u32..32,
            offset in any::<u32>(),
            op: u64,
            want in any::<u32>(),
            payload in proptest::collection::vec(any::<u8>(), 0..300),
            garbage in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let with_payload = kind == RMA_PUT || kind == RMA_GET_DATA;
            let payload = if with_payload { payload } else { vec![] };
            let want = if kind == RMA_GET { want as usize } else { 0 };
            let ep = if kind == RMA_PUT || kind == RMA_GET { ep } else { 0 };
            let mut buf = Vec::new();
            encode_rma_append(kind, ep, offset as usize, op, want, &payload, &mut buf);
            prop_assert!(is_rma(&buf));
            let r = decode_rma(&buf, false).unwrap();
            prop_assert_eq!(
                (r.kind, r.ep, r.offset, r.op, r.want, r.len, r.payload),
                (kind, ep, offset as usize, op, want, payload.len(), &payload[..])
            );
            // An answer naming an endpoint: rejected.
            if kind == RMA_PUT_ACK || kind == RMA_GET_DATA {
                let mut b = buf.clone();
                b[2] = 1;
                prop_assert!(decode_rma(&b, false).is_none());
            }
            // Truncated or extended: rejected.
            prop_assert!(decode_rma(&buf[..buf.len() - 1], false).is_none());
            let mut longer = buf.clone();
            longer.push(0);
            prop_assert!(decode_rma(&longer, false).is_none());
            // A PUT's or GET_DATA's header alone decodes as placed;
            // nothing else does.
            prop_assert_eq!(
                decode_rma(&buf[..RMA_HEADER], true).is_some(),
                kind == RMA_PUT || kind == RMA_GET_DATA
            );
            let _ = decode_rma(&garbage, false);
            let _ = decode_rma(&garbage, true);
            let _ = long_payload(&garbage);
        }
    }

    proptest! {
        /// ATOMIC and ATOMIC_RESULT round-trip for every type and atomic
        /// operation, with exactly the operands the operation takes; a
        /// wrong lane byte, type, operation, length or result size is
        /// rejected, and garbage never panics.
        #[test]
        fn atomic_messages_round_trip(
            dt_at in 0usize..6, op_at in 0usize..27, o1: u64, o2: u64, offset: u64,
            id: u32, value: u64,
            garbage in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let (dt, op) = (Dt::BUILTIN[dt_at], Op::ALL[op_at]);
            prop_assume!(op.valid_for_atomic(dt));
            let size = dt.size().unwrap();
            let mask = if size == 8 { u64::MAX } else { u64::from(u32::MAX) };
            let n = op.operand_count();
            let want = [o1 & (mask * u64::from(n >= 1)), o2 & (mask * u64::from(n >= 2))];
            let mut buf = Vec::new();
            encode_atomic(dt, op, id, offset as usize, [o1 & mask, o2 & mask], &mut buf);
            prop_assert!(is_rma(&buf));
            prop_assert_eq!(buf.len(), atomic_len(dt, op));
            prop_assert_eq!(buf.len(), ATOMIC_HEADER + n * size);
            prop_assert_eq!(
                decode_atomic(&buf),
                Ok(AtomicRequest { dt, op, id, offset: offset as usize, operands: want })
            );
            prop_assert!(decode_rma(&buf, false).is_none(), "not a put or get");
            prop_assert!(decode_atomic(&buf[..buf.len() - 1]).is_err(), "truncated");
            let mut b = buf.clone();
            b.push(0);
            prop_assert!(decode_atomic(&b).is_err(), "extended");
            let mut b = buf.clone();
            b[1] = 0;
            prop_assert!(decode_atomic(&b).is_err(), "the reply lane");
            let mut b = buf.clone();
            b[2] = 6;
            prop_assert!(decode_atomic(&b).is_err(), "no such type");
            let mut b = buf.clone();
            b[3] = 27;
            prop_assert!(decode_atomic(&b).is_err(), "no such operation");
            let len = if op.is_fetching() { size } else { 0 };
            let mut res = Vec::new();
            encode_atomic_result(id, value, len, &mut res);
            prop_assert!(is_rma(&res));
            prop_assert_eq!(res.len(), ATOMIC_RESULT_HEADER + len);
            prop_assert_eq!(decode_atomic_result(&res), Some((id, &value.to_le_bytes()[..len])));
            prop_assert!(decode_rma(&res, false).is_none());
            prop_assert!(decode_atomic_result(&res[..res.len() - 1]).is_none());
            let mut b = res.clone();
            b[2] = 2;
            prop_assert!(decode_atomic_result(&b).is_none(), "size 2");
            let mut b = res.clone();
            b[1] = 1;
            prop_assert!(decode_atomic_result(&b).is_none(), "the request lane");
            let _ = decode_atomic(&garbage);
            let _ = decode_atomic_result(&garbage);
        }
    }

    #[test]
    fn type_and_operation_codes_are_the_bit_of_their_index() {
        for (i, dt) in Dt::BUILTIN.iter().enumerate() {
            assert_eq!(*dt as u32, 1 << i, "{}", dt.name());
        }
        for (i, op) in Op::ALL.iter().enumerate() {
            assert_eq!(*op as u64, 1 << i, "{}", op.name());
        }
    }

    #[test]
    fn compact_ids_keep_the_slot_and_the_generations_low_byte() {
        assert_eq!(
            compact_id((0x1234_5678 << 32) | 0x00ab_cdef),
            Some(0x78ab_cdef)
        );
        assert_eq!(compact_id(1 << 24), None);
    }

    proptest! {
        #[test]
        fn round_trip(cat in 0u8..3, req: bool, handler: u8,
                      args in proptest::collection::vec(any::<i32>(), 0..=16),
                      payload in proptest::collection::vec(any::<u8>(), 0..300),
                      off: u32, dest: u64,
                      src_ep in 0..gex_types::MAX_EPS as EpIndex,
                      dest_ep in 0..gex_types::MAX_EPS as EpIndex) {
            let category = AmCategory::from_u8(cat).unwrap();
            let payload = if category == AmCategory::Short { vec![] } else { payload };
            let mut msg = OutgoingAm::new(category, req, handler, &args, &payload)
                .between(src_ep, dest_ep);
            if category == AmCategory::Long {
                msg = msg.to_offset(off as usize, dest as usize);
            }
            let mut buf = Vec::new();
            encode(&msg, &mut buf);
            let am = decode(&buf).unwrap();
            prop_assert_eq!(am.category, category);
            prop_assert_eq!(am.is_request, req);
            prop_assert_eq!(am.handler, handler);
            prop_assert_eq!((am.src_ep, am.dest_ep), (src_ep, dest_ep));
            prop_assert_eq!(&am.args[..am.nargs], &args[..]);
            prop_assert_eq!(am.payload, &payload[..]);
            // The padding after the endpoint indices must be zero.
            let mut bad = buf.clone();
            bad[10] = 1;
            prop_assert!(decode(&bad).is_none());
            prop_assert_eq!(am.dest_offset, msg.dest_offset);
            prop_assert_eq!(am.dest_addr, msg.dest_addr);
        }

        #[test]
        fn placed_long_header_round_trip(handler: u8,
                      args in proptest::collection::vec(any::<i32>(), 0..=16),
                      len in 0usize..5000, off: u32, dest: u64) {
            let payload = vec![9u8; len];
            let msg = OutgoingAm::new(AmCategory::Long, true, handler, &args, &payload)
                .to_offset(off as usize, dest as usize)
                .between(3, 0);
            let mut buf = Vec::new();
            encode(&msg, &mut buf);
            let (start, plen, poff) = long_payload(&buf).unwrap();
            prop_assert_eq!((start + plen, plen, poff), (buf.len(), len, off as usize));
            prop_assert!(long_payload(&buf[..start - 1]).is_none(), "header must be whole");
            let (am, plen) = decode_placed(&buf[..start]).unwrap();
            prop_assert_eq!(plen, len);
            prop_assert_eq!(&am.args[..am.nargs], &args[..]);
            prop_assert_eq!((am.handler, am.dest_offset, am.dest_addr), (handler, off as usize, dest as usize));
            prop_assert_eq!((am.src_ep, am.dest_ep), (3, 0));
            // A Long for another endpoint (no bound segment) is never placed.
            let to_ep1 = OutgoingAm::new(AmCategory::Long, true, handler, &args, &payload)
                .to_offset(off as usize, dest as usize)
                .between(3, 1);
            let mut buf1 = Vec::new();
            encode(&to_ep1, &mut buf1);
            prop_assert!(long_payload(&buf1).is_none());
            prop_assert!(am.payload.is_empty());
            prop_assert!(decode_placed(&buf).is_none() || len == 0);
        }

        #[test]
        fn decoder_never_panics(b in proptest::collection::vec(any::<u8>(), 0..100)) {
            let _ = decode(&b);
        }
    }
}
