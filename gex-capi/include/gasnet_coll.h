/*
 * gasnet_coll.h: the collectives of the GASNet collectives design notes, as
 * gex provides them over the primordial team: broadcast, scatter, gather,
 * gather_all and exchange, non-blocking (a handle to sync) and blocking,
 * with the notes' sync modes (at most one IN_* and one OUT_*; none means
 * MYSYNC), address modes and segment hints. The EX collectives
 * (gex_Coll_*) are in gasnetex.h. Written for gex from the design notes.
 *
 * GASNET_COLL_SINGLE: every node passes the same, correct addresses. With
 * unaligned segments (GASNET_ALIGNED_SEGMENTS 0) each node's addresses are
 * its own, so the call proceeds as with GASNET_COLL_LOCAL.
 */
#ifndef GEX_GASNET_COLL_H
#define GEX_GASNET_COLL_H

#include <gasnetex.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef gex_Event_t gasnet_all_handle_t;
#define GASNET_COLL_INVALID_HANDLE ((gasnet_all_handle_t)0)

#define GASNET_COLL_IN_NOSYNC (1 << 0)
#define GASNET_COLL_IN_MYSYNC (1 << 1)
#define GASNET_COLL_IN_ALLSYNC (1 << 2)
#define GASNET_COLL_OUT_NOSYNC (1 << 3)
#define GASNET_COLL_OUT_MYSYNC (1 << 4)
#define GASNET_COLL_OUT_ALLSYNC (1 << 5)
#define GASNET_COLL_SINGLE (1 << 6)
#define GASNET_COLL_LOCAL (1 << 7)
#define GASNET_COLL_DST_IN_SEGMENT (1 << 8)
#define GASNET_COLL_SRC_IN_SEGMENT (1 << 9)

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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEX_GASNET_COLL_H */
