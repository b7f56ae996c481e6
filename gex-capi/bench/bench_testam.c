/*
 * bench_testam.c: the AM ping-pong and flood of gex-testsuite's bench-testam
 * (GASNet-EX testam's layout), written against gasnetex.h, to compare the
 * cost of the C calls with the Rust ones: `gex-run -n 2 ./bench_testam_c
 * [ITERS]`. Rank 0 measures against rank 1 (itself with one rank); the
 * output lines match bench-testam's. As there, BENCH_ONLY=pingpong measures
 * just the Short ping-pong, BENCH_ONLY=oneway just the Short one-way
 * flood (of 20 * ITERS requests) and BENCH_ONLY=medium just the 1 KiB
 * Medium ping-pong.
 */
#include <gasnetex.h>
#include <gasnet_tools.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gex_TM_t tm;
static gasnett_atomic_t replies = gasnett_atomic_init(0), requests = gasnett_atomic_init(0),
                        done = gasnett_atomic_init(0);
enum { H_PING = 200, H_REQ, H_MED, H_DONE, H_PONG, H_MPONG };

static void ping(gex_Token_t t) { gex_AM_ReplyShort0(t, H_PONG, 0); }
static void pong(gex_Token_t t) {
    (void)t;
    gasnett_atomic_increment(&replies, 0);
}
static void req(gex_Token_t t) {
    (void)t;
    gasnett_atomic_increment(&requests, 0);
}
static void med(gex_Token_t t, void *buf, size_t n) { gex_AM_ReplyMedium0(t, H_MPONG, buf, n, GEX_EVENT_NOW, 0); }
static void mpong(gex_Token_t t, void *buf, size_t n) {
    (void)t, (void)buf, (void)n;
    gasnett_atomic_increment(&replies, 0);
}
/* -1: reply once every earlier request has run (they arrive in order);
 * otherwise the end of the benchmark. */
static void fin(gex_Token_t t, gex_AM_Arg_t a) {
    if (a == -1)
        gex_AM_ReplyShort0(t, H_PONG, 0);
    else
        gasnett_atomic_increment(&done, 0);
}

static void report(const char *name, uint64_t iters, gasnett_tick_t ticks) {
    printf("P0: %-44s %9.3f us\n", name, (double)gasnett_ticks_to_ns(ticks) / 1e3 / (double)iters);
}

static gasnett_tick_t pingpong(gex_Rank_t peer, int medium, uint64_t iters) {
    static char data[1024];
    gasnett_atomic_val_t start = gasnett_atomic_read(&replies, 0);
    gasnett_tick_t t0 = gasnett_ticks_now();
    for (uint64_t i = 1; i <= iters; i++) {
        if (medium)
            gex_AM_RequestMedium0(tm, peer, H_MED, data, sizeof data, GEX_EVENT_NOW, 0);
        else
            gex_AM_RequestShort0(tm, peer, H_PING, 0);
        GASNET_BLOCKUNTIL(gasnett_atomic_read(&replies, 0) == (gasnett_atomic_val_t)(start + i));
    }
    return gasnett_ticks_now() - t0;
}

/* The one-way flood of fl Short requests, timed until the target ran them. */
static void flood(gex_Rank_t peer, uint64_t fl) {
    gasnett_atomic_val_t start = gasnett_atomic_read(&replies, 0);
    gasnett_atomic_val_t start_req = gasnett_atomic_read(&requests, 0);
    gasnett_tick_t t0 = gasnett_ticks_now();
    for (uint64_t i = 0; i < fl; i++) gex_AM_RequestShort0(tm, peer, H_REQ, 0);
    if (peer == 0) {
        GASNET_BLOCKUNTIL(gasnett_atomic_read(&requests, 0) - start_req >= (gasnett_atomic_val_t)fl);
    } else {
        gex_AM_RequestShort1(tm, peer, H_DONE, 0, -1);
        GASNET_BLOCKUNTIL(gasnett_atomic_read(&replies, 0) == start + 1);
    }
    report("AMShort     flood     one-way   Req:", fl, gasnett_ticks_now() - t0);
}

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000;
    gex_Client_Init(&client, &ep, &tm, "TESTAM_C", &argc, &argv, 0);
    gex_Segment_t seg;
    gex_Segment_Attach(&seg, tm, 1 << 20);
    gex_AM_Entry_t h[] = {
        {H_PING, (gex_AM_Fn_t)ping, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "ping"},
        {H_REQ, (gex_AM_Fn_t)req, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "req"},
        {H_MED, (gex_AM_Fn_t)med, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST, 0, NULL, "med"},
        {H_DONE, (gex_AM_Fn_t)fin, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 1, NULL, "done"},
        {H_PONG, (gex_AM_Fn_t)pong, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 0, NULL, "pong"},
        {H_MPONG, (gex_AM_Fn_t)mpong, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REPLY, 0, NULL, "mpong"},
    };
    gex_EP_RegisterHandlers(ep, h, sizeof h / sizeof h[0]);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    gex_Rank_t me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm), peer = n > 1 ? 1 : 0;
    if (me == 0) {
        printf("bench_testam (C): %u ranks, rank 0 <-> rank %u, conduit %s\n", n, peer, GASNET_CONDUIT_NAME_STR);
        pingpong(peer, 0, 1000); /* warm up */
        const char *only = getenv("BENCH_ONLY");
        int pp = !only || !strcmp(only, "pingpong"), ow = !only || !strcmp(only, "oneway");
        if (pp) report("AMShort     ping-pong roundtrip ReqRep:", iters, pingpong(peer, 0, iters));
        if (ow) flood(peer, only ? iters * 20 : iters * 5);
        if (!only || !strcmp(only, "medium")) {
            uint64_t mi = iters / 4 > 100 ? iters / 4 : 100;
            report("AMMedium    ping-pong roundtrip ReqRep:     1024 B", mi, pingpong(peer, 1, mi));
        }
        for (gex_Rank_t r = 0; r < n; r++) gex_AM_RequestShort1(tm, r, H_DONE, 0, 1);
    }
    GASNET_BLOCKUNTIL(gasnett_atomic_read(&done, 0) != 0);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    return 0;
}
