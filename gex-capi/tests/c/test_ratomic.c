/*
 * test_ratomic.c: gasnet_ratomic.h on every rank: domains of four types,
 * every rank hammering words on other ranks with FADD (NB, NBI and
 * blocking through a wait), an FCAS loop, FMAX, SET/GET of every rank's
 * slot, queries and client data; exact final values. Written for gex from
 * the GASNet-EX spec v0.17.
 */
#include <gasnet_ratomic.h>
#include <stdio.h>
#include <string.h>

static gex_Rank_t me, n;
#define CHECK(cond, ...)                                                               \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "test_ratomic: rank %u: check failed at line %d: ", me, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                              \
            fprintf(stderr, " (%s)\n", #cond);                                         \
            gasnet_exit(1);                                                            \
        }                                                                              \
    } while (0)

static void barrier(gex_TM_t tm) { gex_Event_Wait(gex_Coll_BarrierNB(tm, 0)); }

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_TM_t tm;
    CHECK(gex_Client_Init(&client, &ep, &tm, "TEST_RATOMIC", &argc, &argv, 0) == GASNET_OK, "init");
    me = gex_TM_QueryRank(tm);
    n = gex_TM_QuerySize(tm);
    gex_Segment_t seg;
    CHECK(gex_Segment_Attach(&seg, tm, 1 << 16) == GASNET_OK, "attach");
    char *base[64];
    CHECK(n <= 64, "ranks");
    for (gex_Rank_t r = 0; r < n; r++) {
        uintptr_t size;
        void *owner;
        gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, r, &owner, NULL, &size, 0));
        base[r] = (char *)owner;
    }
    memset(gex_Segment_QueryAddr(seg), 0, 1 << 16);
    gex_AD_t u64d, i32d, dbld, fltd;
    gex_AD_Create(&u64d, tm, GEX_DT_U64, GEX_OP_FADD | GEX_OP_ADD | GEX_OP_GET | GEX_OP_SET, 0);
    gex_AD_Create(&i32d, tm, GEX_DT_I32, GEX_OP_FCAS | GEX_OP_GET, 0);
    gex_AD_Create(&dbld, tm, GEX_DT_DBL, GEX_OP_FMAX | GEX_OP_SET | GEX_OP_GET, 0);
    gex_AD_Create(&fltd, tm, GEX_DT_FLT, GEX_OP_ADD | GEX_OP_GET, 0);
    CHECK(gex_AD_QueryDT(u64d) == GEX_DT_U64 && gex_AD_QueryTM(u64d) == tm, "queries");
    CHECK(gex_AD_QueryOps(i32d) == (GEX_OP_FCAS | GEX_OP_GET) && gex_AD_QueryFlags(i32d) == 0, "ops");
    gex_AD_SetCData(u64d, &me);
    CHECK(gex_AD_QueryCData(u64d) == &me, "cdata");
    barrier(tm); /* segments zeroed everywhere */

    /* FADD of (me + 1) to word 0 of every rank, K times, three ways. */
    const int K = 50;
    for (gex_Rank_t r = 0; r < n; r++) {
        uint64_t prev[50];
        gex_Event_t ev[50];
        for (int i = 0; i < K; i++) {
            if (i % 3 == 0) {
                ev[i] = gex_AD_OpNB_U64(u64d, &prev[i], r, base[r], GEX_OP_FADD, me + 1, 0, 0);
            } else if (i % 3 == 1) {
                CHECK(gex_AD_OpNBI_U64(u64d, NULL, r, (void *)(uintptr_t)0, GEX_OP_ADD, me + 1, 0,
                                       GEX_FLAG_PEER_SEG_OFFSET) == 0, "nbi");
                ev[i] = GEX_EVENT_INVALID;
            } else {
                ev[i] = gex_AD_OpNB_U64(u64d, &prev[i], r, base[r], GEX_OP_FADD, me + 1, 0, 0);
                gex_Event_Wait(ev[i]);
                ev[i] = GEX_EVENT_INVALID;
            }
        }
        gex_Event_WaitAll(ev, (size_t)K, 0);
        gex_NBI_Wait(GEX_EC_ALL, 0);
    }
    /* FCAS loop: +1 on rank n-1's int32 word at offset 64, M times. */
    const int M = 40;
    for (int i = 0; i < M; i++) {
        int32_t seen = 0, old;
        for (;;) {
            gex_Event_Wait(gex_AD_OpNB_I32(i32d, &old, n - 1, base[n - 1] + 64, GEX_OP_FCAS, seen, seen + 1, 0));
            if (old == seen) break;
            seen = old;
        }
    }
    /* FMAX into rank 0's double at 128; SET my slot on the right neighbour. */
    double mine = 0.5 * me, got = -1;
    gex_Event_Wait(gex_AD_OpNB_DBL(dbld, &got, 0, base[0] + 128, GEX_OP_FMAX, mine, 0, 0));
    gex_Rank_t right = (me + 1) % n;
    gex_Event_Wait(gex_AD_OpNB_DBL(dbld, NULL, right, base[right] + 256 + 8 * me, GEX_OP_SET, 1.25 + me, 0, 0));
    gex_AD_OpNBI_FLT(fltd, NULL, 0, base[0] + 1024, GEX_OP_ADD, 1.0f, 0, 0);
    gex_NBI_Wait(GEX_EC_RMW, 0);
    barrier(tm);

    uint64_t sum = 0;
    gex_Event_Wait(gex_AD_OpNB_U64(u64d, &sum, me, base[me], GEX_OP_GET, 0, 0, 0));
    CHECK(sum == (uint64_t)K * n * (n + 1) / 2, "FADD total %llu", (unsigned long long)sum);
    int32_t c = 0;
    gex_Event_Wait(gex_AD_OpNB_I32(i32d, &c, n - 1, base[n - 1] + 64, GEX_OP_GET, 0, 0, 0));
    CHECK(c == (int32_t)(M * (int)n), "FCAS total %d", c);
    double mx = 0;
    gex_Event_Wait(gex_AD_OpNB_DBL(dbld, &mx, 0, base[0] + 128, GEX_OP_GET, 0, 0, 0));
    CHECK(mx == 0.5 * (n - 1), "FMAX %g", mx);
    gex_Rank_t left = (me + n - 1) % n;
    double slot = 0;
    gex_Event_Wait(gex_AD_OpNB_DBL(dbld, &slot, me, base[me] + 256 + 8 * left, GEX_OP_GET, 0, 0, 0));
    CHECK(slot == 1.25 + left, "SET slot %g", slot);
    float f = 0;
    gex_Event_Wait(gex_AD_OpNB_FLT(fltd, &f, 0, base[0] + 1024, GEX_OP_GET, 0, 0, 0));
    CHECK(f == (float)n, "FLT ADD %g", (double)f);
    barrier(tm);
    gex_AD_Destroy(u64d);
    gex_AD_Destroy(i32d);
    gex_AD_Destroy(dbld);
    gex_AD_Destroy(fltd);
    /* A flag outside the AD_FAVOR_* hints is kept and reported back, as
     * the reference does (API.md, Leniencies), and the domain works. */
    {
        gex_AD_t offd;
        gex_AD_Create(&offd, tm, GEX_DT_U32, GEX_OP_FADD | GEX_OP_GET,
                      GEX_FLAG_PEER_SEG_OFFSET | GEX_FLAG_AD_FAVOR_REMOTE);
        CHECK(gex_AD_QueryFlags(offd) == (GEX_FLAG_PEER_SEG_OFFSET | GEX_FLAG_AD_FAVOR_REMOTE),
              "flags kept");
        gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
        gex_AD_Destroy(offd);
    }
    printf("test_ratomic: rank %u of %u: all checks passed\n", me, n);
    fflush(stdout);
    barrier(tm);
    return 0;
}
