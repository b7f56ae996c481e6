/* test_diag.c: gex's internal diagnostics from C (gasnet_diagnostic.h, which
 * gasnetex.h includes): the handler table's shape, a full run against the
 * successor rank with no errors, a run of no section, and the same run
 * twice in a row (the reply counters carry over between runs). */
#include <gasnetex.h>
#include <stdio.h>
#include <stdlib.h>

#define SEGSZ (256 * 1024)

static int failures;
#define CHECK(c)                                                                                     \
    do {                                                                                             \
        if (!(c)) {                                                                                  \
            printf("ERROR: test_diag: %s:%d: %s\n", __FILE__, __LINE__, #c);                        \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_TM_t tm;
    gex_Segment_t seg;
    gex_AM_Entry_t *table = NULL;
    int count = -1;
    gasnett_diagnostic_gethandlers(&table, &count);
    CHECK(table != NULL && count == 6);
    for (int i = 0; table && i < count; i++) {
        CHECK(table[i].gex_index == 250 + i);
        CHECK(table[i].gex_fnptr != NULL);
        CHECK(table[i].gex_name != NULL);
    }
    if (gex_Client_Init(&client, &ep, &tm, "TEST_DIAG", &argc, &argv, 0) != GASNET_OK) return 1;
    if (gex_Segment_Attach(&seg, tm, SEGSZ) != GASNET_OK) return 1;
    if (gex_EP_RegisterHandlers(ep, table, (size_t)count) != GASNET_OK) return 1;
    gex_Rank_t me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm);
    gex_Rank_t peer = (me + 1) % n;
    void *myseg = gex_Segment_QueryAddr(seg);
    void *peerseg = NULL;
    size_t peersize = 0;
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, peer, &peerseg, NULL, &peersize, 0));
    CHECK(peerseg != NULL && peersize >= SEGSZ);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));

    int errs = gasnett_run_diagnostics(300, 3, NULL, tm, myseg, peer, peerseg, 12345u + me);
    CHECK(errs == 0);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    /* No section named: nothing runs, nothing fails. */
    CHECK(gasnett_run_diagnostics(10, 1, "Q", tm, myseg, peer, peerseg, 1) == 0);
    /* Again, lower case, some sections: the counters carry over. */
    CHECK(gasnett_run_diagnostics(50, 2, "abce", tm, myseg, peer, peerseg, 99) == 0);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));

    if (failures == 0) printf("test_diag: rank %u of %u: all checks passed\n", me, n);
    fflush(stdout);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    return failures != 0;
}
