//! Datagram authentication: the public job tag and the message
//! authentication code (MAC) of every datagram.
//!
//! Both come from the job's 256-bit secret ([`crate::proto::Config::key`]),
//! which never goes on the wire, through BLAKE3's key derivation with two
//! distinct contexts:
//!
//! * the **job tag** (8 bytes, public, in every common header) lets an
//!   endpoint drop another job's datagrams (a stale job on the same port, a
//!   replay captured from another job) without computing a MAC;
//! * the **MAC key** keys SipHash-2-4 (128-bit output, the [`MAC_LEN`]
//!   bytes of the MAC) over the whole datagram but its MAC field: its
//!   length, bytes `0..MAC_AT` of the common header, then the pieces
//!   everything after the common header (ACK blocks, DATA header, body) is
//!   cut into, long ones by their BLAKE3 hash (see `Auth::mac`).
//!
//! With authentication off ([`crate::proto::Config::auth`] false, for trusted
//! networks) the MAC field is sent as zeros and not checked; the tag still
//! is. Both ends of a job must agree on the setting.

use std::hash::Hasher as _;

use siphasher::sip128::{Hasher128 as _, SipHasher24};

use super::wire::{has_preamble, COMMON_HEADER_LEN, MAC_AT, MAC_LEN, TAG_AT};
use super::Config;

/// BLAKE3 key-derivation context of the job tag.
const TAG_CONTEXT: &str = "gex-conduit-udp 2026-11 v2 public job tag";
/// BLAKE3 key-derivation context of the MAC key.
const MAC_CONTEXT: &str = "gex-conduit-udp 2026-11 v3 datagram SipHash key";

/// The job tag and, when authentication is on, the MAC key of one job.
#[derive(Clone)]
pub struct Auth {
    tag: u64,
    mac_key: Option<(u64, u64)>,
}

impl std::fmt::Debug for Auth {
    /// The MAC key is never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("tag", &format_args!("{:016x}", self.tag))
            .field("mac", &self.mac_key.is_some())
            .finish()
    }
}

/// BLAKE3 key-derivation context of the job key from its text form.
const TEXT_CONTEXT: &str = "gex-conduit-udp 2026-11 v2 job key from text";

/// The 256-bit job key of a job whose secret is given as text or bytes (the
/// launcher's 64 hex digits, or a user's `GEX_JOB_KEY` at a rendezvous).
pub fn key_from_text(text: &[u8]) -> [u8; 32] {
    blake3::derive_key(TEXT_CONTEXT, text)
}

/// The public job tag of the job whose secret is `key`.
pub fn job_tag(key: &[u8; 32]) -> u64 {
    let d = blake3::derive_key(TAG_CONTEXT, key);
    u64::from_le_bytes(d[..8].try_into().expect("8 bytes"))
}

impl Auth {
    /// The tag and MAC key for `cfg.key`; no MAC key if `cfg.auth` is off.
    pub fn new(cfg: &Config) -> Auth {
        Auth {
            tag: job_tag(&cfg.key),
            mac_key: cfg.auth.then(|| {
                let k = blake3::derive_key(MAC_CONTEXT, &cfg.key);
                let word = |i: usize| u64::from_le_bytes(k[i..i + 8].try_into().expect("8 bytes"));
                (word(0), word(8))
            }),
        }
    }

    /// The job tag every datagram carries.
    pub fn tag(&self) -> u64 {
        self.tag
    }

    /// Whether datagrams carry (and must carry) a MAC.
    pub fn enabled(&self) -> bool {
        self.mac_key.is_some()
    }

    /// The MAC of the datagram `head ++ tail` (whose common header is at
    /// the start of `head`), skipping its MAC field.
    ///
    /// The bytes after the common header are cut into *pieces*, counted
    /// from the end of the datagram: whole [`MAC_PIECE`]s, and before them
    /// one shorter piece with the rest (if any). The MAC is keyed
    /// SipHash-2-4 with 128-bit output over the datagram's length (4 bytes,
    /// little-endian), the header before the MAC field, then each piece in
    /// datagram order: a piece shorter than [`HASHED_PIECE_MIN`] as it is,
    /// a longer one as its 32-byte unkeyed BLAKE3 hash. The cut depends
    /// only on the length, which the input starts with, so the input is
    /// unambiguous; a forgery needs the key or a BLAKE3 collision.
    ///
    /// Why the mix: SipHash runs at about 3.2 GB/s whatever the length
    /// (0.35 us for a 1 KiB datagram, where keyed BLAKE3 took 1.7 us: it
    /// compresses one chunk's 16 blocks one after another), and BLAKE3 at
    /// 8 GB/s on a 16 KiB piece in one call (16 chunks at a time with
    /// AVX-512), while a whole 65507-byte datagram in one call took it
    /// 12.8 us (its tree ends in subtrees of 8, 4, 2 and 1 chunks) and one
    /// fed in several calls up to 20 us, against about 8 us cut this way.
    fn mac(key: (u64, u64), head: &[u8], tail: &[u8]) -> [u8; MAC_LEN] {
        let len = head.len() + tail.len();
        let mut h = SipHasher24::new_with_keys(key.0, key.1);
        h.write(&(len as u32).to_le_bytes());
        feed(&mut h, head, tail, 0, MAC_AT);
        let mut from = COMMON_HEADER_LEN;
        let first = (len.saturating_sub(COMMON_HEADER_LEN)) % MAC_PIECE;
        let mut to = from + first;
        while from < len {
            if to - from >= HASHED_PIECE_MIN {
                h.write(piece_hash(head, tail, from, to).as_bytes());
            } else {
                feed(&mut h, head, tail, from, to);
            }
            from = to;
            to = (from + MAC_PIECE).min(len);
        }
        let mac = h.finish128();
        let mut out = [0u8; MAC_LEN];
        out[..8].copy_from_slice(&mac.h1.to_le_bytes());
        out[8..].copy_from_slice(&mac.h2.to_le_bytes());
        out
    }

    /// Finishes a datagram for transmission: writes the MAC of `head ++
    /// tail` into the MAC field of `head` (zeros with authentication off).
    /// `tail` is the part of the body a scatter-gather send passes as a
    /// second buffer (empty when the whole datagram is in `head`).
    ///
    /// # Panics
    /// If `head` is shorter than the common header.
    pub fn seal(&self, head: &mut [u8], tail: &[u8]) {
        let mac = match &self.mac_key {
            Some(k) => Auth::mac(*k, head, tail),
            None => [0; MAC_LEN],
        };
        head[MAC_AT..COMMON_HEADER_LEN].copy_from_slice(&mac);
    }

    /// Whether a received datagram carries this job's tag (false for
    /// anything too short or without the magic and version).
    pub fn tag_matches(&self, data: &[u8]) -> bool {
        has_preamble(data) && data[TAG_AT..TAG_AT + 8] == self.tag.to_le_bytes()
    }

    /// Whether a received datagram's MAC is right (always true with
    /// authentication off; false for anything shorter than the common
    /// header). The comparison takes the same time wherever the MACs differ.
    pub fn verify(&self, data: &[u8]) -> bool {
        let Some(k) = &self.mac_key else {
            return true;
        };
        if data.len() < COMMON_HEADER_LEN {
            return false;
        }
        let want = Auth::mac(*k, data, &[]);
        let got = &data[MAC_AT..COMMON_HEADER_LEN];
        want.iter().zip(got).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

/// The length of the MAC's pieces but the first (see `Auth::mac`). A
/// sender that passes a datagram as a head and a referenced tail keeps the
/// MAC fast by making the tail a whole number of pieces: no piece then
/// spans the two buffers (one that does is hashed in two calls, and BLAKE3
/// then hashes the chunks after a partial one 1, 2, 4 and 8 at a time).
pub const MAC_PIECE: usize = 16 << 10;

/// Pieces at least this long enter the MAC as their BLAKE3 hash, shorter
/// ones as they are (SipHash is the faster of the two below about 6 KiB
/// on the AVX-512 machines measured: 1.3 against 1.8 us at 4 KiB, 4.9
/// against 2.0 us at 16 KiB).
const HASHED_PIECE_MIN: usize = 6 << 10;

/// The unkeyed BLAKE3 hash of bytes `[from, to)` of `head ++ tail`: one
/// call when they lie in one buffer.
fn piece_hash(head: &[u8], tail: &[u8], from: usize, to: usize) -> blake3::Hash {
    let n = head.len();
    if to <= n {
        blake3::hash(&head[from..to])
    } else if from >= n {
        blake3::hash(&tail[from - n..to - n])
    } else {
        let mut h = blake3::Hasher::new();
        h.update(&head[from..]);
        h.update(&tail[..to - n]);
        h.finalize()
    }
}

/// Feeds bytes `[from, to)` of the datagram `head ++ tail` to `h`.
fn feed(h: &mut SipHasher24, head: &[u8], tail: &[u8], from: usize, to: usize) {
    if from >= to {
        return;
    }
    let n = head.len();
    if from < n {
        h.write(&head[from..to.min(n)]);
    }
    if to > n {
        h.write(&tail[from.max(n) - n..to - n]);
    }
}

#[cfg(test)]
mod tests;
