//! The real provider: libibverbs through rdma-sys (cargo feature
//! `rdma-sys`). The first device, port 1; one protection domain, one
//! completion queue; RC queue pairs connected by moving them through
//! INIT, RTR and RTS with the peer's LID, GID, queue pair number and
//! starting packet sequence number (the address exchanged at start-up).
//! GRH addressing is used whenever the port has a GID (RoCE needs it).

use std::collections::HashMap;
use std::sync::{Mutex, RwLock};

use gex_types::{Error, Result};
use rdma_sys::*;

use crate::verbs::{Device, DeviceLimits, Mr, QpNum, SendOp, Sge, SrqNum, Wc, WcKind, WcStatus};

/// The port used.
const PORT: u8 = 1;
/// The GID index used (RoCE v2 setups may need another; 0 works on IB).
const GID_INDEX: i32 = 0;
/// Queue depths asked for (capped by the device).
const DEPTH: u32 = 2048;

/// The device, its protection domain and completion queue, its queue pairs.
pub struct VerbsDevice {
    /// The open device (kept open for the process).
    _ctx: *mut ibv_context,
    pd: *mut ibv_pd,
    cq: *mut ibv_cq,
    port: ibv_port_attr,
    gid: [u8; 16],
    limits: DeviceLimits,
    depth: u32,
    max_rd_atomic: u8,
    qps: RwLock<Vec<*mut ibv_qp>>,
    /// Shared receive queues (kept for the process).
    srqs: RwLock<Vec<*mut ibv_srq>>,
    /// Queue pair number -> index, for completions.
    by_num: RwLock<HashMap<u32, QpNum>>,
    /// Serialises CQ polling (libibverbs allows concurrent polls; one at a
    /// time keeps the conduit's completion order simple).
    poll: Mutex<()>,
}

// SAFETY: libibverbs objects may be used from any thread (the library locks
// internally per queue); the raw pointers are owned by this struct and live
// as long as it.
unsafe impl Send for VerbsDevice {}
// SAFETY: as above.
unsafe impl Sync for VerbsDevice {}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

impl VerbsDevice {
    /// Opens the first RDMA device; without one, an error naming
    /// `GEX_IBV_PROVIDER=sim`.
    pub fn open() -> Result<VerbsDevice> {
        let mut n = 0;
        // SAFETY: ibv_get_device_list writes the count and returns a list
        // (or null) that we free below.
        let list = unsafe { ibv_get_device_list(&mut n) };
        if list.is_null() || n <= 0 {
            if !list.is_null() {
                // SAFETY: a list returned by ibv_get_device_list.
                unsafe { ibv_free_device_list(list) };
            }
            return Err(Error::resource(
                "ibv conduit: no RDMA device was found (libibverbs lists none); \
                 on a machine without one, set GEX_IBV_PROVIDER=sim for the simulated device",
            ));
        }
        // SAFETY: the list holds n > 0 devices; the context outlives the
        // list (libibverbs keeps the device referenced while open).
        let ctx = unsafe {
            let ctx = ibv_open_device(*list);
            ibv_free_device_list(list);
            ctx
        };
        if ctx.is_null() {
            return Err(Error::resource(format!(
                "ibv conduit: cannot open the RDMA device: {}",
                errno()
            )));
        }
        // SAFETY: zeroed attribute structs are valid outputs for the queries;
        // ctx is an open context.
        let (attr, port, gid) = unsafe {
            let mut attr: ibv_device_attr = std::mem::zeroed();
            if ibv_query_device(ctx, &mut attr) != 0 {
                return Err(Error::resource(format!(
                    "ibv conduit: ibv_query_device: {}",
                    errno()
                )));
            }
            let mut port: ibv_port_attr = std::mem::zeroed();
            if ___ibv_query_port(ctx, PORT, &mut port) != 0 {
                return Err(Error::resource(format!(
                    "ibv conduit: ibv_query_port: {}",
                    errno()
                )));
            }
            let mut gid: ibv_gid = std::mem::zeroed();
            let gid = if ibv_query_gid(ctx, PORT, GID_INDEX, &mut gid) == 0 {
                gid.raw
            } else {
                [0; 16]
            };
            (attr, port, gid)
        };
        if port.state != ibv_port_state::IBV_PORT_ACTIVE {
            return Err(Error::resource(format!(
                "ibv conduit: port {PORT} of the RDMA device is not active (state {})",
                port.state
            )));
        }
        let depth = DEPTH.min(attr.max_qp_wr.max(1) as u32);
        // SAFETY: ctx is open; null channel and context are allowed.
        let (pd, cq) = unsafe {
            let pd = ibv_alloc_pd(ctx);
            let cq = ibv_create_cq(
                ctx,
                // Every queue pair's outstanding completions at once
                // (the device's largest queue, up to 4M entries).
                attr.max_cqe.min(1 << 22),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            );
            (pd, cq)
        };
        if pd.is_null() || cq.is_null() {
            return Err(Error::resource(format!(
                "ibv conduit: allocating a protection domain or completion queue: {}",
                errno()
            )));
        }
        Ok(VerbsDevice {
            _ctx: ctx,
            pd,
            cq,
            port,
            gid,
            limits: DeviceLimits {
                max_msg: port.max_msg_sz as usize,
                max_send_wr: depth as usize,
                max_recv_wr: depth as usize,
                max_srq_wr: if attr.max_srq > 0 {
                    attr.max_srq_wr.max(0) as usize
                } else {
                    0
                },
                atomics: attr.atomic_cap != ibv_atomic_cap::IBV_ATOMIC_NONE,
            },
            depth,
            max_rd_atomic: attr.max_qp_rd_atom.clamp(1, 16) as u8,
            qps: RwLock::new(Vec::new()),
            srqs: RwLock::new(Vec::new()),
            by_num: RwLock::new(HashMap::new()),
            poll: Mutex::new(()),
        })
    }

    fn qp(&self, q: QpNum) -> Result<*mut ibv_qp> {
        self.qps
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(q as usize)
            .copied()
            .ok_or_else(|| Error::bad_arg(format!("ibv conduit: no queue pair {q}")))
    }

    fn srq(&self, n: SrqNum) -> Result<*mut ibv_srq> {
        self.srqs
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(n as usize)
            .copied()
            .ok_or_else(|| Error::bad_arg(format!("ibv conduit: no shared receive queue {n}")))
    }

    fn modify(
        &self,
        qp: *mut ibv_qp,
        attr: &mut ibv_qp_attr,
        mask: ibv_qp_attr_mask,
        what: &str,
    ) -> Result<()> {
        // SAFETY: qp is a live queue pair of this device; attr is a valid
        // struct for the mask's fields.
        let rc = unsafe { ibv_modify_qp(qp, attr, mask.0 as i32) };
        if rc != 0 {
            return Err(Error::resource(format!(
                "ibv conduit: moving a queue pair to {what}: {}",
                std::io::Error::from_raw_os_error(rc)
            )));
        }
        Ok(())
    }
}

fn status_of(s: ibv_wc_status::Type) -> WcStatus {
    use ibv_wc_status::*;
    match s {
        IBV_WC_SUCCESS => WcStatus::Success,
        IBV_WC_RNR_RETRY_EXC_ERR => WcStatus::RnrRetryExceeded,
        IBV_WC_REM_ACCESS_ERR => WcStatus::RemoteAccess,
        IBV_WC_RETRY_EXC_ERR => WcStatus::RetryExceeded,
        IBV_WC_WR_FLUSH_ERR => WcStatus::Flushed,
        IBV_WC_LOC_PROT_ERR => WcStatus::LocalProtection,
        IBV_WC_LOC_LEN_ERR => WcStatus::LocalLength,
        IBV_WC_REM_OP_ERR => WcStatus::RemoteOp,
        s => WcStatus::Other(s),
    }
}

impl Device for VerbsDevice {
    fn provider(&self) -> &'static str {
        "rdma-sys"
    }

    fn limits(&self) -> DeviceLimits {
        self.limits
    }

    unsafe fn register(&self, addr: *mut u8, len: usize) -> Result<Mr> {
        let access = ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_READ
            | ibv_access_flags::IBV_ACCESS_REMOTE_ATOMIC;
        // SAFETY: per the trait, the memory stays allocated while the
        // device lives; the protection domain is live.
        let mr = unsafe { ibv_reg_mr(self.pd, addr.cast(), len, access.0 as i32) };
        if mr.is_null() {
            return Err(Error::resource(format!(
                "ibv conduit: registering {len} bytes: {}",
                errno()
            )));
        }
        // SAFETY: a registration ibv_reg_mr returned, never deregistered.
        let (lkey, rkey) = unsafe { ((*mr).lkey, (*mr).rkey) };
        Ok(Mr {
            addr: addr as usize,
            len,
            lkey,
            rkey,
        })
    }

    fn create_srq(&self, max_wr: usize) -> Result<SrqNum> {
        if max_wr == 0 || max_wr > self.limits.max_srq_wr {
            return Err(Error::bad_arg(format!(
                "ibv conduit: a shared receive queue of {max_wr} receives (the device holds 1 to {})",
                self.limits.max_srq_wr
            )));
        }
        // SAFETY: a zeroed init attr is valid (no limit event); pd is live.
        let srq = unsafe {
            let mut init: ibv_srq_init_attr = std::mem::zeroed();
            init.attr.max_wr = max_wr as u32;
            init.attr.max_sge = 1;
            ibv_create_srq(self.pd, &mut init)
        };
        if srq.is_null() {
            return Err(Error::resource(format!(
                "ibv conduit: creating a shared receive queue of {max_wr} receives: {}",
                errno()
            )));
        }
        let mut srqs = self.srqs.write().unwrap_or_else(|p| p.into_inner());
        srqs.push(srq);
        Ok((srqs.len() - 1) as SrqNum)
    }

    fn create_qp(&self, srq: Option<SrqNum>) -> Result<QpNum> {
        let srq = match srq {
            None => std::ptr::null_mut(),
            Some(n) => self.srq(n)?,
        };
        // SAFETY: a zeroed init attr is valid; the fields set are the ones
        // an RC queue pair needs; pd, cq and the shared receive queue (if
        // any) are live.
        let qp = unsafe {
            let mut init: ibv_qp_init_attr = std::mem::zeroed();
            init.send_cq = self.cq;
            init.recv_cq = self.cq;
            init.srq = srq;
            init.qp_type = ibv_qp_type::IBV_QPT_RC;
            init.cap.max_send_wr = self.depth;
            init.cap.max_recv_wr = self.depth;
            init.cap.max_send_sge = 1;
            init.cap.max_recv_sge = 1;
            ibv_create_qp(self.pd, &mut init)
        };
        if qp.is_null() {
            return Err(Error::resource(format!(
                "ibv conduit: creating a queue pair: {}",
                errno()
            )));
        }
        // SAFETY: a zeroed qp attr is valid; only the masked fields are read.
        let mut attr: ibv_qp_attr = unsafe { std::mem::zeroed() };
        attr.qp_state = ibv_qp_state::IBV_QPS_INIT;
        attr.pkey_index = 0;
        attr.port_num = PORT;
        attr.qp_access_flags = (ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_READ
            | ibv_access_flags::IBV_ACCESS_REMOTE_ATOMIC)
            .0;
        self.modify(
            qp,
            &mut attr,
            ibv_qp_attr_mask::IBV_QP_STATE
                | ibv_qp_attr_mask::IBV_QP_PKEY_INDEX
                | ibv_qp_attr_mask::IBV_QP_PORT
                | ibv_qp_attr_mask::IBV_QP_ACCESS_FLAGS,
            "INIT",
        )?;
        let mut qps = self.qps.write().unwrap_or_else(|p| p.into_inner());
        let idx = qps.len() as QpNum;
        qps.push(qp);
        // SAFETY: qp is live.
        let num = unsafe { (*qp).qp_num };
        self.by_num
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(num, idx);
        Ok(idx)
    }

    /// LID (2 bytes), queue pair number (4), starting PSN (4), MTU (4),
    /// GID (16).
    fn address(&self, qp: QpNum) -> Vec<u8> {
        let q = self.qp(qp).expect("a queue pair of this device");
        // SAFETY: q is live.
        let num = unsafe { (*q).qp_num };
        let mut a = Vec::with_capacity(30);
        a.extend_from_slice(&self.port.lid.to_le_bytes());
        a.extend_from_slice(&num.to_le_bytes());
        a.extend_from_slice(&(num & 0xff_ffff).to_le_bytes());
        a.extend_from_slice(&self.port.active_mtu.to_le_bytes());
        a.extend_from_slice(&self.gid);
        a
    }

    fn connect(&self, qp: QpNum, remote: &[u8]) -> Result<()> {
        if remote.len() != 30 {
            return Err(Error::bad_arg(
                "ibv conduit: a malformed queue pair address",
            ));
        }
        let u32_at = |i: usize| u32::from_le_bytes(remote[i..i + 4].try_into().expect("4 bytes"));
        let lid = u16::from_le_bytes([remote[0], remote[1]]);
        let (num, psn, mtu) = (u32_at(2), u32_at(6), u32_at(10));
        let mut gid = [0u8; 16];
        gid.copy_from_slice(&remote[14..30]);
        let q = self.qp(qp)?;
        // SAFETY: zeroed attrs are valid; only masked fields are read.
        let mut attr: ibv_qp_attr = unsafe { std::mem::zeroed() };
        attr.qp_state = ibv_qp_state::IBV_QPS_RTR;
        attr.path_mtu = mtu.min(self.port.active_mtu);
        attr.dest_qp_num = num;
        attr.rq_psn = psn;
        attr.max_dest_rd_atomic = self.max_rd_atomic;
        attr.min_rnr_timer = 12;
        attr.ah_attr.dlid = lid;
        attr.ah_attr.port_num = PORT;
        if gid != [0; 16] {
            attr.ah_attr.is_global = 1;
            attr.ah_attr.grh.dgid = ibv_gid { raw: gid };
            attr.ah_attr.grh.sgid_index = GID_INDEX as u8;
            attr.ah_attr.grh.hop_limit = 64;
        }
        self.modify(
            q,
            &mut attr,
            ibv_qp_attr_mask::IBV_QP_STATE
                | ibv_qp_attr_mask::IBV_QP_AV
                | ibv_qp_attr_mask::IBV_QP_PATH_MTU
                | ibv_qp_attr_mask::IBV_QP_DEST_QPN
                | ibv_qp_attr_mask::IBV_QP_RQ_PSN
                | ibv_qp_attr_mask::IBV_QP_MAX_DEST_RD_ATOMIC
                | ibv_qp_attr_mask::IBV_QP_MIN_RNR_TIMER,
            "RTR",
        )?;
        // SAFETY: as above.
        let mut attr: ibv_qp_attr = unsafe { std::mem::zeroed() };
        attr.qp_state = ibv_qp_state::IBV_QPS_RTS;
        attr.timeout = 14;
        attr.retry_cnt = 7;
        attr.rnr_retry = 7;
        // SAFETY: q is live.
        attr.sq_psn = unsafe { (*q).qp_num } & 0xff_ffff;
        attr.max_rd_atomic = self.max_rd_atomic;
        self.modify(
            q,
            &mut attr,
            ibv_qp_attr_mask::IBV_QP_STATE
                | ibv_qp_attr_mask::IBV_QP_TIMEOUT
                | ibv_qp_attr_mask::IBV_QP_RETRY_CNT
                | ibv_qp_attr_mask::IBV_QP_RNR_RETRY
                | ibv_qp_attr_mask::IBV_QP_SQ_PSN
                | ibv_qp_attr_mask::IBV_QP_MAX_QP_RD_ATOMIC,
            "RTS",
        )
    }

    unsafe fn post_send(&self, qp: QpNum, wr_id: u64, op: SendOp, sge: Sge) -> Result<()> {
        let q = self.qp(qp)?;
        let length = match op {
            SendOp::FetchAdd { .. } | SendOp::CmpSwap { .. } => 8,
            _ => sge.len,
        };
        let mut s = ibv_sge {
            addr: sge.addr as u64,
            length,
            lkey: sge.lkey,
        };
        // SAFETY: a zeroed work request is valid (null next, no immediate);
        // the fields of its opcode are set below.
        let mut w: ibv_send_wr = unsafe { std::mem::zeroed() };
        w.wr_id = wr_id;
        w.sg_list = &mut s;
        w.num_sge = 1;
        w.send_flags = ibv_send_flags::IBV_SEND_SIGNALED.0;
        match op {
            SendOp::Send => w.opcode = ibv_wr_opcode::IBV_WR_SEND,
            SendOp::Write { raddr, rkey } => {
                w.opcode = ibv_wr_opcode::IBV_WR_RDMA_WRITE;
                w.wr.rdma = rdma_t {
                    remote_addr: raddr,
                    rkey,
                };
            }
            SendOp::Read { raddr, rkey } => {
                w.opcode = ibv_wr_opcode::IBV_WR_RDMA_READ;
                w.wr.rdma = rdma_t {
                    remote_addr: raddr,
                    rkey,
                };
            }
            SendOp::FetchAdd { raddr, rkey, add } => {
                w.opcode = ibv_wr_opcode::IBV_WR_ATOMIC_FETCH_AND_ADD;
                w.wr.atomic = atomic_t {
                    remote_addr: raddr,
                    compare_add: add,
                    swap: 0,
                    rkey,
                };
            }
            SendOp::CmpSwap {
                raddr,
                rkey,
                compare,
                swap,
            } => {
                w.opcode = ibv_wr_opcode::IBV_WR_ATOMIC_CMP_AND_SWP;
                w.wr.atomic = atomic_t {
                    remote_addr: raddr,
                    compare_add: compare,
                    swap,
                    rkey,
                };
            }
        }
        let mut bad = std::ptr::null_mut();
        // SAFETY: q is live, `w` and its one sge are valid for the call
        // (the device copies the request); the buffer's validity until
        // completion is the caller's promise.
        let rc = unsafe { ibv_post_send(q, &mut w, &mut bad) };
        if rc != 0 {
            return Err(Error::resource(format!(
                "ibv conduit: ibv_post_send: {}",
                std::io::Error::from_raw_os_error(rc)
            )));
        }
        Ok(())
    }

    unsafe fn post_recv(&self, qp: QpNum, wr_id: u64, sge: Sge) -> Result<()> {
        let q = self.qp(qp)?;
        post_one_recv("ibv_post_recv", wr_id, sge, |w, bad| {
            // SAFETY: as for post_send.
            unsafe { ibv_post_recv(q, w, bad) }
        })
    }

    unsafe fn post_srq_recv(&self, srq: SrqNum, wr_id: u64, sge: Sge) -> Result<()> {
        let q = self.srq(srq)?;
        post_one_recv("ibv_post_srq_recv", wr_id, sge, |w, bad| {
            // SAFETY: q is a live shared receive queue of this device; `w`
            // and its one sge are valid for the call (the device copies the
            // request); the buffer's validity until completion is the
            // caller's promise.
            unsafe { ibv_post_srq_recv(q, w, bad) }
        })
    }

    fn poll_cq(&self, out: &mut Vec<Wc>, max: usize) -> usize {
        let _g = self.poll.lock().unwrap_or_else(|p| p.into_inner());
        const N: usize = 32;
        // SAFETY: ibv_wc is plain data; zeroed entries are valid outputs.
        let mut wcs: [ibv_wc; N] = unsafe { std::mem::zeroed() };
        let want = max.min(N) as i32;
        // SAFETY: the cq is live and `wcs` has room for `want` entries.
        let n = unsafe { ibv_poll_cq(self.cq, want, wcs.as_mut_ptr()) };
        if n <= 0 {
            return 0;
        }
        let by_num = self.by_num.read().unwrap_or_else(|p| p.into_inner());
        for w in &wcs[..n as usize] {
            out.push(Wc {
                wr_id: w.wr_id,
                qp: by_num.get(&w.qp_num).copied().unwrap_or(QpNum::MAX),
                status: status_of(w.status),
                kind: if w.opcode & ibv_wc_opcode::IBV_WC_RECV != 0 {
                    WcKind::Recv
                } else {
                    WcKind::Send
                },
                byte_len: w.byte_len,
            });
        }
        n as usize
    }
}

/// Posts one receive of `sge` as `wr_id` through `post` (a queue pair's
/// or a shared receive queue's post call, given the request and where to
/// report a bad one); `call` names it in the error.
fn post_one_recv(
    call: &str,
    wr_id: u64,
    sge: Sge,
    post: impl FnOnce(*mut ibv_recv_wr, *mut *mut ibv_recv_wr) -> i32,
) -> Result<()> {
    let mut s = ibv_sge {
        addr: sge.addr as u64,
        length: sge.len,
        lkey: sge.lkey,
    };
    let mut w = ibv_recv_wr {
        wr_id,
        next: std::ptr::null_mut(),
        sg_list: &mut s,
        num_sge: 1,
    };
    let mut bad = std::ptr::null_mut();
    let rc = post(&mut w, &mut bad);
    if rc != 0 {
        return Err(Error::resource(format!(
            "ibv conduit: {call}: {}",
            std::io::Error::from_raw_os_error(rc)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where libibverbs lists no device (this project's machines and CI),
    /// opening fails with an error that says so and names the simulated
    /// provider; where one exists, it opens.
    #[test]
    fn without_a_device_open_names_the_simulated_provider() {
        let mut n = 0;
        // SAFETY: as in `open`.
        let list = unsafe { ibv_get_device_list(&mut n) };
        if !list.is_null() {
            // SAFETY: a list ibv_get_device_list returned.
            unsafe { ibv_free_device_list(list) };
        }
        match VerbsDevice::open() {
            Ok(d) => assert!(n > 0 && d.limits().max_msg > 0),
            Err(e) if n <= 0 => {
                let m = e.message();
                assert!(
                    m.contains("no RDMA device was found") && m.contains("GEX_IBV_PROVIDER=sim"),
                    "{m}"
                );
            }
            Err(e) => panic!("a device is listed but does not open: {e}"),
        }
    }
}
