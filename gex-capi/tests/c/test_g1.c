/*
 * test_g1.c: a GASNet-1 program end to end (GASNet-1 spec v0.5): init (the
 * spec's seven-argument gasnet_init, or with -DINIT_ATTACH the pair
 * gasnet_init + gasnet_attach), a handler table with fixed and "don't care"
 * indices, Short/Medium/Long requests and replies with 0 to 16 arguments
 * to every node (arguments, payloads, landing addresses and sources checked
 * at the target, exact counts), an HSL taken in handlers, puts and gets of
 * every form with their synchronisation, value puts and gets, memset, an
 * access region, segment info, the named and anonymous split-phase
 * barrier, gasnet_exit. Written for gex from the GASNet-1 spec.
 */
#include <gasnet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gasnet_node_t me, n;
static gasnet_seginfo_t seg[64];

#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "test_g1: node %u: check failed at line %d: ", me, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, " (%s)\n", #cond);                                        \
            gasnet_exit(1);                                                           \
        }                                                                             \
    } while (0)

enum { K_S0, K_S2, K_M1, K_M16, K_L3, K_L16, NK };
#define SLOT 4096
#define REQ_AREA(src, k) ((char *)seg[me].addr + ((size_t)(src) * NK + (k)) * SLOT)
#define REP_AREA(dst, k) ((char *)seg[me].addr + (64u * NK + (size_t)(dst) * NK + (k)) * SLOT)
#define REQ_AT(node, src, k) ((char *)seg[node].addr + ((size_t)(src) * NK + (k)) * SLOT)
#define REP_AT(node, dst, k) ((char *)seg[node].addr + (64u * NK + (size_t)(dst) * NK + (k)) * SLOT)
#define RMA_AT(node) ((char *)seg[node].addr + 128u * NK * SLOT)

static gasnet_hsl_t lock = GASNET_HSL_INITIALIZER;
static int req_seen[64][NK], rep_seen[64][NK]; /* under lock */
static volatile int replies;

static gasnet_handlerarg_t av(gasnet_node_t from, gasnet_node_t to, int k, int i) {
    return (gasnet_handlerarg_t)(from * 1000003u + to * 7919u + (unsigned)k * 131u + (unsigned)i * 17u);
}
static unsigned char pb(gasnet_node_t from, gasnet_node_t to, int k, size_t j) {
    return (unsigned char)(from * 5u + to * 3u + (unsigned)k * 11u + j * 7u);
}
static size_t plen(int k) { return 300 + 100 * (size_t)k; }

/* Handlers may run as soon as this node's attach has begun its closing
 * barrier, before gasnet_init returns: they fill in what they need. */
static void ensure_info(void) {
    if (n == 0) {
        me = gasnet_mynode();
        n = gasnet_nodes();
        CHECK(gasnet_getSegmentInfo(seg, 64) == GASNET_OK, "segment info");
    }
}

static gasnet_node_t source(gasnet_token_t t) {
    ensure_info();
    gasnet_node_t s = 9999;
    CHECK(gasnet_AMGetMsgSource(t, &s) == GASNET_OK && s < n, "source %u", s);
    return s;
}
static void check_args(const gasnet_handlerarg_t *a, int cnt, gasnet_node_t from, gasnet_node_t to, int k) {
    for (int i = 0; i < cnt; i++) CHECK(a[i] == av(from, to, k, i), "kind %d arg %d", k, i);
}
static void check_pay(const void *buf, size_t nbytes, gasnet_node_t from, gasnet_node_t to, int k) {
    CHECK(nbytes == plen(k), "kind %d: %zu bytes", k, nbytes);
    for (size_t j = 0; j < nbytes; j++) CHECK(((const unsigned char *)buf)[j] == pb(from, to, k, j), "kind %d byte %zu", k, j);
}
static void seen_req(gasnet_node_t s, int k) {
    gasnet_hsl_lock(&lock);
    req_seen[s][k]++;
    gasnet_hsl_unlock(&lock);
}
static void seen_rep(gasnet_node_t s, int k) {
    gasnet_hsl_lock(&lock);
    rep_seen[s][k]++;
    gasnet_hsl_unlock(&lock);
    __atomic_fetch_add(&replies, 1, __ATOMIC_SEQ_CST);
}

/* Handler indices: requests fixed, replies "don't care". */
enum { H_S0 = 200, H_S2, H_M1, H_M16, H_L3, H_L16 };
/* The reply handlers' indices, as attach assigned them in the table (read
 * there: a handler may run before gasnet_init/gasnet_attach returns). */
static gasnet_handlerentry_t table[12];
#define H_RS16 (table[6].index)
#define H_RM16 (table[7].index)
#define H_RL15 (table[8].index)
#define H_RS0 (table[9].index)
#define H_RM1 (table[10].index)
#define H_RL16 (table[11].index)

static unsigned char rbuf[SLOT];
static void fill(gasnet_node_t from, gasnet_node_t to, int k) {
    for (size_t j = 0; j < plen(k); j++) rbuf[j] = pb(from, to, k, j);
}
#define A16(f, t, k) av(f, t, k, 0), av(f, t, k, 1), av(f, t, k, 2), av(f, t, k, 3), av(f, t, k, 4), av(f, t, k, 5), \
    av(f, t, k, 6), av(f, t, k, 7), av(f, t, k, 8), av(f, t, k, 9), av(f, t, k, 10), av(f, t, k, 11), av(f, t, k, 12), \
    av(f, t, k, 13), av(f, t, k, 14), av(f, t, k, 15)
#define A15(f, t, k) av(f, t, k, 0), av(f, t, k, 1), av(f, t, k, 2), av(f, t, k, 3), av(f, t, k, 4), av(f, t, k, 5), \
    av(f, t, k, 6), av(f, t, k, 7), av(f, t, k, 8), av(f, t, k, 9), av(f, t, k, 10), av(f, t, k, 11), av(f, t, k, 12), \
    av(f, t, k, 13), av(f, t, k, 14)

/* Requests. Each replies with another shape; the reply's arguments and
 * payload are those of (replier -> requester, kind). */
static void h_s0(gasnet_token_t t) {
    gasnet_node_t s = source(t);
    seen_req(s, K_S0);
    gasnet_AMReplyShort16(t, H_RS16, A16(me, s, K_S0));
}
static void h_s2(gasnet_token_t t, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1) {
    gasnet_node_t s = source(t);
    gasnet_handlerarg_t a[2] = {a0, a1};
    check_args(a, 2, s, me, K_S2);
    seen_req(s, K_S2);
    fill(me, s, K_S2);
    gasnet_AMReplyMedium16(t, H_RM16, rbuf, plen(K_S2), A16(me, s, K_S2));
}
static void h_m1(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t a0) {
    gasnet_node_t s = source(t);
    check_args(&a0, 1, s, me, K_M1);
    check_pay(buf, nbytes, s, me, K_M1);
    seen_req(s, K_M1);
    fill(me, s, K_M1);
    gasnet_AMReplyLong15(t, H_RL15, rbuf, plen(K_M1), REP_AT(s, me, K_M1), A15(me, s, K_M1));
}
static void h_m16(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1,
                  gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5,
                  gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9,
                  gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13,
                  gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_node_t s = source(t);
    gasnet_handlerarg_t a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    check_args(a, 16, s, me, K_M16);
    check_pay(buf, nbytes, s, me, K_M16);
    seen_req(s, K_M16);
    gasnet_AMReplyShort0(t, H_RS0);
}
static void h_l3(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1,
                 gasnet_handlerarg_t a2) {
    gasnet_node_t s = source(t);
    gasnet_handlerarg_t a[3] = {a0, a1, a2};
    check_args(a, 3, s, me, K_L3);
    CHECK(buf == REQ_AREA(s, K_L3), "Long landed at %p", buf);
    check_pay(buf, nbytes, s, me, K_L3);
    seen_req(s, K_L3);
    fill(me, s, K_L3);
    gasnet_AMReplyMedium1(t, H_RM1, rbuf, plen(K_L3), av(me, s, K_L3, 0));
}
static void h_l16(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1,
                  gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5,
                  gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9,
                  gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13,
                  gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_node_t s = source(t);
    gasnet_handlerarg_t a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    check_args(a, 16, s, me, K_L16);
    CHECK(buf == REQ_AREA(s, K_L16), "Long16 landed at %p", buf);
    check_pay(buf, nbytes, s, me, K_L16);
    seen_req(s, K_L16);
    fill(me, s, K_L16);
    gasnet_AMReplyLong16(t, H_RL16, rbuf, plen(K_L16), REP_AT(s, me, K_L16), A16(me, s, K_L16));
}

/* Replies. */
static void r_s16(gasnet_token_t t, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2,
                  gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6,
                  gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10,
                  gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14,
                  gasnet_handlerarg_t a15) {
    gasnet_node_t s = source(t);
    gasnet_handlerarg_t a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    check_args(a, 16, s, me, K_S0);
    seen_rep(s, K_S0);
}
static void r_m16(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1,
                  gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5,
                  gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9,
                  gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13,
                  gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_node_t s = source(t);
    gasnet_handlerarg_t a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    check_args(a, 16, s, me, K_S2);
    check_pay(buf, nbytes, s, me, K_S2);
    seen_rep(s, K_S2);
}
static void r_l15(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1,
                  gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5,
                  gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9,
                  gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13,
                  gasnet_handlerarg_t a14) {
    gasnet_node_t s = source(t);
    gasnet_handlerarg_t a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    check_args(a, 15, s, me, K_M1);
    CHECK(buf == REP_AREA(s, K_M1), "Long reply landed at %p", buf);
    check_pay(buf, nbytes, s, me, K_M1);
    seen_rep(s, K_M1);
}
static void r_s0(gasnet_token_t t) { seen_rep(source(t), K_M16); }
static void r_m1(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t a0) {
    gasnet_node_t s = source(t);
    check_args(&a0, 1, s, me, K_L3);
    check_pay(buf, nbytes, s, me, K_L3);
    seen_rep(s, K_L3);
}
static void r_l16(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1,
                  gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5,
                  gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9,
                  gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13,
                  gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_node_t s = source(t);
    gasnet_handlerarg_t a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    check_args(a, 16, s, me, K_L16);
    CHECK(buf == REP_AREA(s, K_L16), "Long16 reply landed at %p", buf);
    check_pay(buf, nbytes, s, me, K_L16);
    seen_rep(s, K_L16);
}

static void barrier(void) {
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    CHECK(gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS) == GASNET_OK, "barrier");
}

int main(int argc, char **argv) {
    const gasnet_handlerentry_t entries[12] = {
        {H_S0, (void (*)())h_s0},   {H_S2, (void (*)())h_s2},   {H_M1, (void (*)())h_m1},
        {H_M16, (void (*)())h_m16}, {H_L3, (void (*)())h_l3},   {H_L16, (void (*)())h_l16},
        {0, (void (*)())r_s16},     {0, (void (*)())r_m16},     {0, (void (*)())r_l15},
        {0, (void (*)())r_s0},      {0, (void (*)())r_m1},      {0, (void (*)())r_l16},
    };
    memcpy(table, entries, sizeof table);
    int nt = (int)(sizeof table / sizeof table[0]);
    uintptr_t segsize = 8u << 20;
    /* The one call the spec allows before gasnet_init: no hint yet. */
    uintptr_t hint_before = gasnet_getMaxNativeSegmentSize();
#ifdef INIT_ATTACH
    CHECK(gasnet_init(&argc, &argv) == GASNET_OK, "init");
    CHECK(gasnet_attach(table, nt, segsize, 0) == GASNET_OK, "attach");
#else
    CHECK(gasnet_init(&argc, &argv, table, nt, GASNET_SEGBASE_ANY, segsize, 0) == GASNET_OK, "init");
#endif
    ensure_info();
    CHECK(n <= 64, "nodes");
    for (int i = 0; i < 6; i++) CHECK(table[i].index == H_S0 + i, "fixed index kept");
    for (int i = 6; i < nt; i++) CHECK(table[i].index >= 128 && (table[i].index < H_S0 || table[i].index > H_L16), "assigned %u", table[i].index);
    CHECK(gasnet_getSegmentInfo(seg, 64) == GASNET_OK, "segment info");
    for (gasnet_node_t i = 0; i < n; i++) CHECK(seg[i].addr != NULL && seg[i].size == segsize, "segment %u", i);
    CHECK(gasnet_AMMaxArgs() == 16 && gasnet_AMMaxMedium() >= 480, "AM limits");
    CHECK(gasnet_AMMaxLongRequest() >= 512 && gasnet_AMMaxLongReply() >= 512, "Long limits");
    CHECK(gasnet_AMMaxMedium() == (gex_AM_LUBRequestMedium() < gex_AM_LUBReplyMedium() ? gex_AM_LUBRequestMedium()
                                                                                    : gex_AM_LUBReplyMedium()) &&
              gasnet_AMMaxLongRequest() == gex_AM_LUBRequestLong() &&
              gasnet_AMMaxLongReply() == gex_AM_LUBReplyLong(),
          "the GASNet-1 limits are the EX ones");
    CHECK(gasnet_getenv("PATH") != NULL, "getenv");
    CHECK(hint_before == GASNET_SEGSIZE_EVERYTHING, "segment size hint before init %lu", (unsigned long)hint_before);
    CHECK(gasnet_getMaxLocalSegmentSize() >= segsize && gasnet_getMaxLocalSegmentSize() < GASNET_SEGSIZE_EVERYTHING &&
              gasnet_getMaxNativeSegmentSize() == gasnet_getMaxLocalSegmentSize(),
          "segment size hint after init %lu", (unsigned long)gasnet_getMaxLocalSegmentSize());

    /* Active Messages to every node, including this one. */
    unsigned char p[SLOT];
    for (gasnet_node_t i = 0; i < n; i++) {
        gasnet_node_t d = (me + i) % n;
        gasnet_hold_interrupts();
        gasnet_resume_interrupts();
        CHECK(gasnet_AMRequestShort0(d, H_S0) == GASNET_OK, "short0");
        CHECK(gasnet_AMRequestShort2(d, H_S2, av(me, d, K_S2, 0), av(me, d, K_S2, 1)) == GASNET_OK, "short2");
        for (size_t j = 0; j < plen(K_M1); j++) p[j] = pb(me, d, K_M1, j);
        CHECK(gasnet_AMRequestMedium1(d, H_M1, p, plen(K_M1), av(me, d, K_M1, 0)) == GASNET_OK, "medium1");
        for (size_t j = 0; j < plen(K_M16); j++) p[j] = pb(me, d, K_M16, j);
        CHECK(gasnet_AMRequestMedium16(d, H_M16, p, plen(K_M16), A16(me, d, K_M16)) == GASNET_OK, "medium16");
        for (size_t j = 0; j < plen(K_L3); j++) p[j] = pb(me, d, K_L3, j);
        CHECK(gasnet_AMRequestLong3(d, H_L3, p, plen(K_L3), REQ_AT(d, me, K_L3), av(me, d, K_L3, 0),
                                    av(me, d, K_L3, 1), av(me, d, K_L3, 2)) == GASNET_OK, "long3");
        for (size_t j = 0; j < plen(K_L16); j++) p[j] = pb(me, d, K_L16, j);
        CHECK(gasnet_AMRequestLongAsync16(d, H_L16, p, plen(K_L16), REQ_AT(d, me, K_L16), A16(me, d, K_L16)) ==
                  GASNET_OK, "long16");
    }
    GASNET_BLOCKUNTIL(__atomic_load_n(&replies, __ATOMIC_SEQ_CST) == (int)n * NK);
    barrier();
    for (gasnet_node_t s = 0; s < n; s++)
        for (int k = 0; k < NK; k++) {
            CHECK(req_seen[s][k] == 1, "request %d from %u seen %d times", k, s, req_seen[s][k]);
            CHECK(rep_seen[s][k] == 1, "reply %d from %u seen %d times", k, s, rep_seen[s][k]);
        }

    /* Puts and gets to the right neighbour. */
    gasnet_node_t r = (me + 1) % n, l = (me + n - 1) % n;
    size_t big = 100000;
    unsigned char *src = (unsigned char *)malloc(big), *dst = (unsigned char *)malloc(big);
    for (int round = 0; round < 5; round++) {
        for (size_t j = 0; j < big; j++) src[j] = (unsigned char)(me + j * 3 + (size_t)round);
        char *at = RMA_AT(r);
        switch (round) {
        case 0: gasnet_put(r, at, src, big); break;
        case 1: gasnet_put_bulk(r, at, src, big); break;
        case 2: gasnet_wait_syncnb(gasnet_put_nb(r, at, src, big)); break;
        case 3: {
            gasnet_handle_t h[2] = {gasnet_put_nb_bulk(r, at, src, big / 2),
                                    gasnet_put_nb(r, at + big / 2, src + big / 2, big - big / 2)};
            gasnet_wait_syncnb_all(h, 2);
            break;
        }
        case 4:
            gasnet_put_nbi(r, at, src, big / 2);
            gasnet_put_nbi_bulk(r, at + big / 2, src + big / 2, big - big / 2);
            gasnet_wait_syncnbi_puts();
            break;
        }
        barrier();
        const unsigned char *mine = (const unsigned char *)RMA_AT(me);
        for (size_t j = 0; j < big; j++) CHECK(mine[j] == (unsigned char)(l + j * 3 + (size_t)round), "put round %d byte %zu", round, j);
        memset(dst, 0, big);
        switch (round) {
        case 0: gasnet_get(dst, r, at, big); break;
        case 1: gasnet_get_bulk(dst, r, at, big); break;
        case 2: {
            gasnet_handle_t h = gasnet_get_nb(dst, r, at, big);
            GASNET_BLOCKUNTIL(gasnet_try_syncnb(h) == GASNET_OK);
            break;
        }
        case 3: {
            gasnet_handle_t h[2] = {gasnet_get_nb_bulk(dst, r, at, big / 2),
                                    gasnet_get_nb(dst + big / 2, r, at + big / 2, big - big / 2)};
            gasnet_wait_syncnb_some(h, 2);
            GASNET_BLOCKUNTIL(gasnet_try_syncnb_all(h, 2) == GASNET_OK);
            break;
        }
        case 4:
            gasnet_get_nbi(dst, r, at, big / 2);
            gasnet_get_nbi_bulk(dst + big / 2, r, at + big / 2, big - big / 2);
            GASNET_BLOCKUNTIL(gasnet_try_syncnbi_gets() == GASNET_OK);
            break;
        }
        for (size_t j = 0; j < big; j++) CHECK(dst[j] == src[j], "get round %d byte %zu", round, j);
        barrier();
    }
    char *v = RMA_AT(r) + big;
    gasnet_put_val(r, v, 0x0102030405060708ull + me, 8);
    CHECK(gasnet_get_val(r, v, 8) == 0x0102030405060708ull + me, "value");
    gasnet_wait_syncnb(gasnet_put_nb_val(r, v + 8, 77, 4));
    gasnet_put_nbi_val(r, v + 12, 78, 2);
    gasnet_wait_syncnbi_all();
    gasnet_valget_handle_t vh = gasnet_get_nb_val(r, v + 8, 4);
    CHECK(gasnet_wait_syncnb_valget(vh) == 77, "nb value");
    CHECK(gasnet_get_val(r, v + 12, 2) == 78, "nbi value");
    gasnet_memset(r, v + 16, 0xab, 32);
    gasnet_wait_syncnb(gasnet_memset_nb(r, v + 48, 0xcd, 16));
    for (int j = 0; j < 32; j++) CHECK(gasnet_get_val(r, v + 16 + j, 1) == 0xab, "memset %d", j);
    for (int j = 0; j < 16; j++) CHECK(gasnet_get_val(r, v + 48 + j, 1) == 0xcd, "memset_nb %d", j);
    gasnet_begin_nbi_accessregion();
    for (int j = 0; j < 4; j++) gasnet_put_nbi_val(r, v + 64 + 8 * j, 1000u + (unsigned)j, 8);
    gasnet_wait_syncnb(gasnet_end_nbi_accessregion());
    for (int j = 0; j < 4; j++) CHECK(gasnet_get_val(r, v + 64 + 8 * j, 8) == 1000u + (unsigned)j, "region %d", j);
    free(src);
    free(dst);

    /* Named barriers; a try loop. */
    gasnet_barrier_notify(42, 0);
    CHECK(gasnet_barrier_wait(42, 0) == GASNET_OK, "named barrier");
    gasnet_barrier_notify(43, 0);
    int rc;
    GASNET_BLOCKUNTIL((rc = gasnet_barrier_try(43, 0)) != GASNET_ERR_NOT_READY);
    CHECK(rc == GASNET_OK, "barrier try: %d", rc);

    printf("test_g1: rank %u of %u: all checks passed\n", me, n);
    fflush(stdout);
    barrier();
    gasnet_exit(0);
    return 0;
}
