/* rma_polls.c: a thread that only makes blocking puts and gets (which the
 * header's inline route copies directly) still runs AM handlers: each rank
 * sends a Short request to itself and to its successor, then puts to and
 * gets from its successor in a loop, polling nowhere else, until both
 * handlers have run. The loop is bounded: 1,000,000 transfers without the
 * handlers running is an error. (The reference's testcontend waits so.) */
#include <gasnetex.h>
#include <stdio.h>

static volatile int arrived;
static void mark(gex_Token_t token) {
    (void)token;
    arrived++;
}

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_TM_t tm;
    gex_Segment_t seg;
    if (gex_Client_Init(&client, &ep, &tm, "RMA_POLLS", &argc, &argv, 0) != GASNET_OK) return 1;
    if (gex_Segment_Attach(&seg, tm, 65536) != GASNET_OK) return 1;
    gex_AM_Entry_t h[] = {{GEX_AM_INDEX_BASE, (gex_AM_Fn_t)mark, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "mark"}};
    gex_EP_RegisterHandlers(ep, h, 1);
    gex_Rank_t me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm), peer = (me + 1) % n;
    void *peerseg = NULL;
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, peer, &peerseg, NULL, NULL, 0));
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));

    gex_AM_RequestShort0(tm, me, GEX_AM_INDEX_BASE, 0);
    gex_AM_RequestShort0(tm, peer, GEX_AM_INDEX_BASE, 0);
    long i;
    uint64_t v = 0, back = 0;
    int bad = 0;
    for (i = 0; i < 1000000 && arrived < 2; i++) {
        v = ((uint64_t)me << 32) | (uint64_t)i;
        gex_RMA_PutBlocking(tm, peer, (char *)peerseg + 8 * me, &v, 8, 0);
        gex_RMA_GetBlocking(tm, &back, peer, (char *)peerseg + 8 * me, 8, 0);
        if (back != v) bad++;
    }
    int ok = arrived == 2 && bad == 0;
    if (!ok)
        printf("ERROR: rma_polls: rank %u: %d of 2 handlers ran in %ld transfers, %d bad reads\n", me,
               arrived, i, bad);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    if (ok) printf("rma_polls: rank %u of %u: all checks passed\n", me, n);
    fflush(stdout);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    return !ok;
}
