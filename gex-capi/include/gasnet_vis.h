/*
 * gasnet_vis.h: vector, indexed and strided puts and gets of gex's C
 * interface (GASNet-EX spec v0.17, "Vector/Indexed/Strided (VIS)").
 * Written for gex from the spec.
 */
#ifndef GEX_GASNET_VIS_H
#define GEX_GASNET_VIS_H

#include <gasnetex.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GEX_VIS_MAX_PEERCOMPLETION 512

extern gex_Event_t gex_VIS_VectorPutNB(gex_TM_t tm, gex_Rank_t dstrank, size_t dstcount, gex_Memvec_t const dstlist[],
                                       size_t srccount, gex_Memvec_t const srclist[], gex_Flags_t flags);
extern int gex_VIS_VectorPutNBI(gex_TM_t tm, gex_Rank_t dstrank, size_t dstcount, gex_Memvec_t const dstlist[],
                                size_t srccount, gex_Memvec_t const srclist[], gex_Flags_t flags);
extern int gex_VIS_VectorPutBlocking(gex_TM_t tm, gex_Rank_t dstrank, size_t dstcount, gex_Memvec_t const dstlist[],
                                     size_t srccount, gex_Memvec_t const srclist[], gex_Flags_t flags);
extern gex_Event_t gex_VIS_VectorGetNB(gex_TM_t tm, size_t dstcount, gex_Memvec_t const dstlist[], gex_Rank_t srcrank,
                                       size_t srccount, gex_Memvec_t const srclist[], gex_Flags_t flags);
extern int gex_VIS_VectorGetNBI(gex_TM_t tm, size_t dstcount, gex_Memvec_t const dstlist[], gex_Rank_t srcrank,
                                size_t srccount, gex_Memvec_t const srclist[], gex_Flags_t flags);
extern int gex_VIS_VectorGetBlocking(gex_TM_t tm, size_t dstcount, gex_Memvec_t const dstlist[], gex_Rank_t srcrank,
                                     size_t srccount, gex_Memvec_t const srclist[], gex_Flags_t flags);

extern gex_Event_t gex_VIS_IndexedPutNB(gex_TM_t tm, gex_Rank_t dstrank, size_t dstcount, void *const dstlist[],
                                        size_t dstlen, size_t srccount, void *const srclist[], size_t srclen,
                                        gex_Flags_t flags);
extern int gex_VIS_IndexedPutNBI(gex_TM_t tm, gex_Rank_t dstrank, size_t dstcount, void *const dstlist[],
                                 size_t dstlen, size_t srccount, void *const srclist[], size_t srclen,
                                 gex_Flags_t flags);
extern int gex_VIS_IndexedPutBlocking(gex_TM_t tm, gex_Rank_t dstrank, size_t dstcount, void *const dstlist[],
                                      size_t dstlen, size_t srccount, void *const srclist[], size_t srclen,
                                      gex_Flags_t flags);
extern gex_Event_t gex_VIS_IndexedGetNB(gex_TM_t tm, size_t dstcount, void *const dstlist[], size_t dstlen,
                                        gex_Rank_t srcrank, size_t srccount, void *const srclist[], size_t srclen,
                                        gex_Flags_t flags);
extern int gex_VIS_IndexedGetNBI(gex_TM_t tm, size_t dstcount, void *const dstlist[], size_t dstlen,
                                 gex_Rank_t srcrank, size_t srccount, void *const srclist[], size_t srclen,
                                 gex_Flags_t flags);
extern int gex_VIS_IndexedGetBlocking(gex_TM_t tm, size_t dstcount, void *const dstlist[], size_t dstlen,
                                      gex_Rank_t srcrank, size_t srccount, void *const srclist[], size_t srclen,
                                      gex_Flags_t flags);

extern gex_Event_t gex_VIS_StridedPutNB(gex_TM_t tm, gex_Rank_t dstrank, void *dstaddr, const ptrdiff_t dststrides[],
                                        void *srcaddr, const ptrdiff_t srcstrides[], size_t elemsz,
                                        const size_t count[], size_t stridelevels, gex_Flags_t flags);
extern int gex_VIS_StridedPutNBI(gex_TM_t tm, gex_Rank_t dstrank, void *dstaddr, const ptrdiff_t dststrides[],
                                 void *srcaddr, const ptrdiff_t srcstrides[], size_t elemsz, const size_t count[],
                                 size_t stridelevels, gex_Flags_t flags);
extern int gex_VIS_StridedPutBlocking(gex_TM_t tm, gex_Rank_t dstrank, void *dstaddr, const ptrdiff_t dststrides[],
                                      void *srcaddr, const ptrdiff_t srcstrides[], size_t elemsz,
                                      const size_t count[], size_t stridelevels, gex_Flags_t flags);
extern gex_Event_t gex_VIS_StridedGetNB(gex_TM_t tm, void *dstaddr, const ptrdiff_t dststrides[], gex_Rank_t srcrank,
                                        void *srcaddr, const ptrdiff_t srcstrides[], size_t elemsz,
                                        const size_t count[], size_t stridelevels, gex_Flags_t flags);
extern int gex_VIS_StridedGetNBI(gex_TM_t tm, void *dstaddr, const ptrdiff_t dststrides[], gex_Rank_t srcrank,
                                 void *srcaddr, const ptrdiff_t srcstrides[], size_t elemsz, const size_t count[],
                                 size_t stridelevels, gex_Flags_t flags);
extern int gex_VIS_StridedGetBlocking(gex_TM_t tm, void *dstaddr, const ptrdiff_t dststrides[], gex_Rank_t srcrank,
                                      void *srcaddr, const ptrdiff_t srcstrides[], size_t elemsz,
                                      const size_t count[], size_t stridelevels, gex_Flags_t flags);

extern void gex_VIS_SetPeerCompletionHandler(gex_AM_Index_t handler, const void *source_addr, size_t nbytes,
                                             gex_Flags_t flags);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEX_GASNET_VIS_H */
