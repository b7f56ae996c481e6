/* exit_flush.c: how a job ends through gasnet_exit, one mode per run.
 *
 * late: every rank passes a barrier; the ranks other than 0 print their
 *   last words without a newline and call gasnet_exit(0) at once; rank 0
 *   sleeps 20 ms (so that the others' exits come first), prints a line and
 *   calls gasnet_exit(0). Every line must reach the launcher: ranks that
 *   exit too finish on their own, their stdio flushed.
 * code: rank 1 prints a line and calls gasnet_exit(3) while the others
 *   wait in a barrier it never joins; they are ended within the exit grace
 *   and the job's code is 3.
 */
#define _POSIX_C_SOURCE 200809L
#include <gasnetex.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_TM_t tm;
    if (gex_Client_Init(&client, &ep, &tm, "EXIT_FLUSH", &argc, &argv, 0) != GASNET_OK) return 1;
    const char *mode = argc > 1 ? argv[1] : "";
    gex_Rank_t me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    if (strcmp(mode, "late") == 0) {
        if (me == 0) {
            struct timespec pause = {0, 20 * 1000 * 1000};
            nanosleep(&pause, NULL);
            printf("exit_flush: rank 0 of %u: the last line, after the others' exits\n", n);
        } else {
            printf("exit_flush: rank %u of %u: last words without a newline", me, n);
        }
        gasnet_exit(0);
    }
    if (strcmp(mode, "code") == 0) {
        if (me == 1) {
            printf("exit_flush: rank 1 of %u: calling gasnet_exit(3)\n", n);
            gasnet_exit(3);
        }
        printf("exit_flush: rank %u of %u: waiting in a barrier\n", me, n);
        gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
        printf("exit_flush: rank %u of %u: ERROR: a barrier without rank 1 completed\n", me, n);
        return 1;
    }
    fprintf(stderr, "exit_flush: unknown mode '%s' (late or code)\n", mode);
    return 2;
}
