//! The wire format: encoding and decoding of one datagram (see the module
//! documentation of [`crate::proto`] for the layout).
//!
//! [`decode_datagram`] validates everything that can be validated without
//! endpoint state (magic, version, kind, flags, lengths, the chunk structure
//! of a DATA body); it never panics and never allocates.

/// First two bytes of every datagram.
pub const MAGIC: [u8; 2] = *b"GX";
/// Protocol version (third byte). 2: a job tag instead of the job key, and
/// a message authentication code in the common header. 3: the MAC hashes
/// the datagram in pieces. 4: the MAC is AEGIS-MAC (see `Auth`).
pub const VERSION: u8 = 4;
/// Offset of the job tag in the common header.
pub const TAG_AT: usize = 4;
/// Offset of the message authentication code in the common header.
pub const MAC_AT: usize = 20;
/// Length of the message authentication code (AEGIS-MAC's 128-bit tag;
/// see [`crate::proto::Auth`]).
pub const MAC_LEN: usize = 16;
/// Length of the common header (magic, version, kind, job tag, source,
/// destination, MAC).
pub const COMMON_HEADER_LEN: usize = MAC_AT + MAC_LEN;
/// Bytes of the ACK block without its SACK words (cumulative point, word count).
pub const ACK_BLOCK_BASE_LEN: usize = 5;
/// Most 64-bit SACK words an ACK block carries.
pub const MAX_SACK_WORDS: usize = 4;
/// Largest ACK block.
pub const MAX_ACK_BLOCK_LEN: usize = ACK_BLOCK_BASE_LEN + 8 * MAX_SACK_WORDS;
/// DATA header after the ACK blocks: sequence number (u32) and body length (u16).
pub const DATA_HEADER_LEN: usize = 6;
/// Largest header overhead of a DATA datagram (common header, the largest
/// ACK blocks of both lanes, DATA header): a body of
/// `max_datagram - MAX_OVERHEAD` bytes always fits, whatever ACK blocks are
/// piggybacked on a (re)transmission.
pub const MAX_OVERHEAD: usize = COMMON_HEADER_LEN + 2 * MAX_ACK_BLOCK_LEN + DATA_HEADER_LEN;
/// Chunk header of a continuation chunk (flags u8, length u16).
pub const CHUNK_HEADER_LEN: usize = 3;
/// Chunk header of a FIRST chunk (flags, length, total message length u32).
pub const FIRST_CHUNK_HEADER_LEN: usize = 7;
/// Largest message (64 MiB).
pub const MAX_MESSAGE: usize = 64 << 20;
/// Smallest datagram the protocol is configured for.
pub const MIN_DATAGRAM: usize = 512;
/// Largest UDP payload over IPv4.
pub const MAX_DATAGRAM: usize = 65507;

/// Kind byte values (low two bits).
const KIND_DATA: u8 = 1;
const KIND_ACK: u8 = 2;
const KIND_BYE: u8 = 3;
const KIND_MASK: u8 = 0b11;
/// Kind byte flag: an ACK block of the request lane follows the header.
const FLAG_HAS_ACK: u8 = 0b100;
/// Kind byte flag: an ACK block of the reply lane follows (after the
/// request lane's, if any).
const FLAG_HAS_REPLY_ACK: u8 = 0b1000;
/// Kind byte flag (DATA only): the DATA belongs to the reply lane.
const FLAG_REPLY_LANE: u8 = 0b1_0000;

/// One of the two independent reliable streams toward a peer. Requests
/// travel on one, replies on the other, each with its own sequence numbers,
/// window, retransmissions and reassembly, so that a reply never waits for
/// capacity that requests hold (see the module documentation of
/// [`crate::proto`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// Requests (and any message that may be refused when the receiver's
    /// inbox is full).
    Request = 0,
    /// Replies: never refused for lack of inbox space.
    Reply = 1,
}

impl Lane {
    /// Both lanes, in index order.
    pub const ALL: [Lane; 2] = [Lane::Request, Lane::Reply];

    /// 0 for requests, 1 for replies.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Chunk flags.
const CHUNK_FIRST: u8 = 0b01;
const CHUNK_LAST: u8 = 0b10;

/// The datagram kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Carries a sequenced body (and maybe a piggybacked ACK).
    Data,
    /// A standalone acknowledgement (of one lane or both).
    Ack,
    /// The sender has finished cleanly: its silence from now on is expected.
    Bye,
}

/// An acknowledgement: everything below `cum` was received, plus the
/// selective bitmap: bit `i` of `sack[w]` set means sequence number
/// `cum + 1 + 64 * w + i` was received (only the first `nsack` words are on
/// the wire; the others are zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckInfo {
    /// Low 32 bits of the next sequence number the receiver expects.
    pub cum: u32,
    /// Number of SACK words on the wire (0..=MAX_SACK_WORDS).
    pub nsack: u8,
    /// SACK words; words at and past `nsack` are zero.
    pub sack: [u64; MAX_SACK_WORDS],
}

/// The sequenced part of a DATA datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataInfo<'a> {
    /// The lane the sequence number belongs to.
    pub lane: Lane,
    /// Low 32 bits of the sequence number.
    pub seq: u32,
    /// The body: one or more chunks (validated by the decoder).
    pub body: &'a [u8],
}

/// A decoded datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram<'a> {
    /// The public job tag (derived from the job's secret key; see
    /// [`crate::proto::Auth`]). The MAC field is not part of the decoded
    /// datagram: the endpoint checks it before decoding, and the encoder
    /// leaves it zero for [`crate::proto::Auth::seal`] to fill in.
    pub tag: u64,
    /// Sending rank.
    pub src: u32,
    /// Receiving rank.
    pub dst: u32,
    /// ACK block of the request lane (optional on DATA and ACK).
    pub ack: Option<AckInfo>,
    /// ACK block of the reply lane (optional on DATA and ACK; an ACK
    /// carries at least one of the two).
    pub reply_ack: Option<AckInfo>,
    /// Present exactly on DATA datagrams.
    pub data: Option<DataInfo<'a>>,
}

impl Datagram<'_> {
    /// The kind of this datagram.
    pub fn kind(&self) -> Kind {
        if self.data.is_some() {
            Kind::Data
        } else if self.ack.is_some() || self.reply_ack.is_some() {
            Kind::Ack
        } else {
            Kind::Bye
        }
    }

    /// The ACK block of `lane`, if present.
    pub fn ack_of(&self, lane: Lane) -> Option<&AckInfo> {
        match lane {
            Lane::Request => self.ack.as_ref(),
            Lane::Reply => self.reply_ack.as_ref(),
        }
    }
}

/// One piece of a message inside a DATA body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// First piece of its message; then `total` is its full length.
    pub first: bool,
    /// Last piece of its message.
    pub last: bool,
    /// Full message length (only on FIRST chunks).
    pub total: Option<u32>,
    /// The bytes of this piece.
    pub bytes: &'a [u8],
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Whether `data` starts with the magic and version and is long enough to
/// hold the common header: the endpoint counts a wrong tag only on such
/// datagrams.
pub fn has_preamble(data: &[u8]) -> bool {
    data.len() >= COMMON_HEADER_LEN && data[0..2] == MAGIC && data[2] == VERSION
}

/// The job tag of a datagram that [`has_preamble`].
pub fn peek_tag(data: &[u8]) -> Option<u64> {
    if has_preamble(data) {
        u64_at(data, TAG_AT)
    } else {
        None
    }
}

/// Decodes and validates one datagram. `None` for anything malformed
/// (the tag is returned, not checked; the MAC is neither checked nor
/// returned: see [`crate::proto::Auth::verify`]).
pub fn decode_datagram(data: &[u8]) -> Option<Datagram<'_>> {
    if !has_preamble(data) || data.len() > MAX_DATAGRAM {
        return None;
    }
    let kind = data[3];
    if kind & !(KIND_MASK | FLAG_HAS_ACK | FLAG_HAS_REPLY_ACK | FLAG_REPLY_LANE) != 0 {
        return None;
    }
    let tag = u64_at(data, TAG_AT)?;
    let src = u32_at(data, 12)?;
    let dst = u32_at(data, 16)?;
    let mut at = COMMON_HEADER_LEN;
    let has_ack = kind & FLAG_HAS_ACK != 0;
    let has_reply_ack = kind & FLAG_HAS_REPLY_ACK != 0;
    let reply_lane = kind & FLAG_REPLY_LANE != 0;
    let is_data = match kind & KIND_MASK {
        KIND_DATA => true,
        KIND_ACK if (has_ack || has_reply_ack) && !reply_lane => false,
        KIND_BYE if !has_ack && !has_reply_ack && !reply_lane => false,
        _ => return None,
    };
    let mut block = |present: bool| -> Option<Option<AckInfo>> {
        if !present {
            return Some(None);
        }
        let cum = u32_at(data, at)?;
        let nsack = *data.get(at + 4)?;
        if nsack as usize > MAX_SACK_WORDS {
            return None;
        }
        at += ACK_BLOCK_BASE_LEN;
        let mut sack = [0u64; MAX_SACK_WORDS];
        for w in sack.iter_mut().take(nsack as usize) {
            *w = u64_at(data, at)?;
            at += 8;
        }
        Some(Some(AckInfo { cum, nsack, sack }))
    };
    let ack = block(has_ack)?;
    let reply_ack = block(has_reply_ack)?;
    let data_info = if is_data {
        let seq = u32_at(data, at)?;
        let len = u16_at(data, at + 4)? as usize;
        at += DATA_HEADER_LEN;
        let body = data.get(at..)?;
        if body.len() != len || !validate_body(body) {
            return None;
        }
        let lane = if reply_lane {
            Lane::Reply
        } else {
            Lane::Request
        };
        Some(DataInfo { lane, seq, body })
    } else {
        if at != data.len() {
            return None;
        }
        None
    };
    Some(Datagram {
        tag,
        src,
        dst,
        ack,
        reply_ack,
        data: data_info,
    })
}

/// Parses one chunk at the start of `body`: the chunk and the rest.
fn parse_chunk(body: &[u8]) -> Option<(Chunk<'_>, &[u8])> {
    let flags = *body.first()?;
    if flags & !(CHUNK_FIRST | CHUNK_LAST) != 0 {
        return None;
    }
    let len = u16_at(body, 1)? as usize;
    let first = flags & CHUNK_FIRST != 0;
    let last = flags & CHUNK_LAST != 0;
    let (total, at) = if first {
        let t = u32_at(body, 3)?;
        if t as usize > MAX_MESSAGE || len > t as usize || (last && len != t as usize) {
            return None;
        }
        (Some(t), FIRST_CHUNK_HEADER_LEN)
    } else {
        (None, CHUNK_HEADER_LEN)
    };
    let bytes = body.get(at..at + len)?;
    Some((
        Chunk {
            first,
            last,
            total,
            bytes,
        },
        &body[at + len..],
    ))
}

fn validate_body(mut body: &[u8]) -> bool {
    if body.is_empty() {
        return false;
    }
    while !body.is_empty() {
        match parse_chunk(body) {
            Some((_, rest)) => body = rest,
            None => return false,
        }
    }
    true
}

/// Iterator over the chunks of a body accepted by [`decode_datagram`]
/// (stops at the first malformed chunk of an unvalidated body).
#[derive(Clone, Debug)]
pub struct Chunks<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Chunks<'a> {
    type Item = Chunk<'a>;
    fn next(&mut self) -> Option<Chunk<'a>> {
        let (c, rest) = parse_chunk(self.rest)?;
        self.rest = rest;
        Some(c)
    }
}

/// The chunks of a DATA body.
pub fn chunks(body: &[u8]) -> Chunks<'_> {
    Chunks { rest: body }
}

/// Appends the common header to `buf`, with a zero MAC field.
fn put_common(buf: &mut Vec<u8>, kind: u8, tag: u64, src: u32, dst: u32) {
    buf.extend_from_slice(&MAGIC);
    buf.push(VERSION);
    buf.push(kind);
    buf.extend_from_slice(&tag.to_le_bytes());
    buf.extend_from_slice(&src.to_le_bytes());
    buf.extend_from_slice(&dst.to_le_bytes());
    buf.extend_from_slice(&[0; MAC_LEN]);
}

fn put_ack(buf: &mut Vec<u8>, ack: &AckInfo) {
    let n = (ack.nsack as usize).min(MAX_SACK_WORDS);
    buf.extend_from_slice(&ack.cum.to_le_bytes());
    buf.push(n as u8);
    for w in &ack.sack[..n] {
        buf.extend_from_slice(&w.to_le_bytes());
    }
}

/// The kind byte flags saying which ACK blocks follow.
fn ack_flags(req: Option<&AckInfo>, rep: Option<&AckInfo>) -> u8 {
    (if req.is_some() { FLAG_HAS_ACK } else { 0 })
        | (if rep.is_some() { FLAG_HAS_REPLY_ACK } else { 0 })
}

/// Appends the encoding of `d` to `buf`.
///
/// # Panics
/// If a DATA body is longer than `u16::MAX` bytes.
pub fn encode_datagram(d: &Datagram<'_>, buf: &mut Vec<u8>) {
    match d.data {
        Some(data) => {
            encode_data_head(
                d.tag,
                d.src,
                d.dst,
                [d.ack.as_ref(), d.reply_ack.as_ref()],
                data.lane,
                data.seq,
                data.body.len(),
                buf,
            );
            buf.extend_from_slice(data.body);
        }
        None => {
            let kind = if d.ack.is_none() && d.reply_ack.is_none() {
                KIND_BYE
            } else {
                KIND_ACK
            };
            put_common(
                buf,
                kind | ack_flags(d.ack.as_ref(), d.reply_ack.as_ref()),
                d.tag,
                d.src,
                d.dst,
            );
            for a in [d.ack.as_ref(), d.reply_ack.as_ref()].into_iter().flatten() {
                put_ack(buf, a);
            }
        }
    }
}

/// Appends everything of a DATA datagram that precedes its body of
/// `body_len` bytes (the body follows it directly, so a sender may pass it
/// to the socket as a second buffer instead of copying it here).
///
/// # Panics
/// If `body_len` is more than `u16::MAX`.
#[allow(clippy::too_many_arguments)]
pub fn encode_data_head(
    tag: u64,
    src: u32,
    dst: u32,
    acks: [Option<&AckInfo>; 2],
    lane: Lane,
    seq: u32,
    body_len: usize,
    buf: &mut Vec<u8>,
) {
    let lane_flag = if lane == Lane::Reply {
        FLAG_REPLY_LANE
    } else {
        0
    };
    let kind = KIND_DATA | ack_flags(acks[0], acks[1]) | lane_flag;
    put_common(buf, kind, tag, src, dst);
    for a in acks.into_iter().flatten() {
        put_ack(buf, a);
    }
    let len = u16::try_from(body_len).expect("DATA body longer than 65535 bytes");
    buf.extend_from_slice(&seq.to_le_bytes());
    buf.extend_from_slice(&len.to_le_bytes());
}

/// Appends the header of one chunk of `len` bytes (its bytes follow it).
///
/// # Panics
/// As [`encode_chunk`].
pub fn encode_chunk_head(
    buf: &mut Vec<u8>,
    first: bool,
    last: bool,
    total: Option<u32>,
    len: usize,
) {
    assert_eq!(first, total.is_some(), "total length goes with FIRST");
    let flags = if first { CHUNK_FIRST } else { 0 } | if last { CHUNK_LAST } else { 0 };
    buf.push(flags);
    let len = u16::try_from(len).expect("chunk longer than 65535 bytes");
    buf.extend_from_slice(&len.to_le_bytes());
    if let Some(t) = total {
        buf.extend_from_slice(&t.to_le_bytes());
    }
}

/// Appends one chunk to a body under construction.
///
/// # Panics
/// If `bytes` is longer than `u16::MAX`, or `total` is given on a non-first
/// chunk or missing on a first one.
pub fn encode_chunk(buf: &mut Vec<u8>, first: bool, last: bool, total: Option<u32>, bytes: &[u8]) {
    encode_chunk_head(buf, first, last, total, bytes.len());
    buf.extend_from_slice(bytes);
}

/// Expands a 32-bit wire sequence number to the 64-bit one nearest to
/// `expected` (the window is far smaller than 2^31, so this is exact for
/// every number a correct peer can send).
pub fn expand_seq(wire: u32, expected: u64) -> u64 {
    const SPAN: i128 = 1 << 32;
    let exp = expected as i128;
    let base = (exp & !(SPAN - 1)) | wire as i128;
    [base - SPAN, base, base + SPAN]
        .into_iter()
        .filter(|c| (0..=u64::MAX as i128).contains(c))
        .min_by_key(|c| (c - exp).abs())
        .map_or(wire as u64, |c| c as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn body_of(chunks: &[(bool, bool, Option<u32>, Vec<u8>)]) -> Vec<u8> {
        let mut b = Vec::new();
        for (f, l, t, bytes) in chunks {
            encode_chunk(&mut b, *f, *l, *t, bytes);
        }
        b
    }

    #[test]
    fn ack_roundtrip_and_size() {
        let ack = AckInfo {
            cum: 7,
            nsack: 2,
            sack: [1, 1 << 63, 0, 0],
        };
        let d = Datagram {
            tag: 0xdead_beef,
            src: 3,
            dst: 1,
            ack: Some(ack),
            reply_ack: None,
            data: None,
        };
        let mut buf = Vec::new();
        encode_datagram(&d, &mut buf);
        assert_eq!(buf.len(), COMMON_HEADER_LEN + ACK_BLOCK_BASE_LEN + 16);
        assert_eq!(decode_datagram(&buf), Some(d));
        assert_eq!(d.kind(), Kind::Ack);
        // Truncation and trailing garbage are rejected.
        assert_eq!(decode_datagram(&buf[..buf.len() - 1]), None);
        buf.push(0);
        assert_eq!(decode_datagram(&buf), None);
        // Both lanes' blocks, request lane first.
        let both = Datagram {
            reply_ack: Some(AckInfo {
                cum: 9,
                nsack: 0,
                sack: [0; 4],
            }),
            ..d
        };
        let mut buf = Vec::new();
        encode_datagram(&both, &mut buf);
        assert_eq!(buf.len(), COMMON_HEADER_LEN + 2 * ACK_BLOCK_BASE_LEN + 16);
        let got = decode_datagram(&buf).unwrap();
        assert_eq!(got, both);
        assert_eq!(got.ack_of(Lane::Reply).map(|a| a.cum), Some(9));
        assert_eq!(got.ack_of(Lane::Request).map(|a| a.cum), Some(7));
    }

    #[test]
    fn bye_roundtrip() {
        let d = Datagram {
            tag: 5,
            src: 1,
            dst: 0,
            ack: None,
            reply_ack: None,
            data: None,
        };
        let mut buf = Vec::new();
        encode_datagram(&d, &mut buf);
        assert_eq!(buf.len(), COMMON_HEADER_LEN);
        assert_eq!(buf[3], KIND_BYE);
        assert_eq!(decode_datagram(&buf), Some(d));
        assert_eq!(d.kind(), Kind::Bye);
    }

    #[test]
    fn data_roundtrip() {
        let body = body_of(&[
            (false, true, None, vec![1, 2, 3]),
            (true, true, Some(0), vec![]),
            (true, false, Some(10), vec![9; 4]),
        ]);
        let d = Datagram {
            tag: 1,
            src: 0,
            dst: 2,
            ack: None,
            reply_ack: None,
            data: Some(DataInfo {
                lane: Lane::Reply,
                seq: u32::MAX,
                body: &body,
            }),
        };
        let mut buf = Vec::new();
        encode_datagram(&d, &mut buf);
        assert_eq!(buf.len(), COMMON_HEADER_LEN + DATA_HEADER_LEN + body.len());
        let got = decode_datagram(&buf).unwrap();
        assert_eq!(got, d);
        let cs: Vec<_> = chunks(got.data.unwrap().body).collect();
        assert_eq!(cs.len(), 3);
        assert_eq!(cs[0].bytes, &[1, 2, 3]);
        assert!(cs[1].first && cs[1].last && cs[1].bytes.is_empty());
        assert_eq!(cs[2].total, Some(10));
    }

    #[test]
    fn bad_bodies_rejected() {
        for body in [
            vec![],                                         // empty body
            vec![4, 0, 0],                                  // unknown flag
            vec![0, 5, 0, 1],                               // short chunk
            body_of(&[(true, true, Some(3), vec![1])]),     // FIRST|LAST with len != total
            body_of(&[(true, false, Some(1), vec![1, 2])]), // len > total
        ] {
            let mut buf = Vec::new();
            put_common(&mut buf, KIND_DATA, 0, 0, 0);
            buf.extend_from_slice(&0u32.to_le_bytes());
            buf.extend_from_slice(&(body.len() as u16).to_le_bytes());
            buf.extend_from_slice(&body);
            assert_eq!(decode_datagram(&buf), None, "{body:?}");
        }
        // A total over MAX_MESSAGE.
        let mut body = vec![CHUNK_FIRST, 0, 0];
        body.extend_from_slice(&(MAX_MESSAGE as u32 + 1).to_le_bytes());
        let mut buf = Vec::new();
        put_common(&mut buf, KIND_DATA, 0, 0, 0);
        buf.extend_from_slice(&0u32.to_le_bytes());
        buf.extend_from_slice(&(body.len() as u16).to_le_bytes());
        buf.extend_from_slice(&body);
        assert_eq!(decode_datagram(&buf), None);
        // ACK without an ACK block, bad kinds, a BYE with trailing bytes or
        // an ACK block, an ACK with the lane flag, unknown flags; too many
        // SACK words.
        for kind in [
            KIND_ACK,
            0,
            KIND_BYE,
            KIND_BYE | FLAG_HAS_ACK,
            FLAG_HAS_REPLY_ACK,
            KIND_ACK | FLAG_HAS_ACK | FLAG_REPLY_LANE,
            KIND_DATA | 0x20,
            KIND_ACK | FLAG_HAS_ACK | 0x80,
        ] {
            let mut buf = Vec::new();
            put_common(&mut buf, kind, 0, 0, 0);
            buf.extend_from_slice(&[0; 5]);
            assert_eq!(decode_datagram(&buf), None);
        }
        let mut buf = Vec::new();
        put_common(&mut buf, KIND_ACK | FLAG_HAS_REPLY_ACK, 0, 0, 0);
        buf.extend_from_slice(&[0, 0, 0, 0, 5]);
        buf.extend_from_slice(&[0; 40]);
        assert_eq!(decode_datagram(&buf), None);
    }

    #[test]
    fn expand_seq_wraps() {
        assert_eq!(expand_seq(5, 0), 5);
        assert_eq!(expand_seq(u32::MAX, 0), u32::MAX as u64); // nothing below 0
        assert_eq!(expand_seq(u32::MAX, 1 << 32), (1 << 32) - 1);
        assert_eq!(expand_seq(2, (1 << 32) - 3), (1 << 32) + 2);
        assert_eq!(expand_seq(0, u64::MAX - 5), u64::MAX - (u32::MAX as u64));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_datagram(&bytes);
            let _ = chunks(&bytes).count();
        }

        #[test]
        fn expand_seq_inverts_truncation(seq in any::<u64>(), delta in -(1i64 << 30)..(1i64 << 30)) {
            let expected = seq.wrapping_add(delta as u64);
            // Only meaningful away from the ends of the u64 range.
            prop_assume!(seq > 1 << 33 && seq < u64::MAX - (1 << 33));
            prop_assert_eq!(expand_seq(seq as u32, expected), seq);
        }

        #[test]
        fn roundtrip_any(tag in any::<u64>(), src in any::<u32>(), dst in any::<u32>(),
                         ack in proptest::option::of((any::<u32>(), 0u8..=4, any::<[u64; 4]>())),
                         reply_ack in proptest::option::of((any::<u32>(), 0u8..=4, any::<[u64; 4]>())),
                         reply_lane in any::<bool>(),
                         data in proptest::option::of((any::<u32>(),
                             proptest::collection::vec((any::<bool>(), 0usize..40), 1..5)))) {
            let block = |a: Option<(u32, u8, [u64; 4])>| a.map(|(cum, nsack, mut sack)| {
                for w in sack.iter_mut().skip(nsack as usize) { *w = 0; }
                AckInfo { cum, nsack, sack }
            });
            let (ack, reply_ack) = (block(ack), block(reply_ack));
            let lane = if reply_lane { Lane::Reply } else { Lane::Request };
            let body = data.as_ref().map(|(_, cs)| {
                let mut b = Vec::new();
                for (first, len) in cs {
                    let bytes = vec![0xa5; *len];
                    encode_chunk(&mut b, *first, true, first.then_some(*len as u32), &bytes);
                }
                b
            });
            // (No ACK block and no DATA: a BYE.)
            let d = Datagram { tag, src, dst, ack, reply_ack,
                data: data.as_ref().map(|(seq, _)| DataInfo { lane, seq: *seq, body: body.as_deref().unwrap() }) };
            let mut buf = Vec::new();
            encode_datagram(&d, &mut buf);
            prop_assert_eq!(decode_datagram(&buf), Some(d));
        }
    }
}
