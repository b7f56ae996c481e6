// every_header.cc: C++17 including every header of gex's C interface, and
// using a little of each in a job.
#include <gasnetex.h>
#include <gasnet.h>
#include <gasnet_ratomic.h>
#include <gasnet_vis.h>
#include <gasnet_mk.h>
#include <gasnet_coll.h>
#include <gasnet_tools.h>
#include <cstdio>
#include <cstring>

static gasnett_atomic_t got = gasnett_atomic_init(0);

static void hit(gex_Token_t, void *buf, size_t nbytes, gex_AM_Arg_t a0) {
    if (nbytes == 5 && std::memcmp(buf, "hello", 5) == 0 && a0 == 7) gasnett_atomic_increment(&got, 0);
}

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_TM_t tm;
    if (gex_Client_Init(&client, &ep, &tm, "EVERY_HEADER", &argc, &argv, 0) != GASNET_OK) return 1;
    gex_AM_Entry_t e[1] = {{0, reinterpret_cast<gex_AM_Fn_t>(hit), GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST, 1,
                            nullptr, "hit"}};
    if (gex_EP_RegisterHandlers(ep, e, 1) != GASNET_OK) return 1;
    gex_Segment_t seg;
    if (gex_Segment_Attach(&seg, tm, 1 << 16) != GASNET_OK) return 1;
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    gex_Rank_t me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm);
    gasnett_tick_t t0 = gasnett_ticks_now();
    gex_AM_RequestMedium1(tm, (me + 1) % n, e[0].gex_index, "hello", 5, GEX_EVENT_NOW, 0, 7);
    GASNET_BLOCKUNTIL(gasnett_atomic_read(&got, 0) == 1);
    if (gasnett_ticks_now() < t0) return 1;
    uint64_t sum = 0, mine = me + 1;
    gex_Event_Wait(gex_Coll_ReduceToAllNB(tm, &sum, &mine, GEX_DT_U64, 8, 1, GEX_OP_ADD, nullptr, nullptr, 0));
    if (sum != uint64_t(n) * (n + 1) / 2) return 1;
    gex_AD_t ad;
    gex_AD_Create(&ad, tm, GEX_DT_U64, GEX_OP_FADD, 0);
    uint64_t before = 0;
    gex_Event_Wait(gex_AD_OpNB_U64(ad, &before, 0, nullptr, GEX_OP_FADD, 1, 0, GEX_FLAG_PEER_SEG_OFFSET));
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    uint64_t total = 0;
    if (me == 0) gex_Event_Wait(gex_AD_OpNB_U64(ad, &total, 0, nullptr, GEX_OP_FADD, 0, 0, GEX_FLAG_PEER_SEG_OFFSET));
    if (me == 0 && total != n) return 1;
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    gex_AD_Destroy(ad);
    char row[4] = {'a', 'b', 'c', 'd'};
    gex_Memvec_t l[1] = {{row, 4}}, r[1] = {{reinterpret_cast<void *>(uintptr_t(64)), 4}};
    if (gex_VIS_VectorPutBlocking(tm, (me + 1) % n, 1, r, 1, l, GEX_FLAG_PEER_SEG_OFFSET) != 0) return 1;
    gex_MK_Create_args_t mkargs = {};
    mkargs.gex_class = GEX_MK_CLASS_HOST;
    gex_MK_t mk;
    if (gex_MK_Create(&mk, client, &mkargs, 0) != GASNET_OK) return 1;
    gex_MK_Destroy(mk, 0);
    uint64_t all[64];
    gasnet_all_gather_all(all, &mine, 8, GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC | GASNET_COLL_LOCAL);
    for (gex_Rank_t r = 0; r < n && r < 64; r++)
        if (all[r] != r + 1) return 1;
    gasnet_hsl_t hsl = GASNET_HSL_INITIALIZER;
    gasnet_hsl_lock(&hsl);
    gasnet_hsl_unlock(&hsl);
    std::printf("every_header: rank %u of %u: all checks passed\n", me, n);
    std::fflush(stdout);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    return 0;
}
