/*
 * gasnetex.h: the GASNet-EX C interface of gex (spec v0.17).
 *
 * Written for gex from the GASNet-EX API description, spec v0.17. Every call
 * here is an entry point of libgex, a Rust library; API.md (the table "spec
 * name -> Rust path") says which Rust call each one is. Link with
 * `pkg-config --cflags --libs gex-smp` (or gex-udp), and start the program
 * with gex-run (`gex-run -n 4 ./prog`); without a launcher it is a job of one
 * rank.
 *
 * Return conventions: calls with an int result return GASNET_OK (0) or a
 * GASNET_ERR_* code, printing the message when verbose errors are on;
 * injection calls (AM, RMA) return non-zero only for the GEX_FLAG_IMMEDIATE
 * no-op, and an erroneous call (a bad argument, a call from a context that
 * may not communicate) ends the job with a message naming the call, as do
 * erroneous calls without a result.
 */
#ifndef GEX_GASNETEX_H
#define GEX_GASNETEX_H
/* Defined once gasnetex.h is in (clients test it). */
#define _INCLUDED_GASNETEX_H 1

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
/* The GASNet-EX interface brings the tools with it. */
#include <gasnet_tools.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Versions and configuration --------------------------------------- */

/* The GASNet-EX release whose interface gex provides (2025.8.0), the
 * versions of the documents that release follows (GASNet-EX 0.19, the
 * GASNet-1 specification 1.8), and gex's own version (the crate's). */
#define GASNET_RELEASE_VERSION_MAJOR 2025
#define GASNET_RELEASE_VERSION_MINOR 8
#define GASNET_RELEASE_VERSION_PATCH 0
#define GEX_SPEC_VERSION_MAJOR 0
#define GEX_SPEC_VERSION_MINOR 19
#define GASNET_SPEC_VERSION_MAJOR 1
#define GASNET_SPEC_VERSION_MINOR 8
#define GEX_IMPLEMENTATION_GEX 1
#define GEX_VERSION_MAJOR 0
#define GEX_VERSION_MINOR 1
#define GEX_VERSION_PATCH 0
#define GEX_VERSION_STR "0.1.0"

/* Features of the 2025.8.0 interface beyond spec v0.17, with the dates the
 * release gives them. */
#define GASNET_SUPPORTS_AM_CANCEL 20240418L
#define GASNET_SUPPORTS_AM_COMMIT_V2 20240906L

#define _GEX_STRINGIFY_(x) #x
#define _GEX_STRINGIFY(x) _GEX_STRINGIFY_(x)

/* The conduit: the pkg-config file of each conduit defines
 * GASNET_CONDUIT_<NAME>; the one a job runs on is the launcher's
 * (gex-run --conduit), since one libgex holds every conduit. The core
 * and extended "versions" are gex's. */
#if defined(GASNET_CONDUIT_UDP)
#define GASNET_CONDUIT_NAME udp
#define GASNET_CONDUIT_NAME_STR "udp"
#define GASNET_CORE_NAME UDP
/* The reference's udp conduit lets a program started by mpirun ask for the
 * MPI rank as its GASNet rank before init. Under mpirun gex's ranks are
 * already the PMIx ranks, which are MPI's: gex records the request and
 * checks it at init (a different rank ends the job, naming both). */
extern void AMUDP_SPMDSetProc(int proc);
#else
#ifndef GASNET_CONDUIT_SMP
#define GASNET_CONDUIT_SMP 1
#endif
#define GASNET_CONDUIT_NAME smp
#define GASNET_CONDUIT_NAME_STR "smp"
#define GASNET_CORE_NAME SMP
#endif
#define GASNET_CORE_NAME_STR _GEX_STRINGIFY(GASNET_CORE_NAME)
#define GASNET_CORE_VERSION 0.1
#define GASNET_CORE_VERSION_STR _GEX_STRINGIFY(GASNET_CORE_VERSION)
#define GASNET_EXTENDED_NAME GEX
#define GASNET_EXTENDED_NAME_STR _GEX_STRINGIFY(GASNET_EXTENDED_NAME)
#define GASNET_EXTENDED_VERSION 0.1
#define GASNET_EXTENDED_VERSION_STR _GEX_STRINGIFY(GASNET_EXTENDED_VERSION)

/* Threading: every gex call is thread-safe, so each model is supported; a
 * client that names none gets GASNET_PAR. */
#if !defined(GASNET_SEQ) && !defined(GASNET_PARSYNC) && !defined(GASNET_PAR)
#define GASNET_PAR 1
#endif
#if (defined(GASNET_SEQ) + defined(GASNET_PARSYNC) + defined(GASNET_PAR)) != 1
#error "define at most one of GASNET_SEQ, GASNET_PARSYNC, GASNET_PAR"
#endif
#if defined(GASNET_SEQ)
#define _GEX_THREADMODEL_STR "SEQ"
#elif defined(GASNET_PARSYNC)
#define _GEX_THREADMODEL_STR "PARSYNC"
#else
#define _GEX_THREADMODEL_STR "PAR"
#endif

/* Segments: attached segments of a size chosen at attach (FAST); not
 * aligned across ranks; ranks of a neighbourhood map each other's (PSHM).
 * The library is built without debugging checks, tracing or statistics
 * (GASNET_NDEBUG; GASNET_DEBUG, _TRACE and _STATS stay undefined). */
#define GASNET_SEGMENT_FAST 1
#define GASNET_ALIGNED_SEGMENTS 0
#define GASNET_PSHM 1
#ifndef GASNET_NDEBUG
#define GASNET_NDEBUG 1
#endif
#define GASNET_MAXEPS 32
#define GASNET_MAXNODES 0x7fffffff
#define GASNET_HIDDEN_AM_CONCURRENCY_LEVEL 0
#define GASNET_SUPPORTS_TI_SRCRANK 1
#define GASNET_SUPPORTS_TI_EP 1
#define GASNET_SUPPORTS_TI_ENTRY 1
#define GASNET_SUPPORTS_TI_IS_REQ 1
#define GASNET_SUPPORTS_TI_IS_LONG 1

/* The granularity of segment sizes and addresses: a divisor of the
 * system's page size (segments are page-aligned). */
#define GASNET_PAGESIZE 4096

/* The configuration as one string, in the reference's key=value form. */
#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 4
#define _GEX_PTR_STR "32bit"
#else
#define _GEX_PTR_STR "64bit"
#endif
#define GASNET_CONFIG_STRING                                                                      \
    "RELEASE=" _GEX_STRINGIFY(GASNET_RELEASE_VERSION_MAJOR) "." _GEX_STRINGIFY(                  \
        GASNET_RELEASE_VERSION_MINOR) "." _GEX_STRINGIFY(GASNET_RELEASE_VERSION_PATCH)           \
        ",SPEC=" _GEX_STRINGIFY(GEX_SPEC_VERSION_MAJOR) "." _GEX_STRINGIFY(                      \
            GEX_SPEC_VERSION_MINOR) ",CONDUIT=" GASNET_CORE_NAME_STR                             \
        "(" GASNET_CORE_NAME_STR "-" GASNET_CORE_VERSION_STR "/" GASNET_EXTENDED_NAME_STR       \
        "-" GEX_VERSION_STR "),THREADMODEL=" _GEX_THREADMODEL_STR                                \
        ",SEGMENT=FAST,PTR=" _GEX_PTR_STR ",noalign,pshm,nodebug,notrace,nostats,"               \
        "nodebugmalloc,nosrclines,timers_native,membars_native,atomics_native,"                  \
        "atomic32_native,atomic64_native"

/* ---- Error codes (the reference's values) ------------------------------ */

#define GASNET_OK 0
#define _GASNET_ERR_BASE 10000
#define GASNET_ERR_NOT_INIT 10001
#define GASNET_ERR_RESOURCE 10002
#define GASNET_ERR_BAD_ARG 10003
#define GASNET_ERR_NOT_READY 10004
#define GASNET_ERR_BARRIER_MISMATCH 10005
/* The name ("GASNET_ERR_BAD_ARG") and a description of an error code;
 * "GASNET_ERR_UNKNOWN" and a description saying so for other values. */
extern const char *gasnet_ErrorName(int errval);
extern const char *gasnet_ErrorDesc(int errval);

/* ---- Basic types ------------------------------------------------------- */

typedef uint32_t gex_Rank_t;
#define GEX_RANK_INVALID ((gex_Rank_t)0xFFFFFFFFu)

typedef uint64_t gex_Flags_t;
typedef uint8_t gex_AM_Index_t;
typedef int32_t gex_AM_Arg_t;
typedef uint64_t gex_RMA_Value_t;
#define SIZEOF_GEX_RMA_VALUE_T 8
typedef void *gex_Addr_t;
typedef uint32_t gex_EP_Index_t;
typedef uint32_t gex_EC_t;
typedef uint32_t gex_TI_t;
typedef uint32_t gex_DT_t;
typedef uint64_t gex_OP_t;
typedef uint32_t gex_EP_Capabilities_t;

#define GEX_AM_INDEX_BASE 128

typedef struct gex_Client_opaque *gex_Client_t;
typedef struct gex_EP_opaque *gex_EP_t;
typedef struct gex_TM_opaque *gex_TM_t;
typedef struct gex_Segment_opaque *gex_Segment_t;
typedef struct gex_Event_opaque *gex_Event_t;
typedef struct gex_Token_opaque *gex_Token_t;

#define GEX_CLIENT_INVALID ((gex_Client_t)0)
#define GEX_EP_INVALID ((gex_EP_t)0)
#define GEX_TM_INVALID ((gex_TM_t)0)
#define GEX_SEGMENT_INVALID ((gex_Segment_t)0)

#define GEX_EVENT_INVALID ((gex_Event_t)0)
#define GEX_EVENT_NO_OP ((gex_Event_t)(uintptr_t)1)
#define GEX_EVENT_NOW ((gex_Event_t *)(uintptr_t)1)
#define GEX_EVENT_DEFER ((gex_Event_t *)(uintptr_t)2)
#define GEX_EVENT_GROUP ((gex_Event_t *)(uintptr_t)3)

typedef struct {
    void *gex_addr;
    size_t gex_len;
} gex_Memvec_t;

typedef struct {
    gex_Rank_t gex_rank;
    gex_EP_Index_t gex_ep_index;
} gex_EP_Location_t;

typedef const struct {
    gex_Rank_t gex_jobrank;
} gex_RankInfo_t;

/* ---- Flags (one bit each, as gex::Flags) -------------------------------- */

#define GEX_FLAG_IMMEDIATE 0x1ULL
#define GEX_FLAG_LC_COPY_YES 0x2ULL
#define GEX_FLAG_LC_COPY_NO 0x4ULL
#define GEX_FLAG_PEER_NEVER_SELF 0x8ULL
#define GEX_FLAG_PEER_NEVER_NBRHD 0x10ULL
#define GEX_FLAG_AD_MY_RANK 0x20ULL
#define GEX_FLAG_AD_MY_NBRHD 0x40ULL
#define GEX_FLAG_AD_FAVOR_MY_RANK 0x80ULL
#define GEX_FLAG_AD_FAVOR_MY_NBRHD 0x100ULL
#define GEX_FLAG_AD_FAVOR_REMOTE 0x200ULL
#define GEX_FLAG_AD_ACQ 0x400ULL
#define GEX_FLAG_AD_REL 0x800ULL
#define GEX_FLAG_RANK_IS_JOBRANK 0x1000ULL
#define GEX_FLAG_AM_PREPARE_LEAST_CLIENT 0x2000ULL
#define GEX_FLAG_AM_PREPARE_LEAST_ALLOC 0x4000ULL
#define GEX_FLAG_SELF_SEG_UNKNOWN 0x8000ULL
#define GEX_FLAG_PEER_SEG_UNKNOWN 0x10000ULL
#define GEX_FLAG_SELF_SEG_SOME 0x20000ULL
#define GEX_FLAG_PEER_SEG_SOME 0x40000ULL
#define GEX_FLAG_SELF_SEG_BOUND 0x80000ULL
#define GEX_FLAG_PEER_SEG_BOUND 0x100000ULL
#define GEX_FLAG_SELF_SEG_OFFSET 0x200000ULL
#define GEX_FLAG_PEER_SEG_OFFSET 0x400000ULL
#define GEX_FLAG_TM_GLOBAL_SCRATCH 0x800000ULL
#define GEX_FLAG_TM_LOCAL_SCRATCH 0x1000000ULL
#define GEX_FLAG_TM_SYMMETRIC_SCRATCH 0x2000000ULL
#define GEX_FLAG_TM_NO_SCRATCH 0x4000000ULL
#define GEX_FLAG_TM_SCRATCH_SIZE_RECOMMENDED 0x8000000ULL
#define GEX_FLAG_TM_SCRATCH_SIZE_MIN 0x10000000ULL
#define GEX_FLAG_SCRATCH_SEG_OFFSET 0x20000000ULL
#define GEX_FLAG_GLOBALLY_QUIESCED 0x40000000ULL
#define GEX_FLAG_USES_GASNET1 0x80000000ULL
#define GEX_FLAG_AM_SHORT 0x100000000ULL
#define GEX_FLAG_AM_MEDIUM 0x200000000ULL
#define GEX_FLAG_AM_LONG 0x400000000ULL
#define GEX_FLAG_AM_MEDLONG (GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_LONG)
#define GEX_FLAG_AM_REQUEST 0x800000000ULL
#define GEX_FLAG_AM_REPLY 0x1000000000ULL
#define GEX_FLAG_AM_REQREP (GEX_FLAG_AM_REQUEST | GEX_FLAG_AM_REPLY)
#define GEX_FLAG_ENABLE_LEAF_LC 0x2000000000ULL
#define GEX_FLAG_HINT_ACCEL_AD 0x4000000000ULL
#define GEX_FLAG_HINT_ACCEL_COLL 0x8000000000ULL
#define GEX_FLAG_HINT_ACCEL_ALL (GEX_FLAG_HINT_ACCEL_AD | GEX_FLAG_HINT_ACCEL_COLL)
/* gex_Client_Init: the client starts the library's progress threads itself
 * (gex_System_QueryProgressThreads); gex has none, so there is nothing to
 * defer. */
#define GEX_FLAG_DEFER_THREADS 0x10000000000ULL
/* Collective synchronisation modes and segment hints (collectives design
 * notes), accepted in the flags of the data-movement collectives. */
#define GEX_FLAG_COLL_IN_NOSYNC 0x1000000000000ULL
#define GEX_FLAG_COLL_IN_MYSYNC 0x2000000000000ULL
#define GEX_FLAG_COLL_IN_ALLSYNC 0x4000000000000ULL
#define GEX_FLAG_COLL_OUT_NOSYNC 0x8000000000000ULL
#define GEX_FLAG_COLL_OUT_MYSYNC 0x10000000000000ULL
#define GEX_FLAG_COLL_OUT_ALLSYNC 0x20000000000000ULL
#define GEX_FLAG_COLL_DST_IN_SEGMENT 0x40000000000000ULL
#define GEX_FLAG_COLL_SRC_IN_SEGMENT 0x80000000000000ULL

/* Event categories */
#define GEX_EC_GET ((gex_EC_t)1 << 0)
#define GEX_EC_PUT ((gex_EC_t)1 << 1)
#define GEX_EC_AM ((gex_EC_t)1 << 2)
#define GEX_EC_LC ((gex_EC_t)1 << 3)
#define GEX_EC_RMW ((gex_EC_t)1 << 4)
#define GEX_EC_ALL ((gex_EC_t)0x1f)

/* Token info */
#define GEX_TI_SRCRANK ((gex_TI_t)1 << 0)
#define GEX_TI_EP ((gex_TI_t)1 << 1)
#define GEX_TI_ENTRY ((gex_TI_t)1 << 2)
#define GEX_TI_IS_REQ ((gex_TI_t)1 << 3)
#define GEX_TI_IS_LONG ((gex_TI_t)1 << 4)
#define GEX_TI_ALL ((gex_TI_t)0x1f)

/* Endpoint capabilities */
#define GEX_EP_CAPABILITY_RMA ((gex_EP_Capabilities_t)1 << 0)
#define GEX_EP_CAPABILITY_AM ((gex_EP_Capabilities_t)1 << 1)
#define GEX_EP_CAPABILITY_VIS ((gex_EP_Capabilities_t)1 << 2)
#define GEX_EP_CAPABILITY_COLL ((gex_EP_Capabilities_t)1 << 3)
#define GEX_EP_CAPABILITY_AD ((gex_EP_Capabilities_t)1 << 4)
#define GEX_EP_CAPABILITY_ALL ((gex_EP_Capabilities_t)0x1f)

/* Data types */
#define GEX_DT_I32 ((gex_DT_t)1 << 0)
#define GEX_DT_U32 ((gex_DT_t)1 << 1)
#define GEX_DT_I64 ((gex_DT_t)1 << 2)
#define GEX_DT_U64 ((gex_DT_t)1 << 3)
#define GEX_DT_FLT ((gex_DT_t)1 << 4)
#define GEX_DT_DBL ((gex_DT_t)1 << 5)
#define GEX_DT_USER ((gex_DT_t)1 << 6)

/* Operations */
#define GEX_OP_ADD ((gex_OP_t)1 << 0)
#define GEX_OP_MULT ((gex_OP_t)1 << 1)
#define GEX_OP_MIN ((gex_OP_t)1 << 2)
#define GEX_OP_MAX ((gex_OP_t)1 << 3)
#define GEX_OP_SUB ((gex_OP_t)1 << 4)
#define GEX_OP_INC ((gex_OP_t)1 << 5)
#define GEX_OP_DEC ((gex_OP_t)1 << 6)
#define GEX_OP_AND ((gex_OP_t)1 << 7)
#define GEX_OP_OR ((gex_OP_t)1 << 8)
#define GEX_OP_XOR ((gex_OP_t)1 << 9)
#define GEX_OP_FADD ((gex_OP_t)1 << 10)
#define GEX_OP_FMULT ((gex_OP_t)1 << 11)
#define GEX_OP_FMIN ((gex_OP_t)1 << 12)
#define GEX_OP_FMAX ((gex_OP_t)1 << 13)
#define GEX_OP_FSUB ((gex_OP_t)1 << 14)
#define GEX_OP_FINC ((gex_OP_t)1 << 15)
#define GEX_OP_FDEC ((gex_OP_t)1 << 16)
#define GEX_OP_FAND ((gex_OP_t)1 << 17)
#define GEX_OP_FOR ((gex_OP_t)1 << 18)
#define GEX_OP_FXOR ((gex_OP_t)1 << 19)
#define GEX_OP_SET ((gex_OP_t)1 << 20)
#define GEX_OP_CAS ((gex_OP_t)1 << 21)
#define GEX_OP_GET ((gex_OP_t)1 << 22)
#define GEX_OP_SWAP ((gex_OP_t)1 << 23)
#define GEX_OP_FCAS ((gex_OP_t)1 << 24)
#define GEX_OP_CSWAP GEX_OP_FCAS
#define GEX_OP_USER ((gex_OP_t)1 << 25)
#define GEX_OP_USER_NC ((gex_OP_t)1 << 26)
/* The fetching form of a non-fetching operation (GEX_OP_SET gives
 * GEX_OP_SWAP, GEX_OP_CAS GEX_OP_FCAS) and back: the arithmetic operations'
 * fetching bits are their non-fetching bits shifted by 10, SWAP and FCAS
 * those of SET and CAS shifted by 3. */
#define GEX_OP_TO_FETCHING(op)                                                                    \
    ((gex_OP_t)((((gex_OP_t)(op) & (gex_OP_t)0x3FF) << 10) |                                      \
                (((gex_OP_t)(op) & (GEX_OP_SET | GEX_OP_CAS)) << 3)))
#define GEX_OP_TO_NONFETCHING(op)                                                                 \
    ((gex_OP_t)((((gex_OP_t)(op) >> 10) & (gex_OP_t)0x3FF) |                                      \
                (((gex_OP_t)(op) & (GEX_OP_SWAP | GEX_OP_FCAS)) >> 3)))

/* ---- Client, endpoint, team, segment ----------------------------------- */

extern int gex_Client_Init(gex_Client_t *client_p, gex_EP_t *ep_p, gex_TM_t *tm_p,
                           const char *clientName, int *argc, char ***argv, gex_Flags_t flags);
extern gex_Flags_t gex_Client_QueryFlags(gex_Client_t client);
extern const char *gex_Client_QueryName(gex_Client_t client);

extern void gex_Client_SetCData(gex_Client_t client, const void *val);
extern void *gex_Client_QueryCData(gex_Client_t client);
extern void gex_Segment_SetCData(gex_Segment_t seg, const void *val);
extern void *gex_Segment_QueryCData(gex_Segment_t seg);
extern void gex_TM_SetCData(gex_TM_t tm, const void *val);
extern void *gex_TM_QueryCData(gex_TM_t tm);
extern void gex_EP_SetCData(gex_EP_t ep, const void *val);
extern void *gex_EP_QueryCData(gex_EP_t ep);

extern int gex_Segment_Attach(gex_Segment_t *segment_p, gex_TM_t tm, uintptr_t size);
extern gex_Client_t gex_Segment_QueryClient(gex_Segment_t seg);
extern gex_Flags_t gex_Segment_QueryFlags(gex_Segment_t seg);
extern void *gex_Segment_QueryAddr(gex_Segment_t seg);
extern uintptr_t gex_Segment_QuerySize(gex_Segment_t seg);

extern gex_Client_t gex_TM_QueryClient(gex_TM_t tm);
extern gex_EP_t gex_TM_QueryEP(gex_TM_t tm);
extern gex_Flags_t gex_TM_QueryFlags(gex_TM_t tm);
extern gex_Rank_t gex_TM_QueryRank(gex_TM_t tm);
extern gex_Rank_t gex_TM_QuerySize(gex_TM_t tm);
extern gex_TM_t gex_TM_Pair(gex_EP_t local_ep, gex_EP_Index_t remote_ep_index);
extern gex_Rank_t gex_TM_TranslateRankToJobrank(gex_TM_t tm, gex_Rank_t rank);
extern gex_Rank_t gex_TM_TranslateJobrankToRank(gex_TM_t tm, gex_Rank_t jobrank);
extern gex_EP_Location_t gex_TM_TranslateRankToEP(gex_TM_t tm, gex_Rank_t rank, gex_Flags_t flags);
extern size_t gex_TM_Split(gex_TM_t *new_tm_p, gex_TM_t parent_tm, int color, int key,
                           void *scratch_addr, size_t scratch_size, gex_Flags_t flags);
extern size_t gex_TM_Create(gex_TM_t *new_tms, size_t num_new_tms, gex_TM_t parent_tm, gex_EP_Location_t *args,
                            size_t numargs, gex_Addr_t *scratch_addrs, size_t scratch_size, gex_Flags_t flags);
extern int gex_TM_Destroy(gex_TM_t tm, gex_Memvec_t *scratch_p, gex_Flags_t flags);

extern gex_Client_t gex_EP_QueryClient(gex_EP_t ep);
extern gex_Flags_t gex_EP_QueryFlags(gex_EP_t ep);
extern gex_Segment_t gex_EP_QuerySegment(gex_EP_t ep);
extern gex_EP_Index_t gex_EP_QueryIndex(gex_EP_t ep);
extern gex_Event_t gex_EP_QueryBoundSegmentNB(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p,
                                              void **localaddr_p, uintptr_t *size_p,
                                              gex_Flags_t flags);
extern int gex_Segment_QueryBound(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p,
                                  void **localaddr_p, uintptr_t *size_p);

/* Memory kinds, created segments and endpoints ([PROPOSED] in the spec;
 * the kinds' own calls are in gasnet_mk.h). */
typedef struct gex_MK_opaque *gex_MK_t;
#define GEX_MK_INVALID ((gex_MK_t)0)
#define GEX_MK_HOST ((gex_MK_t)(uintptr_t)1)
extern int gex_Segment_Create(gex_Segment_t *segment_p, gex_Client_t client, gex_Addr_t address,
                              uintptr_t length, gex_MK_t kind, gex_Flags_t flags);
extern void gex_Segment_Destroy(gex_Segment_t segment, gex_Flags_t flags);
extern int gex_EP_BindSegment(gex_EP_t ep, gex_Segment_t segment, gex_Flags_t flags);
extern int gex_EP_PublishBoundSegment(gex_TM_t tm, gex_EP_t *eps, size_t num_eps, gex_Flags_t flags);
extern int gex_EP_Create(gex_EP_t *ep_p, gex_Client_t client, gex_EP_Capabilities_t capabilities,
                         gex_Flags_t flags);

/* ---- System queries, progress, exit ------------------------------------ */

extern gex_Rank_t gex_System_QueryJobRank(void);
extern gex_Rank_t gex_System_QueryJobSize(void);
extern int gex_System_GetVerboseErrors(void);
extern void gex_System_SetVerboseErrors(int enable);
extern uint64_t gex_System_QueryMaxThreads(void);
#if defined(GASNET_SEQ)
/* A GASNET_SEQ client calls the library from one thread: 1, as the
 * reference's SEQ build answers (the library's own answer is for PAR). */
#define gex_System_QueryMaxThreads() ((uint64_t)1)
#endif
extern int gex_System_QueryHiddenAMConcurrencyLevel(void);
extern void gex_System_QueryNbrhdInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                                      gex_Rank_t *my_info_index_p);
extern void gex_System_QueryHostInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                                     gex_Rank_t *my_info_index_p);
extern void gex_System_QueryMyPosition(gex_Rank_t *nbrhd_set_size_p, gex_Rank_t *nbrhd_set_rank_p,
                                       gex_Rank_t *host_set_size_p, gex_Rank_t *host_set_rank_p);

/* Progress threads (spec v0.18): gex runs none (handlers run in the
 * threads that poll), so a client that passed GEX_FLAG_DEFER_THREADS to
 * gex_Client_Init is told of zero threads to start; without that flag
 * the query returns GASNET_ERR_RESOURCE. GASNET_RCV_THREAD and
 * GASNET_SND_THREAD stay undefined. */
typedef struct {
    const char *gex_device_list;
    unsigned int gex_thread_roles;
    void *(*gex_progress_fn)(void *);
    void *gex_progress_arg;
} gex_ProgressThreadInfo_t;
#define GEX_THREAD_ROLE_RCV 1u
#define GEX_THREAD_ROLE_SND 2u
extern int gex_System_QueryProgressThreads(gex_Client_t client, unsigned int *count_p,
                                           const gex_ProgressThreadInfo_t **info_p,
                                           gex_Flags_t flags);

#if defined(__GNUC__) || defined(__clang__)
#define _GEX_NORETURN __attribute__((__noreturn__))
#else
#define _GEX_NORETURN
#endif
extern void gasnet_exit(int exitcode) _GEX_NORETURN;
extern int gasnet_AMPoll(void);
extern void _gex_BlockUntilStep(uint32_t *spins);
/* Polls until cond holds, pacing itself by the wait mode below. */
#define GASNET_BLOCKUNTIL(cond)                                                                   \
    do {                                                                                          \
        uint32_t _gex_spins = 0;                                                                  \
        while (!(cond)) _gex_BlockUntilStep(&_gex_spins);                                        \
    } while (0)

/* How every wait of the library (GASNET_BLOCKUNTIL, gex_Event_Wait*,
 * gex_NBI_Wait, barriers and the other blocking calls) spends the time in
 * which nothing arrives, for the whole process: SPIN polls without giving
 * up the processor; BLOCK yields the processor (sched_yield) after every
 * poll that found nothing; SPINBLOCK, the default, spins for a while, then
 * yields after every idle poll (at once when the host has more ranks than
 * cores). gasnet_set_waitmode returns GASNET_OK, or GASNET_ERR_BAD_ARG for
 * another value. */
#define GASNET_WAIT_SPIN 0
#define GASNET_WAIT_BLOCK 1
#define GASNET_WAIT_SPINBLOCK 2
extern int gasnet_set_waitmode(int wait_mode);

/* ---- Handler-safe locks ------------------------------------------------- */

typedef struct {
    pthread_mutex_t _gex_mutex;
} gex_HSL_t;
#define GEX_HSL_INITIALIZER {PTHREAD_MUTEX_INITIALIZER}
static inline void gex_HSL_Init(gex_HSL_t *hsl) { pthread_mutex_init(&hsl->_gex_mutex, 0); }
static inline void gex_HSL_Destroy(gex_HSL_t *hsl) { pthread_mutex_destroy(&hsl->_gex_mutex); }
static inline void gex_HSL_Lock(gex_HSL_t *hsl) { pthread_mutex_lock(&hsl->_gex_mutex); }
static inline void gex_HSL_Unlock(gex_HSL_t *hsl) { pthread_mutex_unlock(&hsl->_gex_mutex); }
static inline int gex_HSL_Trylock(gex_HSL_t *hsl) {
    return pthread_mutex_trylock(&hsl->_gex_mutex) == 0 ? GASNET_OK : GASNET_ERR_NOT_READY;
}

/* ---- Active Messages ----------------------------------------------------- */

/* A handler: void h(gex_Token_t t, [void *buf, size_t nbytes,] gex_AM_Arg_t a0, ...),
 * registered cast to gex_AM_Fn_t. */
typedef void (*gex_AM_Fn_t)();

typedef struct {
    gex_AM_Index_t gex_index;
    gex_AM_Fn_t gex_fnptr;
    gex_Flags_t gex_flags;
    unsigned int gex_nargs;
    const void *gex_cdata;
    const char *gex_name;
} gex_AM_Entry_t;

typedef struct {
    gex_Rank_t gex_srcrank;
    gex_EP_t gex_ep;
    const gex_AM_Entry_t *gex_entry;
    int gex_is_req;
    int gex_is_long;
} gex_Token_Info_t;

extern int gex_EP_RegisterHandlers(gex_EP_t ep, gex_AM_Entry_t *table, size_t numentries);
extern gex_TI_t gex_Token_Info(gex_Token_t token, gex_Token_Info_t *info, gex_TI_t mask);

extern unsigned int gex_AM_MaxArgs(void);
extern size_t gex_AM_MaxRequestLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                                    gex_Flags_t flags, unsigned int numargs);
extern size_t gex_AM_MaxReplyLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                                  gex_Flags_t flags, unsigned int numargs);
extern size_t gex_AM_MaxRequestMedium(gex_TM_t tm, gex_Rank_t other_rank,
                                      const gex_Event_t *lc_opt, gex_Flags_t flags,
                                      unsigned int numargs);
extern size_t gex_AM_MaxReplyMedium(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                                    gex_Flags_t flags, unsigned int numargs);
extern size_t gex_Token_MaxReplyLong(gex_Token_t token, const gex_Event_t *lc_opt,
                                     gex_Flags_t flags, unsigned int numargs);
extern size_t gex_Token_MaxReplyMedium(gex_Token_t token, const gex_Event_t *lc_opt,
                                       gex_Flags_t flags, unsigned int numargs);
extern size_t gex_AM_LUBRequestLong(void);
extern size_t gex_AM_LUBReplyLong(void);
extern size_t gex_AM_LUBRequestMedium(void);
extern size_t gex_AM_LUBReplyMedium(void);

/* The entry points of the [M] forms below: the arguments as an array. */
extern int _gex_AM_RequestShort(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                                gex_Flags_t flags, unsigned int nargs, const gex_AM_Arg_t *args);
extern int _gex_AM_RequestMedium(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                                 const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                                 gex_Flags_t flags, unsigned int nargs, const gex_AM_Arg_t *args);
extern int _gex_AM_RequestLong(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                               const void *source_addr, size_t nbytes, void *dest_addr,
                               gex_Event_t *lc_opt, gex_Flags_t flags, unsigned int nargs,
                               const gex_AM_Arg_t *args);
extern int _gex_AM_ReplyShort(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags,
                              unsigned int nargs, const gex_AM_Arg_t *args);
extern int _gex_AM_ReplyMedium(gex_Token_t token, gex_AM_Index_t handler,
                               const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                               gex_Flags_t flags, unsigned int nargs, const gex_AM_Arg_t *args);
extern int _gex_AM_ReplyLong(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr,
                             size_t nbytes, void *dest_addr, gex_Event_t *lc_opt,
                             gex_Flags_t flags, unsigned int nargs, const gex_AM_Arg_t *args);

/* Negotiated-payload AMs: Prepare, fill gex_AM_SrcDescAddr(sd) with up to
 * gex_AM_SrcDescSize(sd) bytes, Commit. */
typedef struct gex_AM_SrcDesc_opaque *gex_AM_SrcDesc_t;
#define GEX_AM_SRCDESC_NO_OP ((gex_AM_SrcDesc_t)0)
extern void *gex_AM_SrcDescAddr(gex_AM_SrcDesc_t sd);
extern size_t gex_AM_SrcDescSize(gex_AM_SrcDesc_t sd);
extern gex_AM_SrcDesc_t gex_AM_PrepareRequestMedium(gex_TM_t tm, gex_Rank_t rank, const void *client_buf,
                                                    size_t least_payload, size_t most_payload,
                                                    gex_Event_t *lc_opt, gex_Flags_t flags, unsigned int numargs);
extern gex_AM_SrcDesc_t gex_AM_PrepareReplyMedium(gex_Token_t token, const void *client_buf, size_t least_payload,
                                                  size_t most_payload, gex_Event_t *lc_opt, gex_Flags_t flags,
                                                  unsigned int numargs);
extern gex_AM_SrcDesc_t gex_AM_PrepareRequestLong(gex_TM_t tm, gex_Rank_t rank, const void *client_buf,
                                                  size_t least_payload, size_t most_payload, void *dest_addr,
                                                  gex_Event_t *lc_opt, gex_Flags_t flags, unsigned int numargs);
extern gex_AM_SrcDesc_t gex_AM_PrepareReplyLong(gex_Token_t token, const void *client_buf, size_t least_payload,
                                                size_t most_payload, void *dest_addr, gex_Event_t *lc_opt,
                                                gex_Flags_t flags, unsigned int numargs);
extern void _gex_AM_CommitMedium(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, unsigned int nargs,
                                 const gex_AM_Arg_t *args);
extern void _gex_AM_CommitLong(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr,
                               unsigned int nargs, const gex_AM_Arg_t *args);

/* The entry point of the _v2 Commit forms below: the kind of the call
 * (checked against the Prepare's), the commit flags (GEX_FLAG_IMMEDIATE
 * or 0; gex's Commit never has to wait for resources, so it always sends
 * and returns 0) and the arguments as an array. */
#define _GEX_AM_KIND_REQUEST 1
#define _GEX_AM_KIND_REPLY 2
#define _GEX_AM_KIND_MEDIUM 4
#define _GEX_AM_KIND_LONG 8
extern int _gex_AM_Commit_v2(gex_AM_SrcDesc_t sd, unsigned int kind, gex_AM_Index_t handler,
                             size_t nbytes, void *dest_addr, gex_Flags_t commit_flags,
                             unsigned int nargs, const gex_AM_Arg_t *args);

/* Cancels a prepared descriptor of the same kind without sending anything
 * (flags must be 0): returns 0; a descriptor of another kind, or non-zero
 * flags, end the job with a message naming the call. */
extern int gex_AM_CancelRequestMedium(gex_AM_SrcDesc_t sd, gex_Flags_t flags);
extern int gex_AM_CancelReplyMedium(gex_AM_SrcDesc_t sd, gex_Flags_t flags);
extern int gex_AM_CancelRequestLong(gex_AM_SrcDesc_t sd, gex_Flags_t flags);
extern int gex_AM_CancelReplyLong(gex_AM_SrcDesc_t sd, gex_Flags_t flags);

/* GENERATED BEGIN (gen/arity.py ex) */
static inline int gex_AM_RequestShort0(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags) {
    return _gex_AM_RequestShort(tm, rank, handler, flags, 0, (const gex_AM_Arg_t *)0);
}
static inline int gex_AM_RequestMedium0(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags) {
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 0, (const gex_AM_Arg_t *)0);
}
static inline int gex_AM_RequestLong0(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags) {
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 0, (const gex_AM_Arg_t *)0);
}
static inline int gex_AM_ReplyShort0(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags) {
    return _gex_AM_ReplyShort(token, handler, flags, 0, (const gex_AM_Arg_t *)0);
}
static inline int gex_AM_ReplyMedium0(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags) {
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 0, (const gex_AM_Arg_t *)0);
}
static inline int gex_AM_ReplyLong0(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags) {
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 0, (const gex_AM_Arg_t *)0);
}
static inline int gex_AM_RequestShort1(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 1, _a);
}
static inline int gex_AM_RequestMedium1(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 1, _a);
}
static inline int gex_AM_RequestLong1(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 1, _a);
}
static inline int gex_AM_ReplyShort1(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    return _gex_AM_ReplyShort(token, handler, flags, 1, _a);
}
static inline int gex_AM_ReplyMedium1(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 1, _a);
}
static inline int gex_AM_ReplyLong1(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 1, _a);
}
static inline int gex_AM_RequestShort2(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 2, _a);
}
static inline int gex_AM_RequestMedium2(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 2, _a);
}
static inline int gex_AM_RequestLong2(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 2, _a);
}
static inline int gex_AM_ReplyShort2(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    return _gex_AM_ReplyShort(token, handler, flags, 2, _a);
}
static inline int gex_AM_ReplyMedium2(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 2, _a);
}
static inline int gex_AM_ReplyLong2(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 2, _a);
}
static inline int gex_AM_RequestShort3(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 3, _a);
}
static inline int gex_AM_RequestMedium3(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 3, _a);
}
static inline int gex_AM_RequestLong3(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 3, _a);
}
static inline int gex_AM_ReplyShort3(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    return _gex_AM_ReplyShort(token, handler, flags, 3, _a);
}
static inline int gex_AM_ReplyMedium3(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 3, _a);
}
static inline int gex_AM_ReplyLong3(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 3, _a);
}
static inline int gex_AM_RequestShort4(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 4, _a);
}
static inline int gex_AM_RequestMedium4(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 4, _a);
}
static inline int gex_AM_RequestLong4(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 4, _a);
}
static inline int gex_AM_ReplyShort4(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    return _gex_AM_ReplyShort(token, handler, flags, 4, _a);
}
static inline int gex_AM_ReplyMedium4(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 4, _a);
}
static inline int gex_AM_ReplyLong4(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 4, _a);
}
static inline int gex_AM_RequestShort5(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 5, _a);
}
static inline int gex_AM_RequestMedium5(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 5, _a);
}
static inline int gex_AM_RequestLong5(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 5, _a);
}
static inline int gex_AM_ReplyShort5(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gex_AM_ReplyShort(token, handler, flags, 5, _a);
}
static inline int gex_AM_ReplyMedium5(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 5, _a);
}
static inline int gex_AM_ReplyLong5(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 5, _a);
}
static inline int gex_AM_RequestShort6(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 6, _a);
}
static inline int gex_AM_RequestMedium6(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 6, _a);
}
static inline int gex_AM_RequestLong6(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 6, _a);
}
static inline int gex_AM_ReplyShort6(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gex_AM_ReplyShort(token, handler, flags, 6, _a);
}
static inline int gex_AM_ReplyMedium6(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 6, _a);
}
static inline int gex_AM_ReplyLong6(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 6, _a);
}
static inline int gex_AM_RequestShort7(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 7, _a);
}
static inline int gex_AM_RequestMedium7(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 7, _a);
}
static inline int gex_AM_RequestLong7(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 7, _a);
}
static inline int gex_AM_ReplyShort7(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gex_AM_ReplyShort(token, handler, flags, 7, _a);
}
static inline int gex_AM_ReplyMedium7(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 7, _a);
}
static inline int gex_AM_ReplyLong7(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 7, _a);
}
static inline int gex_AM_RequestShort8(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 8, _a);
}
static inline int gex_AM_RequestMedium8(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 8, _a);
}
static inline int gex_AM_RequestLong8(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 8, _a);
}
static inline int gex_AM_ReplyShort8(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gex_AM_ReplyShort(token, handler, flags, 8, _a);
}
static inline int gex_AM_ReplyMedium8(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 8, _a);
}
static inline int gex_AM_ReplyLong8(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 8, _a);
}
static inline int gex_AM_RequestShort9(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 9, _a);
}
static inline int gex_AM_RequestMedium9(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 9, _a);
}
static inline int gex_AM_RequestLong9(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 9, _a);
}
static inline int gex_AM_ReplyShort9(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gex_AM_ReplyShort(token, handler, flags, 9, _a);
}
static inline int gex_AM_ReplyMedium9(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 9, _a);
}
static inline int gex_AM_ReplyLong9(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 9, _a);
}
static inline int gex_AM_RequestShort10(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 10, _a);
}
static inline int gex_AM_RequestMedium10(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 10, _a);
}
static inline int gex_AM_RequestLong10(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 10, _a);
}
static inline int gex_AM_ReplyShort10(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gex_AM_ReplyShort(token, handler, flags, 10, _a);
}
static inline int gex_AM_ReplyMedium10(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 10, _a);
}
static inline int gex_AM_ReplyLong10(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 10, _a);
}
static inline int gex_AM_RequestShort11(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 11, _a);
}
static inline int gex_AM_RequestMedium11(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 11, _a);
}
static inline int gex_AM_RequestLong11(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 11, _a);
}
static inline int gex_AM_ReplyShort11(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gex_AM_ReplyShort(token, handler, flags, 11, _a);
}
static inline int gex_AM_ReplyMedium11(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 11, _a);
}
static inline int gex_AM_ReplyLong11(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 11, _a);
}
static inline int gex_AM_RequestShort12(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 12, _a);
}
static inline int gex_AM_RequestMedium12(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 12, _a);
}
static inline int gex_AM_RequestLong12(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 12, _a);
}
static inline int gex_AM_ReplyShort12(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gex_AM_ReplyShort(token, handler, flags, 12, _a);
}
static inline int gex_AM_ReplyMedium12(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 12, _a);
}
static inline int gex_AM_ReplyLong12(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 12, _a);
}
static inline int gex_AM_RequestShort13(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 13, _a);
}
static inline int gex_AM_RequestMedium13(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 13, _a);
}
static inline int gex_AM_RequestLong13(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 13, _a);
}
static inline int gex_AM_ReplyShort13(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gex_AM_ReplyShort(token, handler, flags, 13, _a);
}
static inline int gex_AM_ReplyMedium13(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 13, _a);
}
static inline int gex_AM_ReplyLong13(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 13, _a);
}
static inline int gex_AM_RequestShort14(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 14, _a);
}
static inline int gex_AM_RequestMedium14(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 14, _a);
}
static inline int gex_AM_RequestLong14(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 14, _a);
}
static inline int gex_AM_ReplyShort14(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gex_AM_ReplyShort(token, handler, flags, 14, _a);
}
static inline int gex_AM_ReplyMedium14(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 14, _a);
}
static inline int gex_AM_ReplyLong14(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 14, _a);
}
static inline int gex_AM_RequestShort15(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 15, _a);
}
static inline int gex_AM_RequestMedium15(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 15, _a);
}
static inline int gex_AM_RequestLong15(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 15, _a);
}
static inline int gex_AM_ReplyShort15(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gex_AM_ReplyShort(token, handler, flags, 15, _a);
}
static inline int gex_AM_ReplyMedium15(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 15, _a);
}
static inline int gex_AM_ReplyLong15(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 15, _a);
}
static inline int gex_AM_RequestShort16(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gex_AM_RequestShort(tm, rank, handler, flags, 16, _a);
}
static inline int gex_AM_RequestMedium16(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 16, _a);
}
static inline int gex_AM_RequestLong16(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 16, _a);
}
static inline int gex_AM_ReplyShort16(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gex_AM_ReplyShort(token, handler, flags, 16, _a);
}
static inline int gex_AM_ReplyMedium16(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 16, _a);
}
static inline int gex_AM_ReplyLong16(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 16, _a);
}
static inline void gex_AM_CommitRequestMedium0(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes) {
    _gex_AM_CommitMedium(sd, handler, nbytes, 0, (const gex_AM_Arg_t *)0);
}
static inline void gex_AM_CommitRequestLong0(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr) {
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 0, (const gex_AM_Arg_t *)0);
}
static inline void gex_AM_CommitReplyMedium0(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes) {
    _gex_AM_CommitMedium(sd, handler, nbytes, 0, (const gex_AM_Arg_t *)0);
}
static inline void gex_AM_CommitReplyLong0(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr) {
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 0, (const gex_AM_Arg_t *)0);
}
static inline void gex_AM_CommitRequestMedium1(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    _gex_AM_CommitMedium(sd, handler, nbytes, 1, _a);
}
static inline void gex_AM_CommitRequestLong1(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 1, _a);
}
static inline void gex_AM_CommitReplyMedium1(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    _gex_AM_CommitMedium(sd, handler, nbytes, 1, _a);
}
static inline void gex_AM_CommitReplyLong1(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 1, _a);
}
static inline void gex_AM_CommitRequestMedium2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    _gex_AM_CommitMedium(sd, handler, nbytes, 2, _a);
}
static inline void gex_AM_CommitRequestLong2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 2, _a);
}
static inline void gex_AM_CommitReplyMedium2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    _gex_AM_CommitMedium(sd, handler, nbytes, 2, _a);
}
static inline void gex_AM_CommitReplyLong2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 2, _a);
}
static inline void gex_AM_CommitRequestMedium3(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    _gex_AM_CommitMedium(sd, handler, nbytes, 3, _a);
}
static inline void gex_AM_CommitRequestLong3(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 3, _a);
}
static inline void gex_AM_CommitReplyMedium3(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    _gex_AM_CommitMedium(sd, handler, nbytes, 3, _a);
}
static inline void gex_AM_CommitReplyLong3(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 3, _a);
}
static inline void gex_AM_CommitRequestMedium4(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    _gex_AM_CommitMedium(sd, handler, nbytes, 4, _a);
}
static inline void gex_AM_CommitRequestLong4(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 4, _a);
}
static inline void gex_AM_CommitReplyMedium4(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    _gex_AM_CommitMedium(sd, handler, nbytes, 4, _a);
}
static inline void gex_AM_CommitReplyLong4(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 4, _a);
}
static inline void gex_AM_CommitRequestMedium5(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    _gex_AM_CommitMedium(sd, handler, nbytes, 5, _a);
}
static inline void gex_AM_CommitRequestLong5(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 5, _a);
}
static inline void gex_AM_CommitReplyMedium5(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    _gex_AM_CommitMedium(sd, handler, nbytes, 5, _a);
}
static inline void gex_AM_CommitReplyLong5(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 5, _a);
}
static inline void gex_AM_CommitRequestMedium6(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    _gex_AM_CommitMedium(sd, handler, nbytes, 6, _a);
}
static inline void gex_AM_CommitRequestLong6(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 6, _a);
}
static inline void gex_AM_CommitReplyMedium6(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    _gex_AM_CommitMedium(sd, handler, nbytes, 6, _a);
}
static inline void gex_AM_CommitReplyLong6(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 6, _a);
}
static inline void gex_AM_CommitRequestMedium7(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    _gex_AM_CommitMedium(sd, handler, nbytes, 7, _a);
}
static inline void gex_AM_CommitRequestLong7(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 7, _a);
}
static inline void gex_AM_CommitReplyMedium7(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    _gex_AM_CommitMedium(sd, handler, nbytes, 7, _a);
}
static inline void gex_AM_CommitReplyLong7(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 7, _a);
}
static inline void gex_AM_CommitRequestMedium8(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    _gex_AM_CommitMedium(sd, handler, nbytes, 8, _a);
}
static inline void gex_AM_CommitRequestLong8(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 8, _a);
}
static inline void gex_AM_CommitReplyMedium8(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    _gex_AM_CommitMedium(sd, handler, nbytes, 8, _a);
}
static inline void gex_AM_CommitReplyLong8(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 8, _a);
}
static inline void gex_AM_CommitRequestMedium9(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    _gex_AM_CommitMedium(sd, handler, nbytes, 9, _a);
}
static inline void gex_AM_CommitRequestLong9(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 9, _a);
}
static inline void gex_AM_CommitReplyMedium9(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    _gex_AM_CommitMedium(sd, handler, nbytes, 9, _a);
}
static inline void gex_AM_CommitReplyLong9(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 9, _a);
}
static inline void gex_AM_CommitRequestMedium10(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    _gex_AM_CommitMedium(sd, handler, nbytes, 10, _a);
}
static inline void gex_AM_CommitRequestLong10(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 10, _a);
}
static inline void gex_AM_CommitReplyMedium10(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    _gex_AM_CommitMedium(sd, handler, nbytes, 10, _a);
}
static inline void gex_AM_CommitReplyLong10(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 10, _a);
}
static inline void gex_AM_CommitRequestMedium11(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    _gex_AM_CommitMedium(sd, handler, nbytes, 11, _a);
}
static inline void gex_AM_CommitRequestLong11(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 11, _a);
}
static inline void gex_AM_CommitReplyMedium11(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    _gex_AM_CommitMedium(sd, handler, nbytes, 11, _a);
}
static inline void gex_AM_CommitReplyLong11(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 11, _a);
}
static inline void gex_AM_CommitRequestMedium12(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    _gex_AM_CommitMedium(sd, handler, nbytes, 12, _a);
}
static inline void gex_AM_CommitRequestLong12(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 12, _a);
}
static inline void gex_AM_CommitReplyMedium12(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    _gex_AM_CommitMedium(sd, handler, nbytes, 12, _a);
}
static inline void gex_AM_CommitReplyLong12(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 12, _a);
}
static inline void gex_AM_CommitRequestMedium13(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    _gex_AM_CommitMedium(sd, handler, nbytes, 13, _a);
}
static inline void gex_AM_CommitRequestLong13(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 13, _a);
}
static inline void gex_AM_CommitReplyMedium13(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    _gex_AM_CommitMedium(sd, handler, nbytes, 13, _a);
}
static inline void gex_AM_CommitReplyLong13(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 13, _a);
}
static inline void gex_AM_CommitRequestMedium14(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    _gex_AM_CommitMedium(sd, handler, nbytes, 14, _a);
}
static inline void gex_AM_CommitRequestLong14(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 14, _a);
}
static inline void gex_AM_CommitReplyMedium14(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    _gex_AM_CommitMedium(sd, handler, nbytes, 14, _a);
}
static inline void gex_AM_CommitReplyLong14(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 14, _a);
}
static inline void gex_AM_CommitRequestMedium15(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    _gex_AM_CommitMedium(sd, handler, nbytes, 15, _a);
}
static inline void gex_AM_CommitRequestLong15(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 15, _a);
}
static inline void gex_AM_CommitReplyMedium15(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    _gex_AM_CommitMedium(sd, handler, nbytes, 15, _a);
}
static inline void gex_AM_CommitReplyLong15(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 15, _a);
}
static inline void gex_AM_CommitRequestMedium16(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    _gex_AM_CommitMedium(sd, handler, nbytes, 16, _a);
}
static inline void gex_AM_CommitRequestLong16(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 16, _a);
}
static inline void gex_AM_CommitReplyMedium16(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    _gex_AM_CommitMedium(sd, handler, nbytes, 16, _a);
}
static inline void gex_AM_CommitReplyLong16(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, 16, _a);
}
static inline int gex_AM_CommitRequestMedium0_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags) {
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 0, (const gex_AM_Arg_t *)0);
}
static inline int gex_AM_CommitRequestLong0_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags) {
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 0, (const gex_AM_Arg_t *)0);
}
static inline int gex_AM_CommitReplyMedium0_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags) {
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 0, (const gex_AM_Arg_t *)0);
}
static inline int gex_AM_CommitReplyLong0_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags) {
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 0, (const gex_AM_Arg_t *)0);
}
static inline int gex_AM_CommitRequestMedium1_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 1, _a);
}
static inline int gex_AM_CommitRequestLong1_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 1, _a);
}
static inline int gex_AM_CommitReplyMedium1_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 1, _a);
}
static inline int gex_AM_CommitReplyLong1_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0) {
    gex_AM_Arg_t _a[1] = {a0};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 1, _a);
}
static inline int gex_AM_CommitRequestMedium2_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 2, _a);
}
static inline int gex_AM_CommitRequestLong2_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 2, _a);
}
static inline int gex_AM_CommitReplyMedium2_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 2, _a);
}
static inline int gex_AM_CommitReplyLong2_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_AM_Arg_t _a[2] = {a0, a1};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 2, _a);
}
static inline int gex_AM_CommitRequestMedium3_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 3, _a);
}
static inline int gex_AM_CommitRequestLong3_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 3, _a);
}
static inline int gex_AM_CommitReplyMedium3_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 3, _a);
}
static inline int gex_AM_CommitReplyLong3_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_AM_Arg_t _a[3] = {a0, a1, a2};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 3, _a);
}
static inline int gex_AM_CommitRequestMedium4_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 4, _a);
}
static inline int gex_AM_CommitRequestLong4_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 4, _a);
}
static inline int gex_AM_CommitReplyMedium4_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 4, _a);
}
static inline int gex_AM_CommitReplyLong4_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    gex_AM_Arg_t _a[4] = {a0, a1, a2, a3};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 4, _a);
}
static inline int gex_AM_CommitRequestMedium5_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 5, _a);
}
static inline int gex_AM_CommitRequestLong5_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 5, _a);
}
static inline int gex_AM_CommitReplyMedium5_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 5, _a);
}
static inline int gex_AM_CommitReplyLong5_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    gex_AM_Arg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 5, _a);
}
static inline int gex_AM_CommitRequestMedium6_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 6, _a);
}
static inline int gex_AM_CommitRequestLong6_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 6, _a);
}
static inline int gex_AM_CommitReplyMedium6_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 6, _a);
}
static inline int gex_AM_CommitReplyLong6_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    gex_AM_Arg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 6, _a);
}
static inline int gex_AM_CommitRequestMedium7_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 7, _a);
}
static inline int gex_AM_CommitRequestLong7_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 7, _a);
}
static inline int gex_AM_CommitReplyMedium7_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 7, _a);
}
static inline int gex_AM_CommitReplyLong7_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    gex_AM_Arg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 7, _a);
}
static inline int gex_AM_CommitRequestMedium8_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 8, _a);
}
static inline int gex_AM_CommitRequestLong8_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 8, _a);
}
static inline int gex_AM_CommitReplyMedium8_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 8, _a);
}
static inline int gex_AM_CommitReplyLong8_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    gex_AM_Arg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 8, _a);
}
static inline int gex_AM_CommitRequestMedium9_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 9, _a);
}
static inline int gex_AM_CommitRequestLong9_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 9, _a);
}
static inline int gex_AM_CommitReplyMedium9_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 9, _a);
}
static inline int gex_AM_CommitReplyLong9_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    gex_AM_Arg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 9, _a);
}
static inline int gex_AM_CommitRequestMedium10_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 10, _a);
}
static inline int gex_AM_CommitRequestLong10_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 10, _a);
}
static inline int gex_AM_CommitReplyMedium10_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 10, _a);
}
static inline int gex_AM_CommitReplyLong10_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    gex_AM_Arg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 10, _a);
}
static inline int gex_AM_CommitRequestMedium11_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 11, _a);
}
static inline int gex_AM_CommitRequestLong11_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 11, _a);
}
static inline int gex_AM_CommitReplyMedium11_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 11, _a);
}
static inline int gex_AM_CommitReplyLong11_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    gex_AM_Arg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 11, _a);
}
static inline int gex_AM_CommitRequestMedium12_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 12, _a);
}
static inline int gex_AM_CommitRequestLong12_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 12, _a);
}
static inline int gex_AM_CommitReplyMedium12_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 12, _a);
}
static inline int gex_AM_CommitReplyLong12_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    gex_AM_Arg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 12, _a);
}
static inline int gex_AM_CommitRequestMedium13_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 13, _a);
}
static inline int gex_AM_CommitRequestLong13_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 13, _a);
}
static inline int gex_AM_CommitReplyMedium13_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 13, _a);
}
static inline int gex_AM_CommitReplyLong13_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    gex_AM_Arg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 13, _a);
}
static inline int gex_AM_CommitRequestMedium14_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 14, _a);
}
static inline int gex_AM_CommitRequestLong14_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 14, _a);
}
static inline int gex_AM_CommitReplyMedium14_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 14, _a);
}
static inline int gex_AM_CommitReplyLong14_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    gex_AM_Arg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 14, _a);
}
static inline int gex_AM_CommitRequestMedium15_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 15, _a);
}
static inline int gex_AM_CommitRequestLong15_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 15, _a);
}
static inline int gex_AM_CommitReplyMedium15_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 15, _a);
}
static inline int gex_AM_CommitReplyLong15_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    gex_AM_Arg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 15, _a);
}
static inline int gex_AM_CommitRequestMedium16_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 16, _a);
}
static inline int gex_AM_CommitRequestLong16_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REQUEST | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 16, _a);
}
static inline int gex_AM_CommitReplyMedium16_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, 16, _a);
}
static inline int gex_AM_CommitReplyLong16_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_AM_Arg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gex_AM_Commit_v2(sd, _GEX_AM_KIND_REPLY | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, 16, _a);
}
/* GENERATED END */

/* The forms without [M]: the argument count after the fixed arguments
 * chooses the [M] function, e.g. gex_AM_RequestShort(tm, rank, h, 0, a, b)
 * is gex_AM_RequestShort2(tm, rank, h, 0, a, b). _GEX_AM_NARGS_F(...) is
 * the number of arguments beyond the first F (F from 3 to 8, M at most 16:
 * more picks a name that does not exist). */
#define _GEX_AM_PICK(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17,  \
                     a18, a19, a20, a21, a22, a23, a24, n, ...)                                  \
    n
#define _GEX_AM_NARGS_3(...)                                                                      \
    _GEX_AM_PICK(__VA_ARGS__, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, \
                 2, 1, 0, _, _, _)
#define _GEX_AM_NARGS_4(...)                                                                      \
    _GEX_AM_PICK(__VA_ARGS__, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2,  \
                 1, 0, _, _, _, _)
#define _GEX_AM_NARGS_5(...)                                                                      \
    _GEX_AM_PICK(__VA_ARGS__, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1,   \
                 0, _, _, _, _, _)
#define _GEX_AM_NARGS_6(...)                                                                      \
    _GEX_AM_PICK(__VA_ARGS__, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,    \
                 _, _, _, _, _, _)
#define _GEX_AM_NARGS_7(...)                                                                      \
    _GEX_AM_PICK(__VA_ARGS__, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, _, _,  \
                 _, _, _, _, _)
#define _GEX_AM_NARGS_8(...)                                                                      \
    _GEX_AM_PICK(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, _, _, _,   \
                 _, _, _, _, _)
#define _GEX_AM_CAT_(a, b) a##b
#define _GEX_AM_CAT(a, b) _GEX_AM_CAT_(a, b)
#define _GEX_AM_CAT3_(a, b, c) a##b##c
#define _GEX_AM_CAT3(a, b, c) _GEX_AM_CAT3_(a, b, c)
#define gex_AM_RequestShort(...)                                                                  \
    _GEX_AM_CAT(gex_AM_RequestShort, _GEX_AM_NARGS_4(__VA_ARGS__))(__VA_ARGS__)
#define gex_AM_RequestMedium(...)                                                                 \
    _GEX_AM_CAT(gex_AM_RequestMedium, _GEX_AM_NARGS_7(__VA_ARGS__))(__VA_ARGS__)
#define gex_AM_RequestLong(...)                                                                   \
    _GEX_AM_CAT(gex_AM_RequestLong, _GEX_AM_NARGS_8(__VA_ARGS__))(__VA_ARGS__)
#define gex_AM_ReplyShort(...)                                                                    \
    _GEX_AM_CAT(gex_AM_ReplyShort, _GEX_AM_NARGS_3(__VA_ARGS__))(__VA_ARGS__)
#define gex_AM_ReplyMedium(...)                                                                   \
    _GEX_AM_CAT(gex_AM_ReplyMedium, _GEX_AM_NARGS_6(__VA_ARGS__))(__VA_ARGS__)
#define gex_AM_ReplyLong(...)                                                                     \
    _GEX_AM_CAT(gex_AM_ReplyLong, _GEX_AM_NARGS_7(__VA_ARGS__))(__VA_ARGS__)
#define gex_AM_CommitRequestMedium(...)                                                           \
    _GEX_AM_CAT(gex_AM_CommitRequestMedium, _GEX_AM_NARGS_3(__VA_ARGS__))(__VA_ARGS__)
#define gex_AM_CommitReplyMedium(...)                                                             \
    _GEX_AM_CAT(gex_AM_CommitReplyMedium, _GEX_AM_NARGS_3(__VA_ARGS__))(__VA_ARGS__)
#define gex_AM_CommitRequestLong(...)                                                             \
    _GEX_AM_CAT(gex_AM_CommitRequestLong, _GEX_AM_NARGS_4(__VA_ARGS__))(__VA_ARGS__)
#define gex_AM_CommitReplyLong(...)                                                               \
    _GEX_AM_CAT(gex_AM_CommitReplyLong, _GEX_AM_NARGS_4(__VA_ARGS__))(__VA_ARGS__)
#define gex_AM_CommitRequestMedium_v2(...)                                                        \
    _GEX_AM_CAT3(gex_AM_CommitRequestMedium, _GEX_AM_NARGS_4(__VA_ARGS__), _v2)(__VA_ARGS__)
#define gex_AM_CommitReplyMedium_v2(...)                                                          \
    _GEX_AM_CAT3(gex_AM_CommitReplyMedium, _GEX_AM_NARGS_4(__VA_ARGS__), _v2)(__VA_ARGS__)
#define gex_AM_CommitRequestLong_v2(...)                                                          \
    _GEX_AM_CAT3(gex_AM_CommitRequestLong, _GEX_AM_NARGS_5(__VA_ARGS__), _v2)(__VA_ARGS__)
#define gex_AM_CommitReplyLong_v2(...)                                                            \
    _GEX_AM_CAT3(gex_AM_CommitReplyLong, _GEX_AM_NARGS_5(__VA_ARGS__), _v2)(__VA_ARGS__)

/* ---- RMA ------------------------------------------------------------------ */

extern int gex_RMA_PutBlocking(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                               size_t nbytes, gex_Flags_t flags);
extern int gex_RMA_PutNBI(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                          size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags);
extern gex_Event_t gex_RMA_PutNB(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                                 size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags);
extern int gex_RMA_GetBlocking(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                               size_t nbytes, gex_Flags_t flags);
extern int gex_RMA_GetNBI(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src, size_t nbytes,
                          gex_Flags_t flags);
extern gex_Event_t gex_RMA_GetNB(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                                 size_t nbytes, gex_Flags_t flags);
extern gex_RMA_Value_t gex_RMA_GetBlockingVal(gex_TM_t tm, gex_Rank_t rank, void *src,
                                              size_t nbytes, gex_Flags_t flags);
extern int gex_RMA_PutBlockingVal(gex_TM_t tm, gex_Rank_t rank, void *dest,
                                  gex_RMA_Value_t value, size_t nbytes, gex_Flags_t flags);
extern int gex_RMA_PutNBIVal(gex_TM_t tm, gex_Rank_t rank, void *dest, gex_RMA_Value_t value,
                             size_t nbytes, gex_Flags_t flags);
extern gex_Event_t gex_RMA_PutNBVal(gex_TM_t tm, gex_Rank_t rank, void *dest,
                                   gex_RMA_Value_t value, size_t nbytes, gex_Flags_t flags);

/* ---- The RMA calls' inline direct route ------------------------------------
 * gex_RMA_PutBlocking, gex_RMA_GetBlocking, gex_RMA_PutBlockingVal,
 * gex_RMA_GetBlockingVal, gex_RMA_PutNBI, gex_RMA_GetNBI, gex_RMA_PutNB and
 * gex_RMA_GetNB are macros over the static inline functions below, which do
 * what the Rust calls' inlined direct route does: a call on the
 * primordial team (the one gex_Client_Init returned), with no flag outside
 * _GEX_RMA_FAST_FLAGS, to a rank below the job size whose segment is mapped
 * into this process and contains the whole range, from a thread that may
 * communicate (the library's flag: not in a handler, no Prepare open; this
 * header's HSLs are plain mutexes the library does not track), copies
 * directly after the library's bounds check; every other call (other teams
 * and TM-pairs, other flags, errors) is the library function of the same
 * name, which checks and reports everything. To call the library function
 * itself, parenthesise the name or take its address; define
 * GEX_NO_INLINE_RMA before including this header to leave the macros out.
 *
 * _gex_rma_fast and _gex_thread_restricted are the library's, for these
 * functions only (their layout may change with the library): the primordial
 * team's handle, the fast segment table in use (one entry per jobrank, size
 * 0 where not directly accessible, never written after it is published; the
 * library replaces the pointer when direct access is switched, and both
 * tables stay valid) and its length in bytes (so that the bounds check and
 * the index are one loop-invariant value, rank * sizeof entry); the address
 * of the calling thread's restriction flag, cached per thread and
 * translation unit (by the first library call from here). The checks are the library's own: an out-of-range rank
 * or range never reaches the copy. */
typedef struct {
    uintptr_t owner_base;
    uintptr_t size;
    uintptr_t local_base;
} _gex_fastseg_t;
typedef struct {
    gex_TM_t tm;
    gex_TM_t g1_tm;
    const _gex_fastseg_t *table;
    uintptr_t table_bytes;
} _gex_rma_fast_t;
extern _gex_rma_fast_t _gex_rma_fast;
extern const unsigned char *_gex_thread_restricted(void);

#define _GEX_RMA_FAST_FLAGS                                                                   \
    (GEX_FLAG_IMMEDIATE | GEX_FLAG_LC_COPY_YES | GEX_FLAG_LC_COPY_NO |                        \
     GEX_FLAG_SELF_SEG_UNKNOWN | GEX_FLAG_SELF_SEG_SOME | GEX_FLAG_SELF_SEG_BOUND |            \
     GEX_FLAG_PEER_SEG_UNKNOWN | GEX_FLAG_PEER_SEG_SOME | GEX_FLAG_PEER_SEG_BOUND |            \
     GEX_FLAG_PEER_SEG_OFFSET)

#if defined(__GNUC__) && !defined(GEX_NO_INLINE_RMA)
/* The address of the calling thread's restriction flag, cached per thread;
 * until the first library call below sets it, a byte that reads
 * "restricted", which sends the call to the library. */
static const unsigned char _gex_restricted_unknown __attribute__((unused)) = 1;
static __thread const unsigned char *_gex_restricted_p
    __attribute__((unused)) = &_gex_restricted_unknown;

/* Direct transfers left before this thread's next poll. */
#define _GEX_RMA_POLL_EVERY 256u
static __thread unsigned int _gex_rma_polls __attribute__((unused)) = _GEX_RMA_POLL_EVERY;

/* Whether [addr, addr + nbytes) of rank lives in this process (then *p is
 * where), or the library call must do the transfer (0). */
static inline int _gex_rma_direct(gex_TM_t tm, gex_Rank_t rank, const void *addr,
                                  size_t nbytes, gex_Flags_t flags, void **p) {
    const _gex_fastseg_t *t;
    uintptr_t off, size;
    /* The entry's byte offset, checked against the table's length (0 before
     * attach, when the table is NULL): one value, which a loop keeps in a
     * register (64 bits: no wrap-around). */
    uint64_t ix = (uint64_t)rank * sizeof(_gex_fastseg_t);
    if (__builtin_expect(tm == NULL || tm != __atomic_load_n(&_gex_rma_fast.tm, __ATOMIC_ACQUIRE),
                         0))
        return 0;
    if (__builtin_expect((flags & ~_GEX_RMA_FAST_FLAGS) != 0 ||
                             ix >= __atomic_load_n(&_gex_rma_fast.table_bytes, __ATOMIC_ACQUIRE),
                         0))
        return 0;
    if (__builtin_expect(*_gex_restricted_p != 0, 0)) return 0;
    /* Every _GEX_RMA_POLL_EVERY-th direct transfer of a thread polls once,
     * as a library call would: a thread that only puts or gets in a loop
     * (waiting for a flag an AM handler sets) still runs the handlers. */
    if (__builtin_expect(--_gex_rma_polls == 0, 0)) {
        _gex_rma_polls = _GEX_RMA_POLL_EVERY;
        gasnet_AMPoll();
    }
    t = (const _gex_fastseg_t *)((const char *)__atomic_load_n(&_gex_rma_fast.table,
                                                                __ATOMIC_ACQUIRE) +
                                 (uintptr_t)ix);
    off = (flags & GEX_FLAG_PEER_SEG_OFFSET) ? (uintptr_t)addr : (uintptr_t)addr - t->owner_base;
    size = t->size;
    if (__builtin_expect(off > size || nbytes > size - off, 0)) return 0;
    *p = (void *)(t->local_base + off);
    return 1;
}

/* Copies nbytes as the library does (gex_core::copy_bytes: small sizes in
 * registers, head and tail words, each reading before it writes, so the
 * ranges may overlap). */
static inline void _gex_rma_copy(void *dst, const void *src, size_t nbytes) {
    const char *s = (const char *)src;
    char *d = (char *)dst;
    if (nbytes - 8 <= 8) {
        uint64_t head, tail;
        memcpy(&head, s, 8);
        memcpy(&tail, s + nbytes - 8, 8);
        memcpy(d, &head, 8);
        memcpy(d + nbytes - 8, &tail, 8);
    } else if (nbytes > 16) {
        memmove(d, s, nbytes);
    } else if (nbytes >= 4) {
        uint32_t head, tail;
        memcpy(&head, s, 4);
        memcpy(&tail, s + nbytes - 4, 4);
        memcpy(d, &head, 4);
        memcpy(d + nbytes - 4, &tail, 4);
    } else if (nbytes > 0) {
        char first = s[0], mid = s[nbytes / 2], last = s[nbytes - 1];
        d[0] = first;
        d[nbytes / 2] = mid;
        d[nbytes - 1] = last;
    }
}

/* The byte offset of a value's low-order nbytes in a gex_RMA_Value_t. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define _GEX_VAL_OFFSET(nbytes) (sizeof(gex_RMA_Value_t) - (nbytes))
#else
#define _GEX_VAL_OFFSET(nbytes) 0
#endif

/* The library calls, marked cold: GCC then keeps the inline route's loop
 * invariants in registers and saves what the call needs around it, rather
 * than spilling them for every iteration. Each first sets this thread's
 * cached restriction-flag address. */
#define _GEX_RMA_COLD static inline __attribute__((cold))
#define _GEX_RMA_LIB_ENTER() (_gex_restricted_p = _gex_thread_restricted())
_GEX_RMA_COLD int _gex_RMA_PutBlocking_lib(gex_TM_t tm, gex_Rank_t rank, void *dest,
                                           const void *src, size_t nbytes, gex_Flags_t flags) {
    _GEX_RMA_LIB_ENTER();
    return (gex_RMA_PutBlocking)(tm, rank, dest, src, nbytes, flags);
}
_GEX_RMA_COLD int _gex_RMA_GetBlocking_lib(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                                           size_t nbytes, gex_Flags_t flags) {
    _GEX_RMA_LIB_ENTER();
    return (gex_RMA_GetBlocking)(tm, dest, rank, src, nbytes, flags);
}
_GEX_RMA_COLD int _gex_RMA_PutBlockingVal_lib(gex_TM_t tm, gex_Rank_t rank, void *dest,
                                              gex_RMA_Value_t value, size_t nbytes,
                                              gex_Flags_t flags) {
    _GEX_RMA_LIB_ENTER();
    return (gex_RMA_PutBlockingVal)(tm, rank, dest, value, nbytes, flags);
}
_GEX_RMA_COLD gex_RMA_Value_t _gex_RMA_GetBlockingVal_lib(gex_TM_t tm, gex_Rank_t rank,
                                                          void *src, size_t nbytes,
                                                          gex_Flags_t flags) {
    _GEX_RMA_LIB_ENTER();
    return (gex_RMA_GetBlockingVal)(tm, rank, src, nbytes, flags);
}

_GEX_RMA_COLD int _gex_RMA_PutNBI_lib(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                                      size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags) {
    _GEX_RMA_LIB_ENTER();
    return (gex_RMA_PutNBI)(tm, rank, dest, src, nbytes, lc_opt, flags);
}
_GEX_RMA_COLD int _gex_RMA_GetNBI_lib(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                                      size_t nbytes, gex_Flags_t flags) {
    _GEX_RMA_LIB_ENTER();
    return (gex_RMA_GetNBI)(tm, dest, rank, src, nbytes, flags);
}
_GEX_RMA_COLD gex_Event_t _gex_RMA_PutNB_lib(gex_TM_t tm, gex_Rank_t rank, void *dest,
                                             const void *src, size_t nbytes, gex_Event_t *lc_opt,
                                             gex_Flags_t flags) {
    _GEX_RMA_LIB_ENTER();
    return (gex_RMA_PutNB)(tm, rank, dest, src, nbytes, lc_opt, flags);
}
_GEX_RMA_COLD gex_Event_t _gex_RMA_GetNB_lib(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                                             size_t nbytes, gex_Flags_t flags) {
    _GEX_RMA_LIB_ENTER();
    return (gex_RMA_GetNB)(tm, dest, rank, src, nbytes, flags);
}

static inline int _gex_RMA_PutBlocking(gex_TM_t tm, gex_Rank_t rank, void *dest,
                                       const void *src, size_t nbytes, gex_Flags_t flags) {
    void *p = NULL;
    if (__builtin_expect(_gex_rma_direct(tm, rank, dest, nbytes, flags, &p), 1)) {
        _gex_rma_copy(p, src, nbytes);
        return GASNET_OK;
    }
    return _gex_RMA_PutBlocking_lib(tm, rank, dest, src, nbytes, flags);
}
static inline int _gex_RMA_GetBlocking(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                                       size_t nbytes, gex_Flags_t flags) {
    void *p = NULL;
    if (__builtin_expect(_gex_rma_direct(tm, rank, src, nbytes, flags, &p), 1)) {
        _gex_rma_copy(dest, p, nbytes);
        return GASNET_OK;
    }
    return _gex_RMA_GetBlocking_lib(tm, dest, rank, src, nbytes, flags);
}
static inline int _gex_RMA_PutBlockingVal(gex_TM_t tm, gex_Rank_t rank, void *dest,
                                          gex_RMA_Value_t value, size_t nbytes,
                                          gex_Flags_t flags) {
    void *p = NULL;
    if (__builtin_expect(nbytes - 1 < sizeof(value) &&
                             _gex_rma_direct(tm, rank, dest, nbytes, flags, &p),
                         1)) {
        memcpy(p, (const char *)&value + _GEX_VAL_OFFSET(nbytes), nbytes);
        return GASNET_OK;
    }
    return _gex_RMA_PutBlockingVal_lib(tm, rank, dest, value, nbytes, flags);
}
static inline gex_RMA_Value_t _gex_RMA_GetBlockingVal(gex_TM_t tm, gex_Rank_t rank, void *src,
                                                      size_t nbytes, gex_Flags_t flags) {
    void *p = NULL;
    if (__builtin_expect(nbytes - 1 < sizeof(gex_RMA_Value_t) &&
                             _gex_rma_direct(tm, rank, src, nbytes, flags, &p),
                         1)) {
        gex_RMA_Value_t v = 0;
        memcpy((char *)&v + _GEX_VAL_OFFSET(nbytes), p, nbytes);
        return v;
    }
    return _gex_RMA_GetBlockingVal_lib(tm, rank, src, nbytes, flags);
}
/* The non-blocking forms complete at once by the direct route: an NBI put
 * with lc_opt GEX_EVENT_NOW, _DEFER or _GROUP (an event pointer for local
 * completion takes the library, as in Rust), an NB put with lc_opt NOW,
 * DEFER or an event pointer (set to GEX_EVENT_INVALID: locally complete),
 * and the gets; an NB call then returns GEX_EVENT_INVALID (complete), as
 * the library does for a direct copy. */
static inline int _gex_RMA_PutNBI(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                                  size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags) {
    void *p = NULL;
    if (__builtin_expect((uintptr_t)lc_opt - 1 < 3 &&
                             _gex_rma_direct(tm, rank, dest, nbytes, flags, &p),
                         1)) {
        _gex_rma_copy(p, src, nbytes);
        return GASNET_OK;
    }
    return _gex_RMA_PutNBI_lib(tm, rank, dest, src, nbytes, lc_opt, flags);
}
static inline int _gex_RMA_GetNBI(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                                  size_t nbytes, gex_Flags_t flags) {
    void *p = NULL;
    if (__builtin_expect(_gex_rma_direct(tm, rank, src, nbytes, flags, &p), 1)) {
        _gex_rma_copy(dest, p, nbytes);
        return GASNET_OK;
    }
    return _gex_RMA_GetNBI_lib(tm, dest, rank, src, nbytes, flags);
}
static inline gex_Event_t _gex_RMA_PutNB(gex_TM_t tm, gex_Rank_t rank, void *dest,
                                         const void *src, size_t nbytes, gex_Event_t *lc_opt,
                                         gex_Flags_t flags) {
    void *p = NULL;
    if (__builtin_expect(lc_opt != NULL && lc_opt != GEX_EVENT_GROUP &&
                             _gex_rma_direct(tm, rank, dest, nbytes, flags, &p),
                         1)) {
        _gex_rma_copy(p, src, nbytes);
        if ((uintptr_t)lc_opt > (uintptr_t)GEX_EVENT_GROUP) *lc_opt = GEX_EVENT_INVALID;
        return GEX_EVENT_INVALID;
    }
    return _gex_RMA_PutNB_lib(tm, rank, dest, src, nbytes, lc_opt, flags);
}
static inline gex_Event_t _gex_RMA_GetNB(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                                         size_t nbytes, gex_Flags_t flags) {
    void *p = NULL;
    if (__builtin_expect(_gex_rma_direct(tm, rank, src, nbytes, flags, &p), 1)) {
        _gex_rma_copy(dest, p, nbytes);
        return GEX_EVENT_INVALID;
    }
    return _gex_RMA_GetNB_lib(tm, dest, rank, src, nbytes, flags);
}
#define gex_RMA_PutNBI(tm, rank, dest, src, nbytes, lc_opt, flags) \
    _gex_RMA_PutNBI(tm, rank, dest, src, nbytes, lc_opt, flags)
#define gex_RMA_GetNBI(tm, dest, rank, src, nbytes, flags) \
    _gex_RMA_GetNBI(tm, dest, rank, src, nbytes, flags)
#define gex_RMA_PutNB(tm, rank, dest, src, nbytes, lc_opt, flags) \
    _gex_RMA_PutNB(tm, rank, dest, src, nbytes, lc_opt, flags)
#define gex_RMA_GetNB(tm, dest, rank, src, nbytes, flags) \
    _gex_RMA_GetNB(tm, dest, rank, src, nbytes, flags)
#define gex_RMA_PutBlocking(tm, rank, dest, src, nbytes, flags) \
    _gex_RMA_PutBlocking(tm, rank, dest, src, nbytes, flags)
#define gex_RMA_GetBlocking(tm, dest, rank, src, nbytes, flags) \
    _gex_RMA_GetBlocking(tm, dest, rank, src, nbytes, flags)
#define gex_RMA_PutBlockingVal(tm, rank, dest, value, nbytes, flags) \
    _gex_RMA_PutBlockingVal(tm, rank, dest, value, nbytes, flags)
#define gex_RMA_GetBlockingVal(tm, rank, src, nbytes, flags) \
    _gex_RMA_GetBlockingVal(tm, rank, src, nbytes, flags)
#endif /* __GNUC__ && !GEX_NO_INLINE_RMA */

/* ---- Events and NBI ------------------------------------------------------- */

extern int gex_Event_Test(gex_Event_t event);
extern void gex_Event_Wait(gex_Event_t event);
extern int gex_Event_TestSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
extern void gex_Event_WaitSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
extern int gex_Event_TestAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
extern void gex_Event_WaitAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
extern gex_Event_t gex_Event_QueryLeaf(gex_Event_t root, gex_EC_t event_category);
extern int gex_NBI_Test(gex_EC_t event_mask, gex_Flags_t flags);
extern void gex_NBI_Wait(gex_EC_t event_mask, gex_Flags_t flags);
extern void gex_NBI_BeginAccessRegion(gex_Flags_t flags);
extern gex_Event_t gex_NBI_EndAccessRegion(gex_Flags_t flags);

/* ---- Collectives (the spec's gasnet_coll.h part) ------------------------- */

typedef void (*gex_Coll_ReduceFn_t)(const void *arg1, void *arg2_and_out, size_t count,
                                    const void *cdata);

extern gex_Event_t gex_Coll_BarrierNB(gex_TM_t tm, gex_Flags_t flags);
extern gex_Event_t gex_Coll_BroadcastNB(gex_TM_t tm, gex_Rank_t root, void *dst,
                                        const void *src, size_t nbytes, gex_Flags_t flags);
extern gex_Event_t gex_Coll_ReduceToOneNB(gex_TM_t tm, gex_Rank_t root, void *dst,
                                          const void *src, gex_DT_t dt, size_t dt_sz,
                                          size_t dt_cnt, gex_OP_t op,
                                          gex_Coll_ReduceFn_t user_op, void *user_cdata,
                                          gex_Flags_t flags);
extern gex_Event_t gex_Coll_ReduceToAllNB(gex_TM_t tm, void *dst, const void *src, gex_DT_t dt,
                                          size_t dt_sz, size_t dt_cnt, gex_OP_t op,
                                          gex_Coll_ReduceFn_t user_op, void *user_cdata,
                                          gex_Flags_t flags);

/* gex_Coll_BarrierNB and a wait for it (an undocumented call of the
 * reference's that its tests use). */
static inline void gex_Coll_BarrierBlocking(gex_TM_t tm, gex_Flags_t flags) {
    gex_Event_Wait(gex_Coll_BarrierNB(tm, flags));
}

/* ---- GASNet-1 names gasnetex.h provides ---------------------------------
 * The reference's gasnetex.h carries these GASNet-1 names, which EX clients
 * use (its tests include no gasnet.h); gasnet.h has the rest. They work
 * after gex_Client_Init as after gasnet_init, over the primordial team. */

/* The split-phase barrier over the whole job. The ids of a barrier agree
 * when the named ones among every rank's notify are equal; a wait (or a
 * successful try) returns GASNET_ERR_BARRIER_MISMATCH when they do not,
 * when some rank passed GASNET_BARRIERFLAG_MISMATCH, or when it is named
 * and its id differs from the agreed name (flags may differ between notify
 * and wait). UNNAMED: anonymous, and no rank names the barrier.
 * gasnet_barrier is a notify and a wait; gasnet_barrier_result reports the
 * last completed barrier: 0 with its name in *id, or non-zero if every
 * rank was anonymous. */
#define GASNET_BARRIERFLAG_ANONYMOUS 1
#define GASNET_BARRIERFLAG_MISMATCH 2
#define GASNET_BARRIERFLAG_UNNAMED 9
extern void gasnet_barrier_notify(int id, int flags);
extern int gasnet_barrier_wait(int id, int flags);
extern int gasnet_barrier_try(int id, int flags);
extern int gasnet_barrier(int id, int flags);
extern int gasnet_barrier_result(int *id);

typedef uint32_t gasnet_node_t;

/* The segment each rank attached: gasnet_getSegmentInfo fills entries
 * 0 .. min(numentries, job size) - 1 (zeros before attach). */
typedef struct {
    void *addr;
    uintptr_t size;
} gasnet_seginfo_t;
extern int gasnet_getSegmentInfo(gasnet_seginfo_t *seginfo_table, int numentries);

/* Where each rank runs: host and supernode (neighbourhood) numbers, as
 * gex_System_QueryMyPosition gives them, and offset, the difference between
 * the address at which this process maps that rank's segment and the
 * rank's own address of it (0 for a rank whose segment this process does
 * not map, or before attach). */
typedef struct {
    gasnet_node_t host;
    gasnet_node_t supernode;
    intptr_t offset;
} gasnet_nodeinfo_t;
extern int gasnet_getNodeInfo(gasnet_nodeinfo_t *nodeinfo_table, int numentries);

/* The largest segment this process may attach, and the smallest of those
 * over the job. */
extern uintptr_t gasnet_getMaxLocalSegmentSize(void);
extern uintptr_t gasnet_getMaxGlobalSegmentSize(void);

/* The environment the job was started with (as gasnett_getenv). */
extern const char *gasnet_getenv(const char *name);

/* The EX objects behind the GASNet-1 calls (any pointer may be NULL):
 * the client, endpoint and primordial team of gex_Client_Init or
 * gasnet_init, and the segment attached to it (GEX_SEGMENT_INVALID
 * before). */
extern void gasnet_QueryGexObjects(gex_Client_t *client_p, gex_EP_t *endpoint_p, gex_TM_t *tm_p,
                                   gex_Segment_t *segment_p);

/* A vector element of the GASNet-1 VIS calls (laid out as gex_Memvec_t). */
typedef struct {
    void *addr;
    size_t len;
} gasnet_memvec_t;

/* Thread information: gex keeps no per-thread handle for clients to pass,
 * so the handle is NULL on every thread and the macros cost nothing. */
typedef void *gasnet_threadinfo_t;
#define GASNET_BEGIN_FUNCTION() ((void)0)
#define GASNET_POST_THREADINFO(info) ((void)(info))
#define GASNET_GET_THREADINFO() ((gasnet_threadinfo_t)0)

#ifdef __cplusplus
} /* extern "C" */
#endif

/* gex's internal diagnostics (gasnett_run_diagnostics). */
#include <gasnet_diagnostic.h>

#endif /* GEX_GASNETEX_H */
