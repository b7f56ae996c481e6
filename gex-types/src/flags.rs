//! Flags (`gex_Flags_t`), event categories (`gex_EC_t`) and token-info masks
//! (`gex_TI_t`).

use bitflags::bitflags;

bitflags! {
    /// Hints, assertions and modifiers passed to gex calls (`gex_Flags_t`).
    ///
    /// The spec only requires flags accepted by one call to be disjoint; here
    /// every flag has its own bit, so a flag passed to the wrong call can
    /// always be diagnosed.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct Flags: u64 {
        /// May return without communicating rather than block for resources.
        const IMMEDIATE = 1 << 0;
        /// Copy the source payload to speed local completion (hint).
        const LC_COPY_YES = 1 << 1;
        /// Do not copy the source payload (hint).
        const LC_COPY_NO = 1 << 2;
        /// The peer is not in the calling process.
        const PEER_NEVER_SELF = 1 << 3;
        /// The peer is not in the caller's neighbourhood.
        const PEER_NEVER_NBRHD = 1 << 4;
        /// Atomic targets are all in the calling process.
        const AD_MY_RANK = 1 << 5;
        /// Atomic targets are all in the caller's neighbourhood.
        const AD_MY_NBRHD = 1 << 6;
        /// Favour atomics on the caller's rank.
        const AD_FAVOR_MY_RANK = 1 << 7;
        /// Favour atomics within the neighbourhood.
        const AD_FAVOR_MY_NBRHD = 1 << 8;
        /// Favour remote atomics.
        const AD_FAVOR_REMOTE = 1 << 9;
        /// Atomic with acquire semantics.
        const AD_ACQ = 1 << 10;
        /// Atomic with release semantics.
        const AD_REL = 1 << 11;
        /// Ranks name jobranks rather than team ranks.
        const RANK_IS_JOBRANK = 1 << 12;
        /// Payload query for a negotiated-payload prepare with a client buffer.
        const AM_PREPARE_LEAST_CLIENT = 1 << 13;
        /// Payload query for a negotiated-payload prepare with a library buffer.
        const AM_PREPARE_LEAST_ALLOC = 1 << 14;
        /// Local range not known to be in any segment.
        const SELF_SEG_UNKNOWN = 1 << 15;
        /// Remote range not known to be in any segment.
        const PEER_SEG_UNKNOWN = 1 << 16;
        /// Local range within some segment of the process.
        const SELF_SEG_SOME = 1 << 17;
        /// Remote range within some segment of the peer process.
        const PEER_SEG_SOME = 1 << 18;
        /// Local range within the local bound segment.
        const SELF_SEG_BOUND = 1 << 19;
        /// Remote range within the peer's bound segment.
        const PEER_SEG_BOUND = 1 << 20;
        /// Local address argument is an offset into the local bound segment.
        const SELF_SEG_OFFSET = 1 << 21;
        /// Remote address argument is an offset into the peer's bound segment.
        const PEER_SEG_OFFSET = 1 << 22;
        /// Team scratch: one address per member of the output team.
        const TM_GLOBAL_SCRATCH = 1 << 23;
        /// Team scratch: one address per local member of the output team.
        const TM_LOCAL_SCRATCH = 1 << 24;
        /// Team scratch: one address for all members.
        const TM_SYMMETRIC_SCRATCH = 1 << 25;
        /// Team without scratch space.
        const TM_NO_SCRATCH = 1 << 26;
        /// Query the recommended scratch size.
        const TM_SCRATCH_SIZE_RECOMMENDED = 1 << 27;
        /// Query the minimum scratch size (deprecated in spec v0.11).
        const TM_SCRATCH_SIZE_MIN = 1 << 28;
        /// Scratch addresses are segment offsets.
        const SCRATCH_SEG_OFFSET = 1 << 29;
        /// The caller asserts global quiescence to a destructor.
        const GLOBALLY_QUIESCED = 1 << 30;
        /// The client uses GASNet-1 calls.
        const USES_GASNET1 = 1 << 31;
        /// Handler registration: called only as a Short.
        const AM_SHORT = 1 << 32;
        /// Handler registration: called only as a Medium.
        const AM_MEDIUM = 1 << 33;
        /// Handler registration: called only as a Long.
        const AM_LONG = 1 << 34;
        /// Handler registration: called as a Medium or a Long.
        const AM_MEDLONG = Self::AM_MEDIUM.bits() | Self::AM_LONG.bits();
        /// Handler registration: called only as a Request.
        const AM_REQUEST = 1 << 35;
        /// Handler registration: called only as a Reply.
        const AM_REPLY = 1 << 36;
        /// Handler registration: called as a Request or a Reply.
        const AM_REQREP = Self::AM_REQUEST.bits() | Self::AM_REPLY.bits();
        /// VIS puts (`gex_VIS_*Put{NB,NBI}`): expose local completion of
        /// the source buffers (the root event's `Ec::LC` leaf, or the NBI
        /// `LC` category) (`GEX_FLAG_ENABLE_LEAF_LC`).
        const ENABLE_LEAF_LC = 1 << 37;
        /// `gex_EP_Create`: a hint that the endpoint's atomic domains
        /// should use an accelerated (NIC) implementation where the
        /// conduit has one (`GEX_FLAG_HINT_ACCEL_AD`).
        const HINT_ACCEL_AD = 1 << 38;
        /// `gex_EP_Create`: a hint that the endpoint's collectives should
        /// be accelerated where the conduit can (`GEX_FLAG_HINT_ACCEL_COLL`).
        const HINT_ACCEL_COLL = 1 << 39;
        /// Both hints (`GEX_FLAG_HINT_ACCEL_ALL`).
        const HINT_ACCEL_ALL = Self::HINT_ACCEL_AD.bits() | Self::HINT_ACCEL_COLL.bits();
        /// `gex_Client_Init`: the client starts the library's progress
        /// threads itself (`GEX_FLAG_DEFER_THREADS`, spec v0.18); gex has
        /// none, so nothing is deferred.
        const DEFER_THREADS = 1 << 40;

        // Collective synchronisation modes (collectives design notes,
        // "Synchronization modes"): at most one IN_* and one OUT_* per
        // data-movement collective; none means MYSYNC. Bits from 48 up.
        /// Collectives: data may move as soon as any member has entered
        /// (`GASNET_COLL_IN_NOSYNC`).
        const COLL_IN_NOSYNC = 1 << 48;
        /// Collectives: each block may move once its source and
        /// destination members have entered (`GASNET_COLL_IN_MYSYNC`; the
        /// default).
        const COLL_IN_MYSYNC = 1 << 49;
        /// Collectives: data moves only once every member has entered
        /// (`GASNET_COLL_IN_ALLSYNC`).
        const COLL_IN_ALLSYNC = 1 << 50;
        /// Collectives: a sync may succeed at any time; buffers are safe
        /// once every member has synced (`GASNET_COLL_OUT_NOSYNC`).
        const COLL_OUT_NOSYNC = 1 << 51;
        /// Collectives: a sync succeeds once this member's buffers are done
        /// (`GASNET_COLL_OUT_MYSYNC`; the default).
        const COLL_OUT_MYSYNC = 1 << 52;
        /// Collectives: a sync succeeds once every member's buffers are
        /// done (`GASNET_COLL_OUT_ALLSYNC`).
        const COLL_OUT_ALLSYNC = 1 << 53;
        /// Collectives: an assertion that every destination buffer of the
        /// call lies in its owner's bound segment, so the library may put
        /// straight into it (`GASNET_COLL_DST_IN_SEGMENT`); false is an
        /// error naming the buffer, with nothing moved.
        const COLL_DST_IN_SEGMENT = 1 << 54;
        /// Collectives: an assertion that every source buffer of the call
        /// lies in its owner's bound segment, so the library may get
        /// straight from it (`GASNET_COLL_SRC_IN_SEGMENT`).
        const COLL_SRC_IN_SEGMENT = 1 << 55;
    }
}

bitflags! {
    /// Event categories (`gex_EC_t`), for NBI synchronisation and leaf events.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct Ec: u32 {
        /// Gets.
        const GET = 1 << 0;
        /// Puts.
        const PUT = 1 << 1;
        /// Local completion of Active Messages.
        const AM = 1 << 2;
        /// Local completion of puts.
        const LC = 1 << 3;
        /// Remote atomics.
        const RMW = 1 << 4;
        /// Every category.
        const ALL = Self::GET.bits() | Self::PUT.bits() | Self::AM.bits()
            | Self::LC.bits() | Self::RMW.bits();
    }
}

bitflags! {
    /// Token-info query mask (`gex_TI_t`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct Ti: u32 {
        /// The sender's jobrank (required).
        const SRCRANK = 1 << 0;
        /// The receiving endpoint (required).
        const EP = 1 << 1;
        /// The handler entry (optional).
        const ENTRY = 1 << 2;
        /// Whether the handler is a Request (optional).
        const IS_REQ = 1 << 3;
        /// Whether the handler is a Long (optional).
        const IS_LONG = 1 << 4;
        /// Every query.
        const ALL = Self::SRCRANK.bits() | Self::EP.bits() | Self::ENTRY.bits()
            | Self::IS_REQ.bits() | Self::IS_LONG.bits();
    }
}

bitflags! {
    /// What an endpoint created with `gex_EP_Create` may be used for
    /// (`gex_EP_Capabilities_t`, `GEX_EP_CAPABILITY_*`). The primordial
    /// endpoint has every capability.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct EpCapabilities: u32 {
        /// Puts and gets (`GEX_EP_CAPABILITY_RMA`).
        const RMA = 1 << 0;
        /// Active Messages: handler registration, requests and replies
        /// (`GEX_EP_CAPABILITY_AM`).
        const AM = 1 << 1;
        /// Vector, indexed and strided transfers (`GEX_EP_CAPABILITY_VIS`).
        const VIS = 1 << 2;
        /// Collectives (`GEX_EP_CAPABILITY_COLL`).
        const COLL = 1 << 3;
        /// Remote atomics (`GEX_EP_CAPABILITY_AD`).
        const AD = 1 << 4;
        /// Every capability (`GEX_EP_CAPABILITY_ALL`).
        const ALL = Self::RMA.bits() | Self::AM.bits() | Self::VIS.bits()
            | Self::COLL.bits() | Self::AD.bits();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn am_composites() {
        assert!(Flags::AM_MEDLONG.contains(Flags::AM_MEDIUM | Flags::AM_LONG));
        assert!(Flags::AM_REQREP.contains(Flags::AM_REQUEST | Flags::AM_REPLY));
        assert_eq!(Ec::ALL.bits().count_ones(), 5);
        assert_eq!(Ti::ALL.bits().count_ones(), 5);
        assert_eq!(EpCapabilities::ALL.bits().count_ones(), 5);
    }
}
