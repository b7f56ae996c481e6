//! NIC atomics: 64-bit fetch-add and compare-swap to every rank.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use gex_conduit::{AmSink, AtomicCapability, GetDest, Injected, OpCompletion, PollScope};
use gex_types::{Dt, Error, Op, Rank, Result};

use crate::rma::{OpEntry, What};
use crate::verbs::{SendOp, Sge};
use crate::IbvConduit;

/// The operand added by a NIC fetch-add for `op`, or `None` if `op` is
/// not one the NIC does (compare-swap aside).
pub(crate) fn fadd_operand(op: Op, operand: u64) -> Option<u64> {
    match op {
        Op::Add | Op::Fadd => Some(operand),
        Op::Sub | Op::Fsub => Some(operand.wrapping_neg()),
        Op::Inc | Op::Finc => Some(1),
        Op::Dec | Op::Fdec => Some(u64::MAX),
        Op::Get => Some(0),
        _ => None,
    }
}

impl AtomicCapability for IbvConduit {
    /// Every rank, this one included (one mechanism for every word of a
    /// domain), once segments are attached.
    fn reaches(&self, peer: Rank) -> bool {
        peer < self.boot.size() && self.seg_keys.get().is_some()
    }

    /// 64-bit integers, with fetch-add (ADD, SUB, INC, DEC, GET and their
    /// fetching forms) and compare-swap (CAS, FCAS).
    fn supports(&self, dt: Dt, op: Op) -> bool {
        matches!(dt, Dt::I64 | Dt::U64)
            && (fadd_operand(op, 0).is_some() || matches!(op, Op::Cas | Op::Fcas))
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
        if !AtomicCapability::supports(self, dt, op) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: {op:?} on {dt:?} is not a NIC atomic"
            )));
        }
        self.check_peer(peer)?;
        let (base, size, rkey) = self.seg_of(peer)?;
        if !gex_conduit::fits(offset, 8, size) || !offset.is_multiple_of(8) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: an atomic on rank {peer} at offset {offset:#x} is outside its segment or unaligned"
            )));
        }
        let raddr = base + offset as u64;
        let sop = match fadd_operand(op, operands[0]) {
            Some(add) => SendOp::FetchAdd { raddr, rkey, add },
            None => SendOp::CmpSwap {
                raddr,
                rkey,
                compare: operands[0],
                swap: operands[1],
            },
        };
        let mut result = Some(result);
        let mut done = Some(done);
        let r = self.send_loop(peer, immediate, PollScope::All, sink, || {
            self.try_post_op(peer, 1, &mut |slot| {
                Some((
                    OpEntry {
                        peer,
                        what: What::Atomic {
                            result: result.take().expect("until posted"),
                        },
                        done: done.take().expect("until posted"),
                        left: 0,
                    },
                    vec![(
                        sop,
                        Sge {
                            addr: self.scratch_mem + 8 * slot as usize,
                            len: 8,
                            lkey: self.scratch_mr.lkey,
                        },
                    )],
                ))
            })
        });
        if matches!(r, Ok(Injected::Sent)) {
            self.counts.atomics.fetch_add(1, Ordering::Relaxed);
        }
        r
    }
}
