//! The Active Message path: the limits, sending a message over the
//! protocol (copied or by reference), and running the handler of one that
//! arrived.

use std::time::Instant;

use bytes::Bytes;
use gex_conduit::{
    send_or_progress, AmLimits, AmSink, Conduit, IncomingAm, Injected, OutgoingAm, PollScope,
    SegmentDesc, ZeroLen,
};
use gex_conduit_smp::SmpTransport;
use gex_types::{AmCategory, Error, Rank, Result};

use crate::{proto, wire, UdpConduit, MAX_LONG, MAX_MEDIUM};

impl UdpConduit {
    /// Limits to a peer reached over UDP. Every payload travels in
    /// datagrams, so a Long to a created endpoint's segment (not mapped
    /// here) is carried whole, up to [`MAX_LONG`] like any Long: the pair's
    /// `gex_AM_Max*Long` is never below the LUB.
    pub(crate) fn net_limits() -> AmLimits {
        AmLimits::new(MAX_MEDIUM, MAX_MEDIUM, MAX_LONG, MAX_LONG)
    }

    /// Limits to a neighbour reached through the shared-memory bypass
    /// (this rank itself included): the smp transport's within the UDP
    /// ones; a Long to a neighbour's client memory is carried in a ring
    /// record, within smp's `max_long_carried`.
    pub(crate) fn smp_limits() -> AmLimits {
        Self::net_limits().min(SmpTransport::limits())
    }
    pub(crate) fn run(&self, src: Rank, m: &[u8], placed: bool, sink: &dyn AmSink) {
        if wire::is_rma(m) {
            return self.run_rma(src, m, placed, sink);
        }
        let decoded = if placed {
            wire::decode_placed(m)
        } else {
            wire::decode(m).map(|am| {
                let len = am.payload.len();
                (am, len)
            })
        };
        let Some((am, len)) = decoded else {
            gex_bootstrap::fatal(&format!("udp conduit: malformed AM from rank {src}"));
        };
        let mut payload = am.payload;
        // A zero-byte Long names no memory (its dest_addr goes to the
        // handler as sent, any value): nothing to check or place.
        let attached = am.dest_ep == 0 && self.link.segment.get().is_some();
        if am.category == AmCategory::Long && len > 0 && !attached {
            // For a created endpoint, or the primordial one of a rank that
            // bound a created segment to it instead of attaching: its bound
            // segment, checked here (the placer, which places into the
            // attached segment only, leaves such payloads in the message).
            let at = gex_conduit::epseg::arrived_at_ep(am.dest_ep, self.me, am.dest_offset, len)
                .unwrap_or_else(|e| {
                    gex_bootstrap::fatal(&format!(
                        "udp conduit: a Long AM from rank {src} (endpoint {}): {e}",
                        am.src_ep
                    ))
                });
            if placed || am.payload.len() != len {
                gex_bootstrap::fatal(&format!(
                    "udp conduit: a Long AM from rank {src} for endpoint {} arrived without its payload",
                    am.dest_ep
                ));
            }
            // SAFETY: `arrived_at_ep` checked the range against this rank's
            // bound segment of that endpoint (mapped for the rest of the
            // process); the message buffer is separate memory.
            unsafe {
                std::ptr::copy_nonoverlapping(am.payload.as_ptr(), at as *mut u8, len);
                payload = std::slice::from_raw_parts(at as *const u8, len);
            }
        } else if am.category == AmCategory::Long && len > 0 {
            let Some(&(base, size)) = self.link.segment.get() else {
                gex_bootstrap::fatal(&format!(
                    "udp conduit: a Long AM from rank {src} arrived before this rank attached a segment"
                ));
            };
            let seg = SegmentDesc::new(base, Some(base), size);
            let off = seg
                .offset_of(self.me, am.dest_offset, len, true, ZeroLen::InSegment)
                .unwrap_or_else(|e| {
                    gex_bootstrap::fatal(&format!(
                        "udp conduit: a Long AM from rank {src}: {}",
                        e.local()
                    ))
                });
            let dst = (base + off) as *mut u8;
            // SAFETY: the range is inside this rank's mapped segment
            // (checked above); the message buffer is separate memory, and a
            // placed payload is already there.
            unsafe {
                if !placed {
                    std::ptr::copy_nonoverlapping(am.payload.as_ptr(), dst, len);
                }
                payload = std::slice::from_raw_parts(dst, len);
            }
        }
        sink.deliver(
            &IncomingAm::new(
                src,
                am.category,
                am.is_request,
                am.handler,
                &am.args[..am.nargs],
                payload,
                am.dest_addr,
            )
            .between(am.src_ep, am.dest_ep),
        );
    }

    /// Sends a message of `len` bytes that `fill` encodes to `dest` over
    /// UDP: requests on the request lane, replies (and one-sided answers)
    /// on the reply lane, which never waits for capacity requests hold.
    /// When the window or queue is full: `NoOp` if `immediate`, else
    /// progress (replies only, for a reply) until it can send.
    pub(crate) fn send_net(
        &self,
        dest: Rank,
        is_request: bool,
        len: usize,
        immediate: bool,
        sink: &dyn AmSink,
        fill: impl Fn(&mut Vec<u8>),
    ) -> Result<Injected> {
        // Encoded straight into the protocol's buffer.
        self.send_net_by(is_request, immediate, sink, |ep, lane, now| {
            ep.send_with(dest, lane, len, now, &fill)
        })
    }

    /// A message of `head` followed by `body` to `dest` over UDP, both
    /// kept by reference until acknowledged; lanes and backpressure as
    /// [`UdpConduit::send_net`].
    pub(crate) fn send_net_parts(
        &self,
        dest: Rank,
        is_request: bool,
        head: Bytes,
        body: Bytes,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        self.send_net_by(is_request, immediate, sink, |ep, lane, now| {
            ep.send_parts(dest, lane, head.clone(), body.clone(), now)
        })
    }

    /// The injection loop of [`UdpConduit::send_net`] around one attempt
    /// to queue the message (`send`), under the protocol lock.
    pub(crate) fn send_net_by(
        &self,
        is_request: bool,
        immediate: bool,
        sink: &dyn AmSink,
        send: impl Fn(
            &mut proto::Endpoint,
            proto::Lane,
            Instant,
        ) -> std::result::Result<(), proto::Backpressure>,
    ) -> Result<Injected> {
        let lane = if is_request {
            proto::Lane::Request
        } else {
            proto::Lane::Reply
        };
        send_or_progress(
            immediate,
            || {
                let mut net = self.link.net.lock().unwrap_or_else(|p| p.into_inner());
                let now = Instant::now();
                if send(&mut net.ep, lane, now).is_err() {
                    return Ok(Injected::NoOp);
                }
                net.flush(now);
                Ok(Injected::Sent)
            },
            || {
                self.poll(sink, PollScope::for_sender(is_request));
            },
        )
    }

    /// `Conduit::am_send`: through the shared-memory bypass to a neighbour,
    /// else one protocol message over UDP.
    pub(crate) fn send_am(
        &self,
        dest: Rank,
        msg: &OutgoingAm<'_>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let scope = PollScope::for_sender(msg.is_request);
        let via_smp = self.smp.contains(dest);
        if !via_smp && dest >= self.boot.size() {
            return Err(Error::bad_arg(format!(
                "rank {dest} is not in the job of {} ranks",
                self.boot.size()
            )));
        }
        if via_smp {
            return send_or_progress(
                immediate,
                || self.smp.try_send(dest, msg),
                || {
                    self.poll(sink, scope);
                },
            );
        }
        let len = wire::encoded_len(msg);
        self.send_net(dest, msg.is_request, len, immediate, sink, |out| {
            wire::encode_append(msg, out)
        })
    }

    /// `Conduit::am_can_send`: room in the smp ring, or in the protocol's
    /// window toward `dest` on the message's lane.
    pub(crate) fn can_send_am(
        &self,
        dest: Rank,
        is_request: bool,
        category: AmCategory,
        nargs: usize,
        len: usize,
    ) -> bool {
        if self.smp.contains(dest) {
            return self.smp.can_send(dest, is_request, category, nargs, len);
        }
        if dest >= self.boot.size() {
            return false;
        }
        let lane = if is_request {
            proto::Lane::Request
        } else {
            proto::Lane::Reply
        };
        let net = self.link.net.lock().unwrap_or_else(|p| p.into_inner());
        net.ep
            .can_send_on(dest, lane, wire::encoded_len_of(category, nargs, len))
    }
}
