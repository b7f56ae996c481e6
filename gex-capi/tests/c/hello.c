/* hello.c: the README's first C program. Every rank sends a Short request
 * with one argument to the next rank, whose handler replies with the
 * argument plus one. */
#include <gasnetex.h>
#include <stdio.h>

static gex_TM_t tm;
static volatile int replies;

static void ping(gex_Token_t token, gex_AM_Arg_t x) {
    gex_AM_ReplyShort1(token, GEX_AM_INDEX_BASE + 1, 0, x + 1);
}

static void pong(gex_Token_t token, gex_AM_Arg_t x) {
    (void)token;
    if (x == 42) replies++;
}

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_Client_Init(&client, &ep, &tm, "HELLO", &argc, &argv, 0);
    gex_AM_Entry_t handlers[] = {
        {GEX_AM_INDEX_BASE, (gex_AM_Fn_t)ping, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 1, NULL, "ping"},
        {GEX_AM_INDEX_BASE + 1, (gex_AM_Fn_t)pong, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 1, NULL, "pong"},
    };
    gex_EP_RegisterHandlers(ep, handlers, 2);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0)); /* everyone registered before anyone sends */

    gex_Rank_t me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm);
    gex_AM_RequestShort1(tm, (me + 1) % n, GEX_AM_INDEX_BASE, 0, 41);
    GASNET_BLOCKUNTIL(replies == 1);
    printf("rank %u of %u got its reply\n", me, n);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0)); /* serve peers' requests until all are done */
    return 0;
}
