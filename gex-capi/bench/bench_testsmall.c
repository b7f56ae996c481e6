/*
 * bench_testsmall.c: the latency rows of gex-testsuite's bench-testsmall
 * (GASNet-EX testsmall's layout) for 8 B and 1 KiB, written against
 * gasnetex.h, to compare the C calls' cost with the Rust ones:
 * `gex-run -n 2 ./bench_testsmall_c [ITERS]`. Rank 0 measures against
 * rank 1 (itself with one rank). BENCH_SIZES=8 (a comma-separated list, up
 * to 1024) restricts the sizes, as it does for bench-testsmall.
 *
 * The local source and destination sit where the Rust benchmark's sit,
 * measured (gdb) on the machine the README's figures are from: 0x120 and
 * 0x530 bytes into a page each (its vectors come from malloc), here in
 * pages of their own, so that both programs copy between the same page
 * offsets (the segment starts a page) and neither transfer straddles two
 * pages. Until 2026-11-27 the C buffers were static arrays in .bss, and
 * the destination began 0xea0 bytes into a page, so a 1 KiB get wrote
 * across a page boundary. Moving them did not measurably change the C
 * loop's time (README, "From C": the one-rank 1 KiB get gap is open).
 */
#include <gasnetex.h>
#include <gasnet_tools.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gasnett_atomic_t done = gasnett_atomic_init(0);
static void fin(gex_Token_t t) {
    (void)t;
    gasnett_atomic_increment(&done, 0);
}

static void report(const char *op, size_t size, uint64_t iters, gasnett_tick_t ticks) {
    printf("P0: %-12s latency    %8zu B  %10.4f us\n", op, size,
           (double)gasnett_ticks_to_ns(ticks) / 1e3 / (double)iters);
}

/* Each timed loop of the blocking calls is a function of its own, as in
 * bench-testsmall (and GASNet's testsmall), so that the loop's invariants
 * live in registers rather than in main's stack frame; they count down,
 * as the Rust loops compile to (one register fewer). */
static GASNETT_NEVER_INLINE(time_put, gasnett_tick_t time_put(gex_TM_t tm, gex_Rank_t peer, void *dest,
                                                              const void *src, size_t s, uint64_t iters)) {
    gasnett_tick_t t0 = gasnett_ticks_now();
    for (uint64_t i = iters; i != 0; i--) gex_RMA_PutBlocking(tm, peer, dest, src, s, 0);
    return gasnett_ticks_now() - t0;
}
static GASNETT_NEVER_INLINE(time_get, gasnett_tick_t time_get(gex_TM_t tm, gex_Rank_t peer, void *dest, void *dst,
                                                              size_t s, uint64_t iters)) {
    gasnett_tick_t t0 = gasnett_ticks_now();
    for (uint64_t i = iters; i != 0; i--) gex_RMA_GetBlocking(tm, dst, peer, dest, s, 0);
    return gasnett_ticks_now() - t0;
}

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_TM_t tm;
    uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
    gex_Client_Init(&client, &ep, &tm, "TESTSMALL_C", &argc, &argv, 0);
    gex_Segment_t seg;
    gex_Segment_Attach(&seg, tm, 1 << 20);
    gex_AM_Entry_t h[1] = {{200, (gex_AM_Fn_t)fin, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "done"}};
    gex_EP_RegisterHandlers(ep, h, 1);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    gex_Rank_t me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm), peer = n > 1 ? 1 : 0;
    if (me == 0) {
        void *dest;
        uintptr_t size;
        gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, peer, &dest, NULL, &size, 0));
        enum { PAGE = 4096, MAXSIZE = 1024 };
        char *block = (char *)malloc(3 * PAGE);
        if (block == NULL) {
            fprintf(stderr, "bench_testsmall: out of memory\n");
            return 1;
        }
        char *page = (char *)(((uintptr_t)block + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
        char *src = page + 0x120, *dst = page + PAGE + 0x530;
        memset(src, 0x5a, MAXSIZE);
        memset(dst, 0, MAXSIZE);
        printf("bench_testsmall (C): %u ranks, rank 0 -> rank %u, conduit %s\n", n, peer, GASNET_CONDUIT_NAME_STR);
        size_t sizes[16] = {8, 1024};
        int nsizes = 2;
        const char *env = getenv("BENCH_SIZES");
        if (env != NULL && *env != '\0') {
            nsizes = 0;
            for (char *end; *env != '\0' && nsizes < 16; env = *end == ',' ? end + 1 : end) {
                unsigned long v = strtoul(env, &end, 10);
                if (end == env || v == 0 || v > MAXSIZE) {
                    fprintf(stderr, "bench_testsmall: BENCH_SIZES: sizes 1 to %d\n", MAXSIZE);
                    return 1;
                }
                sizes[nsizes++] = v;
            }
        }
        for (int k = 0; k < nsizes; k++) {
            size_t s = sizes[k];
            gex_RMA_PutBlocking(tm, peer, dest, src, s, 0);
            report("PutBlocking", s, iters, time_put(tm, peer, dest, src, s, iters));
            report("GetBlocking", s, iters, time_get(tm, peer, dest, dst, s, iters));
            gasnett_tick_t t0 = gasnett_ticks_now();
            for (uint64_t i = 0; i < iters; i++) {
                gex_RMA_PutNBI(tm, peer, dest, src, s, GEX_EVENT_DEFER, 0);
                gex_NBI_Wait(GEX_EC_PUT, 0);
            }
            report("PutNBI", s, iters, gasnett_ticks_now() - t0);
            t0 = gasnett_ticks_now();
            for (uint64_t i = 0; i < iters; i++) gex_Event_Wait(gex_RMA_GetNB(tm, dst, peer, dest, s, 0));
            report("GetNB", s, iters, gasnett_ticks_now() - t0);
        }
        free(block);
        for (gex_Rank_t r = 0; r < n; r++) gex_AM_RequestShort0(tm, r, 200, 0);
    }
    GASNET_BLOCKUNTIL(gasnett_atomic_read(&done, 0) != 0);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    return 0;
}
