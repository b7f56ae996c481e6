/*
 * bench_testlarge.c: gex-testsuite's bench-testlarge (GASNet-EX testlarge's
 * layout) written against gasnetex.h, to compare the C calls' bandwidth
 * with the Rust ones: `gex-run -n 2 ./bench_testlarge_c [MAX_ITERS]`.
 * Rank 0 measures against rank 1 (itself with one rank): throughput of
 * PutBlocking, GetBlocking, PutNBI, GetNBI, PutNB (every event waited at
 * once) and GetNB (batches of up to 64 in flight, each into its own
 * buffer) from 4 KiB to 4 MiB, about 2 GiB per figure (at least 20 and at
 * most MAX_ITERS operations, 20000 by default).
 */
#include <gasnetex.h>
#include <gasnet_tools.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEGSIZE (8u << 20)
#define MINSHIFT 12
#define MAXSHIFT 22

static gasnett_atomic_t done = gasnett_atomic_init(0);
static void fin(gex_Token_t t) {
    (void)t;
    gasnett_atomic_increment(&done, 0);
}

static void report(const char *op, size_t size, uint64_t iters, gasnett_tick_t ticks) {
    double ns = (double)gasnett_ticks_to_ns(ticks);
    printf("P0: %-12s throughput %8zu B  %10.1f MB/s  (%.4f us/op)\n", op, size,
           (double)size * (double)iters / ns * 1e3, ns / 1e3 / (double)iters);
}

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_TM_t tm;
    uint64_t max_iters = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000;
    gex_Client_Init(&client, &ep, &tm, "TESTLARGE_C", &argc, &argv, 0);
    gex_Segment_t seg;
    gex_Segment_Attach(&seg, tm, SEGSIZE);
    gex_AM_Entry_t h[1] = {{200, (gex_AM_Fn_t)fin, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "done"}};
    gex_EP_RegisterHandlers(ep, h, 1);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    gex_Rank_t me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm), peer = n > 1 ? 1 : 0;
    if (me == 0) {
        void *dest;
        gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, peer, &dest, NULL, NULL, 0));
        size_t max = (size_t)1 << MAXSHIFT;
        char *src = (char *)malloc(max), *dst = (char *)malloc(max);
        if (!src || !dst) {
            fprintf(stderr, "bench_testlarge: malloc\n");
            gasnet_exit(1);
        }
        memset(src, 0x5a, max);
        memset(dst, 0, max);
        printf("bench_testlarge (C): %u ranks, rank 0 -> rank %u, conduit %s\n", n, peer, GASNET_CONDUIT_NAME_STR);
        for (int shift = MINSHIFT; shift <= MAXSHIFT; shift++) {
            size_t s = (size_t)1 << shift;
            uint64_t it = ((uint64_t)2 << 30) / s;
            if (it < 20) it = 20;
            if (it > max_iters) it = max_iters;
            /* Warm up the path and the pages. */
            gex_RMA_PutBlocking(tm, peer, dest, src, s, 0);
            gex_RMA_GetBlocking(tm, dst, peer, dest, s, 0);
            gasnett_tick_t t0 = gasnett_ticks_now();
            for (uint64_t i = 0; i < it; i++) gex_RMA_PutBlocking(tm, peer, dest, src, s, 0);
            report("PutBlocking", s, it, gasnett_ticks_now() - t0);
            t0 = gasnett_ticks_now();
            for (uint64_t i = 0; i < it; i++) gex_RMA_GetBlocking(tm, dst, peer, dest, s, 0);
            report("GetBlocking", s, it, gasnett_ticks_now() - t0);
            t0 = gasnett_ticks_now();
            for (uint64_t i = 0; i < it; i++) gex_RMA_PutNBI(tm, peer, dest, src, s, GEX_EVENT_DEFER, 0);
            gex_NBI_Wait(GEX_EC_PUT, 0);
            report("PutNBI", s, it, gasnett_ticks_now() - t0);
            t0 = gasnett_ticks_now();
            for (uint64_t i = 0; i < it; i++) gex_RMA_GetNBI(tm, dst, peer, dest, s, 0);
            gex_NBI_Wait(GEX_EC_GET, 0);
            report("GetNBI", s, it, gasnett_ticks_now() - t0);
            gex_Event_t *evs = (gex_Event_t *)malloc(it * sizeof *evs);
            if (!evs) {
                fprintf(stderr, "bench_testlarge: malloc\n");
                gasnet_exit(1);
            }
            t0 = gasnett_ticks_now();
            for (uint64_t i = 0; i < it; i++) evs[i] = gex_RMA_PutNB(tm, peer, dest, src, s, GEX_EVENT_DEFER, 0);
            gex_Event_WaitAll(evs, it, 0);
            report("PutNB", s, it, gasnett_ticks_now() - t0);
            /* Many gets in flight, each into its own buffer (allocated and
             * touched before the clock starts). */
            size_t batch = 64;
            if (batch > it) batch = it;
            if (batch > ((size_t)64 << 20) / s) batch = ((size_t)64 << 20) / s;
            if (batch < 1) batch = 1;
            char **bufs = (char **)malloc(batch * sizeof *bufs);
            for (size_t b = 0; b < batch; b++) {
                if (!bufs || !(bufs[b] = (char *)malloc(s))) {
                    fprintf(stderr, "bench_testlarge: malloc\n");
                    gasnet_exit(1);
                }
                memset(bufs[b], 1, s);
            }
            t0 = gasnett_ticks_now();
            for (uint64_t left = it; left > 0;) {
                size_t k = left < batch ? (size_t)left : batch;
                for (size_t b = 0; b < k; b++) evs[b] = gex_RMA_GetNB(tm, bufs[b], peer, dest, s, 0);
                gex_Event_WaitAll(evs, k, 0);
                left -= k;
            }
            report("GetNB", s, it, gasnett_ticks_now() - t0);
            for (size_t b = 0; b < batch; b++) free(bufs[b]);
            free(bufs);
            free(evs);
        }
        free(src);
        free(dst);
        for (gex_Rank_t r = 0; r < n; r++) gex_AM_RequestShort0(tm, r, 200, 0);
    }
    GASNET_BLOCKUNTIL(gasnett_atomic_read(&done, 0) != 0);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    return 0;
}
