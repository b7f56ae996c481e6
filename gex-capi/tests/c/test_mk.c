/*
 * test_mk.c: created endpoints and segments from C: gex_EP_Create, a
 * memory kind (host; a device class refused), a segment in library memory
 * and one over client memory, each bound to a created endpoint and
 * published, puts and gets through TM-pairs into the right neighbour's
 * created segments (checked where they land and on the way back), an
 * Active Message to a created endpoint (its table, its token info). Written
 * for gex from the GASNet-EX spec v0.17 and its memory-kinds proposal.
 */
#include <gasnet_mk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gex_Rank_t me, n;
#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "test_mk: rank %u: check failed at line %d: ", me, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, " (%s)\n", #cond);                                     \
            gasnet_exit(1);                                                        \
        }                                                                          \
    } while (0)

static gex_EP_t ep1;
static volatile int hits;
static void h_hit(gex_Token_t t, gex_AM_Arg_t a) {
    gex_Token_Info_t info;
    gex_Token_Info(t, &info, GEX_TI_ALL);
    gex_Rank_t left = (me + n - 1) % n;
    CHECK(info.gex_ep == ep1, "the created endpoint's table");
    CHECK(info.gex_srcrank == left && a == (gex_AM_Arg_t)(1000 + left), "source %u arg %d", info.gex_srcrank, a);
    hits++;
}

static void barrier(gex_TM_t tm) { gex_Event_Wait(gex_Coll_BarrierNB(tm, 0)); }

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep0;
    gex_TM_t tm;
    CHECK(gex_Client_Init(&client, &ep0, &tm, "TEST_MK", &argc, &argv, 0) == GASNET_OK, "init");
    me = gex_TM_QueryRank(tm);
    n = gex_TM_QuerySize(tm);
    gex_EP_t ep2;
    CHECK(gex_EP_Create(&ep1, client, GEX_EP_CAPABILITY_ALL, 0) == GASNET_OK, "ep1");
    CHECK(gex_EP_Create(&ep2, client, GEX_EP_CAPABILITY_RMA | GEX_EP_CAPABILITY_AM, 0) == GASNET_OK, "ep2");
    CHECK(gex_EP_QueryIndex(ep1) == 1 && gex_EP_QueryIndex(ep2) == 2, "indices");
    CHECK(gex_EP_QueryClient(ep1) == client && gex_EP_QuerySegment(ep1) == GEX_SEGMENT_INVALID, "ep1 queries");
    gex_AM_Entry_t e[1] = {{200, (gex_AM_Fn_t)h_hit, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 1, NULL, "hit"}};
    CHECK(gex_EP_RegisterHandlers(ep1, e, 1) == GASNET_OK, "register on ep1");

    gex_MK_Create_args_t args;
    memset(&args, 0, sizeof args);
    args.gex_class = GEX_MK_CLASS_HOST;
    gex_MK_t mk;
    CHECK(gex_MK_Create(&mk, client, &args, 0) == GASNET_OK, "host kind");
    args.gex_class = GEX_MK_CLASS_CUDA_UVA;
    args.gex_args.gex_class_cuda_uva.gex_CUdevice = 0;
    gex_MK_t cuda;
    gex_System_SetVerboseErrors(0);
    CHECK(gex_MK_Create(&cuda, client, &args, 0) == GASNET_ERR_BAD_ARG, "no CUDA here: a bad argument");
    memset(&args, 0, sizeof args);
    args.gex_class = GEX_MK_CLASS_HIP;
    CHECK(gex_MK_Create(&cuda, client, &args, 0) == GASNET_ERR_BAD_ARG, "no HIP here: a bad argument");
    memset(&args, 0, sizeof args);
    args.gex_class = GEX_MK_CLASS_ZE;
    CHECK(gex_MK_Create(&cuda, client, &args, 0) == GASNET_ERR_BAD_ARG, "no Level Zero here: a bad argument");
    gex_System_SetVerboseErrors(1);

    size_t len = 1 << 16;
    gex_Segment_t s1, s2;
    CHECK(gex_Segment_Create(&s1, client, NULL, len, mk, 0) == GASNET_OK, "library memory");
    char *mem = (char *)malloc(len);
    CHECK(mem != NULL, "malloc");
    memset(mem, 0, len);
    CHECK(gex_Segment_Create(&s2, client, mem, len, GEX_MK_HOST, 0) == GASNET_OK, "client memory");
    CHECK(gex_Segment_QueryAddr(s2) == mem && gex_Segment_QuerySize(s1) == len, "segment queries");
    CHECK(gex_EP_BindSegment(ep1, s1, 0) == GASNET_OK && gex_EP_BindSegment(ep2, s2, 0) == GASNET_OK, "bind");
    CHECK(gex_EP_QuerySegment(ep1) == s1 && gex_EP_QuerySegment(ep2) == s2, "bound");
    gex_EP_t eps[2] = {ep1, ep2};
    CHECK(gex_EP_PublishBoundSegment(tm, eps, 2, 0) == GASNET_OK, "publish");
    barrier(tm);

    gex_Rank_t right = (me + 1) % n, left = (me + n - 1) % n;
    for (gex_EP_Index_t idx = 1; idx <= 2; idx++) {
        gex_TM_t pair = gex_TM_Pair(ep0, idx);
        CHECK(pair == gex_TM_Pair(ep0, idx), "one handle per pair");
        void *owner;
        uintptr_t size;
        gex_Event_Wait(gex_EP_QueryBoundSegmentNB(pair, right, &owner, NULL, &size, 0));
        CHECK(owner != NULL && size == len, "published segment of endpoint %u", idx);
        unsigned char buf[3000];
        for (int j = 0; j < 3000; j++) buf[j] = (unsigned char)(me * 7 + j + idx);
        CHECK(gex_RMA_PutBlocking(pair, right, (char *)owner + 100, buf, sizeof buf, 0) == 0, "put");
        gex_Event_Wait(gex_RMA_PutNB(pair, right, (char *)owner + 5000, buf, 100, GEX_EVENT_DEFER, 0));
        unsigned char back[3000];
        memset(back, 0, sizeof back);
        gex_Event_Wait(gex_RMA_GetNB(pair, back, right, (char *)owner + 100, sizeof back, 0));
        CHECK(memcmp(back, buf, sizeof back) == 0, "get back through endpoint %u", idx);
    }
    barrier(tm);
    for (gex_EP_Index_t idx = 1; idx <= 2; idx++) {
        const unsigned char *m = (const unsigned char *)gex_Segment_QueryAddr(idx == 1 ? s1 : s2);
        for (int j = 0; j < 3000; j++) CHECK(m[100 + j] == (unsigned char)(left * 7 + j + idx), "landed %u/%d", idx, j);
        for (int j = 0; j < 100; j++) CHECK(m[5000 + j] == (unsigned char)(left * 7 + j + idx), "nb landed %u/%d", idx, j);
    }
    /* An AM from created endpoint 1 to created endpoint 1 on the right. */
    CHECK(gex_AM_RequestShort1(gex_TM_Pair(ep1, 1), right, 200, 0, (gex_AM_Arg_t)(1000 + me)) == 0, "am");
    GASNET_BLOCKUNTIL(hits == 1);
    barrier(tm);
    gex_Segment_Destroy(s1, 0);
    gex_Segment_Destroy(s2, 0);
    gex_MK_Destroy(mk, 0);
    printf("test_mk: rank %u of %u: all checks passed\n", me, n);
    fflush(stdout);
    barrier(tm);
    return 0;
}
