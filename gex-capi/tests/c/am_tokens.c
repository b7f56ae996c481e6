/*
 * am_tokens.c: the token record a C handler gets (gex_Token_t), on 3
 * ranks in a ring (each rank sends to the next, itself with one rank):
 * the valid uses first, checked end to end, then the misuse argv[1] names,
 * which must end the job with the library's message:
 *   twice     - a request handler replies twice
 *   fromreply - a reply handler replies
 *   repmax    - a reply handler asks gex_Token_MaxReplyMedium
 * The valid part: a Short, a Medium (its source released through a leaf
 * event) and a Long (through the NBI group) request, each with 3
 * arguments, to a handler registered for requests and replies (so the
 * library hands it a request or a reply token by the message's kind)
 * that checks gex_Token_Info (source, endpoint, entry, kind, Long-ness),
 * queries gex_Token_MaxReplyMedium before and after replying (the same
 * answer: the reference allows the query after the reply), and replies with
 * the arguments and payload transformed; the reply runs the same handler,
 * which checks the transformed values and the info of a reply token.
 */
#include <gasnetex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gex_TM_t tm;
static gex_EP_t myep;
static gex_Rank_t me, n;
static char *myseg;
static void *peerseg, *prevseg; /* the next and previous ranks' segments */
static volatile int replies;
static const char *what = "";
static int cdata_tag;

#define H_SHORT (GEX_AM_INDEX_BASE + 0)
#define H_MED (GEX_AM_INDEX_BASE + 1)
#define H_LONG (GEX_AM_INDEX_BASE + 2)
#define H_MISUSE (GEX_AM_INDEX_BASE + 3)
#define H_MISUSE_REP (GEX_AM_INDEX_BASE + 4)
#define PAYLOAD 300
#define REQ_OFF 0
#define REP_OFF 4096

#define CHECK(c, ...)                                                 \
    do {                                                              \
        if (!(c)) {                                                   \
            fprintf(stderr, "am_tokens rank %u: ", (unsigned)me);     \
            fprintf(stderr, __VA_ARGS__);                             \
            fprintf(stderr, "\n");                                    \
            exit(3);                                                  \
        }                                                             \
    } while (0)

static unsigned char byte(gex_Rank_t from, size_t j, int reply) {
    return (unsigned char)(from * 31u + j * 7u + (unsigned)reply * 101u);
}

/* Checks the token's info and the message; returns the source. */
static gex_Rank_t check(gex_Token_t t, gex_AM_Index_t idx, int is_long, void *buf, size_t nbytes,
                        gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_Token_Info_t info;
    gex_TI_t got = gex_Token_Info(t, &info, GEX_TI_ALL);
    CHECK((got & GEX_TI_ALL) == GEX_TI_ALL, "info mask %x", (unsigned)got);
    gex_Rank_t src = info.gex_srcrank;
    int reply = !info.gex_is_req;
    /* A request comes from the previous rank, a reply from the next. */
    CHECK(src == (reply ? (me + 1) % n : (me + n - 1) % n), "srcrank %u", (unsigned)src);
    CHECK(info.gex_ep == myep, "token ep");
    CHECK(info.gex_is_long == is_long, "is_long %d", info.gex_is_long);
    CHECK(info.gex_entry != NULL && info.gex_entry->gex_index == idx && info.gex_entry->gex_nargs == 3 &&
              info.gex_entry->gex_cdata == (const void *)&cdata_tag,
          "entry");
    gex_AM_Arg_t base = (gex_AM_Arg_t)(src * 1000 + idx) + (reply ? 500000 : 0);
    CHECK(a0 == base && a1 == base + 1 && a2 == -base, "args %d %d %d (base %d)", (int)a0, (int)a1, (int)a2,
          (int)base);
    if (idx != H_SHORT) {
        CHECK(nbytes == PAYLOAD, "%zu bytes", nbytes);
        for (size_t j = 0; j < nbytes; j++)
            CHECK(((unsigned char *)buf)[j] == byte(src, j, reply), "byte %zu", j);
        if (is_long) CHECK((char *)buf == myseg + (reply ? REP_OFF : REQ_OFF), "Long landed at %p", buf);
    }
    return src;
}

static void handler(gex_Token_t t, gex_AM_Index_t idx, int is_long, void *buf, size_t nbytes, gex_AM_Arg_t a0,
                    gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    gex_Token_Info_t info;
    gex_Token_Info(t, &info, GEX_TI_IS_REQ);
    check(t, idx, is_long, buf, nbytes, a0, a1, a2);
    if (!info.gex_is_req) {
        __atomic_fetch_add(&replies, 1, __ATOMIC_SEQ_CST);
        return;
    }
    size_t lim = gex_Token_MaxReplyMedium(t, GEX_EVENT_NOW, 0, 3);
    CHECK(lim >= PAYLOAD, "max reply medium %zu", lim);
    gex_AM_Arg_t b = (gex_AM_Arg_t)(me * 1000 + idx) + 500000;
    unsigned char pay[PAYLOAD];
    for (size_t j = 0; j < PAYLOAD; j++) pay[j] = byte(me, j, 1);
    int rc;
    if (idx == H_SHORT)
        rc = gex_AM_ReplyShort3(t, idx, 0, b, b + 1, -b);
    else if (idx == H_MED)
        rc = gex_AM_ReplyMedium3(t, idx, pay, PAYLOAD, GEX_EVENT_NOW, 0, b, b + 1, -b);
    else {
        /* The requester is the previous rank: the reply lands at REP_OFF in
         * its segment, where its own check expects it. */
        rc = gex_AM_ReplyLong3(t, idx, pay, PAYLOAD, (char *)prevseg + REP_OFF, GEX_EVENT_NOW, 0, b, b + 1, -b);
    }
    CHECK(rc == GASNET_OK, "reply rc %d", rc);
    CHECK(gex_Token_MaxReplyMedium(t, GEX_EVENT_NOW, 0, 3) == lim, "max reply medium after replying");
}

static void h_short(gex_Token_t t, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    handler(t, H_SHORT, 0, NULL, 0, a0, a1, a2);
}
static void h_med(gex_Token_t t, void *buf, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    handler(t, H_MED, 0, buf, nbytes, a0, a1, a2);
}
static void h_long(gex_Token_t t, void *buf, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    handler(t, H_LONG, 1, buf, nbytes, a0, a1, a2);
}

/* The misuses. */
static void misuse_rep(gex_Token_t t) {
    if (strcmp(what, "fromreply") == 0) gex_AM_ReplyShort0(t, H_MISUSE_REP, 0);
    if (strcmp(what, "repmax") == 0) gex_Token_MaxReplyMedium(t, GEX_EVENT_NOW, 0, 0);
    __atomic_fetch_add(&replies, 1, __ATOMIC_SEQ_CST);
}
static void misuse(gex_Token_t t) {
    gex_AM_ReplyShort0(t, H_MISUSE_REP, 0);
    if (strcmp(what, "twice") == 0) gex_AM_ReplyShort0(t, H_MISUSE_REP, 0);
}

int main(int argc, char **argv) {
    gex_Client_t client;
    what = argc > 1 ? argv[1] : "";
    gex_Client_Init(&client, &myep, &tm, "AM_TOKENS", &argc, &argv, 0);
    me = gex_TM_QueryRank(tm);
    n = gex_TM_QuerySize(tm);
    gex_Segment_t seg;
    gex_Segment_Attach(&seg, tm, 1 << 16);
    myseg = (char *)gex_Segment_QueryAddr(seg);
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, (me + 1) % n, &peerseg, NULL, NULL, 0));
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, (me + n - 1) % n, &prevseg, NULL, NULL, 0));
    gex_AM_Entry_t h[] = {
        {H_SHORT, (gex_AM_Fn_t)h_short, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQREP, 3, &cdata_tag, "short"},
        {H_MED, (gex_AM_Fn_t)h_med, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQREP, 3, &cdata_tag, "medium"},
        {H_LONG, (gex_AM_Fn_t)h_long, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REQREP, 3, &cdata_tag, "long"},
        {H_MISUSE, (gex_AM_Fn_t)misuse, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "misuse"},
        {H_MISUSE_REP, (gex_AM_Fn_t)misuse_rep, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 0, NULL, "misuse_rep"},
    };
    CHECK(gex_EP_RegisterHandlers(myep, h, sizeof h / sizeof h[0]) == GASNET_OK, "register");
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));

    gex_Rank_t next = (me + 1) % n;
    unsigned char pay[PAYLOAD];
    for (gex_AM_Index_t idx = H_SHORT; idx <= H_LONG; idx++) {
        for (size_t j = 0; j < PAYLOAD; j++) pay[j] = byte(me, j, 0);
        gex_AM_Arg_t b = (gex_AM_Arg_t)(me * 1000 + idx);
        int rc;
        /* The Medium's source is released through a leaf event, the
         * Long's through the NBI group (the library's other lc_opt path),
         * then overwritten: the receiver must still see the bytes sent. */
        gex_Event_t lc = GEX_EVENT_NO_OP;
        if (idx == H_SHORT)
            rc = gex_AM_RequestShort3(tm, next, idx, 0, b, b + 1, -b);
        else if (idx == H_MED)
            rc = gex_AM_RequestMedium3(tm, next, idx, pay, PAYLOAD, &lc, 0, b, b + 1, -b);
        else
            rc = gex_AM_RequestLong3(tm, next, idx, pay, PAYLOAD, (char *)peerseg + REQ_OFF, GEX_EVENT_GROUP, 0, b,
                                     b + 1, -b);
        CHECK(rc == GASNET_OK, "request rc %d", rc);
        if (idx == H_MED) {
            CHECK(lc != GEX_EVENT_NO_OP, "no leaf event written back");
            gex_Event_Wait(lc);
        } else if (idx == H_LONG) {
            gex_NBI_Wait(GEX_EC_AM, 0);
        }
        memset(pay, 0xa5, sizeof pay);
        GASNET_BLOCKUNTIL(replies == (int)(idx - H_SHORT + 1));
    }
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    printf("am_tokens: valid tokens done\n");
    fflush(stdout);
    if (*what) {
        gex_AM_RequestShort0(tm, next, H_MISUSE, 0);
        GASNET_BLOCKUNTIL(replies == 4);
        printf("am_tokens: %s was not refused\n", what);
    }
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    return 0;
}
