//! The simulated device between two devices of one process: delivery,
//! RDMA, atomics, and every fault it reports.

use super::*;

/// Memory for a test, leaked (registered regions live as long as the
/// device's threads).
fn mem(len: usize) -> &'static mut [u8] {
    let words: &'static mut [u64] = Box::leak(vec![0u64; len.div_ceil(8)].into_boxed_slice());
    // SAFETY: leaked words viewed as bytes.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr() as *mut u8, len) }
}

struct Pair {
    a: SimDevice,
    b: SimDevice,
    qa: QpNum,
    qb: QpNum,
}

fn pair(timeout: Duration) -> Pair {
    let a = SimDevice::open(timeout).unwrap();
    let b = SimDevice::open(timeout).unwrap();
    let qa = a.create_qp(None).unwrap();
    let qb = b.create_qp(None).unwrap();
    a.connect(qa, &b.address(qb)).unwrap();
    b.connect(qb, &a.address(qa)).unwrap();
    Pair { a, b, qa, qb }
}

/// Polls `d` until `n` completions arrived; bounded (the device's own
/// timeout completes anything that is not answered).
fn wait(d: &SimDevice, n: usize) -> Vec<Wc> {
    let mut out = Vec::new();
    let start = Instant::now();
    while out.len() < n {
        let want = n - out.len();
        d.poll_cq(&mut out, want);
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no completion: {out:?}"
        );
        std::thread::yield_now();
    }
    out
}

fn reg(d: &SimDevice, m: &mut [u8]) -> Mr {
    // SAFETY: test memory is leaked.
    unsafe { d.register(m.as_mut_ptr(), m.len()).unwrap() }
}

#[test]
fn sends_arrive_in_order_in_posted_receives() {
    let p = pair(Duration::from_secs(10));
    let src = mem(64);
    let dst = mem(64 * 4);
    let sm = reg(&p.a, src);
    let dm = reg(&p.b, dst);
    for i in 0..4u64 {
        let sge = Sge {
            addr: dm.addr + 64 * i as usize,
            len: 64,
            lkey: dm.lkey,
        };
        // SAFETY: registered, leaked test memory.
        unsafe { p.b.post_recv(p.qb, 100 + i, sge).unwrap() };
    }
    for i in 0..4u8 {
        src[..8].fill(i + 1);
        let sge = Sge {
            addr: sm.addr,
            len: 8 + u32::from(i),
            lkey: sm.lkey,
        };
        // SAFETY: as above; the device copies the bytes at post.
        unsafe { p.a.post_send(p.qa, i.into(), SendOp::Send, sge).unwrap() };
    }
    let sent = wait(&p.a, 4);
    assert!(sent.iter().all(|w| w.status == WcStatus::Success));
    assert_eq!(
        sent.iter().map(|w| w.wr_id).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    let got = wait(&p.b, 4);
    for (i, w) in got.iter().enumerate() {
        assert_eq!(
            (w.wr_id, w.kind, w.byte_len),
            (100 + i as u64, WcKind::Recv, 8 + i as u32)
        );
        assert_eq!(&dst[64 * i..64 * i + 8], &[i as u8 + 1; 8]);
    }
}

#[test]
fn rdma_and_atomics_act_on_the_target_memory_without_its_application() {
    let p = pair(Duration::from_secs(10));
    let local = mem(256);
    let remote = mem(256);
    let lm = reg(&p.a, local);
    let rm = reg(&p.b, remote);
    local[..5].copy_from_slice(b"hello");
    let sge = |off: usize, len: u32| Sge {
        addr: lm.addr + off,
        len,
        lkey: lm.lkey,
    };
    let r = rm.addr as u64;
    // SAFETY: registered, leaked test memory, not touched until completion.
    unsafe {
        p.a.post_send(
            p.qa,
            1,
            SendOp::Write {
                raddr: r + 16,
                rkey: rm.rkey,
            },
            sge(0, 5),
        )
        .unwrap();
        p.a.post_send(
            p.qa,
            2,
            SendOp::Read {
                raddr: r + 16,
                rkey: rm.rkey,
            },
            sge(64, 5),
        )
        .unwrap();
        p.a.post_send(
            p.qa,
            3,
            SendOp::FetchAdd {
                raddr: r + 128,
                rkey: rm.rkey,
                add: 7,
            },
            sge(128, 8),
        )
        .unwrap();
        p.a.post_send(
            p.qa,
            4,
            SendOp::CmpSwap {
                raddr: r + 128,
                rkey: rm.rkey,
                compare: 7,
                swap: 42,
            },
            sge(136, 8),
        )
        .unwrap();
    }
    let w = wait(&p.a, 4);
    assert!(w.iter().all(|w| w.status == WcStatus::Success), "{w:?}");
    assert_eq!(&remote[16..21], b"hello");
    assert_eq!(&local[64..69], b"hello");
    assert_eq!(u64::from_ne_bytes(local[128..136].try_into().unwrap()), 0);
    assert_eq!(u64::from_ne_bytes(local[136..144].try_into().unwrap()), 7);
    assert_eq!(u64::from_ne_bytes(remote[128..136].try_into().unwrap()), 42);
}

#[test]
fn a_wrong_key_or_range_is_a_remote_access_error_and_flushes_the_rest() {
    let p = pair(Duration::from_secs(10));
    let local = mem(64);
    let remote = mem(64);
    let lm = reg(&p.a, local);
    let rm = reg(&p.b, remote);
    let sge = Sge {
        addr: lm.addr,
        len: 16,
        lkey: lm.lkey,
    };
    let r = rm.addr as u64;
    // SAFETY: registered, leaked test memory.
    unsafe {
        // Past the end of the region.
        p.a.post_send(
            p.qa,
            1,
            SendOp::Write {
                raddr: r + 56,
                rkey: rm.rkey,
            },
            sge,
        )
        .unwrap();
        p.a.post_send(
            p.qa,
            2,
            SendOp::Write {
                raddr: r,
                rkey: rm.rkey,
            },
            sge,
        )
        .unwrap();
    }
    let w = wait(&p.a, 2);
    assert_eq!(w[0].status, WcStatus::RemoteAccess);
    assert_eq!(w[1].status, WcStatus::Flushed);
    assert_eq!(remote, &[0u8; 64][..]);
    // The queue pair stays in the error state.
    // SAFETY: as above.
    unsafe {
        p.a.post_send(
            p.qa,
            3,
            SendOp::Write {
                raddr: r,
                rkey: rm.rkey,
            },
            sge,
        )
        .unwrap()
    };
    assert_eq!(wait(&p.a, 1)[0].status, WcStatus::Flushed);

    // Another device's key (same region index) is refused too.
    let q = pair(Duration::from_secs(10));
    let lm = reg(&q.a, mem(64));
    let _ = reg(&q.b, mem(64));
    let sge = Sge {
        addr: lm.addr,
        len: 8,
        lkey: lm.lkey,
    };
    let wrong = rm.rkey ^ 0x100;
    // SAFETY: as above.
    unsafe {
        q.a.post_send(
            q.qa,
            1,
            SendOp::Read {
                raddr: r,
                rkey: wrong,
            },
            sge,
        )
        .unwrap()
    };
    assert_eq!(wait(&q.a, 1)[0].status, WcStatus::RemoteAccess);
}

#[test]
fn a_send_without_a_receive_is_receiver_not_ready_once_retries_run_out() {
    // The target's RNR timeout is short, the initiator's transport timeout
    // long: the answer is the target's.
    let a = SimDevice::open(Duration::from_secs(30)).unwrap();
    let b = SimDevice::open(Duration::from_millis(200)).unwrap();
    let (qa, qb) = (a.create_qp(None).unwrap(), b.create_qp(None).unwrap());
    a.connect(qa, &b.address(qb)).unwrap();
    b.connect(qb, &a.address(qa)).unwrap();
    let p = Pair { a, b, qa, qb };
    let src = mem(8);
    let sm = reg(&p.a, src);
    let sge = Sge {
        addr: sm.addr,
        len: 8,
        lkey: sm.lkey,
    };
    // SAFETY: registered, leaked test memory.
    unsafe { p.a.post_send(p.qa, 9, SendOp::Send, sge).unwrap() };
    let w = wait(&p.a, 1);
    assert_eq!((w[0].wr_id, w[0].status), (9, WcStatus::RnrRetryExceeded));
}

#[test]
fn a_receive_posted_late_is_still_taken_within_the_rnr_timeout() {
    let p = pair(Duration::from_secs(10));
    let src = mem(8);
    let dst = mem(8);
    let sm = reg(&p.a, src);
    let dm = reg(&p.b, dst);
    src.copy_from_slice(b"latecome");
    let sge = Sge {
        addr: sm.addr,
        len: 8,
        lkey: sm.lkey,
    };
    // SAFETY: registered, leaked test memory.
    unsafe { p.a.post_send(p.qa, 1, SendOp::Send, sge).unwrap() };
    let rs = Sge {
        addr: dm.addr,
        len: 8,
        lkey: dm.lkey,
    };
    // SAFETY: as above.
    unsafe { p.b.post_recv(p.qb, 2, rs).unwrap() };
    assert_eq!(wait(&p.a, 1)[0].status, WcStatus::Success);
    assert_eq!(wait(&p.b, 1)[0].byte_len, 8);
    assert_eq!(dst, b"latecome");
}

#[test]
fn injected_faults_complete_with_their_status() {
    let p = pair(Duration::from_secs(10));
    let src = mem(64);
    let dst = mem(64);
    let sm = reg(&p.a, src);
    let dm = reg(&p.b, dst);
    let sge = Sge {
        addr: sm.addr,
        len: 8,
        lkey: sm.lkey,
    };
    let rs = Sge {
        addr: dm.addr,
        len: 64,
        lkey: dm.lkey,
    };
    // SAFETY: registered, leaked test memory.
    unsafe { p.b.post_recv(p.qb, 5, rs).unwrap() };
    // RNR retries exhausted although a receive is posted.
    p.b.inject(Fault::RnrNextSend);
    // SAFETY: as above.
    unsafe { p.a.post_send(p.qa, 1, SendOp::Send, sge).unwrap() };
    assert_eq!(wait(&p.a, 1)[0].status, WcStatus::RnrRetryExceeded);

    let p = pair(Duration::from_secs(10));
    let sm = reg(&p.a, mem(64));
    let dm = reg(&p.b, mem(64));
    let sge = Sge {
        addr: sm.addr,
        len: 8,
        lkey: sm.lkey,
    };
    p.b.inject(Fault::AccessNextRdma);
    // SAFETY: registered, leaked test memory.
    unsafe {
        p.a.post_send(
            p.qa,
            1,
            SendOp::Write {
                raddr: dm.addr as u64,
                rkey: dm.rkey,
            },
            sge,
        )
        .unwrap()
    };
    assert_eq!(wait(&p.a, 1)[0].status, WcStatus::RemoteAccess);

    // A queue pair moved to the error state flushes its posted receives
    // and everything posted later.
    let p = pair(Duration::from_secs(10));
    let sm = reg(&p.a, mem(64));
    let dm = reg(&p.b, mem(64));
    let rs = Sge {
        addr: dm.addr,
        len: 64,
        lkey: dm.lkey,
    };
    // SAFETY: registered, leaked test memory.
    unsafe { p.b.post_recv(p.qb, 7, rs).unwrap() };
    p.b.inject(Fault::QpError(p.qb));
    let w = wait(&p.b, 1);
    assert_eq!(
        (w[0].wr_id, w[0].kind, w[0].status),
        (7, WcKind::Recv, WcStatus::Flushed)
    );
    p.a.inject(Fault::QpError(p.qa));
    let sge = Sge {
        addr: sm.addr,
        len: 8,
        lkey: sm.lkey,
    };
    // SAFETY: as above.
    unsafe { p.a.post_send(p.qa, 8, SendOp::Send, sge).unwrap() };
    assert_eq!(wait(&p.a, 1)[0].status, WcStatus::Flushed);
}

#[test]
fn a_local_buffer_outside_its_region_is_a_local_protection_error() {
    let p = pair(Duration::from_secs(10));
    let sm = reg(&p.a, mem(16));
    let sge = Sge {
        addr: sm.addr + 8,
        len: 16,
        lkey: sm.lkey,
    };
    // SAFETY: the device checks the buffer and reads nothing outside.
    unsafe { p.a.post_send(p.qa, 1, SendOp::Send, sge).unwrap() };
    assert_eq!(wait(&p.a, 1)[0].status, WcStatus::LocalProtection);
}

#[test]
fn an_answer_that_never_comes_completes_as_retries_exceeded() {
    // The peer device's responder is stuck waiting for a receive that is
    // never posted, for longer than the requester's timeout: the requester
    // gives up first (its own check), as a NIC whose peer went silent does.
    let a = SimDevice::open(Duration::from_millis(100)).unwrap();
    let b = SimDevice::open(Duration::from_secs(30)).unwrap();
    let qa = a.create_qp(None).unwrap();
    let qb = b.create_qp(None).unwrap();
    a.connect(qa, &b.address(qb)).unwrap();
    let sm = reg(&a, mem(8));
    let sge = Sge {
        addr: sm.addr,
        len: 8,
        lkey: sm.lkey,
    };
    // SAFETY: registered, leaked test memory.
    unsafe { a.post_send(qa, 1, SendOp::Send, sge).unwrap() };
    let w = wait(&a, 1);
    assert_eq!(w[0].status, WcStatus::RetryExceeded);
}

/// Two peers' queue pairs attached to one shared receive queue: their
/// SENDs take its receives in arrival order, each completion names the
/// queue pair the message came on; a queue pair with a shared receive
/// queue refuses receives of its own, a full queue refuses more, and an
/// empty one makes the sender retry (receiver not ready) until a receive
/// is posted or the retries run out.
#[test]
fn a_shared_receive_queue_serves_every_attached_queue_pair() {
    // b's RNR timeout is short: an empty shared queue fails promptly.
    let b = SimDevice::open(Duration::from_secs(1)).unwrap();
    let a1 = SimDevice::open(Duration::from_secs(30)).unwrap();
    let a2 = SimDevice::open(Duration::from_secs(30)).unwrap();
    let srq = b.create_srq(3).unwrap();
    let (b1, b2) = (
        b.create_qp(Some(srq)).unwrap(),
        b.create_qp(Some(srq)).unwrap(),
    );
    let (q1, q2) = (a1.create_qp(None).unwrap(), a2.create_qp(None).unwrap());
    a1.connect(q1, &b.address(b1)).unwrap();
    b.connect(b1, &a1.address(q1)).unwrap();
    a2.connect(q2, &b.address(b2)).unwrap();
    b.connect(b2, &a2.address(q2)).unwrap();
    assert!(b.create_srq(0).is_err() && b.create_qp(Some(99)).is_err());
    let dst = mem(64 * 4);
    let dm = reg(&b, dst);
    let rsge = |i: usize| Sge {
        addr: dm.addr + 64 * i,
        len: 64,
        lkey: dm.lkey,
    };
    // SAFETY: registered, leaked test memory, untouched until completion.
    unsafe {
        assert!(b.post_recv(b1, 1, rsge(3)).is_err());
        for i in 0..3 {
            b.post_srq_recv(srq, 100 + i as u64, rsge(i)).unwrap();
        }
        assert!(b.post_srq_recv(srq, 103, rsge(3)).is_err());
    }
    let s1 = mem(8);
    let s2 = mem(8);
    s1.copy_from_slice(b"from-one");
    s2.copy_from_slice(b"from-two");
    let m1 = reg(&a1, s1);
    let m2 = reg(&a2, s2);
    let send = |d: &SimDevice, q: QpNum, m: Mr, id: u64| {
        let sge = Sge {
            addr: m.addr,
            len: 8,
            lkey: m.lkey,
        };
        // SAFETY: registered, leaked test memory; the device copies it.
        unsafe { d.post_send(q, id, SendOp::Send, sge).unwrap() };
    };
    send(&a1, q1, m1, 1);
    assert_eq!(wait(&a1, 1)[0].status, WcStatus::Success);
    send(&a2, q2, m2, 2);
    assert_eq!(wait(&a2, 1)[0].status, WcStatus::Success);
    let got = wait(&b, 2);
    assert_eq!(
        got.iter()
            .map(|w| (w.wr_id, w.qp, w.kind, w.status))
            .collect::<Vec<_>>(),
        [
            (100, b1, WcKind::Recv, WcStatus::Success),
            (101, b2, WcKind::Recv, WcStatus::Success)
        ]
    );
    assert_eq!(&dst[..8], b"from-one");
    assert_eq!(&dst[64..72], b"from-two");
    // One receive left: the first SEND takes it, the second finds the
    // queue empty and is retried until a receive is posted.
    // (The two senders are separate devices: their order of arrival is
    // set by completing the third before the fourth is posted.)
    send(&a2, q2, m2, 3);
    assert_eq!(wait(&a2, 1)[0].status, WcStatus::Success);
    assert_eq!(
        wait(&b, 1)[0].qp,
        b2,
        "the third SEND took the last receive"
    );
    send(&a1, q1, m1, 4);
    // The fourth SEND must have found the queue empty before the next
    // receive is posted (on a loaded machine its device thread may not
    // have run yet): wait, bounded, for b to count its retry.
    let start = Instant::now();
    while b.rnr_waits() < 1 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the fourth SEND never reached the empty queue"
        );
        std::thread::yield_now();
    }
    // SAFETY: as above (buffer 0 was completed and is ours again).
    unsafe { b.post_srq_recv(srq, 104, rsge(0)).unwrap() };
    assert_eq!(wait(&a1, 1)[0].status, WcStatus::Success);
    let w = wait(&b, 1)[0];
    assert_eq!((w.wr_id, w.qp), (104, b1));
    assert_eq!(&dst[..8], b"from-one");
    // Empty again: the next SEND's retries run out.
    send(&a1, q1, m1, 5);
    let w = wait(&a1, 1)[0];
    assert_eq!((w.wr_id, w.status), (5, WcStatus::RnrRetryExceeded));
    // The fourth and fifth SENDs found the queue empty.
    assert_eq!((a1.rnr_waits(), b.rnr_waits()), (0, 2));
}
