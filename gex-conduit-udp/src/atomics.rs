//! Remote atomics: the capability (ATOMIC messages), and serving an
//! ATOMIC that arrived with CPU atomics on this rank's segment.

use std::sync::Arc;

use gex_conduit::{
    atomic_ops, AmSink, AtomicCapability, GetDest, Injected, OpCompletion, RmaCapability,
};
use gex_types::{Dt, Error, Flags, Op, Rank, Result};

use crate::{wire, UdpConduit};

impl UdpConduit {
    /// Serves an ATOMIC from `src`: checks it (a malformed message, a
    /// range outside this rank's segment or a misaligned target ends the
    /// job naming the sender), performs it with CPU atomics and answers
    /// ATOMIC_RESULT.
    pub(crate) fn serve_atomic(&self, src: Rank, m: &[u8], sink: &dyn AmSink) {
        let bad = |what: &str| -> ! {
            gex_bootstrap::fatal(&format!(
                "udp conduit: a one-sided message from rank {src} {what}"
            ))
        };
        let a = wire::decode_atomic(m).unwrap_or_else(|e| bad(&e));
        let size = a.dt.size().expect("a built-in type");
        let Some(&(base, seg)) = self.link.segment.get() else {
            bad("arrived before this rank attached a segment")
        };
        if !gex_conduit::fits(a.offset, size, seg) {
            bad(&format!(
                "is an atomic on [{:#x}, +{size}), outside this rank's segment of {seg:#x} bytes",
                a.offset
            ));
        }
        if !a.offset.is_multiple_of(size) {
            bad(&format!(
                "is an atomic at offset {:#x}, misaligned for {}",
                a.offset,
                a.dt.name()
            ));
        }
        self.link.ops.count_atomic_served();
        // SAFETY: the value lies inside this rank's mapped segment and is
        // aligned to its size (both checked above; the base is
        // page-aligned); every access to it through remote atomics is
        // atomic (the same instructions as the direct route and the
        // Active Message route). Both fences: the initiator's ordering
        // flags do not travel.
        let v = unsafe {
            atomic_ops::perform_dyn(
                (base + a.offset) as *mut u8,
                a.dt,
                a.op,
                a.operands[0],
                a.operands[1],
                Flags::AD_ACQ | Flags::AD_REL,
            )
        };
        let len = if a.op.is_fetching() { size } else { 0 };
        let _ = self.send_net(
            src,
            false,
            wire::ATOMIC_RESULT_HEADER + len,
            false,
            sink,
            |out| wire::encode_atomic_result(a.id, v, len, out),
        );
    }
}

/// Remote atomics that the target's protocol shell performs with CPU
/// atomics on its own segment (ATOMIC / ATOMIC_RESULT, see [`wire`]): one
/// message each way and no AM handler at either end. Coherent with CPU
/// atomics on the same word, so gex-ratomic uses them for the targets its
/// CPU domains cannot reach directly.
impl AtomicCapability for UdpConduit {
    fn reaches(&self, peer: Rank) -> bool {
        RmaCapability::reaches(self, peer)
    }

    fn supports(&self, dt: Dt, op: Op) -> bool {
        dt.size().is_some() && op.valid_for_atomic(dt)
    }

    fn cpu_coherent(&self) -> bool {
        true
    }

    fn start(
        &self,
        peer: Rank,
        offset: usize,
        dt: Dt,
        op: Op,
        operands: [u64; 2],
        result: Option<GetDest>,
        done: Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let size = match dt.size() {
            Some(n) if op.valid_for_atomic(dt) => n,
            _ => {
                return Err(Error::bad_arg(format!(
                    "udp conduit: {} is not an atomic operation on {}",
                    op.name(),
                    dt.name()
                )))
            }
        };
        if result.as_ref().is_some_and(|d| d.len() != size) {
            return Err(Error::bad_arg(format!(
                "udp conduit: an atomic's result must take the {size} bytes of {}",
                dt.name()
            )));
        }
        gex_conduit::check_one_sided(self, "udp conduit", self.me, peer, 0, size)?;
        let value_len = if op.is_fetching() { size } else { 0 };
        let id = self.link.ops.insert_atomic(peer, value_len, result, done);
        let Some(wire_id) = wire::compact_id(id) else {
            self.link.ops.cancel(id);
            return Err(Error::resource(
                "udp conduit: 2^24 one-sided operations in flight; an atomic's id has no room",
            ));
        };
        let sent = self.send_net(
            peer,
            true,
            wire::atomic_len(dt, op),
            immediate,
            sink,
            |out| wire::encode_atomic(dt, op, wire_id, offset, operands, out),
        );
        if !matches!(sent, Ok(Injected::Sent)) {
            self.link.ops.cancel(id);
        }
        sent
    }
}
