/*
 * test_compat.c: the names gex's C interface has for compatibility with
 * the GASNet-EX 2025.8.0 release, end to end on every rank of a job (1 to
 * 4 ranks, smp and udp): the release's versions and macros, error names
 * and descriptions of every code, the Active Message calls without [M]
 * (arguments and payloads checked at the target, replies at the sender,
 * exact counts), negotiated-payload Cancel and the _v2 Commits (cancelled
 * messages never arrive; a handler replies after cancelling a reply), the
 * progress-thread query under GEX_FLAG_DEFER_THREADS, GASNet-1 AM calls with
 * 16 arguments and the largest payloads to EX handlers, the GASNet-1 barrier
 * with gasnet_barrier and gasnet_barrier_result over matching and
 * mismatching ids, the segment and node queries, gasnet_memset_nbi, and
 * the wait mode's effect on how often a wait yields the processor
 * (sched_yield, interposed below, is counted). The client name is lower
 * case, as the release's own tests pass it. Written for gex.
 */
#define _GNU_SOURCE 1
#include <gasnet.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "test_compat: rank %u: check failed at line %d: ", myrank, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fprintf(stderr, " (%s)\n", #cond);                                                  \
            gasnet_exit(1);                                                                     \
        }                                                                                       \
    } while (0)

#define MAXRANKS 16
#define SEGSIZE (4u << 20)
/* Segment layout: Long landing slots per source rank, then a memset area. */
#define LSLOT 8192
#define LONG_OFF(src) ((size_t)(src) * LSLOT)
#define LONGREP_OFF(dst) ((size_t)(MAXRANKS + (dst)) * LSLOT)
#define NPLONG_OFF(src) ((size_t)(2 * MAXRANKS + (src)) * LSLOT)
#define MEMSET_OFF ((size_t)(3 * MAXRANKS) * LSLOT)
#define MEMSET_LEN 1000
#define G1REP_OFF(src) ((size_t)(512u << 10) + (size_t)(src) * (128u << 10))
#define G1REP_LEN (100u << 10)

static gex_Rank_t myrank, nranks;
static gex_Client_t myclient;
static gex_EP_t myep;
static gex_TM_t myteam;
static gex_Segment_t mysegment;
static char *myseg;
static char *peerseg[MAXRANKS];

/* ---- sched_yield, counted -------------------------------------------------- */

static volatile unsigned long yields;
/* The library's waits yield through sched_yield; this definition takes
 * its place in the program (static link) and counts the calls. */
int sched_yield(void) {
    yields++;
    return (int)syscall(SYS_sched_yield);
}

/* ---- Handlers ------------------------------------------------------------- */

enum {
    H_S0 = GEX_AM_INDEX_BASE,
    H_S3,
    H_S16,
    H_S2R,
    H_RS2,
    H_M2,
    H_RM2,
    H_L1,
    H_RL1,
    H_NPM,
    H_NPL,
    H_RNP,
    H_G1M16,
    H_G1RL16,
};

static gex_AM_Arg_t argv_of(gex_Rank_t src, gex_Rank_t dst, int which, int i) {
    return (gex_AM_Arg_t)(0x3c000000u ^ (src * 7919u + dst * 104729u + (unsigned)which * 131u +
                                         (unsigned)i * 31u));
}
static unsigned char byte_of(gex_Rank_t src, gex_Rank_t dst, int which, size_t j) {
    return (unsigned char)(src * 13u + dst * 7u + (unsigned)which * 3u + j * 11u);
}
static size_t len_of(int which) { return 100 + 37 * (size_t)which; }

static volatile int got_s0, got_s3, got_s16, got_s2r, got_rs2, got_m2, got_rm2, got_l1, got_rl1;
static volatile int got_npm, got_npl, got_rnp, got_g1m16, got_g1rl16;

static gex_Rank_t src_of(gex_Token_t t) {
    gex_Token_Info_t info;
    gex_TI_t ti = gex_Token_Info(t, &info, GEX_TI_SRCRANK);
    CHECK(ti & GEX_TI_SRCRANK, "no source rank");
    return info.gex_srcrank;
}

/* A payload: `n` bytes where `len` are expected, byte j being
 * byte_of(from, to, which, j); `what` names it in a failure. */
static void check_payload(const void *buf, size_t n, size_t len, gex_Rank_t from, gex_Rank_t to,
                          int which, const char *what) {
    const unsigned char *b = (const unsigned char *)buf;
    CHECK(n == len, "%s length %zu", what, n);
    for (size_t j = 0; j < n; j++)
        CHECK(b[j] == byte_of(from, to, which, j), "%s byte %zu", what, j);
}

static void h_s0(gex_Token_t t) {
    CHECK(src_of(t) < nranks, "source");
    got_s0++;
}
static void h_s3(gex_Token_t t, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_Rank_t s = src_of(t);
    CHECK(a0 == argv_of(s, myrank, 3, 0) && a1 == argv_of(s, myrank, 3, 1) &&
              a2 == argv_of(s, myrank, 3, 2),
          "Short3 arguments from %u", s);
    got_s3++;
}
static void h_s16(gex_Token_t t, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2,
                  gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6,
                  gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10,
                  gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14,
                  gex_AM_Arg_t a15) {
    gex_Rank_t s = src_of(t);
    gex_AM_Arg_t a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    for (int i = 0; i < 16; i++) CHECK(a[i] == argv_of(s, myrank, 16, i), "Short16 arg %d", i);
    got_s16++;
}
static void h_s2r(gex_Token_t t, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_Rank_t s = src_of(t);
    CHECK(a0 == argv_of(s, myrank, 2, 0) && a1 == argv_of(s, myrank, 2, 1), "Short2 args");
    got_s2r++;
    CHECK(gex_AM_ReplyShort(t, H_RS2, 0, a0 + 1, a1 + 1) == 0, "ReplyShort");
}
static void h_rs2(gex_Token_t t, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_Rank_t s = src_of(t);
    CHECK(a0 == argv_of(myrank, s, 2, 0) + 1 && a1 == argv_of(myrank, s, 2, 1) + 1,
          "Short reply args from %u", s);
    got_rs2++;
}
static void h_m2(gex_Token_t t, void *buf, size_t n, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_Rank_t s = src_of(t);
    check_payload(buf, n, len_of(5), s, myrank, 5, "Medium");
    CHECK(a0 == argv_of(s, myrank, 5, 0) && a1 == argv_of(s, myrank, 5, 1), "Medium args");
    got_m2++;
    unsigned char rep[512];
    for (size_t j = 0; j < len_of(6); j++) rep[j] = byte_of(myrank, s, 6, j);
    CHECK(gex_AM_ReplyMedium(t, H_RM2, rep, len_of(6), GEX_EVENT_NOW, 0, a1, a0) == 0,
          "ReplyMedium");
}
static void h_rm2(gex_Token_t t, void *buf, size_t n, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_Rank_t s = src_of(t);
    check_payload(buf, n, len_of(6), s, myrank, 6, "Medium reply");
    CHECK(a0 == argv_of(myrank, s, 5, 1) && a1 == argv_of(myrank, s, 5, 0), "reply args");
    got_rm2++;
}
static void h_l1(gex_Token_t t, void *buf, size_t n, gex_AM_Arg_t a0) {
    gex_Rank_t s = src_of(t);
    CHECK(buf == myseg + LONG_OFF(s), "Long landed at %p", buf);
    check_payload(buf, n, len_of(7), s, myrank, 7, "Long");
    CHECK(a0 == argv_of(s, myrank, 7, 0), "Long arg");
    got_l1++;
    CHECK(gex_AM_ReplyLong(t, H_RL1, buf, n, peerseg[s] + LONGREP_OFF(myrank), GEX_EVENT_NOW, 0,
                           a0 + 7) == 0,
          "ReplyLong");
}
static void h_rl1(gex_Token_t t, void *buf, size_t n, gex_AM_Arg_t a0) {
    gex_Rank_t s = src_of(t);
    CHECK(buf == myseg + LONGREP_OFF(s), "Long reply landed at %p", buf);
    check_payload(buf, n, len_of(7), myrank, s, 7, "Long reply");
    CHECK(a0 == argv_of(myrank, s, 7, 0) + 7, "Long reply arg");
    got_rl1++;
}
/* A negotiated-payload Medium request: checks it, then replies through a
 * reply Prepare that it first cancels, then prepares again and commits
 * with the arity-less _v2 form (the token stays usable after the Cancel). */
static void h_npm(gex_Token_t t, void *buf, size_t n, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    gex_Rank_t s = src_of(t);
    check_payload(buf, n, len_of(8), s, myrank, 8, "NP Medium");
    CHECK(a0 == argv_of(s, myrank, 8, 0) && a1 == argv_of(s, myrank, 8, 1), "NP args");
    got_npm++;
    gex_AM_SrcDesc_t sd = gex_AM_PrepareReplyMedium(t, NULL, 16, 64, NULL, 0, 1);
    CHECK(sd != GEX_AM_SRCDESC_NO_OP, "PrepareReplyMedium");
    memset(gex_AM_SrcDescAddr(sd), 0xee, 16);
    CHECK(gex_AM_CancelReplyMedium(sd, 0) == 0, "CancelReplyMedium");
    sd = gex_AM_PrepareReplyMedium(t, NULL, 16, 64, NULL, 0, 1);
    CHECK(sd != GEX_AM_SRCDESC_NO_OP, "PrepareReplyMedium after the Cancel");
    CHECK(gex_AM_SrcDescSize(sd) >= 16, "SrcDescSize");
    unsigned char *p = (unsigned char *)gex_AM_SrcDescAddr(sd);
    for (size_t j = 0; j < 16; j++) p[j] = byte_of(myrank, s, 9, j);
    CHECK(gex_AM_CommitReplyMedium_v2(sd, H_RNP, 16, GEX_FLAG_IMMEDIATE, a0 ^ a1) == 0,
          "CommitReplyMedium_v2");
}
static void h_rnp(gex_Token_t t, void *buf, size_t n, gex_AM_Arg_t a0) {
    gex_Rank_t s = src_of(t);
    check_payload(buf, n, 16, s, myrank, 9, "NP reply");
    CHECK(a0 == (argv_of(myrank, s, 8, 0) ^ argv_of(myrank, s, 8, 1)), "NP reply arg");
    got_rnp++;
}
static void h_npl(gex_Token_t t, void *buf, size_t n, gex_AM_Arg_t a0) {
    gex_Rank_t s = src_of(t);
    CHECK(buf == myseg + NPLONG_OFF(s), "NP Long landed at %p", buf);
    check_payload(buf, n, len_of(10), s, myrank, 10, "NP Long");
    CHECK(a0 == argv_of(s, myrank, 10, 0), "NP Long arg");
    got_npl++;
}

/* GASNet-1 calls to EX handlers: a 16-argument Medium request of
 * gasnet_AMMaxMedium() bytes, answered by a 16-argument Long reply of
 * G1REP_LEN bytes (above the Medium limit). */
#define A16(s, d) argv_of(s, d, 11, 0), argv_of(s, d, 11, 1), argv_of(s, d, 11, 2), argv_of(s, d, 11, 3), \
    argv_of(s, d, 11, 4), argv_of(s, d, 11, 5), argv_of(s, d, 11, 6), argv_of(s, d, 11, 7),              \
    argv_of(s, d, 11, 8), argv_of(s, d, 11, 9), argv_of(s, d, 11, 10), argv_of(s, d, 11, 11),            \
    argv_of(s, d, 11, 12), argv_of(s, d, 11, 13), argv_of(s, d, 11, 14), argv_of(s, d, 11, 15)
static unsigned char *g1_big;
static void check16(gex_Rank_t s, gex_Rank_t d, const gex_AM_Arg_t *a) {
    for (int i = 0; i < 16; i++) CHECK(a[i] == argv_of(s, d, 11, i), "GASNet-1 arg %d", i);
}
static void h_g1m16(gex_Token_t t, void *buf, size_t n, gex_AM_Arg_t a0, gex_AM_Arg_t a1,
                    gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5,
                    gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9,
                    gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13,
                    gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_Rank_t s = src_of(t);
    gex_AM_Arg_t a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    check16(s, myrank, a);
    check_payload(buf, n, gasnet_AMMaxMedium(), s, myrank, 11, "GASNet-1 Medium");
    got_g1m16++;
    for (size_t j = 0; j < G1REP_LEN; j++) g1_big[j] = byte_of(myrank, s, 12, j);
    CHECK(gasnet_AMReplyLong16(t, H_G1RL16, g1_big, G1REP_LEN, peerseg[s] + G1REP_OFF(myrank),
                               A16(myrank, s)) == GASNET_OK,
          "gasnet_AMReplyLong16");
}
static void h_g1rl16(gex_Token_t t, void *buf, size_t n, gex_AM_Arg_t a0, gex_AM_Arg_t a1,
                     gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5,
                     gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9,
                     gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13,
                     gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    gex_Rank_t s = src_of(t);
    gex_AM_Arg_t a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    check16(s, myrank, a);
    CHECK(buf == myseg + G1REP_OFF(s), "GASNet-1 Long reply landed at %p", buf);
    check_payload(buf, n, G1REP_LEN, s, myrank, 12, "GASNet-1 Long reply");
    got_g1rl16++;
}

static void barrier(void) { gex_Event_Wait(gex_Coll_BarrierNB(myteam, 0)); }

/* ---- Versions, macros, error names ------------------------------------------ */

#if GASNET_RELEASE_VERSION_MAJOR != 2025 || GASNET_RELEASE_VERSION_MINOR != 8 || \
    GASNET_RELEASE_VERSION_PATCH != 0
#error "gex provides the interface of GASNet-EX 2025.8.0"
#endif
#if GASNET_SPEC_VERSION_MAJOR != 1 || GASNET_SPEC_VERSION_MINOR != 8
#error "GASNet-1 spec 1.8"
#endif
#if GEX_SPEC_VERSION_MAJOR != 0 || GEX_SPEC_VERSION_MINOR != 19
#error "GASNet-EX document 0.19"
#endif
#if (GEX_FLAG_PEER_NEVER_SELF == GEX_FLAG_PEER_NEVER_NBRHD) || !(GEX_FLAG_DEFER_THREADS > 0)
#error "GEX_FLAG_* usable in #if"
#endif
#if !defined(_INCLUDED_GASNETEX_H) || !defined(_INCLUDED_GASNET_H) || SIZEOF_GEX_RMA_VALUE_T != 8
#error "inclusion markers, SIZEOF_GEX_RMA_VALUE_T"
#endif
#if GASNET_BARRIERFLAG_UNNAMED != 9 || GASNET_WAIT_SPIN != 0 || GASNET_WAIT_BLOCK != 1 || \
    GASNET_WAIT_SPINBLOCK != 2 || (GASNET_PAGESIZE % 4096) != 0
#error "values of the reference"
#endif

#define STR_(x) #x
#define STR(x) STR_(x)

static void macros_and_errors(void) {
    CHECK(strncmp(GASNET_CONFIG_STRING, "RELEASE=2025.8.0,SPEC=0.19,CONDUIT=", 35) == 0, "%s",
          GASNET_CONFIG_STRING);
    CHECK(strstr(GASNET_CONFIG_STRING, "THREADMODEL=PAR") != NULL, "%s", GASNET_CONFIG_STRING);
    CHECK(strcmp(GASNET_CORE_NAME_STR, "SMP") == 0 && strcmp(STR(GASNET_CORE_NAME), "SMP") == 0,
          "%s", GASNET_CORE_NAME_STR);
    CHECK(strcmp(GASNET_CORE_VERSION_STR, STR(GASNET_CORE_VERSION)) == 0, "core version");
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", GEX_VERSION_MAJOR, GEX_VERSION_MINOR, GEX_VERSION_PATCH);
    CHECK(strcmp(v, GEX_VERSION_STR) == 0, "%s vs %s", v, GEX_VERSION_STR);
    CHECK(sizeof(gex_RMA_Value_t) == SIZEOF_GEX_RMA_VALUE_T, "SIZEOF_GEX_RMA_VALUE_T");
    CHECK(sizeof(gasnet_memvec_t) == sizeof(gex_Memvec_t), "gasnet_memvec_t");

    /* Fetching and non-fetching operations, both ways. */
    const gex_OP_t nf[] = {GEX_OP_ADD, GEX_OP_MULT, GEX_OP_MIN, GEX_OP_MAX, GEX_OP_SUB, GEX_OP_INC,
                           GEX_OP_DEC, GEX_OP_AND,  GEX_OP_OR,  GEX_OP_XOR, GEX_OP_SET, GEX_OP_CAS};
    const gex_OP_t f[] = {GEX_OP_FADD, GEX_OP_FMULT, GEX_OP_FMIN, GEX_OP_FMAX,
                          GEX_OP_FSUB, GEX_OP_FINC,  GEX_OP_FDEC, GEX_OP_FAND,
                          GEX_OP_FOR,  GEX_OP_FXOR,  GEX_OP_SWAP, GEX_OP_FCAS};
    for (size_t i = 0; i < sizeof nf / sizeof nf[0]; i++) {
        CHECK(GEX_OP_TO_FETCHING(nf[i]) == f[i], "TO_FETCHING %zu", i);
        CHECK(GEX_OP_TO_NONFETCHING(f[i]) == nf[i], "TO_NONFETCHING %zu", i);
    }

    /* Every code: the reference's value, its name, a description. */
    struct {
        int code;
        const char *name;
        int value;
    } codes[] = {
        {GASNET_OK, "GASNET_OK", 0},
        {GASNET_ERR_NOT_INIT, "GASNET_ERR_NOT_INIT", 10001},
        {GASNET_ERR_RESOURCE, "GASNET_ERR_RESOURCE", 10002},
        {GASNET_ERR_BAD_ARG, "GASNET_ERR_BAD_ARG", 10003},
        {GASNET_ERR_NOT_READY, "GASNET_ERR_NOT_READY", 10004},
        {GASNET_ERR_BARRIER_MISMATCH, "GASNET_ERR_BARRIER_MISMATCH", 10005},
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        CHECK(codes[i].code == codes[i].value, "%s is %d", codes[i].name, codes[i].code);
        CHECK(strcmp(gasnet_ErrorName(codes[i].code), codes[i].name) == 0, "name of %d: %s",
              codes[i].code, gasnet_ErrorName(codes[i].code));
        const char *d = gasnet_ErrorDesc(codes[i].code);
        CHECK(d != NULL && strlen(d) > 5 && strcmp(d, codes[i].name) != 0, "description of %s",
              codes[i].name);
        for (size_t k = 0; k < i; k++)
            CHECK(strcmp(gasnet_ErrorDesc(codes[k].code), d) != 0, "distinct descriptions");
    }
    CHECK(_GASNET_ERR_BASE == 10000, "base");
    CHECK(strcmp(gasnet_ErrorName(12345), "GASNET_ERR_UNKNOWN") == 0, "unknown name");
    CHECK(gasnet_ErrorDesc(-1) != NULL && gasnet_ErrorDesc(-1)[0] != 0, "unknown description");

    /* The thread-info macros cost nothing and agree. */
    {
        GASNET_BEGIN_FUNCTION();
        gasnet_threadinfo_t ti = GASNET_GET_THREADINFO();
        GASNET_POST_THREADINFO(ti);
        CHECK(GASNET_GET_THREADINFO() == ti, "thread info");
    }
}

/* ---- Progress threads ------------------------------------------------------- */

static void progress_threads(void) {
    unsigned int count = 99;
    const gex_ProgressThreadInfo_t *info = (const gex_ProgressThreadInfo_t *)&count;
    gex_System_SetVerboseErrors(0);
    CHECK(gex_System_QueryProgressThreads(myclient, NULL, &info, 0) == GASNET_ERR_BAD_ARG,
          "NULL count_p");
    CHECK(gex_System_QueryProgressThreads(myclient, &count, &info, 1) == GASNET_ERR_BAD_ARG,
          "non-zero flags");
    gex_System_SetVerboseErrors(1);
    CHECK(gex_System_QueryProgressThreads(myclient, &count, &info, 0) == GASNET_OK, "query");
    CHECK(count == 0, "gex runs no progress threads, got %u", count);
    CHECK(gex_Client_QueryFlags(myclient) & GEX_FLAG_DEFER_THREADS, "client flags");
    CHECK(strcmp(gex_Client_QueryName(myclient), "test_compat") == 0, "lower-case name kept");
}

/* ---- Segment and node queries, QueryGexObjects ------------------------------ */

static void queries(void) {
    gex_Client_t c;
    gex_EP_t e;
    gex_TM_t tm;
    gex_Segment_t s;
    gasnet_QueryGexObjects(&c, &e, &tm, &s);
    CHECK(c == myclient && e == myep && tm == myteam && s == mysegment, "QueryGexObjects");
    gasnet_QueryGexObjects(NULL, NULL, NULL, NULL);

    static gasnet_seginfo_t si[MAXRANKS];
    CHECK(gasnet_getSegmentInfo(si, (int)nranks) == GASNET_OK, "getSegmentInfo");
    for (gex_Rank_t r = 0; r < nranks; r++) {
        void *owner = NULL;
        uintptr_t size = 0;
        gex_Event_Wait(gex_EP_QueryBoundSegmentNB(myteam, r, &owner, NULL, &size, 0));
        CHECK(si[r].addr == owner && si[r].size == size && size >= SEGSIZE, "seginfo %u", r);
    }

    uintptr_t local = gasnet_getMaxLocalSegmentSize(), global = gasnet_getMaxGlobalSegmentSize();
    CHECK(global > 0 && global <= local, "max sizes %zu %zu", (size_t)global, (size_t)local);

    static gasnet_nodeinfo_t ni[MAXRANKS];
    CHECK(gasnet_getNodeInfo(ni, (int)nranks) == GASNET_OK, "getNodeInfo");
    gex_RankInfo_t *nb, *hs;
    gex_Rank_t nb_n, nb_me, hs_n, hs_me, nset, nme, hset, hme;
    gex_System_QueryNbrhdInfo(&nb, &nb_n, &nb_me);
    gex_System_QueryHostInfo(&hs, &hs_n, &hs_me);
    gex_System_QueryMyPosition(&nset, &nme, &hset, &hme);
    CHECK(ni[myrank].supernode == nme && ni[myrank].host == hme, "my node info");
    gex_Rank_t same_nb = 0, same_host = 0;
    for (gex_Rank_t r = 0; r < nranks; r++) {
        CHECK(ni[r].supernode < nset && ni[r].host < hset, "node info %u in range", r);
        same_nb += ni[r].supernode == nme;
        same_host += ni[r].host == hme;
        void *owner = NULL, *localp = NULL;
        gex_Event_Wait(gex_EP_QueryBoundSegmentNB(myteam, r, &owner, &localp, NULL, 0));
        intptr_t want = localp ? (intptr_t)((uintptr_t)localp - (uintptr_t)owner) : 0;
        CHECK(ni[r].offset == want, "offset of %u", r);
    }
    CHECK(same_nb == nb_n && same_host == hs_n, "neighbourhood %u/%u, host %u/%u", same_nb, nb_n,
          same_host, hs_n);
    for (gex_Rank_t i = 0; i < nb_n; i++)
        CHECK(ni[nb[i].gex_jobrank].supernode == nme, "neighbour %u", nb[i].gex_jobrank);
    for (gex_Rank_t i = 0; i < hs_n; i++)
        CHECK(ni[hs[i].gex_jobrank].host == hme, "host mate %u", hs[i].gex_jobrank);
    /* The GASNet-1 rank queries answer for an EX client. */
    CHECK(gasnet_mynode() == myrank && gasnet_nodes() == nranks, "gasnet_mynode/nodes");
}

/* ---- Active Messages without [M] -------------------------------------------- */

static void arityless_ams(void) {
    static unsigned char pay[MAXRANKS][1024];
    for (gex_Rank_t d = 0; d < nranks; d++) {
        gex_AM_Arg_t a[16];
        for (int i = 0; i < 16; i++) a[i] = argv_of(myrank, d, 16, i);
        CHECK(gex_AM_RequestShort(myteam, d, H_S0, 0) == 0, "RequestShort 0");
        CHECK(gex_AM_RequestShort(myteam, d, H_S3, 0, argv_of(myrank, d, 3, 0),
                                  argv_of(myrank, d, 3, 1), argv_of(myrank, d, 3, 2)) == 0,
              "RequestShort 3");
        CHECK(gex_AM_RequestShort(myteam, d, H_S16, 0, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                  a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14],
                                  a[15]) == 0,
              "RequestShort 16");
        CHECK(gex_AM_RequestShort(myteam, d, H_S2R, 0, argv_of(myrank, d, 2, 0),
                                  argv_of(myrank, d, 2, 1)) == 0,
              "RequestShort 2");
        unsigned char *p = pay[d];
        for (size_t j = 0; j < len_of(5); j++) p[j] = byte_of(myrank, d, 5, j);
        CHECK(gex_AM_RequestMedium(myteam, d, H_M2, p, len_of(5), GEX_EVENT_NOW, 0,
                                   argv_of(myrank, d, 5, 0), argv_of(myrank, d, 5, 1)) == 0,
              "RequestMedium 2");
        unsigned char lp[1024];
        for (size_t j = 0; j < len_of(7); j++) lp[j] = byte_of(myrank, d, 7, j);
        CHECK(gex_AM_RequestLong(myteam, d, H_L1, lp, len_of(7), peerseg[d] + LONG_OFF(myrank),
                                 GEX_EVENT_NOW, 0, argv_of(myrank, d, 7, 0)) == 0,
              "RequestLong 1");
    }
    GASNET_BLOCKUNTIL(got_rs2 == (int)nranks && got_rm2 == (int)nranks &&
                      got_rl1 == (int)nranks);
    barrier();
    GASNET_BLOCKUNTIL(got_s0 == (int)nranks && got_s3 == (int)nranks &&
                      got_s16 == (int)nranks && got_s2r == (int)nranks &&
                      got_m2 == (int)nranks && got_l1 == (int)nranks);
    barrier();
    CHECK(got_s0 == (int)nranks && got_s3 == (int)nranks && got_s16 == (int)nranks &&
              got_s2r == (int)nranks && got_rs2 == (int)nranks && got_m2 == (int)nranks &&
              got_rm2 == (int)nranks && got_l1 == (int)nranks && got_rl1 == (int)nranks,
          "exact counts");
}

/* ---- Negotiated payloads: Cancel and the _v2 Commits ------------------------ */

static void npam(void) {
    for (gex_Rank_t d = 0; d < nranks; d++) {
        /* A cancelled Medium request never arrives (counts are exact). */
        gex_AM_SrcDesc_t sd =
            gex_AM_PrepareRequestMedium(myteam, d, NULL, len_of(8), len_of(8), NULL, 0, 2);
        CHECK(sd != GEX_AM_SRCDESC_NO_OP, "PrepareRequestMedium");
        memset(gex_AM_SrcDescAddr(sd), 0xdd, len_of(8));
        CHECK(gex_AM_CancelRequestMedium(sd, 0) == 0, "CancelRequestMedium");
        sd = gex_AM_PrepareRequestMedium(myteam, d, NULL, len_of(8), 2 * len_of(8), NULL, 0, 2);
        CHECK(sd != GEX_AM_SRCDESC_NO_OP && gex_AM_SrcDescSize(sd) >= len_of(8), "Prepare again");
        unsigned char *p = (unsigned char *)gex_AM_SrcDescAddr(sd);
        for (size_t j = 0; j < len_of(8); j++) p[j] = byte_of(myrank, d, 8, j);
        CHECK(gex_AM_CommitRequestMedium_v2(sd, H_NPM, len_of(8), GEX_FLAG_IMMEDIATE,
                                            argv_of(myrank, d, 8, 0),
                                            argv_of(myrank, d, 8, 1)) == 0,
              "CommitRequestMedium_v2");

        /* A Long: cancelled, then committed by the numbered _v2 form. */
        unsigned char lp[1024];
        for (size_t j = 0; j < len_of(10); j++) lp[j] = byte_of(myrank, d, 10, j);
        char *dst = peerseg[d] + NPLONG_OFF(myrank);
        sd = gex_AM_PrepareRequestLong(myteam, d, lp, len_of(10), len_of(10), dst, GEX_EVENT_NOW,
                                       0, 1);
        CHECK(sd != GEX_AM_SRCDESC_NO_OP && gex_AM_SrcDescAddr(sd) == lp, "PrepareRequestLong");
        CHECK(gex_AM_CancelRequestLong(sd, 0) == 0, "CancelRequestLong");
        sd = gex_AM_PrepareRequestLong(myteam, d, lp, len_of(10), len_of(10), dst, GEX_EVENT_NOW,
                                       0, 1);
        CHECK(sd != GEX_AM_SRCDESC_NO_OP, "PrepareRequestLong again");
        CHECK(gex_AM_CommitRequestLong1_v2(sd, H_NPL, len_of(10), dst, 0,
                                           argv_of(myrank, d, 10, 0)) == 0,
              "CommitRequestLong1_v2");
    }
    GASNET_BLOCKUNTIL(got_rnp == (int)nranks);
    barrier();
    GASNET_BLOCKUNTIL(got_npm == (int)nranks && got_npl == (int)nranks);
    barrier();
    CHECK(got_npm == (int)nranks && got_npl == (int)nranks && got_rnp == (int)nranks,
          "exact NP counts %d %d %d", got_npm, got_npl, got_rnp);
}

/* ---- The GASNet-1 barrier ----------------------------------------------------- */

static void barriers(void) {
    int id = -1, rc;
    CHECK(gasnet_barrier(5, 0) == GASNET_OK, "named");
    CHECK(gasnet_barrier_result(&id) == 0 && id == 5, "result of a named barrier: %d", id);
    CHECK(gasnet_barrier(77, GASNET_BARRIERFLAG_ANONYMOUS) == GASNET_OK, "anonymous");
    CHECK(gasnet_barrier_result(&id) != 0, "result of an anonymous barrier");
    CHECK(gasnet_barrier(0, GASNET_BARRIERFLAG_UNNAMED) == GASNET_OK, "unnamed");
    CHECK(gasnet_barrier_result(&id) != 0, "result of an unnamed barrier");
    /* Named notify, anonymous wait; anonymous notify, named wait. */
    gasnet_barrier_notify(-3, 0);
    CHECK(gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS) == GASNET_OK, "anon wait");
    CHECK(gasnet_barrier_result(&id) == 0 && id == -3, "result %d", id);
    gasnet_barrier_notify(9, GASNET_BARRIERFLAG_ANONYMOUS);
    CHECK(gasnet_barrier_wait(9, 0) == GASNET_OK, "named wait after an anonymous notify");
    CHECK(gasnet_barrier_result(&id) != 0, "every rank anonymous");
    /* A wait named differently from the barrier's name. */
    gasnet_barrier_notify(0, 0);
    CHECK(gasnet_barrier_wait(1, 0) == GASNET_ERR_BARRIER_MISMATCH, "id differs from notify");
    /* A MISMATCH flag on rank 0 reaches everyone. */
    rc = gasnet_barrier(0, myrank == 0 ? GASNET_BARRIERFLAG_MISMATCH : 0);
    CHECK(rc == GASNET_ERR_BARRIER_MISMATCH, "MISMATCH flag: %d", rc);
    if (nranks > 1) {
        /* Different names on rank 0 and the others. */
        rc = gasnet_barrier(myrank == 0 ? 1 : 2, 0);
        CHECK(rc == GASNET_ERR_BARRIER_MISMATCH, "different ids: %d", rc);
        /* Rank 0 anonymous, the others named 42; a named wait on rank 0. */
        gasnet_barrier_notify(42, myrank == 0 ? GASNET_BARRIERFLAG_ANONYMOUS : 0);
        do {
            rc = gasnet_barrier_try(42, 0);
        } while (rc == GASNET_ERR_NOT_READY);
        CHECK(rc == GASNET_OK, "try: %d", rc);
        CHECK(gasnet_barrier_result(&id) == 0 && id == 42, "named by the others: %d", id);
        /* The same with a mis-named wait on rank 0. */
        gasnet_barrier_notify(42, myrank == 0 ? GASNET_BARRIERFLAG_ANONYMOUS : 0);
        rc = gasnet_barrier_wait(myrank == 0 ? 41 : 42, 0);
        CHECK(rc == (myrank == 0 ? GASNET_ERR_BARRIER_MISMATCH : GASNET_OK), "mis-named: %d", rc);
    }
    gex_Coll_BarrierBlocking(myteam, 0);
    CHECK(gasnet_barrier(1000, 0) == GASNET_OK, "named after the mismatches");
}

/* ---- GASNet-1 AMs of the largest payloads ------------------------------------ */

static void g1_ams(void) {
    size_t mm = gasnet_AMMaxMedium();
    CHECK(mm == (gex_AM_LUBRequestMedium() < gex_AM_LUBReplyMedium() ? gex_AM_LUBRequestMedium()
                                                                      : gex_AM_LUBReplyMedium()),
          "gasnet_AMMaxMedium %zu", mm);
    CHECK(gasnet_AMMaxLongReply() == gex_AM_LUBReplyLong() && G1REP_LEN <= gex_AM_LUBReplyLong() &&
              G1REP_LEN > mm,
          "gasnet_AMMaxLongReply");
    unsigned char *p = (unsigned char *)malloc(mm);
    CHECK(p != NULL, "malloc");
    for (gex_Rank_t d = 0; d < nranks; d++) {
        for (size_t j = 0; j < mm; j++) p[j] = byte_of(myrank, d, 11, j);
        CHECK(gasnet_AMRequestMedium16(d, H_G1M16, p, mm, A16(myrank, d)) == GASNET_OK,
              "gasnet_AMRequestMedium16");
    }
    free(p);
    GASNET_BLOCKUNTIL(got_g1rl16 == (int)nranks);
    barrier();
    CHECK(got_g1m16 == (int)nranks && got_g1rl16 == (int)nranks, "GASNet-1 counts");
}

/* ---- gasnet_memset_nbi -------------------------------------------------------- */

static void memsets(void) {
    gex_Rank_t peer = (myrank + 1) % nranks;
    char *target = peerseg[peer] + MEMSET_OFF;
    gasnet_memset(peer, target, 0x11, MEMSET_LEN + 2);
    gasnet_memset_nbi(peer, target + 1, 0x5a, MEMSET_LEN);
    gasnet_wait_syncnbi_puts();
    unsigned char back[MEMSET_LEN + 2];
    gex_RMA_GetBlocking(myteam, back, peer, target, sizeof back, 0);
    CHECK(back[0] == 0x11 && back[MEMSET_LEN + 1] == 0x11, "memset_nbi stayed in its range");
    for (size_t j = 1; j <= MEMSET_LEN; j++) CHECK(back[j] == 0x5a, "memset_nbi byte %zu", j);
    barrier();
}

/* ---- Wait mode ---------------------------------------------------------------- */

static int polls_left;
static int spent(void) { return --polls_left <= 0; }

/* The yields of one GASNET_BLOCKUNTIL whose condition holds at its k-th
 * evaluation: k - 1 idle steps when nothing arrives meanwhile. */
static unsigned long wait_yields(int mode, int k) {
    CHECK(gasnet_set_waitmode(mode) == GASNET_OK, "set_waitmode(%d)", mode);
    polls_left = k;
    unsigned long before = yields;
    GASNET_BLOCKUNTIL(spent());
    return yields - before;
}

static void waitmode(void) {
    gex_System_SetVerboseErrors(0);
    CHECK(gasnet_set_waitmode(7) == GASNET_ERR_BAD_ARG, "bad mode");
    gex_System_SetVerboseErrors(1);
    cpu_set_t cpus;
    int ncpu = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    gex_RankInfo_t *hs;
    gex_Rank_t hs_n, hs_me;
    gex_System_QueryHostInfo(&hs, &hs_n, &hs_me);
    int over = (int)hs_n > ncpu;
    const int K = 3000;
    /* SPIN: the wait never gives up the processor (udp's own yield every
     * 64 idle polls of its network aside); BLOCK: after (nearly) every
     * idle poll; SPINBLOCK: not in a short wait unless the host is
     * oversubscribed, and after every idle poll beyond the spin limit
     * (2000, or 1 when oversubscribed). */
    unsigned long spin = wait_yields(GASNET_WAIT_SPIN, K);
    unsigned long block = wait_yields(GASNET_WAIT_BLOCK, K);
    unsigned long sb_short = wait_yields(GASNET_WAIT_SPINBLOCK, 200);
    unsigned long sb_long = wait_yields(GASNET_WAIT_SPINBLOCK, 2 * K);
    printf("test_compat: rank %u: yields in %d idle polls: SPIN %lu, BLOCK %lu; SPINBLOCK %lu in "
           "200, %lu in %d (%s)\n",
           myrank, K, spin, block, sb_short, sb_long, 2 * K,
           over ? "oversubscribed" : "a core per rank");
    CHECK(spin <= (unsigned long)K / 20, "SPIN yielded %lu times in %d polls", spin, K);
    CHECK(block >= (unsigned long)K / 2 && block <= (unsigned long)K + K / 10,
          "BLOCK yielded %lu in %d", block, K);
    if (over)
        CHECK(sb_short >= 100, "SPINBLOCK, oversubscribed: %lu yields in 200 polls", sb_short);
    else
        CHECK(sb_short <= 10, "SPINBLOCK: %lu yields in 200 polls", sb_short);
    CHECK(sb_long >= (unsigned long)(2 * K - 2000) / 2 && sb_long <= (unsigned long)(2 * K + K / 5),
          "SPINBLOCK: %lu yields in %d polls", sb_long, 2 * K);
    CHECK(gasnet_set_waitmode(GASNET_WAIT_SPINBLOCK) == GASNET_OK, "back to SPINBLOCK");
    barrier();
}

int main(int argc, char **argv) {
    CHECK(gex_Client_Init(&myclient, &myep, &myteam, "test_compat", &argc, &argv,
                          GEX_FLAG_DEFER_THREADS) == GASNET_OK,
          "gex_Client_Init with a lower-case name and GEX_FLAG_DEFER_THREADS");
    myrank = gex_TM_QueryRank(myteam);
    nranks = gex_TM_QuerySize(myteam);
    CHECK(nranks <= MAXRANKS, "at most %d ranks", MAXRANKS);
    gex_AM_Entry_t h[] = {
        {H_S0, (gex_AM_Fn_t)h_s0, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, NULL},
        {H_S3, (gex_AM_Fn_t)h_s3, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 3, NULL, NULL},
        {H_S16, (gex_AM_Fn_t)h_s16, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 16, NULL, NULL},
        {H_S2R, (gex_AM_Fn_t)h_s2r, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 2, NULL, NULL},
        {H_RS2, (gex_AM_Fn_t)h_rs2, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 2, NULL, NULL},
        {H_M2, (gex_AM_Fn_t)h_m2, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST, 2, NULL, NULL},
        {H_RM2, (gex_AM_Fn_t)h_rm2, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REPLY, 2, NULL, NULL},
        {H_L1, (gex_AM_Fn_t)h_l1, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REQUEST, 1, NULL, NULL},
        {H_RL1, (gex_AM_Fn_t)h_rl1, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REPLY, 1, NULL, NULL},
        {H_NPM, (gex_AM_Fn_t)h_npm, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST, 2, NULL, NULL},
        {H_NPL, (gex_AM_Fn_t)h_npl, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REQUEST, 1, NULL, NULL},
        {H_RNP, (gex_AM_Fn_t)h_rnp, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REPLY, 1, NULL, NULL},
        {H_G1M16, (gex_AM_Fn_t)h_g1m16, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST, 16, NULL, NULL},
        {H_G1RL16, (gex_AM_Fn_t)h_g1rl16, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REPLY, 16, NULL, NULL},
    };
    /* Before anyone can send to this rank's handlers. */
    g1_big = (unsigned char *)malloc(G1REP_LEN);
    CHECK(g1_big != NULL, "malloc");
    CHECK(gex_EP_RegisterHandlers(myep, h, sizeof h / sizeof h[0]) == GASNET_OK, "handlers");
    gex_Segment_t none = (gex_Segment_t)1;
    gasnet_QueryGexObjects(NULL, NULL, NULL, &none);
    CHECK(none == GEX_SEGMENT_INVALID, "no segment before attach");
    CHECK(gex_Segment_Attach(&mysegment, myteam, SEGSIZE) == GASNET_OK, "attach");
    myseg = (char *)gex_Segment_QueryAddr(mysegment);
    for (gex_Rank_t r = 0; r < nranks; r++) {
        void *owner = NULL;
        gex_Event_Wait(gex_EP_QueryBoundSegmentNB(myteam, r, &owner, NULL, NULL, 0));
        peerseg[r] = (char *)owner;
    }
    barrier();

    macros_and_errors();
    progress_threads();
    queries();
    arityless_ams();
    npam();
    barriers();
    g1_ams();
    memsets();
    waitmode();

    printf("test_compat: rank %u of %u: all checks passed\n", myrank, nranks);
    fflush(stdout);
    barrier();
    gasnet_exit(0);
    return 0;
}
