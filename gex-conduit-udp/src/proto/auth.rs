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
//! * the **MAC keys** key AEGIS-MAC (the MAC mode of the AEGIS family,
//!   draft-irtf-cfrg-aegis-aead; the `aegis` crate) with a 128-bit tag,
//!   the [`MAC_LEN`] bytes of the MAC field, over the whole datagram but
//!   that field: its length, bytes `0..MAC_AT` of the common header, then
//!   everything after the common header (ACK blocks, DATA header, body).
//!   Datagrams shorter than [`WIDE_MAC_MIN`] use AEGIS-128L, longer ones
//!   AEGIS-128X4 (four AES lanes: VAES/AVX-512 where the CPU has it), each
//!   under its own key (see `Auth::mac`).
//!
//! With authentication off ([`crate::proto::Config::auth`] false, for trusted
//! networks) the MAC field is sent as zeros and not checked; the tag still
//! is. Both ends of a job must agree on the setting.

use aegis::aegis128l::Aegis128LMac;
use aegis::aegis128x4::Aegis128X4Mac;

use super::wire::{has_preamble, COMMON_HEADER_LEN, MAC_AT, MAC_LEN, TAG_AT};
use super::Config;

/// BLAKE3 key-derivation context of the job tag.
const TAG_CONTEXT: &str = "gex-conduit-udp 2026-11 v2 public job tag";
/// BLAKE3 key-derivation context of the two MAC keys.
const MAC_CONTEXT: &str = "gex-conduit-udp 2026-11 v4 datagram AEGIS-MAC keys";

/// The keyed MAC states of one job, cloned for every datagram.
#[derive(Clone)]
struct MacKeys {
    /// AEGIS-128L under the first 16 bytes of the derived key.
    narrow: Aegis128LMac<MAC_LEN>,
    /// AEGIS-128X4 under the last 16.
    wide: Aegis128X4Mac<MAC_LEN>,
}

/// The job tag and, when authentication is on, the MAC keys of one job.
#[derive(Clone)]
pub struct Auth {
    tag: u64,
    mac_key: Option<MacKeys>,
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
                let half = |i: usize| -> [u8; 16] { k[i..i + 16].try_into().expect("16 bytes") };
                MacKeys {
                    narrow: Aegis128LMac::new(&half(0)),
                    wide: Aegis128X4Mac::new(&half(16)),
                }
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
    /// The MAC is over the datagram's length (4 bytes, little-endian), the
    /// header before the MAC field, then everything after the common
    /// header; the length fixes where each part ends, so the input is
    /// unambiguous. The length also picks the algorithm, so both ends
    /// agree: AEGIS-128L below [`WIDE_MAC_MIN`] bytes (about 40 ns for a
    /// 64-byte datagram, where keyed BLAKE3 took 100), AEGIS-128X4 from
    /// there (15 GB/s at 1 KiB, 55-80 GB/s from 8 KiB on the AVX-512/VAES
    /// machines measured, where BLAKE3 over 16 KiB pieces ran at 5-8 GB/s).
    /// Neither needs a nonce in MAC mode; a key cloned per datagram is the
    /// documented use. How the datagram is split into `head` and `tail`
    /// changes nothing.
    fn mac(keys: &MacKeys, head: &[u8], tail: &[u8]) -> [u8; MAC_LEN] {
        let len = head.len() + tail.len();
        let mut lead = [0u8; 4 + MAC_AT];
        lead[..4].copy_from_slice(&(len as u32).to_le_bytes());
        lead[4..].copy_from_slice(&head[..MAC_AT]);
        let body = &head[COMMON_HEADER_LEN..];
        let input = lead.len() + body.len() + tail.len();
        if input <= SHORT_MAC_INPUT {
            // One update over a contiguous copy: each update call costs
            // about 15 ns of its own (65 against 96 ns for a 64-byte
            // datagram), and most datagrams are this short.
            let mut b = [0u8; SHORT_MAC_INPUT];
            b[..lead.len()].copy_from_slice(&lead);
            b[lead.len()..lead.len() + body.len()].copy_from_slice(body);
            b[lead.len() + body.len()..input].copy_from_slice(tail);
            let mut m = keys.narrow.clone();
            m.update(&b[..input]);
            m.finalize()
        } else if len < WIDE_MAC_MIN {
            let mut m = keys.narrow.clone();
            m.update(&lead);
            m.update(body);
            m.update(tail);
            m.finalize()
        } else {
            let mut m = keys.wide.clone();
            m.update(&lead);
            m.update(body);
            m.update(tail);
            m.finalize()
        }
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
            Some(k) => Auth::mac(k, head, tail),
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
        let want = Auth::mac(k, data, &[]);
        let got = &data[MAC_AT..COMMON_HEADER_LEN];
        want.iter().zip(got).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

/// MAC inputs up to this long are copied together and absorbed in one
/// update (the same MAC as absorbing the parts in turn).
const SHORT_MAC_INPUT: usize = 256;

/// Datagrams at least this long are authenticated with AEGIS-128X4,
/// shorter ones with AEGIS-128L, the faster of the two on short inputs
/// (measured with a state clone per MAC: 40 against 90 ns at 64 bytes,
/// about 65 ns each at 512, 93 against 68 ns at 1 KiB).
pub const WIDE_MAC_MIN: usize = 768;

#[cfg(test)]
mod tests;
