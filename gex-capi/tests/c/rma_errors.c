/*
 * rma_errors.c: erroneous puts and gets that gasnetex.h's inline
 * direct route must hand to the library, which ends the job naming the
 * call. argv[1] names the case; the test checks the job fails with the
 * library's message (and that the memory past the segment is untouched
 * where the case writes there).
 *   handler  - a put from an AM handler (restricted context)
 *   prepare  - a get between an AM Prepare and its Commit
 *   bounds   - a put one byte past the end of rank 0's segment
 *   before   - a get whose range starts one byte before the segment
 *   rank     - a put to a rank outside the team
 *   flags    - an unknown flag bit
 *   valsize  - a value put of 9 bytes
 *   nbi      - an NBI put one byte past the end of rank 0's segment
 *   nb       - an NB get whose range starts one byte before the segment
 * Every case first does valid puts and gets of every inline form (blocking,
 * NBI, NB) through the same route and checks the data.
 */
#include <gasnetex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gex_TM_t tm;
static char *seg0;
static volatile int handled;
#define SEGSIZE (1u << 16)

static void in_handler(gex_Token_t t) {
    (void)t;
    uint64_t x = 1;
    gex_RMA_PutBlocking(tm, 0, seg0, &x, 8, 0);
    handled = 1;
}

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    const char *what = argc > 1 ? argv[1] : "";
    gex_Client_Init(&client, &ep, &tm, "RMA_ERRORS", &argc, &argv, 0);
    gex_Segment_t seg;
    gex_Segment_Attach(&seg, tm, SEGSIZE);
    gex_AM_Entry_t h[1] = {{GEX_AM_INDEX_BASE, (gex_AM_Fn_t)in_handler, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "put"}};
    gex_EP_RegisterHandlers(ep, h, 1);
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, 0, (void **)&seg0, NULL, NULL, 0));
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    uint64_t x = 42, y = 0;
    if (gex_RMA_PutBlocking(tm, 0, seg0 + 8, &x, 8, 0) != 0 ||
        gex_RMA_GetBlocking(tm, &y, 0, seg0 + 8, 8, 0) != 0 || y != 42) {
        fprintf(stderr, "rma_errors: the valid put and get failed\n");
        return 2;
    }
    uint64_t a = 7, b = 0;
    gex_RMA_PutNBI(tm, 0, seg0 + 16, &a, 8, GEX_EVENT_DEFER, 0);
    gex_NBI_Wait(GEX_EC_PUT, 0);
    gex_RMA_GetNBI(tm, &b, 0, seg0 + 16, 8, 0);
    gex_NBI_Wait(GEX_EC_GET, 0);
    if (b != 7) {
        fprintf(stderr, "rma_errors: the valid NBI put and get failed (%llu)\n", (unsigned long long)b);
        return 2;
    }
    gex_Event_t lc = GEX_EVENT_NO_OP;
    a = 9;
    gex_Event_Wait(gex_RMA_PutNB(tm, 0, seg0 + 24, &a, 8, &lc, 0));
    gex_Event_Wait(lc);
    gex_Event_Wait(gex_RMA_GetNB(tm, &b, 0, seg0 + 24, 8, 0));
    if (b != 9) {
        fprintf(stderr, "rma_errors: the valid NB put and get failed (%llu)\n", (unsigned long long)b);
        return 2;
    }
    /* Every size the inline copy treats apart (0, 1-3, 4-7, 8-16, more). */
    for (size_t n = 0; n <= 40; n++) {
        unsigned char out[40], back[40];
        for (size_t i = 0; i < n; i++) out[i] = (unsigned char)(n * 7 + i + (size_t)gex_TM_QueryRank(tm));
        memset(back, 0xee, sizeof back);
        char *at = seg0 + 64 + 64 * gex_TM_QueryRank(tm);
        gex_RMA_PutBlocking(tm, 0, at, out, n, 0);
        gex_RMA_GetBlocking(tm, back, 0, at, n, 0);
        if (memcmp(out, back, n) != 0 || (n < sizeof back && back[n] != 0xee)) {
            fprintf(stderr, "rma_errors: a %zu-byte put and get differ\n", n);
            return 2;
        }
    }
    printf("rma_errors: valid transfers done\n");
    fflush(stdout);
    if (strcmp(what, "handler") == 0) {
        gex_AM_RequestShort0(tm, gex_TM_QueryRank(tm), GEX_AM_INDEX_BASE, 0);
        GASNET_BLOCKUNTIL(handled);
    } else if (strcmp(what, "prepare") == 0) {
        gex_AM_SrcDesc_t sd = gex_AM_PrepareRequestMedium(tm, 0, NULL, 8, 8, NULL, 0, 0);
        gex_RMA_GetBlocking(tm, &y, 0, seg0, 8, 0);
        gex_AM_CommitRequestMedium0(sd, GEX_AM_INDEX_BASE, 8);
    } else if (strcmp(what, "bounds") == 0) {
        gex_RMA_PutBlocking(tm, 0, seg0 + SEGSIZE - 7, &x, 8, 0);
    } else if (strcmp(what, "before") == 0) {
        gex_RMA_GetBlocking(tm, &y, 0, seg0 - 1, 8, 0);
    } else if (strcmp(what, "rank") == 0) {
        gex_RMA_PutBlocking(tm, gex_TM_QuerySize(tm), seg0, &x, 8, 0);
    } else if (strcmp(what, "flags") == 0) {
        gex_RMA_PutBlocking(tm, 0, seg0, &x, 8, (gex_Flags_t)1 << 62);
    } else if (strcmp(what, "valsize") == 0) {
        gex_RMA_PutBlockingVal(tm, 0, seg0, 1, 9, 0);
    } else if (strcmp(what, "nbi") == 0) {
        gex_RMA_PutNBI(tm, 0, seg0 + SEGSIZE - 7, &x, 8, GEX_EVENT_DEFER, 0);
        gex_NBI_Wait(GEX_EC_PUT, 0);
    } else if (strcmp(what, "nb") == 0) {
        gex_Event_Wait(gex_RMA_GetNB(tm, &y, 0, seg0 - 1, 8, 0));
    }
    printf("rma_errors: %s was not refused\n", what);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    return 0;
}
