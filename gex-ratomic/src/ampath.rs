//! The Active Message route of remote atomics, and the agreement of
//! `gex_AD_Create`.
//!
//! An operation on a target whose segment is not mapped here is one Short
//! request carrying (offset, type, opcode, ordering, operands, slot,
//! generation); the target checks everything in it, performs the operation
//! with the same CPU atomics the direct route uses on its own segment (so
//! the two are coherent), and answers with a Short reply carrying the slot,
//! the generation and the fetched value. Arguments are never turned into a
//! pointer: the offset goes through the one range check
//! (`SegmentDesc::offset_of`) and an alignment check, and a request that
//! fails them (or names a type or opcode that is not one) is a fatal error
//! naming the sender: only a forger sends one, since the initiator checked
//! already.
//!
//! In-flight operations live in a table indexed by slot with a generation.
//! A reply takes its operation out of the table before writing its result,
//! so a second reply for it, a reply naming an unknown or stale slot, or
//! one from a rank the operation was not sent to is a fatal error.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use gex_am::{register_internal_handlers, HandlerEntry, Injected, LayerAm};
use gex_conduit::ZeroLen;
use gex_core::slots::Slots;
use gex_core::{Completion, Ep, Runtime, Staging};
use gex_types::{AmArg, AmIndex, Dt, Error, Flags, Op, Rank, Result};

use gex_conduit::atomic_ops::{dt_from_bits, op_from_bits, perform_dyn};

const H_OP: AmIndex = 7;
const H_RESULT: AmIndex = 8;
const H_CREATE: AmIndex = 9;
const H_VERDICT: AmIndex = 10;

fn split(v: u64) -> (AmArg, AmArg) {
    (v as u32 as AmArg, (v >> 32) as u32 as AmArg)
}

fn join(lo: AmArg, hi: AmArg) -> u64 {
    u64::from(lo as u32) | (u64::from(hi as u32) << 32)
}

/// Ordering flags as one argument.
fn order_code(flags: Flags) -> AmArg {
    AmArg::from(flags.contains(Flags::AD_ACQ)) | (AmArg::from(flags.contains(Flags::AD_REL)) << 1)
}

fn order_flags(code: AmArg) -> Flags {
    let mut f = Flags::empty();
    f.set(Flags::AD_ACQ, code & 1 != 0);
    f.set(Flags::AD_REL, code & 2 != 0);
    f
}

/// Where a fetched value goes.
pub(crate) enum ResultDst {
    /// Nowhere (a non-fetching operation).
    None,
    /// The caller's memory, valid until the caller observes completion
    /// (blocking calls and NBI calls wait before returning).
    Raw(*mut u8),
    /// A staging buffer the event copies out from.
    Staged(Arc<Staging>),
}

/// An operation in flight.
struct Pending {
    peer: Rank,
    size: usize,
    dst: ResultDst,
    c: Arc<Completion>,
    /// The domain's count of operations in flight.
    outstanding: Arc<AtomicUsize>,
}

// SAFETY: `ResultDst::Raw` points at a caller's value that only the reply
// handler writes, once, before the completion the caller waits for; every
// other field is thread-safe.
unsafe impl Send for Pending {}

static OPS: Slots<Pending> = Slots::new();

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The layer's right to send to its handlers (set by [`register`]).
static LAYER: OnceLock<LayerAm> = OnceLock::new();

fn layer() -> Result<&'static LayerAm> {
    LAYER.get().ok_or_else(|| {
        Error::not_init(
            "gex-ratomic: the layer's handlers are not registered (gex_ratomic::register)",
        )
    })
}

/// Where the `dt` at `off` of this rank's segment is, for a request from
/// `src`: the offset comes from another process, so one outside the
/// segment or misaligned is a fatal error naming the sender.
fn target(src: Rank, off: usize, dt: Dt) -> *mut u8 {
    let what = "gex-ratomic op";
    let rt = Runtime::get().expect("an AM arrived, so the client exists");
    let me = rt.jobrank();
    let d = rt.segments().map(|t| t[me as usize]).unwrap_or_default();
    let n = dt.size().expect("a built-in type");
    let off = match d.offset_of(me, off, n, true, ZeroLen::InSegment) {
        Ok(o) => o,
        Err(e) => gex_core::fatal(&format!("{what} from rank {src}: {}", e.local())),
    };
    if off % n != 0 {
        gex_core::fatal(&format!(
            "{what} from rank {src}: offset {off:#x} is not aligned to the {n} bytes of {}",
            dt.name()
        ));
    }
    let base = d.local_base.expect("the local segment is mapped");
    (base + off) as *mut u8
}

/// A record of `gex_AD_Create`'s single-valued arguments, compared at the
/// team's rank 0: (dt, ops, flags, whether the conduit's atomics cover the
/// domain from this rank).
type Record = [u64; 4];

/// Agreements in progress, by (team key, sequence): the records the root
/// received, and the verdict a member received.
#[derive(Default)]
struct Agreement {
    records: Vec<(Rank, Record)>,
    verdict: Option<[AmArg; 3]>,
}

static AGREE: Mutex<Option<HashMap<(u64, u32), Agreement>>> = Mutex::new(None);

/// More agreements than any program has in flight: past it, someone is
/// flooding the handlers.
const MAX_AGREEMENTS: usize = 4096;

fn with_agreement<R>(src: Rank, key: (u64, u32), f: impl FnOnce(&mut Agreement) -> R) -> R {
    let mut g = lock(&AGREE);
    let map = g.get_or_insert_with(HashMap::new);
    if !map.contains_key(&key) && map.len() >= MAX_AGREEMENTS {
        gex_core::fatal(&format!(
            "gex-ratomic create from rank {src}: more than {MAX_AGREEMENTS} atomic domain creations in flight"
        ));
    }
    f(map.entry(key).or_default())
}

/// Registers the layer's handlers on `ep`. Runs on every rank at client
/// init (the facade passes it to `Client::init_with_layers`).
pub fn register(ep: &Ep) -> Result<()> {
    let mut table = [
        HandlerEntry::request(H_OP, Flags::AM_SHORT, 11, |tok, msg| {
            let a = msg.args();
            let src = tok.src_rank();
            let Some(dt) = dt_from_bits(a[2] as u32) else {
                gex_core::fatal(&format!(
                    "gex-ratomic op from rank {src}: data type code {:#x} is not a built-in type",
                    a[2]
                ));
            };
            let op = op_from_bits(u64::from(a[3] as u32))
                .filter(|o| o.valid_for_atomic(dt))
                .unwrap_or_else(|| {
                    gex_core::fatal(&format!(
                        "gex-ratomic op from rank {src}: opcode {:#x} is not an atomic operation on {}",
                        a[3],
                        dt.name()
                    ))
                });
            let p = target(src, join(a[0], a[1]) as usize, dt);
            // SAFETY: `p` lies inside this rank's mapped segment and is
            // aligned to the type's size (`target`); every access to it by
            // this layer is atomic.
            let v = unsafe {
                perform_dyn(p, dt, op, join(a[5], a[6]), join(a[7], a[8]), order_flags(a[4]))
            };
            let (lo, hi) = split(v);
            tok.reply_short(H_RESULT, Flags::empty(), &[a[9], a[10], lo, hi])
                .expect("gex-ratomic reply");
        })
        .with_name("gex-ratomic op"),
        HandlerEntry::reply(H_RESULT, Flags::AM_SHORT, 4, |tok, msg| {
            let a = msg.args();
            let src = tok.src_rank();
            let (slot, generation) = (a[0] as u32, a[1] as u32);
            let Some(op) = OPS.take(slot, generation) else {
                gex_core::fatal(&format!(
                    "gex-ratomic result: a reply from rank {src} names operation {slot}.{generation}, which is not in flight (a forged, stale or duplicated reply)"
                ));
            };
            if op.peer != src {
                gex_core::fatal(&format!(
                    "gex-ratomic result: a reply from rank {src} names operation {slot}.{generation}, which was sent to rank {}",
                    op.peer
                ));
            }
            let v = join(a[2], a[3]).to_ne_bytes();
            // The value's low-order bytes, in this machine's byte order.
            let bytes = if cfg!(target_endian = "little") {
                &v[..op.size]
            } else {
                &v[8 - op.size..]
            };
            let ptr = match &op.dst {
                ResultDst::None => None,
                ResultDst::Raw(p) => Some(*p),
                ResultDst::Staged(s) => Some(s.ptr()),
            };
            if let Some(p) = ptr {
                // SAFETY: the destination holds `size` bytes and stays
                // valid until the completion below (see `Pending`); this
                // handler took the operation out of the table, so it is
                // the only writer.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, op.size) };
            }
            op.outstanding.fetch_sub(1, Ordering::AcqRel);
            op.c.done();
        })
        .with_name("gex-ratomic result"),
        HandlerEntry::request(H_CREATE, Flags::AM_SHORT, 9, |tok, msg| {
            let a = msg.args();
            let key = (join(a[0], a[1]), a[2] as u32);
            let rec = [
                u64::from(a[3] as u32),
                join(a[4], a[5]),
                join(a[6], a[7]),
                u64::from(a[8] as u32),
            ];
            let src = tok.src_rank();
            with_agreement(src, key, |ag| {
                let size = Runtime::get().map_or(0, |rt| rt.jobsize() as usize);
                if ag.records.len() >= size || ag.records.iter().any(|r| r.0 == src) {
                    gex_core::fatal(&format!(
                        "gex-ratomic create from rank {src}: a second record for one atomic domain creation"
                    ));
                }
                ag.records.push((src, rec));
            });
        })
        .with_name("gex-ratomic create"),
        HandlerEntry::request(H_VERDICT, Flags::AM_SHORT, 6, |tok, msg| {
            let a = msg.args();
            let key = (join(a[0], a[1]), a[2] as u32);
            let src = tok.src_rank();
            with_agreement(src, key, |ag| {
                if ag.verdict.is_some() {
                    gex_core::fatal(&format!(
                        "gex-ratomic verdict from rank {src}: a second verdict for one atomic domain creation"
                    ));
                }
                ag.verdict = Some([a[3], a[4], a[5]]);
            });
        })
        .with_name("gex-ratomic verdict"),
    ];
    let layer = register_internal_handlers(ep, &mut table)?;
    let _ = LAYER.set(layer);
    Ok(())
}

/// Starts `op` on the `dt` at offset `off` of `jobrank`'s segment.
/// Returns `None` for an `IMMEDIATE` no-op (undoing `parent`), else the
/// completion, which reports to `parent`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn start(
    jobrank: Rank,
    off: usize,
    dt: Dt,
    op: Op,
    operands: [u64; 2],
    flags: Flags,
    dst: ResultDst,
    parent: Option<Arc<Completion>>,
    outstanding: &Arc<AtomicUsize>,
) -> Result<Option<Arc<Completion>>> {
    let am = layer()?;
    let c = Completion::new(1, parent.clone());
    outstanding.fetch_add(1, Ordering::AcqRel);
    let (slot, generation) = OPS.insert(Pending {
        peer: jobrank,
        size: dt.size().expect("a built-in type"),
        dst,
        c: c.clone(),
        outstanding: outstanding.clone(),
    });
    let (olo, ohi) = split(off as u64);
    let (alo, ahi) = split(operands[0]);
    let (blo, bhi) = split(operands[1]);
    let args = [
        olo,
        ohi,
        dt as u32 as AmArg,
        op as u64 as u32 as AmArg,
        order_code(flags),
        alo,
        ahi,
        blo,
        bhi,
        slot as AmArg,
        generation as AmArg,
    ];
    let imm = flags & Flags::IMMEDIATE;
    let sent = am.request_short(jobrank, H_OP, imm, &args);
    if !matches!(sent, Ok(Injected::Sent)) {
        // Nothing left: no reply can name it.
        OPS.take(slot, generation);
        outstanding.fetch_sub(1, Ordering::AcqRel);
        if let Some(p) = &parent {
            p.done();
        }
    }
    Ok(match sent? {
        Injected::Sent => Some(c),
        Injected::NoOp => None,
    })
}

/// A key naming a team the same way on every member: a hash of its
/// members' jobranks, in rank order.
pub(crate) fn team_key(members: impl Iterator<Item = Rank>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for m in members {
        h ^= u64::from(m) + 1;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The next sequence number of agreements over the team `key` in this
/// process (creations over one team are collective, so in the same order on
/// every member). Teams with the same members share the key: creations
/// over two such teams must also come in one order on every member, or
/// their records meet the wrong creation (an error, never a wrong domain,
/// when the arguments differ).
fn next_seq(key: u64) -> u32 {
    static SEQ: Mutex<Option<HashMap<u64, u32>>> = Mutex::new(None);
    let mut g = lock(&SEQ);
    let s = g.get_or_insert_with(HashMap::new).entry(key).or_insert(0);
    *s = s.wrapping_add(1);
    *s
}

/// The single-valued arguments of `gex_AD_Create` as records compare.
pub(crate) fn record(dt: Dt, ops: u64, flags: Flags, nic: bool) -> Record {
    [u64::from(dt as u32), ops, flags.bits(), u64::from(nic)]
}

/// What the members of a team decided.
pub(crate) struct Verdict {
    /// Whether every member's conduit atomics cover the domain.
    pub(crate) nic: bool,
}

/// Agrees with the other members (jobranks `members`, this process's at
/// `my_rank`) on `gex_AD_Create`'s single-valued arguments: every member
/// sends its record to the team's rank 0, which compares them and answers
/// each with the verdict. A disagreement is an error on every member
/// naming the first member that differs and the argument.
pub(crate) fn agree(members: &[Rank], my_rank: usize, mine: Record) -> Result<Verdict> {
    const CALL: &str = "gex_AD_Create";
    let rt = Runtime::require(CALL)?;
    let key = (team_key(members.iter().copied()), 0);
    let key = (key.0, next_seq(key.0));
    let (klo, khi) = split(key.0);
    let seq = key.1 as AmArg;
    if members.len() == 1 {
        return Ok(Verdict { nic: mine[3] != 0 });
    }
    let am = layer()?;
    let root = members[0];
    let verdict = if my_rank == 0 {
        let others = members.len() - 1;
        rt.spin_until(|| {
            lock(&AGREE)
                .as_ref()
                .and_then(|m| m.get(&key))
                .is_some_and(|a| a.records.len() >= others)
        });
        let ag = lock(&AGREE)
            .as_mut()
            .and_then(|m| m.remove(&key))
            .unwrap_or_default();
        let mut verdict = [0 as AmArg, AmArg::from(mine[3] != 0), 0];
        for (src, rec) in &ag.records {
            if !members[1..].contains(src) {
                gex_core::fatal(&format!(
                    "{CALL}: rank {src}, not a member of the team, sent a record for its atomic domain"
                ));
            }
            if rec[3] == 0 {
                verdict[1] = 0;
            }
            if verdict[0] == 0 {
                if let Some(field) = (0..3).find(|&i| rec[i] != mine[i]) {
                    verdict = [field as AmArg + 1, 0, *src as AmArg];
                }
            }
        }
        for &m in &members[1..] {
            am.request_short(
                m,
                H_VERDICT,
                Flags::empty(),
                &[klo, khi, seq, verdict[0], verdict[1], verdict[2]],
            )?;
        }
        verdict
    } else {
        let (olo, ohi) = split(mine[1]);
        let (flo, fhi) = split(mine[2]);
        am.request_short(
            root,
            H_CREATE,
            Flags::empty(),
            &[
                klo,
                khi,
                seq,
                mine[0] as AmArg,
                olo,
                ohi,
                flo,
                fhi,
                mine[3] as AmArg,
            ],
        )?;
        rt.spin_until(|| {
            lock(&AGREE)
                .as_ref()
                .and_then(|m| m.get(&key))
                .is_some_and(|a| a.verdict.is_some())
        });
        lock(&AGREE)
            .as_mut()
            .and_then(|m| m.remove(&key))
            .and_then(|a| a.verdict)
            .expect("waited for it")
    };
    match verdict[0] {
        0 => Ok(Verdict {
            nic: verdict[1] != 0,
        }),
        field => Err(Error::bad_arg(format!(
            "{CALL}: jobrank {} passed another {} than jobrank {root} (the argument is single-valued: every member must pass the same)",
            verdict[2],
            ["data type", "set of operations", "flags"]
                .get(field as usize - 1)
                .copied()
                .unwrap_or("argument")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_survive_the_split() {
        for v in [0u64, 1, 0xdead_beef, u64::MAX, 1 << 63] {
            let (lo, hi) = split(v);
            assert_eq!(join(lo, hi), v);
        }
        for f in [
            Flags::empty(),
            Flags::AD_ACQ,
            Flags::AD_REL,
            Flags::AD_ACQ | Flags::AD_REL,
        ] {
            assert_eq!(order_flags(order_code(f)), f);
        }
        assert_ne!(team_key([0, 1].into_iter()), team_key([1, 0].into_iter()));
        assert_ne!(team_key([0].into_iter()), team_key([0, 0].into_iter()));
    }
}
