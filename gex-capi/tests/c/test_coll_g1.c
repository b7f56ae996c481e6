/*
 * test_coll_g1.c: the GASNet-1 collectives of gasnet_coll.h from C
 * (gasnet_coll_*): broadcast, scatter, gather, gather_all and exchange,
 * blocking, non-blocking and M forms, over GASNET_TEAM_ALL, a team in
 * reversed rank order and the parity halves of the job; every sync mode,
 * LOCAL and SINGLE, buffers in the segment (with the hints) and in the
 * heap, every root; handles synced by each gasnet_coll_*_sync call, by
 * the gasnet_all_* and gex_Event_* calls; AGGREGATE; OUT_ALLSYNC seen
 * from a peer through RMA; the team barrier's matches and mismatches;
 * gasnet_coll_init and the no-op tuning calls. Every byte checked on
 * every rank. With an argument, one erroneous call (every rank makes it),
 * which must end the job with the library's message naming the call:
 *   root     - a broadcast from image n (one past the last)
 *   nulldst  - a gather_all into NULL
 *   overlap  - an exchange whose source and destination overlap
 *   flags    - an unknown flag bit
 *   mlist    - a broadcastM with a NULL address list
 *   team     - a NULL team
 *   wait     - a team barrier wait with no notify (a split team)
 *   notify2  - two team barrier notifies (a split team)
 *   init     - gasnet_coll_init with reduction functions
 * Written for gex.
 */
#include <gasnet_coll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gex_Rank_t me, n;
#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "test_coll_g1: rank %u: check failed at line %d: ", me, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fprintf(stderr, " (%s)\n", #cond);                                            \
            gasnet_exit(1);                                                               \
        }                                                                                 \
    } while (0)

static unsigned char val(unsigned from, unsigned to, int round, size_t j) {
    return (unsigned char)(from * 37u + to * 11u + (unsigned)round * 5u + j * 3u + 1u);
}

static void team_barrier(gasnet_team_handle_t team) {
    CHECK(gasnet_coll_barrier(team, 0, GASNET_BARRIERFLAG_ANONYMOUS) == GASNET_OK, "barrier");
}

/* Syncs the `k` handles of `h` with the family `how` selects; checks
 * every entry is then invalid. */
static void sync_all(gasnet_coll_handle_t *h, size_t k, int how) {
    switch (how % 7) {
    case 0:
        for (size_t i = 0; i < k; i++) gasnet_coll_wait_sync(h[i]), h[i] = GASNET_COLL_INVALID_HANDLE;
        break;
    case 1:
        for (size_t i = 0; i < k; i++) {
            GASNET_BLOCKUNTIL(gasnet_coll_try_sync(h[i]) == GASNET_OK);
            h[i] = GASNET_COLL_INVALID_HANDLE;
        }
        break;
    case 2: gasnet_coll_wait_sync_all(h, k); break;
    case 3: GASNET_BLOCKUNTIL(gasnet_coll_try_sync_all(h, k) == GASNET_OK); break;
    case 4:
    case 5:
        for (;;) {
            size_t left = 0;
            for (size_t i = 0; i < k; i++) left += h[i] != GASNET_COLL_INVALID_HANDLE;
            if (!left) break;
            if (how % 7 == 4)
                gasnet_coll_wait_sync_some(h, k);
            else
                GASNET_BLOCKUNTIL(gasnet_coll_try_sync_some(h, k) == GASNET_OK);
        }
        break;
    default: gex_Event_WaitAll(h, k, 0); break;
    }
    for (size_t i = 0; i < k; i++) CHECK(h[i] == GASNET_COLL_INVALID_HANDLE, "handle %zu synced", i);
}

/* The blocks of one round: `area` holds src (tn + 1 blocks) then dst. */
struct bufs {
    unsigned char *bs, *bd; /* broadcast */
    unsigned char *ss, *sd; /* scatter: tn blocks -> 1 */
    unsigned char *gs, *gd; /* gather: 1 -> tn at the root */
    unsigned char *as, *ad; /* gather_all: 1 -> tn */
    unsigned char *xs, *xd; /* exchange: tn -> tn */
};

static struct bufs carve(unsigned char *area, size_t nb, gex_Rank_t tn) {
    struct bufs b;
    unsigned char *p = area;
    b.bs = p, p += nb;
    b.bd = p, p += nb;
    b.ss = p, p += tn * nb;
    b.sd = p, p += nb;
    b.gs = p, p += nb;
    b.gd = p, p += tn * nb;
    b.as = p, p += nb;
    b.ad = p, p += tn * nb;
    b.xs = p, p += tn * nb;
    b.xd = p;
    return b;
}
#define AREA(nb, tn) ((size_t)(nb) * (5 + 5 * (size_t)(tn)))

static void fill(struct bufs *b, size_t nb, gex_Rank_t tr, gex_Rank_t tn, gex_Rank_t root, int round) {
    for (size_t j = 0; j < nb; j++) {
        b->bs[j] = tr == root ? val(root, 99, round, j) : 0;
        b->gs[j] = val(tr, root, round + 2, j);
        b->as[j] = val(tr, 98, round + 3, j);
    }
    for (gex_Rank_t i = 0; i < tn; i++)
        for (size_t j = 0; j < nb; j++) {
            b->ss[i * nb + j] = tr == root ? val(root, i, round + 1, j) : 0;
            b->xs[i * nb + j] = val(tr, i, round + 4, j);
        }
    memset(b->bd, 0xEE, nb);
    memset(b->sd, 0xEE, nb);
    memset(b->gd, 0xEE, tn * nb);
    memset(b->ad, 0xEE, tn * nb);
    memset(b->xd, 0xEE, tn * nb);
}

static void verify(struct bufs *b, size_t nb, gex_Rank_t tr, gex_Rank_t tn, gex_Rank_t root, int round,
                   const char *what) {
    for (size_t j = 0; j < nb; j++) {
        CHECK(b->bd[j] == val(root, 99, round, j), "%s broadcast round %d byte %zu", what, round, j);
        CHECK(b->sd[j] == val(root, tr, round + 1, j), "%s scatter round %d byte %zu", what, round, j);
    }
    for (gex_Rank_t i = 0; i < tn; i++)
        for (size_t j = 0; j < nb; j++) {
            if (tr == root)
                CHECK(b->gd[i * nb + j] == val(i, root, round + 2, j), "%s gather round %d from %u", what, round, i);
            CHECK(b->ad[i * nb + j] == val(i, 98, round + 3, j), "%s gather_all round %d from %u", what, round, i);
            CHECK(b->xd[i * nb + j] == val(i, tr, round + 4, j), "%s exchange round %d from %u", what, round, i);
        }
}

/* One round of the five collectives over `team` with `flags`: blocking,
 * then non-blocking (all five in flight), then the M forms. Non-root
 * processes pass NULL for what they need not supply (LOCAL), or the
 * root's pointer they do not know (SINGLE: their own, never read). */
static void round_of(gasnet_team_handle_t team, int flags, unsigned char *area, size_t nb, int round) {
    gex_Rank_t tr = gex_TM_QueryRank(team), tn = gex_TM_QuerySize(team);
    gex_Rank_t root = (gex_Rank_t)round % tn;
    int single = (flags & GASNET_COLL_SINGLE) != 0;
    struct bufs b = carve(area, nb, tn);

    /* blocking */
    fill(&b, nb, tr, tn, root, round);
    team_barrier(team);
    gasnet_coll_broadcast(team, b.bd, root, tr == root || single ? b.bs : NULL, nb, flags);
    gasnet_coll_scatter(team, b.sd, root, tr == root || single ? b.ss : NULL, nb, flags);
    gasnet_coll_gather(team, root, tr == root || single ? b.gd : NULL, b.gs, nb, flags);
    gasnet_coll_gather_all(team, b.ad, b.as, nb, flags);
    gasnet_coll_exchange(team, b.xd, b.xs, nb, flags);
    team_barrier(team); /* OUT_NOSYNC: only now are all moves done */
    verify(&b, nb, tr, tn, root, round, "blocking");

    /* non-blocking, five in flight */
    round += 10;
    root = (gex_Rank_t)round % tn;
    fill(&b, nb, tr, tn, root, round);
    team_barrier(team);
    gasnet_coll_handle_t h[5];
    h[0] = gasnet_coll_broadcast_nb(team, b.bd, root, tr == root ? b.bs : NULL, nb, flags);
    h[1] = gasnet_coll_scatter_nb(team, b.sd, root, tr == root ? b.ss : NULL, nb, flags);
    h[2] = gasnet_coll_gather_nb(team, root, tr == root ? b.gd : NULL, b.gs, nb, flags);
    h[3] = gasnet_coll_gather_all_nb(team, b.ad, b.as, nb, flags);
    h[4] = gasnet_coll_exchange_nb(team, b.xd, b.xs, nb, flags);
    sync_all(h, 5, round);
    team_barrier(team);
    verify(&b, nb, tr, tn, root, round, "nb");

    /* M forms: LOCAL lists of one entry, SINGLE lists of one per image
     * (only this process's entry is read: the others are NULL). */
    round += 10;
    root = (gex_Rank_t)round % tn;
    fill(&b, nb, tr, tn, root, round);
    void **dl = (void **)calloc(tn, sizeof(void *)), **sl = (void **)calloc(tn, sizeof(void *));
    CHECK(dl && sl, "calloc");
    size_t mine = single ? tr : 0;
    team_barrier(team);
    dl[mine] = b.bd;
    gasnet_coll_broadcastM(team, dl, root, tr == root ? b.bs : NULL, nb, flags);
    dl[mine] = b.sd;
    h[0] = gasnet_coll_scatterM_nb(team, dl, root, tr == root ? b.ss : NULL, nb, flags);
    sl[mine] = b.gs;
    h[1] = gasnet_coll_gatherM_nb(team, root, tr == root ? b.gd : NULL, sl, nb, flags);
    void **dl2 = (void **)calloc(tn, sizeof(void *)), **sl2 = (void **)calloc(tn, sizeof(void *));
    void **dl3 = (void **)calloc(tn, sizeof(void *)), **sl3 = (void **)calloc(tn, sizeof(void *));
    CHECK(dl2 && sl2 && dl3 && sl3, "calloc");
    dl2[mine] = b.ad, sl2[mine] = b.as;
    h[2] = gasnet_coll_gather_allM_nb(team, dl2, sl2, nb, flags);
    dl3[mine] = b.xd, sl3[mine] = b.xs;
    gasnet_coll_exchangeM(team, dl3, sl3, nb, flags);
    sync_all(h, 3, round);
    team_barrier(team);
    verify(&b, nb, tr, tn, root, round, "M");
    /* gatherM / scatterM blocking, broadcastM / gather_allM / exchangeM non-blocking */
    round += 10;
    root = (gex_Rank_t)round % tn;
    fill(&b, nb, tr, tn, root, round);
    team_barrier(team);
    dl[mine] = b.bd;
    h[0] = gasnet_coll_broadcastM_nb(team, dl, root, tr == root ? b.bs : NULL, nb, flags);
    dl2[mine] = b.sd;
    gasnet_coll_scatterM(team, dl2, root, tr == root ? b.ss : NULL, nb, flags);
    gasnet_coll_gatherM(team, root, tr == root ? b.gd : NULL, sl, nb, flags);
    sl2[mine] = b.as, dl3[mine] = b.ad;
    gasnet_coll_gather_allM(team, dl3, sl2, nb, flags);
    void **dl4 = (void **)calloc(tn, sizeof(void *)), **sl4 = (void **)calloc(tn, sizeof(void *));
    CHECK(dl4 && sl4, "calloc");
    dl4[mine] = b.xd, sl4[mine] = b.xs;
    h[1] = gasnet_coll_exchangeM_nb(team, dl4, sl4, nb, flags);
    sync_all(h, 2, round + 1);
    team_barrier(team);
    verify(&b, nb, tr, tn, root, round, "M2");
    free(dl), free(sl), free(dl2), free(sl2), free(dl3), free(sl3), free(dl4), free(sl4);
}

/* AGGREGATE: every call but the last returns the invalid handle, and all
 * data is in place once the last one is synced. */
static void round_aggregate(gasnet_team_handle_t team, unsigned char *area, size_t nb, int round) {
    gex_Rank_t tr = gex_TM_QueryRank(team), tn = gex_TM_QuerySize(team);
    gex_Rank_t root = (gex_Rank_t)round % tn;
    struct bufs b = carve(area, nb, tn);
    int f = GASNET_COLL_LOCAL | GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC;
    fill(&b, nb, tr, tn, root, round);
    team_barrier(team);
    CHECK(gasnet_coll_broadcast_nb(team, b.bd, root, b.bs, nb, f | GASNET_COLL_AGGREGATE) ==
              GASNET_COLL_INVALID_HANDLE, "aggregate handle");
    CHECK(gasnet_coll_scatter_nb(team, b.sd, root, b.ss, nb, f | GASNET_COLL_AGGREGATE) == GASNET_COLL_INVALID_HANDLE,
          "aggregate handle");
    CHECK(gasnet_coll_gather_nb(team, root, b.gd, b.gs, nb, f | GASNET_COLL_AGGREGATE) == GASNET_COLL_INVALID_HANDLE,
          "aggregate handle");
    CHECK(gasnet_coll_gather_all_nb(team, b.ad, b.as, nb, f | GASNET_COLL_AGGREGATE) == GASNET_COLL_INVALID_HANDLE,
          "aggregate handle");
    gasnet_coll_wait_sync(gasnet_coll_exchange_nb(team, b.xd, b.xs, nb, f));
    verify(&b, nb, tr, tn, root, round, "aggregate");
    team_barrier(team);
}

/* OUT_ALLSYNC over the whole job: once this rank's call returns, every
 * rank's destination holds the data (read back from the next rank's
 * segment); IN_ALLSYNC: data put into a peer's source before the call is
 * what the call moves. */
#define ALLSYNC_OFF (512u << 10)
static void round_allsync(gex_TM_t tm, unsigned char **segs, unsigned char *mine, int round) {
    enum { NB = 24 };
    gex_Rank_t peer = (me + 1) % n, root = (gex_Rank_t)round % n;
    int f = GASNET_COLL_LOCAL | GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_ALLSYNC | GASNET_COLL_SRC_IN_SEGMENT |
            GASNET_COLL_DST_IN_SEGMENT;
    unsigned char tmp[16 * NB];
    size_t off_src = ALLSYNC_OFF, off_dst = ALLSYNC_OFF + 16 * NB;
    /* Every rank writes the root's source block for this rank's peer...
     * only the root's own block matters; the root's peer-predecessor
     * writes it remotely. */
    memset(mine + off_src, 0, 32 * NB);
    team_barrier(GASNET_TEAM_ALL);
    if (peer == root) {
        for (size_t j = 0; j < NB; j++) tmp[j] = val(me, root, round, j);
        gex_RMA_PutBlocking(tm, root, segs[root] + off_src, tmp, NB, 0);
    }
    gasnet_coll_broadcast(GASNET_TEAM_ALL, mine + off_dst, root, me == root ? mine + off_src : NULL, NB, f);
    memset(tmp, 0, NB);
    gex_RMA_GetBlocking(tm, tmp, peer, segs[peer] + off_dst, NB, 0);
    gex_Rank_t writer = (root + n - 1) % n;
    for (size_t j = 0; j < NB; j++)
        CHECK(tmp[j] == val(writer, root, round, j), "ALLSYNC broadcast seen at %u byte %zu", peer, j);
    team_barrier(GASNET_TEAM_ALL);
    /* exchange: the peer's destination complete when mine returns */
    for (gex_Rank_t i = 0; i < n; i++)
        for (size_t j = 0; j < NB; j++) mine[off_src + i * NB + j] = val(me, i, round + 1, j);
    gasnet_coll_exchange(GASNET_TEAM_ALL, mine + off_dst, mine + off_src, NB, f);
    gex_RMA_GetBlocking(tm, tmp, peer, segs[peer] + off_dst, n * NB, 0);
    for (gex_Rank_t i = 0; i < n; i++)
        for (size_t j = 0; j < NB; j++)
            CHECK(tmp[i * NB + j] == val(i, peer, round + 1, j), "ALLSYNC exchange seen at %u from %u", peer, i);
    team_barrier(GASNET_TEAM_ALL);
}

/* The team barrier: matches and each kind of mismatch. */
static void barriers(gasnet_team_handle_t team) {
    gex_Rank_t tr = gex_TM_QueryRank(team), tn = gex_TM_QuerySize(team);
    for (int i = 0; i < 20; i++) {
        gasnet_coll_barrier_notify(team, 1000 + i, 0);
        CHECK(gasnet_coll_barrier_wait(team, 1000 + i, 0) == GASNET_OK, "named barrier %d", i);
    }
    /* anonymous and named mixed match */
    int fl = tr % 2 ? GASNET_BARRIERFLAG_ANONYMOUS : 0;
    gasnet_coll_barrier_notify(team, 7, fl);
    CHECK(gasnet_coll_barrier_wait(team, 7, fl) == GASNET_OK, "mixed barrier");
    /* try until done */
    gasnet_coll_barrier_notify(team, 8, 0);
    int rc;
    GASNET_BLOCKUNTIL((rc = gasnet_coll_barrier_try(team, 8, 0)) != GASNET_ERR_NOT_READY);
    CHECK(rc == GASNET_OK, "try barrier: %d", rc);
    /* different ids: a mismatch everywhere (when there are two members) */
    gasnet_coll_barrier_notify(team, (int)tr, 0);
    rc = gasnet_coll_barrier_wait(team, (int)tr, 0);
    CHECK(rc == (tn > 1 ? GASNET_ERR_BARRIER_MISMATCH : GASNET_OK), "different ids: %d", rc);
    /* MISMATCH from member 0 */
    fl = tr == 0 ? GASNET_BARRIERFLAG_MISMATCH : 0;
    gasnet_coll_barrier_notify(team, 5, fl);
    rc = gasnet_coll_barrier_wait(team, 5, fl);
    CHECK(rc == GASNET_ERR_BARRIER_MISMATCH, "MISMATCH flag: %d", rc);
    /* wait's id differs from the notify's */
    gasnet_coll_barrier_notify(team, 3, 0);
    rc = gasnet_coll_barrier_wait(team, 4, 0);
    CHECK(rc == GASNET_ERR_BARRIER_MISMATCH, "wait id differs: %d", rc);
    /* the blocking form */
    CHECK(gasnet_coll_barrier(team, 9, 0) == GASNET_OK, "gasnet_coll_barrier");
    /* The wait's flags may differ from the notify's (the reference's
     * rule): a named wait matches the barrier's name or a barrier nobody
     * named, an anonymous one anything. gasnet_coll_barrier_result names
     * the last barrier. */
    int name = -1;
    gasnet_coll_barrier_notify(team, 0, GASNET_BARRIERFLAG_ANONYMOUS);
    CHECK(gasnet_coll_barrier_wait(team, 12, 0) == GASNET_OK, "named wait, nobody named");
    CHECK(gasnet_coll_barrier_result(team, &name) != 0 && name == -1, "result: anonymous");
    gasnet_coll_barrier_notify(team, 13, tr == 0 ? 0 : GASNET_BARRIERFLAG_ANONYMOUS);
    CHECK(gasnet_coll_barrier_wait(team, 13, 0) == GASNET_OK, "named wait, same name");
    CHECK(gasnet_coll_barrier_result(team, &name) == 0 && name == 13, "result: 13, got %d", name);
    gasnet_coll_barrier_notify(team, 13, tr == 0 ? 0 : GASNET_BARRIERFLAG_ANONYMOUS);
    rc = gasnet_coll_barrier_wait(team, 14, 0);
    CHECK(rc == GASNET_ERR_BARRIER_MISMATCH, "named wait, another name: %d", rc);
    gasnet_coll_barrier_notify(team, -15, 0);
    CHECK(gasnet_coll_barrier_wait(team, 99, GASNET_BARRIERFLAG_ANONYMOUS) == GASNET_OK, "anonymous wait");
    CHECK(gasnet_coll_barrier_result(team, &name) == 0 && name == -15, "result: -15, got %d", name);
    gasnet_coll_barrier_notify(team, 0, 0); /* id 0 is a name too */
    rc = gasnet_coll_barrier_wait(team, 1, 0);
    CHECK(rc == GASNET_ERR_BARRIER_MISMATCH, "name 0: %d", rc);
    gasnet_coll_barrier_notify(team, 0, GASNET_BARRIERFLAG_UNNAMED);
    CHECK(gasnet_coll_barrier_wait(team, 0, GASNET_BARRIERFLAG_UNNAMED) == GASNET_OK, "unnamed");
    name = -1;
    CHECK(gasnet_coll_barrier_result(team, &name) != 0 && name == -1, "result: unnamed");
    /* different ids: no name to report */
    if (tn > 1) {
        gasnet_coll_barrier_notify(team, (int)tr, 0);
        rc = gasnet_coll_barrier_wait(team, (int)tr, 0);
        CHECK(rc == GASNET_ERR_BARRIER_MISMATCH, "different ids again: %d", rc);
        CHECK(gasnet_coll_barrier_result(team, &name) != 0, "result after a mismatch");
    }
}

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_TM_t tm;
    CHECK(gex_Client_Init(&client, &ep, &tm, "TEST_COLL_G1", &argc, &argv, 0) == GASNET_OK, "init");
    me = gex_TM_QueryRank(tm);
    n = gex_TM_QuerySize(tm);
    CHECK(n <= 16, "ranks");
    CHECK(GASNET_TEAM_ALL == tm, "GASNET_TEAM_ALL is the primordial team");
    CHECK(gasnet_coll_team_size(GASNET_TEAM_ALL) == n, "team size");
    CHECK(gasnet_coll_team_rank2node(GASNET_TEAM_ALL, (int)me) == me, "rank2node");
    CHECK(gasnet_coll_team_node2rank(GASNET_TEAM_ALL, me) == me, "node2rank");
    gasnet_image_t *ones = (gasnet_image_t *)malloc(n * sizeof(gasnet_image_t));
    CHECK(ones != NULL, "malloc");
    for (gex_Rank_t i = 0; i < n; i++) ones[i] = 1;
    gasnet_coll_init(NULL, 0, NULL, 0, 0);
    gasnet_coll_init(ones, me, NULL, 0, 0);
    free(ones);
    gex_Segment_t seg;
    CHECK(gex_Segment_Attach(&seg, tm, 1 << 20) == GASNET_OK, "attach");
    unsigned char *inseg = (unsigned char *)gex_Segment_QueryAddr(seg);
    unsigned char *segs[16];
    for (gex_Rank_t r = 0; r < n; r++)
        gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, r, (void **)&segs[r], NULL, NULL, 0));

    /* Teams: all, reversed, parity halves. */
    gasnet_team_handle_t rev, half;
    gex_TM_Split(&rev, tm, 0, (int)(n - 1 - me), NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
    gex_TM_Split(&half, tm, (int)(me % 2), (int)me, NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
    CHECK(gex_TM_QueryRank(rev) == n - 1 - me, "reversed rank");
    if (argc > 1) {
        const char *what = argv[1];
        unsigned char *buf = inseg;
        gasnet_coll_handle_t h = GASNET_COLL_INVALID_HANDLE;
        if (!strcmp(what, "root")) h = gasnet_coll_broadcast_nb(GASNET_TEAM_ALL, buf, n, buf, 8, 0);
        else if (!strcmp(what, "nulldst")) h = gasnet_coll_gather_all_nb(GASNET_TEAM_ALL, NULL, buf, 8, 0);
        else if (!strcmp(what, "overlap")) h = gasnet_coll_exchange_nb(GASNET_TEAM_ALL, buf, buf + 4, 8, 0);
        else if (!strcmp(what, "flags")) h = gasnet_coll_scatter_nb(GASNET_TEAM_ALL, buf, 0, buf + 64, 8, 1 << 20);
        else if (!strcmp(what, "mlist")) h = gasnet_coll_broadcastM_nb(GASNET_TEAM_ALL, NULL, 0, buf, 8, 0);
        else if (!strcmp(what, "team")) h = gasnet_coll_gather_all_nb(NULL, buf + 64, buf, 8, 0);
        else if (!strcmp(what, "wait")) (void)gasnet_coll_barrier_wait(rev, 0, 0);
        else if (!strcmp(what, "notify2")) {
            gasnet_coll_barrier_notify(rev, 0, 0);
            gasnet_coll_barrier_notify(rev, 0, 0);
        } else if (!strcmp(what, "init")) {
            gasnet_coll_fn_entry_t fns[1] = {{NULL, 0}};
            gasnet_coll_init(NULL, 0, fns, 1, 0);
        } else
            CHECK(0, "unknown case %s", what);
        gasnet_coll_wait_sync(h);
        printf("test_coll_g1: %s was not refused\n", what);
        fflush(stdout);
        return 1;
    }
    gasnet_team_handle_t teams[3] = {GASNET_TEAM_ALL, rev, half};

    static const int ins[3] = {GASNET_COLL_IN_NOSYNC, GASNET_COLL_IN_MYSYNC, GASNET_COLL_IN_ALLSYNC};
    static const int outs[3] = {GASNET_COLL_OUT_NOSYNC, GASNET_COLL_OUT_MYSYNC, GASNET_COLL_OUT_ALLSYNC};
    static const size_t sizes[3] = {1, 100, 5000};
    size_t heap_len = AREA(5000, 16);
    unsigned char *heap = (unsigned char *)malloc(heap_len);
    CHECK(heap != NULL, "malloc");
    int round = 0;
    for (int t = 0; t < 3; t++) {
        gasnet_team_handle_t team = teams[t];
        for (int i = 0; i < 3; i++)
            for (int o = 0; o < 3; o++)
                for (int mode = 0; mode < 4; mode++) {
                    /* mode: 0 LOCAL heap, 1 SINGLE heap, 2 LOCAL segment + hints, 3 no address mode */
                    int f = ins[i] | outs[o];
                    if (mode == 0) f |= GASNET_COLL_LOCAL;
                    if (mode == 1) f |= GASNET_COLL_SINGLE;
                    if (mode == 2) f |= GASNET_COLL_LOCAL | GASNET_COLL_SRC_IN_SEGMENT | GASNET_COLL_DST_IN_SEGMENT;
                    size_t nb = sizes[(i + o + mode) % 3];
                    round_of(team, f, mode == 2 ? inseg : heap, nb, round);
                    round += 40;
                }
        /* no sync flags at all: MYSYNC */
        round_of(team, 0, heap, 64, round);
        round += 40;
        round_aggregate(team, heap, 33, round++);
        barriers(team);
    }
    for (int k = 0; k < 6; k++) round_allsync(tm, segs, inseg, round++);

    /* The notes' spelling runs the same code: a gasnet_all_ handle synced
     * by gasnet_coll_wait_sync, and the reverse. */
    {
        unsigned char a[8], d[16 * 8];
        for (int j = 0; j < 8; j++) a[j] = val(me, 0, round, (size_t)j);
        gasnet_coll_wait_sync(gasnet_all_gather_all_nb(d, a, 8, 0));
        for (gex_Rank_t i = 0; i < n; i++)
            for (int j = 0; j < 8; j++) CHECK(d[i * 8 + j] == val(i, 0, round, (size_t)j), "all/coll mix");
        memset(d, 0, sizeof d);
        gasnet_all_wait_sync(gasnet_coll_gather_all_nb(GASNET_TEAM_ALL, d, a, 8, 0));
        for (gex_Rank_t i = 0; i < n; i++)
            for (int j = 0; j < 8; j++) CHECK(d[i * 8 + j] == val(i, 0, round, (size_t)j), "coll/all mix");
    }
    gasnet_coll_dumpTuningState(NULL, GASNET_TEAM_ALL);
    gasnet_coll_dumpProfile(NULL, GASNET_TEAM_ALL);
    gasnet_coll_loadTuningState(NULL, GASNET_TEAM_ALL);
    free(heap);
    team_barrier(GASNET_TEAM_ALL);
    printf("test_coll_g1: rank %u of %u: all checks passed\n", me, n);
    fflush(stdout);
    team_barrier(GASNET_TEAM_ALL);
    return 0;
}
