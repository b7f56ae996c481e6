/*
 * test_coll1.c: the design notes' collectives from C (gasnet_coll.h):
 * broadcast, scatter, gather, gather_all and exchange under each of the
 * nine IN/OUT sync modes, LOCAL and SINGLE, roots rotating, synced by
 * every gasnet_all_*_sync call; the segment hints with buffers in the
 * segment; several in flight; all_put, all_get and their "i" forms in a
 * ring and an exchange, partners listed and counted. Every byte checked.
 * Written for gex from the
 * collectives design notes.
 */
#include <gasnet_coll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gex_Rank_t me, n;
#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "test_coll1: rank %u: check failed at line %d: ", me, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, " (%s)\n", #cond);                                        \
            gasnet_exit(1);                                                           \
        }                                                                             \
    } while (0)

#define NB 100 /* bytes per block */
static gex_TM_t the_tm;
static void barrier_all(void) { gex_Event_Wait(gex_Coll_BarrierNB(the_tm, 0)); }
static unsigned char val(gex_Rank_t from, gex_Rank_t to, int round, size_t j) {
    return (unsigned char)(from * 31u + to * 17u + (unsigned)round * 7u + j);
}

/* One round of the five collectives with `flags`, buffers in `area`
 * (malloc'd or in the segment), synced with the call `how` selects. */
static void round_of(int round, int flags, unsigned char *area, int how) {
    unsigned char *src = area, *dst = area + 64 * NB;
    gex_Rank_t root = (gex_Rank_t)round % n;
    gasnet_all_handle_t h[5];
    /* broadcast */
    for (size_t j = 0; j < NB; j++) src[j] = val(root, 0, round, j);
    memset(dst, 0, NB);
    h[0] = gasnet_all_broadcast_nb(dst, root, src, NB, flags);
    gasnet_all_wait_sync(h[0]);
    for (size_t j = 0; j < NB; j++) CHECK(dst[j] == val(root, 0, round, j), "bcast %d byte %zu", round, j);
    /* scatter, gather, gather_all, exchange in flight together */
    unsigned char *s1 = src + NB, *d1 = dst + NB;              /* scatter: n blocks at root -> 1 */
    unsigned char *s2 = src + (n + 1) * NB, *d2 = dst + 2 * NB; /* gather: 1 -> n at root */
    unsigned char *s3 = src + (n + 2) * NB, *d3 = d2 + n * NB;  /* gather_all: 1 -> n */
    unsigned char *s4 = src + (n + 3) * NB, *d4 = d3 + n * NB;  /* exchange: n -> n */
    for (gex_Rank_t i = 0; i < n; i++)
        for (size_t j = 0; j < NB; j++) {
            s1[i * NB + j] = val(me, i, round + 1, j);
            s4[i * NB + j] = val(me, i, round + 4, j);
        }
    for (size_t j = 0; j < NB; j++) {
        s2[j] = val(me, root, round + 2, j);
        s3[j] = val(me, 0, round + 3, j);
    }
    memset(d1, 0, (3 * n + 1) * NB);
    h[1] = gasnet_all_scatter_nb(d1, root, s1, NB, flags);
    h[2] = gasnet_all_gather_nb(root, d2, s2, NB, flags);
    h[3] = gasnet_all_gather_all_nb(d3, s3, NB, flags);
    h[4] = gasnet_all_exchange_nb(d4, s4, NB, flags);
    switch (how % 3) {
    case 0: gasnet_all_wait_sync_all(h + 1, 4); break;
    case 1: GASNET_BLOCKUNTIL(gasnet_all_try_sync_all(h + 1, 4) == GASNET_OK); break;
    default:
        for (int left = 4; left > 0;) {
            gasnet_all_wait_sync_some(h + 1, 4);
            left = 0;
            for (int i = 1; i < 5; i++) left += h[i] != GASNET_COLL_INVALID_HANDLE;
        }
    }
    for (int i = 1; i < 5; i++) CHECK(h[i] == GASNET_COLL_INVALID_HANDLE, "handle %d synced", i);
    for (size_t j = 0; j < NB; j++) CHECK(d1[j] == val(root, me, round + 1, j), "scatter %d byte %zu", round, j);
    for (gex_Rank_t i = 0; i < n; i++)
        for (size_t j = 0; j < NB; j++) {
            if (me == root) CHECK(d2[i * NB + j] == val(i, root, round + 2, j), "gather %d from %u", round, i);
            CHECK(d3[i * NB + j] == val(i, 0, round + 3, j), "gather_all %d from %u", round, i);
            CHECK(d4[i * NB + j] == val(i, me, round + 4, j), "exchange %d from %u", round, i);
        }
}

/* The "i" forms: two images per node, image k on node k / 2. */
static void round_i(int round, int single) {
    enum { IM = 2, B = 40 };
    size_t total = IM * n;
    static unsigned char dbuf[IM][16 * IM * B], sbuf[IM][16 * IM * B], root_buf[16 * IM * B];
    static uint32_t nodes[16 * IM];
    static void *dl[16 * IM], *sl[16 * IM];
    int mode = single ? GASNET_COLL_SINGLE : GASNET_COLL_LOCAL;
    void **dlist = dl, **slist = sl;
    size_t listlen = IM;
    if (single) {
        listlen = total;
        for (size_t k = 0; k < total; k++) {
            nodes[k] = (uint32_t)(k / IM);
            /* Only this node's entries are read (segments are not aligned). */
            dl[k] = nodes[k] == me ? dbuf[k % IM] : NULL;
            sl[k] = nodes[k] == me ? sbuf[k % IM] : NULL;
        }
    } else {
        for (int k = 0; k < IM; k++) dl[k] = dbuf[k], sl[k] = sbuf[k];
    }
    size_t first = IM * me; /* LOCAL rank: my first image */
    gex_Rank_t root = (gex_Rank_t)round % n;
    /* broadcasti */
    for (int j = 0; j < B; j++) root_buf[j] = val(root, 9, round, (size_t)j);
    memset(dbuf, 0, sizeof dbuf);
    gasnet_all_wait_sync(gasnet_all_broadcasti_nb(nodes, dlist, root, root_buf, listlen, B, first, total, mode));
    for (int k = 0; k < IM; k++)
        for (int j = 0; j < B; j++) CHECK(dbuf[k][j] == val(root, 9, round, (size_t)j), "broadcasti image %d", k);
    /* scatteri: block k of the root's buffer to image k */
    for (size_t k = 0; k < total; k++)
        for (int j = 0; j < B; j++) root_buf[k * B + j] = val(root, (gex_Rank_t)k, round + 1, (size_t)j);
    memset(dbuf, 0, sizeof dbuf);
    gasnet_all_wait_sync(gasnet_all_scatteri_nb(nodes, dlist, root, root_buf, listlen, B, first, total, mode));
    for (int k = 0; k < IM; k++)
        for (int j = 0; j < B; j++)
            CHECK(dbuf[k][j] == val(root, (gex_Rank_t)(first + k), round + 1, (size_t)j), "scatteri image %d", k);
    barrier_all();
    /* gatheri: image k's source to block k at the root */
    for (int k = 0; k < IM; k++)
        for (int j = 0; j < B; j++) sbuf[k][j] = val((gex_Rank_t)(first + k), root, round + 2, (size_t)j);
    memset(root_buf, 0, sizeof root_buf);
    gasnet_all_wait_sync(gasnet_all_gatheri_nb(root, root_buf, nodes, slist, listlen, B, first, total, mode));
    if (me == root)
        for (size_t k = 0; k < total; k++)
            for (int j = 0; j < B; j++)
                CHECK(root_buf[k * B + j] == val((gex_Rank_t)k, root, round + 2, (size_t)j), "gatheri block %zu", k);
    barrier_all();
    /* gather_alli: every image gets every image's block */
    for (int k = 0; k < IM; k++)
        for (int j = 0; j < B; j++) sbuf[k][j] = val((gex_Rank_t)(first + k), 7, round + 3, (size_t)j);
    memset(dbuf, 0, sizeof dbuf);
    gasnet_all_wait_sync(gasnet_all_gather_alli_nb(nodes, dlist, slist, listlen, B, first, total, mode));
    for (int k = 0; k < IM; k++)
        for (size_t i = 0; i < total; i++)
            for (int j = 0; j < B; j++)
                CHECK(dbuf[k][i * B + j] == val((gex_Rank_t)i, 7, round + 3, (size_t)j), "gather_alli %d/%zu", k, i);
    barrier_all();
    /* exchangei: block i of image k's source to block k of image i's destination */
    for (int k = 0; k < IM; k++)
        for (size_t i = 0; i < total; i++)
            for (int j = 0; j < B; j++) sbuf[k][i * B + j] = val((gex_Rank_t)(first + k), (gex_Rank_t)i, round + 4, (size_t)j);
    memset(dbuf, 0, sizeof dbuf);
    gasnet_all_wait_sync(gasnet_all_exchangei_nb(nodes, dlist, slist, listlen, B, first, total, mode));
    for (int k = 0; k < IM; k++)
        for (size_t i = 0; i < total; i++)
            for (int j = 0; j < B; j++)
                CHECK(dbuf[k][i * B + j] == val((gex_Rank_t)i, (gex_Rank_t)(first + k), round + 4, (size_t)j),
                      "exchangei %d/%zu", k, i);
    barrier_all();
}

/* all_put / all_get and their "i" forms (the notes' generalised
 * collectives), under sync flags `flags`, partners as a list or (list 0)
 * a count: a ring (put to the right, get from the left) and an exchange
 * (every node to every node). Data in the segment at AP_OFF, checked on
 * the node whose memory it is and on the node that got it. */
#define AP_OFF (512u << 10)
static unsigned char *segs[16];
static void round_allput(int round, int flags, int list) {
    gex_Rank_t right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *mine = segs[me] + AP_OFF; /* this node's memory */
    uint32_t others[16], lp = left, rp = right;
    size_t no = 0;
    for (gex_Rank_t r = 0; r < n; r++)
        if (r != me) others[no++] = r;
    size_t ring_partners = n > 1 ? 1 : 0;
    unsigned char src[NB], got[NB];
    /* Ring put: my block into my right neighbour's memory; my partner is
     * my left neighbour. */
    for (size_t j = 0; j < NB; j++) src[j] = val(me, right, round, j);
    memset(mine, 0, NB);
    barrier_all();
    gasnet_all_handle_t h = gasnet_all_put_nb(right, segs[right] + AP_OFF, src, list ? &lp : NULL, ring_partners,
                                              NB, flags | GASNET_COLL_LOCAL);
    gasnet_all_wait_sync(h);
    barrier_all(); /* OUT_NOSYNC: others may still be writing */
    for (size_t j = 0; j < NB; j++) CHECK(mine[j] == val(left, me, round, j), "all_put byte %zu", j);
    /* Ring get: from my left neighbour's memory (what it holds now: its
     * left neighbour's block); my partner is my right neighbour. */
    memset(got, 0, NB);
    gasnet_all_get(got, left, segs[left] + AP_OFF, list ? &rp : NULL, ring_partners, NB, flags);
    gex_Rank_t ll = (left + n - 1) % n;
    for (size_t j = 0; j < NB; j++) CHECK(got[j] == val(ll, left, round, j), "all_get byte %zu", j);
    barrier_all();
    /* Exchange by puti: block k of every node's memory is node k's. */
    uint32_t nodes[16];
    void *dsts[16], *srcs[16];
    unsigned char blocks[16][NB];
    for (gex_Rank_t r = 0; r < n; r++) {
        nodes[r] = r;
        for (size_t j = 0; j < NB; j++) blocks[r][j] = val(me, r, round + 1, j);
        dsts[r] = segs[r] + AP_OFF + 4096 + me * NB;
        srcs[r] = blocks[r];
    }
    memset(mine + 4096, 0, 16 * NB);
    barrier_all();
    gasnet_all_puti(nodes, dsts, srcs, n, list ? others : NULL, no, NB, flags);
    barrier_all();
    for (gex_Rank_t k = 0; k < n; k++)
        for (size_t j = 0; j < NB; j++)
            CHECK(mine[4096 + k * NB + j] == val(k, me, round + 1, j), "all_puti from %u byte %zu", k, j);
    /* Exchange by geti: block `me` of every node's memory, my own. */
    unsigned char back[16][NB];
    memset(back, 0, sizeof back);
    for (gex_Rank_t r = 0; r < n; r++) {
        dsts[r] = back[r];
        srcs[r] = segs[r] + AP_OFF + 4096 + me * NB;
    }
    h = gasnet_all_geti_nb(dsts, nodes, srcs, n, list ? others : NULL, no, NB, flags);
    GASNET_BLOCKUNTIL(gasnet_all_try_sync(h) == GASNET_OK);
    for (gex_Rank_t r = 0; r < n; r++)
        for (size_t j = 0; j < NB; j++)
            CHECK(back[r][j] == val(me, r, round + 1, j), "all_geti from %u byte %zu", r, j);
    /* An empty list is allowed (no transfers, no partners). */
    gasnet_all_puti(NULL, NULL, NULL, 0, NULL, 0, NB, flags);
    barrier_all();
}

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_TM_t tm;
    CHECK(gex_Client_Init(&client, &ep, &tm, "TEST_COLL1", &argc, &argv, 0) == GASNET_OK, "init");
    me = gex_TM_QueryRank(tm);
    n = gex_TM_QuerySize(tm);
    the_tm = tm;
    CHECK(n <= 16, "ranks");
    gex_Segment_t seg;
    CHECK(gex_Segment_Attach(&seg, tm, 1 << 20) == GASNET_OK, "attach");
    unsigned char *heap = (unsigned char *)malloc(256 * NB);
    unsigned char *inseg = (unsigned char *)gex_Segment_QueryAddr(seg);
    static const int ins[3] = {GASNET_COLL_IN_NOSYNC, GASNET_COLL_IN_MYSYNC, GASNET_COLL_IN_ALLSYNC};
    static const int outs[3] = {GASNET_COLL_OUT_NOSYNC, GASNET_COLL_OUT_MYSYNC, GASNET_COLL_OUT_ALLSYNC};
    int round = 0;
    for (int i = 0; i < 3; i++)
        for (int o = 0; o < 3; o++)
            for (int single = 0; single < 2; single++) {
                int f = ins[i] | outs[o] | (single ? GASNET_COLL_SINGLE : GASNET_COLL_LOCAL);
                round_of(round, f, heap, round);
                round++;
                /* Before the buffers are reused: NOSYNC lets a peer still read them. */
                gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
            }
    /* Segment hints: every buffer in the segment. */
    for (int k = 0; k < 3; k++) {
        int hint = k == 0 ? GASNET_COLL_DST_IN_SEGMENT
                 : k == 1 ? GASNET_COLL_SRC_IN_SEGMENT
                          : GASNET_COLL_DST_IN_SEGMENT | GASNET_COLL_SRC_IN_SEGMENT;
        round_of(round, hint | GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_ALLSYNC, inseg, round);
        round++;
        gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    }
    round_i(round++, 0);
    round_i(round++, 1);
    /* all_put / all_get under the nine sync modes, partners listed and
     * counted. */
    for (gex_Rank_t r = 0; r < n; r++)
        gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, r, (void **)&segs[r], NULL, NULL, 0));
    for (int i = 0; i < 3; i++)
        for (int o = 0; o < 3; o++)
            for (int list = 0; list < 2; list++) round_allput(round += 2, ins[i] | outs[o], list);
    /* The blocking forms. */
    unsigned char b[NB];
    memset(b, me == 0 ? 9 : 0, NB);
    gasnet_all_broadcast(b, 0, b, NB, 0);
    for (int j = 0; j < NB; j++) CHECK(b[j] == 9, "blocking broadcast");
    unsigned char ga[16 * 4];
    uint32_t mine = 0xA000u + me;
    gasnet_all_gather_all(ga, &mine, 4, GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC);
    for (gex_Rank_t r = 0; r < n; r++) {
        uint32_t v;
        memcpy(&v, ga + 4 * r, 4);
        CHECK(v == 0xA000u + r, "blocking gather_all");
    }
    free(heap);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    printf("test_coll1: rank %u of %u: all checks passed\n", me, n);
    fflush(stdout);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    return 0;
}
