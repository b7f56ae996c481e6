/*
 * gasnet_coll.h: the data-movement collectives of gex's C interface in two
 * spellings over one implementation:
 *
 * - gasnet_coll_*: the GASNet-1 collectives as GASNet clients call them
 *   (gasnet_coll_broadcast(team, dst, srcimage, src, nbytes, flags) and
 *   the like), over any team, with their M (multi-address) forms, the
 *   team barrier and the sync calls;
 * - gasnet_all_*: the names of the collectives design notes, over the
 *   primordial team, with their "i" forms and the generalised all_put /
 *   all_get.
 *
 * A gasnet_coll_X call and the gasnet_all_X call run the same code in the
 * library; the handles of both are gex events (gex_Event_t), so they may
 * be synced by either family's calls or by gex_Event_*. The EX collectives
 * (gex_Coll_*) are declared in gasnetex.h, which this header includes.
 * Written for gex from the collectives design notes, GASNet-EX.txt and the
 * GASNet tests that call these functions.
 *
 * Teams and images: gasnet_team_handle_t is a gex_TM_t (the primordial
 * team, or one made by gex_TM_Split / gex_TM_Create); GASNET_TEAM_ALL is
 * the primordial team (NULL before initialisation). gex runs one image
 * per process: image i of a team is its rank i, so srcimage / dstimage are
 * team ranks. The M forms take a list of image addresses: under
 * GASNET_COLL_LOCAL one entry (this process's image), under
 * GASNET_COLL_SINGLE one per image of the team (entry i for rank i; only
 * this process's entry is read).
 *
 * Flags: at most one GASNET_COLL_IN_* and one GASNET_COLL_OUT_* (none
 * means MYSYNC); GASNET_COLL_SINGLE or GASNET_COLL_LOCAL (none means
 * LOCAL). Segments are not aligned (GASNET_ALIGNED_SEGMENTS 0), so a
 * SINGLE call proceeds as LOCAL: each process uses its own addresses and
 * ignores those it passes for others (for instance a broadcast's src away
 * from the root). GASNET_COLL_{DST,SRC}_IN_SEGMENT are hints, checked; the
 * buffers may be anywhere without them. An operation flagged
 * GASNET_COLL_AGGREGATE completes before its initiation call returns and
 * returns GASNET_COLL_INVALID_HANDLE. Data buffers need no alignment.
 */
#ifndef GEX_GASNET_COLL_H
#define GEX_GASNET_COLL_H

#include <gasnetex.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types ---------------------------------------------------------------- */

typedef uint32_t gasnet_image_t;
typedef gex_TM_t gasnet_team_handle_t;
extern gasnet_team_handle_t _gex_coll_team_all(void);
#define GASNET_TEAM_ALL (_gex_coll_team_all())

typedef gex_Event_t gasnet_coll_handle_t;
typedef gasnet_coll_handle_t gasnet_all_handle_t;
#define GASNET_COLL_INVALID_HANDLE ((gasnet_coll_handle_t)0)
#define GASNET_ALL_INVALID_HANDLE GASNET_COLL_INVALID_HANDLE

/* ---- Flags ---------------------------------------------------------------- */

#define GASNET_COLL_IN_NOSYNC (1 << 0)
#define GASNET_COLL_IN_MYSYNC (1 << 1)
#define GASNET_COLL_IN_ALLSYNC (1 << 2)
#define GASNET_COLL_OUT_NOSYNC (1 << 3)
#define GASNET_COLL_OUT_MYSYNC (1 << 4)
#define GASNET_COLL_OUT_ALLSYNC (1 << 5)
#define GASNET_COLL_SYNC_FLAG_MASK 0x3F
#define GASNET_COLL_SINGLE (1 << 6)
#define GASNET_COLL_LOCAL (1 << 7)
#define GASNET_COLL_DST_IN_SEGMENT (1 << 8)
#define GASNET_COLL_SRC_IN_SEGMENT (1 << 9)
#define GASNET_COLL_AGGREGATE (1 << 10)

/* ---- The design notes' names, over the primordial team ---------------------- */

extern gasnet_all_handle_t gasnet_all_broadcast_nb(void *dst, uint32_t srcnode, void *src, size_t nbytes, int flags);
extern gasnet_all_handle_t gasnet_all_scatter_nb(void *dst, uint32_t srcnode, void *src, size_t nbytes, int flags);
extern gasnet_all_handle_t gasnet_all_gather_nb(uint32_t dstnode, void *dst, void *src, size_t nbytes, int flags);
extern gasnet_all_handle_t gasnet_all_gather_all_nb(void *dst, void *src, size_t nbytes, int flags);
extern gasnet_all_handle_t gasnet_all_exchange_nb(void *dst, void *src, size_t nbytes, int flags);

/* The multi-address ("i") forms: LOCAL passes this node's images (listlen
 * of them, blocks rank .. rank + listlen - 1 of nblocks); SINGLE passes
 * every image's address and node (nodelist), the same on every node, and
 * rank and nblocks are ignored. */
extern gasnet_all_handle_t gasnet_all_broadcasti_nb(const uint32_t nodelist[], void *const dstlist[], uint32_t srcnode,
                                                    void *src, size_t listlen, size_t nbytes, size_t rank,
                                                    size_t nblocks, int flags);
extern gasnet_all_handle_t gasnet_all_scatteri_nb(const uint32_t nodelist[], void *const dstlist[], uint32_t srcnode,
                                                  void *src, size_t listlen, size_t nbytes, size_t rank,
                                                  size_t nblocks, int flags);
extern gasnet_all_handle_t gasnet_all_gatheri_nb(uint32_t dstnode, void *dst, const uint32_t nodelist[],
                                                 void *const srclist[], size_t listlen, size_t nbytes, size_t rank,
                                                 size_t nblocks, int flags);
extern gasnet_all_handle_t gasnet_all_gather_alli_nb(const uint32_t nodelist[], void *const dstlist[],
                                                     void *const srclist[], size_t listlen, size_t nbytes,
                                                     size_t rank, size_t nblocks, int flags);
extern gasnet_all_handle_t gasnet_all_exchangei_nb(const uint32_t nodelist[], void *const dstlist[],
                                                   void *const srclist[], size_t listlen, size_t nbytes, size_t rank,
                                                   size_t nblocks, int flags);

/* The notes' generalised collectives ("all_put" and "all_get"): each node
 * names the transfers it makes itself, puts into other nodes' segments or
 * gets from them (dst of a put, src of a get: an address in that node's
 * segment; the local side anywhere), and its partners: the nodes whose
 * transfers target this node's memory, as a list of partnercount node
 * numbers, or, with a NULL partnerlist, only their number (IN_MYSYNC then
 * costs a barrier instead of one message per partner). Always LOCAL:
 * GASNET_COLL_SINGLE is an error (the job ends naming the call); nbytes
 * and the sync flags are single-valued, and listlen 0 is allowed. A
 * node's handle completes once its own transfers are done and every
 * partner's transfer into (or out of) its memory is. The notes write the
 * lists as gasnet_node_t *const []; here, as in the "i" forms above, they
 * are arrays of node numbers. */
extern gasnet_all_handle_t gasnet_all_put_nb(uint32_t dstnode, void *dst, void *src, const uint32_t partnerlist[],
                                             size_t partnercount, size_t nbytes, int flags);
extern gasnet_all_handle_t gasnet_all_get_nb(void *dst, uint32_t srcnode, void *src, const uint32_t partnerlist[],
                                             size_t partnercount, size_t nbytes, int flags);
extern gasnet_all_handle_t gasnet_all_puti_nb(const uint32_t nodelist[], void *const dstlist[],
                                              void *const srclist[], size_t listlen, const uint32_t partnerlist[],
                                              size_t partnercount, size_t nbytes, int flags);
extern gasnet_all_handle_t gasnet_all_geti_nb(void *const dstlist[], const uint32_t nodelist[],
                                              void *const srclist[], size_t listlen, const uint32_t partnerlist[],
                                              size_t partnercount, size_t nbytes, int flags);

/* ---- Syncing a handle (both families) --------------------------------------
 * try: GASNET_OK once complete (the handle is then dead), otherwise
 * GASNET_ERR_NOT_READY after one poll. The list forms set each completed
 * entry to the invalid handle; _all completes when every entry has, _some
 * when at least one has (or none was pending). */

static inline void gasnet_all_wait_sync(gasnet_all_handle_t handle) { gex_Event_Wait(handle); }
static inline int gasnet_all_try_sync(gasnet_all_handle_t handle) {
    gasnet_AMPoll();
    return gex_Event_Test(handle);
}
static inline void gasnet_all_wait_sync_all(gasnet_all_handle_t *handles, size_t n) {
    gex_Event_WaitAll(handles, n, 0);
}
static inline int gasnet_all_try_sync_all(gasnet_all_handle_t *handles, size_t n) {
    gasnet_AMPoll();
    return gex_Event_TestAll(handles, n, 0);
}
static inline void gasnet_all_wait_sync_some(gasnet_all_handle_t *handles, size_t n) {
    gex_Event_WaitSome(handles, n, 0);
}
static inline int gasnet_all_try_sync_some(gasnet_all_handle_t *handles, size_t n) {
    gasnet_AMPoll();
    return gex_Event_TestSome(handles, n, 0);
}

static inline void gasnet_coll_wait_sync(gasnet_coll_handle_t handle) { gasnet_all_wait_sync(handle); }
static inline int gasnet_coll_try_sync(gasnet_coll_handle_t handle) { return gasnet_all_try_sync(handle); }
static inline void gasnet_coll_wait_sync_all(gasnet_coll_handle_t *handles, size_t n) {
    gasnet_all_wait_sync_all(handles, n);
}
static inline int gasnet_coll_try_sync_all(gasnet_coll_handle_t *handles, size_t n) {
    return gasnet_all_try_sync_all(handles, n);
}
static inline void gasnet_coll_wait_sync_some(gasnet_coll_handle_t *handles, size_t n) {
    gasnet_all_wait_sync_some(handles, n);
}
static inline int gasnet_coll_try_sync_some(gasnet_coll_handle_t *handles, size_t n) {
    return gasnet_all_try_sync_some(handles, n);
}

/* ---- Blocking forms of the notes' calls ------------------------------------ */

static inline void gasnet_all_broadcast(void *dst, uint32_t srcnode, void *src, size_t nbytes, int flags) {
    gasnet_all_wait_sync(gasnet_all_broadcast_nb(dst, srcnode, src, nbytes, flags));
}
static inline void gasnet_all_scatter(void *dst, uint32_t srcnode, void *src, size_t nbytes, int flags) {
    gasnet_all_wait_sync(gasnet_all_scatter_nb(dst, srcnode, src, nbytes, flags));
}
static inline void gasnet_all_gather(uint32_t dstnode, void *dst, void *src, size_t nbytes, int flags) {
    gasnet_all_wait_sync(gasnet_all_gather_nb(dstnode, dst, src, nbytes, flags));
}
static inline void gasnet_all_gather_all(void *dst, void *src, size_t nbytes, int flags) {
    gasnet_all_wait_sync(gasnet_all_gather_all_nb(dst, src, nbytes, flags));
}
static inline void gasnet_all_exchange(void *dst, void *src, size_t nbytes, int flags) {
    gasnet_all_wait_sync(gasnet_all_exchange_nb(dst, src, nbytes, flags));
}
static inline void gasnet_all_put(uint32_t dstnode, void *dst, void *src, const uint32_t partnerlist[],
                                  size_t partnercount, size_t nbytes, int flags) {
    gasnet_all_wait_sync(gasnet_all_put_nb(dstnode, dst, src, partnerlist, partnercount, nbytes, flags));
}
static inline void gasnet_all_get(void *dst, uint32_t srcnode, void *src, const uint32_t partnerlist[],
                                  size_t partnercount, size_t nbytes, int flags) {
    gasnet_all_wait_sync(gasnet_all_get_nb(dst, srcnode, src, partnerlist, partnercount, nbytes, flags));
}
static inline void gasnet_all_puti(const uint32_t nodelist[], void *const dstlist[], void *const srclist[],
                                   size_t listlen, const uint32_t partnerlist[], size_t partnercount,
                                   size_t nbytes, int flags) {
    gasnet_all_wait_sync(
        gasnet_all_puti_nb(nodelist, dstlist, srclist, listlen, partnerlist, partnercount, nbytes, flags));
}
static inline void gasnet_all_geti(void *const dstlist[], const uint32_t nodelist[], void *const srclist[],
                                   size_t listlen, const uint32_t partnerlist[], size_t partnercount,
                                   size_t nbytes, int flags) {
    gasnet_all_wait_sync(
        gasnet_all_geti_nb(dstlist, nodelist, srclist, listlen, partnerlist, partnercount, nbytes, flags));
}

/* ---- The GASNet-1 collectives, over a team -----------------------------------
 * broadcast: nbytes from src on srcimage to dst on every image.
 * scatter: block i (nbytes each) of src on srcimage to dst on image i.
 * gather: src (nbytes) of image i to block i of dst on dstimage.
 * gather_all: src of image i to block i of dst on every image.
 * exchange: block j of src on image i to block i of dst on image j.
 * src on other images than srcimage, and dst on other images than
 * dstimage, are not read (NULL is fine). */

extern gasnet_coll_handle_t gasnet_coll_broadcast_nb(gasnet_team_handle_t team, void *dst, gasnet_image_t srcimage,
                                                     void *src, size_t nbytes, int flags);
extern gasnet_coll_handle_t gasnet_coll_scatter_nb(gasnet_team_handle_t team, void *dst, gasnet_image_t srcimage,
                                                   void *src, size_t nbytes, int flags);
extern gasnet_coll_handle_t gasnet_coll_gather_nb(gasnet_team_handle_t team, gasnet_image_t dstimage, void *dst,
                                                  void *src, size_t nbytes, int flags);
extern gasnet_coll_handle_t gasnet_coll_gather_all_nb(gasnet_team_handle_t team, void *dst, void *src,
                                                      size_t nbytes, int flags);
extern gasnet_coll_handle_t gasnet_coll_exchange_nb(gasnet_team_handle_t team, void *dst, void *src, size_t nbytes,
                                                    int flags);

extern gasnet_coll_handle_t gasnet_coll_broadcastM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                                      gasnet_image_t srcimage, void *src, size_t nbytes, int flags);
extern gasnet_coll_handle_t gasnet_coll_scatterM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                                    gasnet_image_t srcimage, void *src, size_t nbytes, int flags);
extern gasnet_coll_handle_t gasnet_coll_gatherM_nb(gasnet_team_handle_t team, gasnet_image_t dstimage, void *dst,
                                                   void *const srclist[], size_t nbytes, int flags);
extern gasnet_coll_handle_t gasnet_coll_gather_allM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                                       void *const srclist[], size_t nbytes, int flags);
extern gasnet_coll_handle_t gasnet_coll_exchangeM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                                     void *const srclist[], size_t nbytes, int flags);

static inline void gasnet_coll_broadcast(gasnet_team_handle_t team, void *dst, gasnet_image_t srcimage, void *src,
                                         size_t nbytes, int flags) {
    gasnet_coll_wait_sync(gasnet_coll_broadcast_nb(team, dst, srcimage, src, nbytes, flags));
}
static inline void gasnet_coll_scatter(gasnet_team_handle_t team, void *dst, gasnet_image_t srcimage, void *src,
                                       size_t nbytes, int flags) {
    gasnet_coll_wait_sync(gasnet_coll_scatter_nb(team, dst, srcimage, src, nbytes, flags));
}
static inline void gasnet_coll_gather(gasnet_team_handle_t team, gasnet_image_t dstimage, void *dst, void *src,
                                      size_t nbytes, int flags) {
    gasnet_coll_wait_sync(gasnet_coll_gather_nb(team, dstimage, dst, src, nbytes, flags));
}
static inline void gasnet_coll_gather_all(gasnet_team_handle_t team, void *dst, void *src, size_t nbytes,
                                          int flags) {
    gasnet_coll_wait_sync(gasnet_coll_gather_all_nb(team, dst, src, nbytes, flags));
}
static inline void gasnet_coll_exchange(gasnet_team_handle_t team, void *dst, void *src, size_t nbytes, int flags) {
    gasnet_coll_wait_sync(gasnet_coll_exchange_nb(team, dst, src, nbytes, flags));
}
static inline void gasnet_coll_broadcastM(gasnet_team_handle_t team, void *const dstlist[], gasnet_image_t srcimage,
                                          void *src, size_t nbytes, int flags) {
    gasnet_coll_wait_sync(gasnet_coll_broadcastM_nb(team, dstlist, srcimage, src, nbytes, flags));
}
static inline void gasnet_coll_scatterM(gasnet_team_handle_t team, void *const dstlist[], gasnet_image_t srcimage,
                                        void *src, size_t nbytes, int flags) {
    gasnet_coll_wait_sync(gasnet_coll_scatterM_nb(team, dstlist, srcimage, src, nbytes, flags));
}
static inline void gasnet_coll_gatherM(gasnet_team_handle_t team, gasnet_image_t dstimage, void *dst,
                                       void *const srclist[], size_t nbytes, int flags) {
    gasnet_coll_wait_sync(gasnet_coll_gatherM_nb(team, dstimage, dst, srclist, nbytes, flags));
}
static inline void gasnet_coll_gather_allM(gasnet_team_handle_t team, void *const dstlist[], void *const srclist[],
                                           size_t nbytes, int flags) {
    gasnet_coll_wait_sync(gasnet_coll_gather_allM_nb(team, dstlist, srclist, nbytes, flags));
}
static inline void gasnet_coll_exchangeM(gasnet_team_handle_t team, void *const dstlist[], void *const srclist[],
                                         size_t nbytes, int flags) {
    gasnet_coll_wait_sync(gasnet_coll_exchangeM_nb(team, dstlist, srclist, nbytes, flags));
}

/* ---- Team barrier -------------------------------------------------------------
 * The split-phase named barrier of gasnet_barrier_* over a team, with the
 * same flags (GASNET_BARRIERFLAG_ANONYMOUS, _MISMATCH) and results
 * (GASNET_OK, GASNET_ERR_BARRIER_MISMATCH, and GASNET_ERR_NOT_READY from
 * try), and gasnetex.h's rules for them (the wait's flags may differ from
 * the notify's). Over GASNET_TEAM_ALL it is the gasnet_barrier_* barrier
 * itself. One barrier per team may be notified at a time. */

extern void gasnet_coll_barrier_notify(gasnet_team_handle_t team, int id, int flags);
extern int gasnet_coll_barrier_wait(gasnet_team_handle_t team, int id, int flags);
extern int gasnet_coll_barrier_try(gasnet_team_handle_t team, int id, int flags);
/* 0 with the name of the team's last completed barrier in *id if some
 * member named it; non-zero if every member was anonymous (or none has
 * completed). */
extern int gasnet_coll_barrier_result(gasnet_team_handle_t team, int *id);
static inline int gasnet_coll_barrier(gasnet_team_handle_t team, int id, int flags) {
    gasnet_coll_barrier_notify(team, id, flags);
    return gasnet_coll_barrier_wait(team, id, flags);
}

/* ---- Teams, set-up, tuning ------------------------------------------------------ */

static inline gex_Rank_t gasnet_coll_team_size(gasnet_team_handle_t team) { return gex_TM_QuerySize(team); }
static inline gex_Rank_t gasnet_coll_team_rank2node(gasnet_team_handle_t team, int rank) {
    return gex_TM_TranslateRankToJobrank(team, (gex_Rank_t)rank);
}
static inline gex_Rank_t gasnet_coll_team_node2rank(gasnet_team_handle_t team, gex_Rank_t node) {
    return gex_TM_TranslateJobrankToRank(team, node);
}

/* The GASNet-1 reduction function table of gasnet_coll_init. gex has no
 * GASNet-1 reduce or scan (use gex_Coll_ReduceToOneNB / ReduceToAllNB), so
 * the table must be empty. */
typedef void (*gasnet_coll_reduce_fn_t)(void *results, size_t result_count, const void *left_operands,
                                        size_t left_count, const void *right_operands, size_t elem_size, int flags,
                                        int arg);
typedef struct {
    gasnet_coll_reduce_fn_t fnptr;
    unsigned int flags;
} gasnet_coll_fn_entry_t;

/* Optional (the collectives are ready after initialisation). images: NULL,
 * or one entry per job rank, each 1 (one image per process, my_image then
 * being this rank); fn_count must be 0 and init_flags 0. Anything else
 * ends the job naming the call. */
extern void gasnet_coll_init(const gasnet_image_t images[], gasnet_image_t my_image, gasnet_coll_fn_entry_t fn_tbl[],
                             size_t fn_count, int init_flags);

/* Autotuning does not exist in gex: these do nothing. */
static inline void gasnet_coll_dumpTuningState(char *filename, gasnet_team_handle_t team) {
    (void)filename;
    (void)team;
}
static inline void gasnet_coll_dumpProfile(char *filename, gasnet_team_handle_t team) {
    (void)filename;
    (void)team;
}
static inline void gasnet_coll_loadTuningState(char *filename, gasnet_team_handle_t team) {
    (void)filename;
    (void)team;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEX_GASNET_COLL_H */
