/*
 * test_tools.c: gasnet_tools.h on its own (no job): timers, atomics of both
 * widths, fences, a mutex and condition variable between two threads,
 * thread keys, processor and host queries, sleeping, the environment and
 * the checksum, a backtrace without a user hook. Written for gex.
 */
#define _POSIX_C_SOURCE 200809L /* fileno */
#include <gasnet_tools.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "test_tools: line %d: ", __LINE__);            \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, " (%s)\n", #cond);                              \
            failures++;                                                     \
        }                                                                   \
    } while (0)

GASNETT_THREADKEY_DEFINE(mykey);

static gasnett_mutex_t lock = GASNETT_MUTEX_INITIALIZER;
static gasnett_cond_t cond = GASNETT_COND_INITIALIZER;
static int stage; /* under lock */
static gasnett_atomic_t counter = gasnett_atomic_init(0);
static gasnett_atomic64_t big = gasnett_atomic64_init(0);

GASNETT_INLINE(bump) void bump(int n) {
    for (int i = 0; i < n; i++) {
        gasnett_atomic_increment(&counter, 0);
        gasnett_atomic64_add(&big, 1u << 20, GASNETT_ATOMIC_REL);
    }
}

static void *worker(void *arg) {
    (void)arg;
    gasnett_threadkey_set(mykey, (void *)&stage);
    bump(100000);
    gasnett_mutex_lock(&lock);
    stage = 1;
    gasnett_cond_broadcast(&cond);
    while (stage != 2) gasnett_cond_wait(&cond, &lock);
    gasnett_mutex_unlock(&lock);
    return gasnett_threadkey_get(mykey);
}

int main(void) {
    /* Timers: monotonic, in nanoseconds. */
    gasnett_tick_t t0 = gasnett_ticks_now();
    gasnett_nsleep(2000000);
    gasnett_tick_t t1 = gasnett_ticks_now();
    CHECK(t1 > t0 && gasnett_ticks_to_ns(t1 - t0) >= 2000000, "2 ms sleep took %llu ns",
          (unsigned long long)gasnett_ticks_to_ns(t1 - t0));
    CHECK(gasnett_ticks_to_us(t1 - t0) == gasnett_ticks_to_ns(t1 - t0) / 1000, "us vs ns");
    CHECK(gasnett_tick_granularityus() > 0 && gasnett_tick_granularityus() < 1000, "granularity");
    CHECK(gasnett_tick_overheadus() >= 0 && gasnett_tick_overheadus() < 100, "overhead");

    /* Atomics, one thread. */
    gasnett_atomic_t a = gasnett_atomic_init(5);
    CHECK(gasnett_atomic_read(&a, 0) == 5, "init");
    gasnett_atomic_set(&a, 10, GASNETT_ATOMIC_WMB_PRE);
    CHECK(gasnett_atomic_add(&a, 5, 0) == 15, "add returns the new value");
    CHECK(gasnett_atomic_subtract(&a, 3, 0) == 12, "subtract");
    CHECK(gasnett_atomic_compare_and_swap(&a, 12, 1, GASNETT_ATOMIC_ACQ_IF_TRUE), "cas hit");
    CHECK(!gasnett_atomic_compare_and_swap(&a, 12, 7, 0), "cas miss");
    CHECK(gasnett_atomic_decrement_and_test(&a, 0), "decrement to zero");
    CHECK(!gasnett_atomic_decrement_and_test(&a, 0), "decrement past zero");
    CHECK(gasnett_atomic_read(&a, 0) == GASNETT_ATOMIC_MAX, "wraps");
    CHECK(gasnett_atomic_signed(gasnett_atomic_read(&a, 0)) == -1, "signed view");
    CHECK(gasnett_atomic_swap(&a, 3, 0) == GASNETT_ATOMIC_MAX, "swap");
    gasnett_atomic64_t b = gasnett_atomic64_init(1);
    CHECK(gasnett_atomic64_add(&b, (uint64_t)1 << 40, 0) == ((uint64_t)1 << 40) + 1, "64-bit add");
    CHECK(gasnett_atomic64_compare_and_swap(&b, ((uint64_t)1 << 40) + 1, 2, 0), "64-bit cas");
    gasnett_atomic64_decrement(&b, 0);
    CHECK(gasnett_atomic64_decrement_and_test(&b, 0), "64-bit decrement");
    gasnett_local_mb();
    gasnett_local_wmb();
    gasnett_local_rmb();
    gasnett_compiler_fence();

    /* Two threads: atomics, a mutex and a condition variable, thread keys. */
    gasnett_threadkey_set(mykey, (void *)&counter);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, worker, NULL) == 0, "thread");
    bump(100000);
    gasnett_mutex_lock(&lock);
    while (stage != 1) gasnett_cond_wait(&cond, &lock);
    stage = 2;
    gasnett_cond_broadcast(&cond);
    gasnett_mutex_unlock(&lock);
    void *theirs = NULL;
    pthread_join(th, &theirs);
    CHECK(theirs == (void *)&stage, "the worker's key");
    CHECK(gasnett_threadkey_get(mykey) == (void *)&counter, "my key");
    CHECK(gasnett_atomic_read(&counter, 0) == 200000, "counter %u", gasnett_atomic_read(&counter, 0));
    CHECK(gasnett_atomic64_read(&big, 0) == (uint64_t)200000 << 20, "64-bit counter");
    CHECK(gasnett_mutex_trylock(&lock) == 0, "trylock free");
    CHECK(gasnett_mutex_trylock(&lock) != 0, "trylock held");
    gasnett_mutex_unlock(&lock);

    /* Processor, host, environment, checksum. */
    CHECK(gasnett_cpu_count() >= 1, "cpu count");
    CHECK(gasnett_sched_yield() == 0, "yield");
    CHECK(strlen(gasnett_gethostname()) > 0, "hostname");
    gasnett_setenv("GEX_CAPI_T", "12K");
    CHECK(strcmp(gasnett_getenv("GEX_CAPI_T"), "12K") == 0, "setenv");
    CHECK(gasnett_getenv_int_withdefault("GEX_CAPI_T", 5, 1) == 12 * 1024, "size suffix");
    gasnett_setenv("GEX_CAPI_T", "12");
    CHECK(gasnett_getenv_int_withdefault("GEX_CAPI_T", 5, 0) == 12, "plain int");
    CHECK(gasnett_getenv_int_withdefault("GEX_CAPI_T", 5, 1024) == 12 * 1024, "multiplier");
    gasnett_setenv("GEX_CAPI_T", "Yes");
    CHECK(gasnett_getenv_yesno_withdefault("GEX_CAPI_T", 0) == 1, "yes");
    gasnett_unsetenv("GEX_CAPI_T");
    CHECK(gasnett_getenv("GEX_CAPI_T") == NULL, "unsetenv");
    CHECK(gasnett_getenv_yesno_withdefault("GEX_CAPI_T", 1) == 1, "default");
    CHECK(strcmp(gasnett_getenv_withdefault("GEX_CAPI_T", "d"), "d") == 0, "default string");
    char buf[64];
    memset(buf, 7, sizeof buf);
    uint64_t c1 = gasnett_checksum(buf, sizeof buf);
    CHECK(c1 == gasnett_checksum(buf, sizeof buf), "checksum is deterministic");
    buf[63] = 8;
    CHECK(c1 != gasnett_checksum(buf, sizeof buf), "checksum sees a byte");
    CHECK(strcmp(GASNETT_CURRENT_FUNCTION, "main") == 0, "current function");
    CHECK(GASNETT_PREDICT_TRUE(1) && !GASNETT_PREDICT_FALSE(0), "predict");

    /* No gasnett_backtrace_user here: the weak reference is NULL and the
     * native mechanism answers (into a file that is thrown away). */
    gasnett_backtrace_init("test_tools");
    FILE *sink = tmpfile();
    CHECK(sink != NULL, "tmpfile");
    if (sink) {
        CHECK(gasnett_print_backtrace(fileno(sink)) == 0, "native backtrace without a user hook");
        fseek(sink, 0, SEEK_END);
        CHECK(ftell(sink) > 20, "a backtrace was written");
        fclose(sink);
    }

    if (failures) return 1;
    printf("test_tools: all checks passed\n");
    return 0;
}
