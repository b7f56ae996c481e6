/*
 * test_vis.c: gasnet_vis.h on every rank against its right neighbour:
 * vector puts and gets (pieces cut differently on each side), indexed puts
 * and gets, a strided block put and a transposing and a reflecting strided
 * get, in NB, NBI and blocking forms; every byte checked where it landed
 * and after the way back. Written for gex from the GASNet-EX spec v0.17.
 */
#include <gasnet_vis.h>
#include <stdio.h>
#include <string.h>

static gex_Rank_t me, n;
#define CHECK(cond, ...)                                                            \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "test_vis: rank %u: check failed at line %d: ", me, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                           \
            fprintf(stderr, " (%s)\n", #cond);                                      \
            gasnet_exit(1);                                                         \
        }                                                                           \
    } while (0)

static void barrier(gex_TM_t tm) { gex_Event_Wait(gex_Coll_BarrierNB(tm, 0)); }
static unsigned char pat(gex_Rank_t w, size_t j) { return (unsigned char)(w * 37u + j * 13u + 1u); }

int main(int argc, char **argv) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_TM_t tm;
    CHECK(gex_Client_Init(&client, &ep, &tm, "TEST_VIS", &argc, &argv, 0) == GASNET_OK, "init");
    me = gex_TM_QueryRank(tm);
    n = gex_TM_QuerySize(tm);
    gex_Segment_t seg;
    CHECK(gex_Segment_Attach(&seg, tm, 1 << 20) == GASNET_OK, "attach");
    char *mine = (char *)gex_Segment_QueryAddr(seg);
    gex_Rank_t right = (me + 1) % n, left = (me + n - 1) % n;
    void *rbase;
    uintptr_t rsize;
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, right, &rbase, NULL, &rsize, 0));
    char *rb = (char *)rbase;

    /* Vector: 300 bytes from two local pieces to three remote ones. */
    unsigned char src[300];
    for (size_t j = 0; j < 300; j++) src[j] = pat(me, j);
    gex_Memvec_t lsrc[2] = {{src, 100}, {src + 100, 200}};
    gex_Memvec_t rdst[3] = {{rb + 0, 100}, {rb + 1000, 100}, {rb + 5000, 100}};
    gex_Event_Wait(gex_VIS_VectorPutNB(tm, right, 3, rdst, 2, lsrc, 0));
    CHECK(gex_VIS_VectorPutNBI(tm, right, 3, rdst, 2, lsrc, 0) == 0, "vector put nbi");
    gex_NBI_Wait(GEX_EC_PUT, 0);
    CHECK(gex_VIS_VectorPutBlocking(tm, right, 3, rdst, 2, lsrc, 0) == 0, "vector put blocking");
    barrier(tm);
    for (size_t j = 0; j < 100; j++) {
        CHECK((unsigned char)mine[j] == pat(left, j), "vector piece 0 byte %zu", j);
        CHECK((unsigned char)mine[1000 + j] == pat(left, 100 + j), "vector piece 1 byte %zu", j);
        CHECK((unsigned char)mine[5000 + j] == pat(left, 200 + j), "vector piece 2 byte %zu", j);
    }
    unsigned char back[300];
    memset(back, 0, sizeof back);
    gex_Memvec_t lback[3] = {{back, 150}, {back + 150, 50}, {back + 200, 100}};
    gex_Event_t e = gex_VIS_VectorGetNB(tm, 3, lback, right, 3, rdst, 0);
    GASNET_BLOCKUNTIL(gex_Event_Test(e) == GASNET_OK);
    CHECK(memcmp(back, src, 300) == 0, "vector get nb");
    memset(back, 0, sizeof back);
    CHECK(gex_VIS_VectorGetNBI(tm, 3, lback, right, 3, rdst, 0) == 0, "vector get nbi");
    gex_NBI_Wait(GEX_EC_GET, 0);
    CHECK(memcmp(back, src, 300) == 0, "vector get nbi data");
    memset(back, 0, sizeof back);
    CHECK(gex_VIS_VectorGetBlocking(tm, 3, lback, right, 3, rdst, 0) == 0, "vector get blocking");
    CHECK(memcmp(back, src, 300) == 0, "vector get blocking data");

    /* Indexed: 4 local elements of 64 bytes to 8 remote ones of 32. */
    unsigned char el[4][64];
    void *srcl[4];
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 64; j++) el[i][j] = pat(me, (size_t)(i * 64 + j) + 7);
        srcl[i] = el[i];
    }
    void *dstl[8];
    for (int i = 0; i < 8; i++) dstl[i] = rb + 20000 + 100 * (7 - i); /* in reverse order */
    gex_Event_Wait(gex_VIS_IndexedPutNB(tm, right, 8, dstl, 32, 4, srcl, 64, 0));
    CHECK(gex_VIS_IndexedPutBlocking(tm, right, 8, dstl, 32, 4, srcl, 64, 0) == 0, "indexed put");
    barrier(tm);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 32; j++)
            CHECK((unsigned char)mine[20000 + 100 * (7 - i) + j] == pat(left, (size_t)(i * 32 + j) + 7),
                  "indexed element %d byte %d", i, j);
    unsigned char got[2][128];
    void *gl[2] = {got[0], got[1]};
    memset(got, 0, sizeof got);
    gex_Event_Wait(gex_VIS_IndexedGetNB(tm, 2, gl, 128, right, 8, dstl, 32, 0));
    CHECK(memcmp(got[0], el[0], 64) == 0 && memcmp(got[0] + 64, el[1], 64) == 0, "indexed get 0");
    CHECK(memcmp(got[1], el[2], 64) == 0 && memcmp(got[1] + 64, el[3], 64) == 0, "indexed get 1");
    memset(got, 0, sizeof got);
    CHECK(gex_VIS_IndexedGetNBI(tm, 2, gl, 128, right, 8, dstl, 32, 0) == 0, "indexed get nbi");
    gex_NBI_Wait(GEX_EC_GET, 0);
    CHECK(memcmp(got[1] + 64, el[3], 64) == 0, "indexed get nbi data");
    memset(got, 0, sizeof got);
    CHECK(gex_VIS_IndexedGetBlocking(tm, 2, gl, 128, right, 8, dstl, 32, 0) == 0, "indexed get blocking");
    CHECK(memcmp(got[0], el[0], 64) == 0, "indexed get blocking data");

    /* Strided: the 3 x 4 block at row 2, column 3 of a local 8 x 10 byte
     * array, packed into rows of 4 at the right (NBI, then NB). */
    unsigned char a[8][10];
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 10; c++) a[r][c] = (unsigned char)(me * 100 + r * 10 + c);
    ptrdiff_t sstr[1] = {10}, dstr[1] = {4};
    size_t cnt[1] = {3};
    CHECK(gex_VIS_StridedPutNBI(tm, right, rb + 30000, dstr, &a[2][3], sstr, 4, cnt, 1, 0) == 0, "strided put nbi");
    gex_NBI_Wait(GEX_EC_ALL, 0);
    gex_Event_Wait(gex_VIS_StridedPutNB(tm, right, rb + 30000, dstr, &a[2][3], sstr, 4, cnt, 1, 0));
    barrier(tm);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            CHECK((unsigned char)mine[30000 + r * 4 + c] == (unsigned char)(left * 100 + (r + 2) * 10 + c + 3),
                  "strided block %d,%d", r, c);
    /* Back, transposed: element (c, r) of a 4 x 3 array from (r, c). */
    unsigned char t[4][3];
    memset(t, 0, sizeof t);
    ptrdiff_t tdst[2] = {3, 1}, tsrc[2] = {1, 4};
    size_t tcnt[2] = {4, 3};
    gex_Event_Wait(gex_VIS_StridedGetNB(tm, t, tdst, right, rb + 30000, tsrc, 1, tcnt, 2, 0));
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) CHECK(t[c][r] == a[r + 2][c + 3], "transposed %d,%d", c, r);
    /* Reflected rows: a negative destination stride, blocking. */
    unsigned char f[3][4];
    memset(f, 0, sizeof f);
    ptrdiff_t fdst[1] = {-4}, fsrc[1] = {4};
    CHECK(gex_VIS_StridedGetBlocking(tm, &f[2][0], fdst, right, rb + 30000, fsrc, 4, cnt, 1, 0) == 0, "reflect");
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) CHECK(f[2 - r][c] == a[r + 2][c + 3], "reflected %d,%d", r, c);
    memset(f, 0, sizeof f);
    CHECK(gex_VIS_StridedGetNBI(tm, &f[2][0], fdst, right, rb + 30000, fsrc, 4, cnt, 1, 0) == 0, "reflect nbi");
    gex_NBI_Wait(GEX_EC_GET, 0);
    CHECK(f[0][0] == a[4][3], "reflected nbi");
    /* Degenerate: elemsz 0 and a zero count are no-ops. */
    size_t zero[1] = {0};
    CHECK(gex_VIS_StridedPutBlocking(tm, right, NULL, dstr, NULL, sstr, 0, cnt, 1, 0) == 0, "elemsz 0");
    CHECK(gex_VIS_StridedPutBlocking(tm, right, NULL, dstr, NULL, sstr, 4, zero, 1, 0) == 0, "count 0");

    barrier(tm);
    printf("test_vis: rank %u of %u: all checks passed\n", me, n);
    fflush(stdout);
    barrier(tm);
    return 0;
}
