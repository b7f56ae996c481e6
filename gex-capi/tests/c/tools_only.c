/*
 * tools_only.c: a tools-only program (gasnet_tools.h without gasnetex.h),
 * linked against libgex_tools.a alone, checking the tools end to end:
 * platform and version macros, every atomic family (values, wrapping,
 * flags, and under GASNETT_THREAD_SAFE contention between threads),
 * parse_int with memory-size suffixes, format_number's text, the zero-byte
 * counts, the environment with defaults, backtraces into a pipe (the
 * program's own gasnett_backtrace_user and the native mechanism), the
 * GASNet-EX value formatters, locks, thread keys, timers, signals and the
 * system queries. Written for gex.
 *
 * With an argument it exercises one failure instead and must not return:
 * "fatal" (gasnett_fatalerror), "nopos" (gasnett_fatalerror_nopos),
 * "badint" (gasnett_parse_int of a non-number), "badenv"
 * (GEX_TT_BADINT=12q read as an integer), "verbose" (reads settings for
 * GASNET_VERBOSEENV reporting, then exits 0).
 */
#define _GNU_SOURCE 1
#include <gasnet_tools.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#if defined(_INCLUDED_GASNETEX_H) || defined(GEX_GASNETEX_H)
#error tools_only.c must not see gasnetex.h
#endif

static int failures;
#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "tools_only: line %d: ", __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fprintf(stderr, " (%s)\n", #cond);                                                    \
            failures++;                                                                           \
        }                                                                                         \
    } while (0)

/* ---- The program's own backtrace mechanism ---- */
static volatile int user_bt_calls;
GASNETT_EXTERNC int user_backtrace(int fd);
int user_backtrace(int fd) {
    static const char msg[] = "user backtrace hook ran\n";
    user_bt_calls++;
    return write(fd, msg, sizeof msg - 1) == (ssize_t)(sizeof msg - 1) ? 0 : 1;
}
gasnett_backtrace_type_t gasnett_backtrace_user = {"MYAPP", &user_backtrace, 1};

/* Reads a pipe to its end on another thread while `fn` writes into it. */
struct reader {
    int fd;
    char buf[1 << 16];
    size_t len;
};
static void *read_all(void *arg) {
    struct reader *r = (struct reader *)arg;
    for (;;) {
        char tmp[4096];
        ssize_t n = read(r->fd, tmp, sizeof tmp);
        if (n <= 0) break;
        size_t room = sizeof r->buf - 1 - r->len;
        size_t k = (size_t)n < room ? (size_t)n : room;
        memcpy(r->buf + r->len, tmp, k);
        r->len += k;
    }
    r->buf[r->len] = 0;
    return NULL;
}
static int backtrace_into_pipe(struct reader *r) {
    int fds[2];
    pthread_t t;
    if (pipe(fds) != 0) return -100;
    r->fd = fds[0];
    r->len = 0;
    pthread_create(&t, NULL, read_all, r);
    int rc = gasnett_print_backtrace(fds[1]);
    close(fds[1]);
    pthread_join(t, NULL);
    close(fds[0]);
    return rc;
}

/* Calls a backtrace function with a descriptor of /dev/null. */
static int backtrace_hook_via(int (*fn)(int)) {
    FILE *f = fopen("/dev/null", "w");
    int rc = f ? fn(fileno(f)) : -1;
    if (f) fclose(f);
    return rc;
}

/* ---- Annotations ---- */
static int evaluated;
static int bump(void) { return ++evaluated; }
GASNETT_INLINE(inl_add) int inl_add(int a, int b) { return a + b; }
GASNETT_NEVER_INLINE(noinl_add, static int noinl_add(int a, int b)) { return a + b; }
GASNETT_FORMAT_PRINTF(fmt_len, 1, 2, static int fmt_len(const char *fmt, ...));
static int fmt_len(const char *fmt, ...) {
    va_list ap;
    char b[64];
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    return n;
}

/* ---- Atomics, one family at a time ---- */
#define CHECK_FAMILY(PFX, T, V, MAXV)                                                             \
    do {                                                                                          \
        T a = PFX##_init(5);                                                                      \
        CHECK(PFX##_read(&a, 0) == 5, #PFX " init");                                             \
        PFX##_set(&a, 10, GASNETT_ATOMIC_REL);                                                    \
        CHECK(PFX##_add(&a, 5, GASNETT_ATOMIC_MB_PRE | GASNETT_ATOMIC_MB_POST) == 15, #PFX " add"); \
        CHECK(PFX##_subtract(&a, 3, GASNETT_ATOMIC_ACQ) == 12, #PFX " subtract");                \
        PFX##_increment(&a, GASNETT_ATOMIC_WMB_POST);                                            \
        PFX##_decrement(&a, GASNETT_ATOMIC_RMB_PRE);                                             \
        CHECK(PFX##_read(&a, GASNETT_ATOMIC_RMB_POST) == 12, #PFX " inc/dec");                   \
        CHECK(PFX##_compare_and_swap(&a, 12, 1, GASNETT_ATOMIC_ACQ_IF_TRUE), #PFX " cas hit");   \
        CHECK(!PFX##_compare_and_swap(&a, 12, 7, GASNETT_ATOMIC_ACQ_IF_FALSE), #PFX " cas miss");\
        CHECK(PFX##_read(&a, 0) == 1, #PFX " cas result");                                       \
        CHECK(PFX##_decrement_and_test(&a, GASNETT_ATOMIC_ACQ_IF_TRUE), #PFX " to zero");        \
        CHECK(!PFX##_decrement_and_test(&a, 0), #PFX " past zero");                              \
        CHECK(PFX##_read(&a, 0) == (V)(MAXV), #PFX " wraps below zero");                         \
        PFX##_increment(&a, 0);                                                                  \
        CHECK(PFX##_read(&a, 0) == 0, #PFX " wraps above max");                                  \
        CHECK(PFX##_swap(&a, 3, 0) == 0, #PFX " swap returns the old value");                    \
        CHECK(PFX##_read(&a, 0) == 3, #PFX " swap stores");                                      \
        CHECK(sizeof(T) == sizeof(V), #PFX " has the size of its value");                        \
    } while (0)

#if GASNETT_THREAD_SAFE
#define NTHREADS 4
#define PER_THREAD 50000
static gasnett_atomic_t shared_inc = gasnett_atomic_init(0);
static gasnett_atomic64_t shared_add = gasnett_atomic64_init(0);
static gasnett_strongatomic32_t shared_cas = gasnett_strongatomic32_init(0);
static gasnett_atomic_t arrivals = gasnett_atomic_init(0);
static int plain_data[NTHREADS];
static gasnett_atomic32_t published[NTHREADS];
static void *pound(void *arg) {
    int me = (int)(intptr_t)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        gasnett_atomic_increment(&shared_inc, 0);
        gasnett_atomic64_add(&shared_add, (uint64_t)1 << 33, 0);
        uint32_t old;
        do {
            old = gasnett_strongatomic32_read(&shared_cas, 0);
        } while (!gasnett_strongatomic32_compare_and_swap(&shared_cas, old, old + 1, 0));
    }
    /* Message passing: plain data, then a release flag. */
    plain_data[me] = 1000 + me;
    gasnett_atomic32_set(&published[me], 1, GASNETT_ATOMIC_REL);
    gasnett_atomic_increment(&arrivals, GASNETT_ATOMIC_REL);
    return NULL;
}
#endif

static volatile sig_atomic_t got_signal;
static void on_usr1(int sig) { got_signal = sig; }

GASNETT_THREADKEY_DEFINE(tk);

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    gasnett_backtrace_init(argv[0]);

    if (!strcmp(mode, "fatal")) gasnett_fatalerror("boom %d", 42);
    if (!strcmp(mode, "nopos")) gasnett_fatalerror_nopos("quiet boom %s", "x");
    if (!strcmp(mode, "badint")) {
        printf("%" PRId64 "\n", gasnett_parse_int("12 apples", 1));
        return 0;
    }
    if (!strcmp(mode, "badenv")) {
        printf("%" PRId64 "\n", gasnett_getenv_int_withdefault("GEX_TT_BADINT", 1, 0));
        return 0;
    }
    if (!strcmp(mode, "verbose")) {
        printf("verboseenv=%d\n", gasnett_verboseenv());
        (void)gasnett_getenv_int_withdefault("GEX_TT_SIZE", 4096, 1);
        (void)gasnett_getenv_int_withdefault("GEX_TT_SIZE", 4096, 1); /* reported once */
        (void)gasnett_getenv_withdefault("GEX_TT_NAME", "dflt");
        (void)gasnett_getenv_yesno_withdefault("GEX_TT_FLAG", 1);
        return 0;
    }

    /* Platform, versions, configuration. */
    CHECK(PLATFORM_ARCH_64 + 0 == (sizeof(void *) == 8), "PLATFORM_ARCH_64");
#if PLATFORM_ARCH_LITTLE_ENDIAN
    CHECK(gasnett_isLittleEndian(), "endianness");
#else
    CHECK(!gasnett_isLittleEndian(), "endianness");
#endif
#if !PLATFORM_OS_LINUX || !(PLATFORM_COMPILER_GNU || PLATFORM_COMPILER_CLANG)
    CHECK(0, "OS or compiler family");
#endif
#if !PLATFORM_COMPILER_C || PLATFORM_COMPILER_CXX
    CHECK(0, "language");
#endif
    {
        const char *fam = _STRINGIFY(PLATFORM_COMPILER_FAMILYNAME);
        CHECK(!strcmp(fam, "GNU") || !strcmp(fam, "CLANG"), "family %s", fam);
        CHECK(strlen(PLATFORM_COMPILER_VERSION_STR) >= 5, "version %s", PLATFORM_COMPILER_VERSION_STR);
        CHECK(PLATFORM_COMPILER_VERSION_GE(4, 0, 0), "version number");
        CHECK(strstr(PLATFORM_COMPILER_IDSTR, fam) != NULL, "%s", PLATFORM_COMPILER_IDSTR);
        CHECK(strstr(GASNETT_SYSTEM_TUPLE, "linux") != NULL, "%s", GASNETT_SYSTEM_TUPLE);
    }
    CHECK(gasnett_release_version() == 2025080000u, "release %" PRIu64, gasnett_release_version());
    CHECK(!strcmp(gasnett_release_version_str(), "2025.8.0"), "%s", gasnett_release_version_str());
    CHECK(GASNETT_RELEASE_VERSION_MAJOR == 2025 && GASNETT_RELEASE_VERSION_MINOR == 8 &&
              GASNETT_RELEASE_VERSION_PATCH == 0,
          "release macros");
    CHECK(GASNETT_SPEC_VERSION_MAJOR == 1 && GASNETT_SPEC_VERSION_MINOR == 20, "spec macros");
#if GASNETT_THREAD_SAFE
    CHECK(strstr(GASNETT_CONFIG_STRING, "THREADMODEL=PAR") != NULL, "%s", GASNETT_CONFIG_STRING);
#else
    CHECK(strstr(GASNETT_CONFIG_STRING, "THREADMODEL=SEQ") != NULL, "%s", GASNETT_CONFIG_STRING);
#endif
    CHECK(*gasnett_performance_warning_str() == 0, "performance warning");
    CHECK((1 << GASNETT_PAGESHIFT) == GASNETT_PAGESIZE, "page size");
    CHECK((GASNETT_CACHE_LINE_BYTES & (GASNETT_CACHE_LINE_BYTES - 1)) == 0, "cache line");
    {
        char b[64];
        snprintf(b, sizeof b, "%" PRIuSZ "/%" PRIdSZ "/%" PRIxSZ, (size_t)7, (ssize_t)-3, (size_t)255);
        CHECK(!strcmp(b, "7/-3/ff"), "%s", b);
    }

    /* Annotations. */
    evaluated = 0;
    (void)GASNETT_UNUSED_ARGS3(bump(), bump(), bump());
    (void)GASNETT_UNUSED_ARGS8(bump(), bump(), bump(), bump(), bump(), bump(), bump(), bump());
    CHECK(evaluated == 11, "UNUSED_ARGS evaluated %d times", evaluated);
    CHECK(inl_add(2, 3) == 5 && noinl_add(2, 3) == 5, "inline");
    CHECK(fmt_len("%d-%s", 12, "ab") == 5, "format");
    if_pf(evaluated != 11) CHECK(0, "if_pf");
    if_pt(evaluated == 11) evaluated = 0;
    CHECK(evaluated == 0, "if_pt");
    CHECK(GASNETT_PREDICT_TRUE(3) && !GASNETT_PREDICT_FALSE(0), "predict");
    {
        char *loc = gasnett_current_loc;
        CHECK(strstr(loc, "main") && strstr(loc, "tools_only.c"), "%s", loc);
        free(loc);
    }
    CHECK(!strcmp(GASNETT_TRACE_GETMASK(), "") && !strcmp(GASNETT_STATS_GETMASK(), ""), "masks");
    GASNETT_TRACE_SETMASK("ABC");
    GASNETT_STATS_SETMASK("ABC");
    GASNETT_TRACE_SET_TRACELOCAL(GASNETT_TRACE_GET_TRACELOCAL());
    GASNETT_STATS_DUMP(1);
    GASNETT_TRACE_PRINTF("x %d", 1);

    /* Atomics. */
    CHECK_FAMILY(gasnett_atomic, gasnett_atomic_t, gasnett_atomic_val_t, GASNETT_ATOMIC_MAX);
    CHECK_FAMILY(gasnett_strongatomic, gasnett_strongatomic_t, gasnett_strongatomic_val_t,
                 GASNETT_ATOMIC_MAX);
    CHECK_FAMILY(gasnett_atomic32, gasnett_atomic32_t, uint32_t, UINT32_MAX);
    CHECK_FAMILY(gasnett_atomic64, gasnett_atomic64_t, uint64_t, UINT64_MAX);
    CHECK_FAMILY(gasnett_strongatomic32, gasnett_strongatomic32_t, uint32_t, UINT32_MAX);
    CHECK_FAMILY(gasnett_strongatomic64, gasnett_strongatomic64_t, uint64_t, UINT64_MAX);
#if !GASNETT_HAVE_ATOMIC_ADD_SUB || !GASNETT_HAVE_ATOMIC_CAS || !GASNETT_HAVE_STRONGATOMIC_CAS
    CHECK(0, "feature macros");
#endif
    {
        gasnett_atomic_t s = gasnett_atomic_init(0);
        gasnett_atomic_set(&s, (gasnett_atomic_val_t)GASNETT_ATOMIC_SIGNED_MIN, 0);
        CHECK(gasnett_atomic_signed(gasnett_atomic_read(&s, 0)) == GASNETT_ATOMIC_SIGNED_MIN, "signed min");
        int32_t i32 = -7; /* an int32_t's storage as a gasnett_atomic32_t */
        gasnett_atomic32_add((gasnett_atomic32_t *)&i32, 10, 0);
        CHECK(i32 == 3, "int32_t storage %d", (int)i32);
        double d = 0; /* a double's storage as a gasnett_atomic64_t */
        gasnett_atomic64_set((gasnett_atomic64_t *)&d, 0x3ff0000000000000ull, 0);
        CHECK(d == 1.0, "double storage");
    }
    gasnett_local_mb();
    gasnett_local_rmb();
    gasnett_local_wmb();
    gasnett_weak_mb();
    gasnett_weak_rmb();
    gasnett_weak_wmb();
    gasnett_compiler_fence();
    gasnett_spinloop_hint();
#if GASNETT_THREAD_SAFE
    {
        pthread_t t[NTHREADS];
        for (int i = 0; i < NTHREADS; i++) pthread_create(&t[i], NULL, pound, (void *)(intptr_t)i);
        for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
        CHECK(gasnett_atomic_read(&shared_inc, 0) == NTHREADS * PER_THREAD, "contended increments %u",
              (unsigned)gasnett_atomic_read(&shared_inc, 0));
        CHECK(gasnett_atomic64_read(&shared_add, 0) == ((uint64_t)NTHREADS * PER_THREAD) << 33,
              "contended 64-bit adds");
        CHECK(gasnett_strongatomic32_read(&shared_cas, 0) == NTHREADS * PER_THREAD, "CAS loop");
        CHECK(gasnett_atomic_read(&arrivals, GASNETT_ATOMIC_ACQ) == NTHREADS, "arrivals");
        for (int i = 0; i < NTHREADS; i++)
            CHECK(gasnett_atomic32_read(&published[i], GASNETT_ATOMIC_ACQ) == 1 && plain_data[i] == 1000 + i,
                  "published data of thread %d", i);
    }
#endif

    /* Numbers as text and back. */
    {
        struct {
            const char *s;
            uint64_t mult;
            int64_t want;
        } cases[] = {
            {"4k", 1, 4096},        {"4 KB", 1, 4096},          {"1.5M", 1, 3 << 19},
            {"2G", 1, INT64_C(2) << 30}, {"1 TB", 1, INT64_C(1) << 40}, {"3", 1024, 3072},
            {"3B", 1024, 3},        {"2mib", 1, 2 << 20},       {"0x10", 0, 16},
            {"-12", 0, -12},        {"  42  ", 0, 42},          {"7E", 1, INT64_C(7) << 60},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            int64_t got = gasnett_parse_int(cases[i].s, cases[i].mult);
            CHECK(got == cases[i].want, "parse_int(\"%s\", %" PRIu64 ") = %" PRId64, cases[i].s,
                  cases[i].mult, got);
        }
        struct {
            int64_t v;
            int mem;
            const char *want;
        } f[] = {{0, 1, "0 B"},       {4096, 1, "4 KB"},   {1536, 1, "1.50 KB"}, {1000, 1, "1000 B"},
                 {-2048, 1, "-2 KB"}, {INT64_C(3) << 40, 1, "3 TB"}, {123, 0, "123"}, {-5, 0, "-5"}};
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            char b[32];
            char *r = gasnett_format_number(f[i].v, b, sizeof b, f[i].mem);
            CHECK(r == b && !strcmp(b, f[i].want), "format_number(%" PRId64 ") = \"%s\"", f[i].v, b);
        }
        char tiny[4];
        gasnett_format_number(123456, tiny, sizeof tiny, 0);
        CHECK(!strcmp(tiny, "123"), "truncated to the buffer: %s", tiny);
        for (int i = 0; i < 63; i++) {
            char b[32];
            int64_t x = INT64_C(1) << i;
            gasnett_format_number(x, b, sizeof b, 1);
            CHECK(gasnett_parse_int(b, 1) == x, "round trip %s", b);
        }
    }

    /* Zero bytes. */
    {
        char src[64], dst[64 + 2];
        for (int i = 0; i < 64; i++) src[i] = (char)(i % 3 == 0 ? 0 : i);
        memset(dst, 'x', sizeof dst);
        CHECK(gasnett_count0s(src, 64) == 22, "count0s %" PRIuSZ, gasnett_count0s(src, 64));
        CHECK(gasnett_count0s(src + 1, 2) == 0, "count0s of none");
        CHECK(gasnett_count0s_copy(dst + 1, src, 64) == 22, "count0s_copy");
        CHECK(!memcmp(dst + 1, src, 64) && dst[0] == 'x' && dst[65] == 'x', "copy in bounds");
        CHECK(gasnett_count0s_uint32_t(0x00ff0000u) == 3 && gasnett_count0s_uint32_t(0) == 4, "u32");
        CHECK(gasnett_count0s_uint64_t(0x0100000000000001ull) == 6, "u64");
        CHECK(gasnett_count0s_uintptr_t(0) == (int)sizeof(uintptr_t), "uintptr_t");
    }

    /* The environment. */
    gasnett_setenv("GEX_TT_STR", "hello");
    CHECK(!strcmp(gasnett_getenv("GEX_TT_STR"), "hello"), "getenv");
    CHECK(!strcmp(gasnett_getenv_withdefault("GEX_TT_STR", "dflt"), "hello"), "withdefault set");
    gasnett_unsetenv("GEX_TT_STR");
    CHECK(gasnett_getenv("GEX_TT_STR") == NULL, "unsetenv");
    CHECK(!strcmp(gasnett_getenv_withdefault("GEX_TT_STR", "dflt"), "dflt"), "withdefault unset");
    gasnett_setenv("GEX_TT_YES", "yes");
    gasnett_setenv("GEX_TT_NO", "N");
    CHECK(gasnett_getenv_yesno_withdefault("GEX_TT_YES", 0) == 1, "yes");
    CHECK(gasnett_getenv_yesno_withdefault("GEX_TT_NO", 1) == 0, "no");
    CHECK(gasnett_getenv_yesno_withdefault("GEX_TT_UNSET", 1) == 1, "yesno default");
    gasnett_setenv("GEX_TT_INT", "16k");
    CHECK(gasnett_getenv_int_withdefault("GEX_TT_INT", 5, 1) == 16384, "int with suffix");
    gasnett_setenv("GEX_TT_INT", "0x20");
    CHECK(gasnett_getenv_int_withdefault("GEX_TT_INT", 5, 0) == 32, "hex int");
    CHECK(gasnett_getenv_int_withdefault("GEX_TT_UNSET", -5, 0) == -5, "int default");
    CHECK(gasnett_getenv_int_withdefault("GEX_TT_UNSET", 3, 1024) == 3, "mem default unscaled");
    gasnett_setenv("GEX_TT_DBL", "3/8");
    CHECK(gasnett_getenv_dbl_withdefault("GEX_TT_DBL", 1.0) == 0.375, "fraction");
    gasnett_setenv("GEX_TT_DBL", "-1e4");
    CHECK(gasnett_getenv_dbl_withdefault("GEX_TT_DBL", 1.0) == -1e4, "exponent");
    CHECK(gasnett_getenv_dbl_withdefault("GEX_TT_UNSET", 2.5) == 2.5, "dbl default");
    CHECK(gasnett_verboseenv() == 0, "not verbose");

    /* Backtraces into a pipe. */
    {
        static struct reader r;
        gasnett_setenv("GASNET_BACKTRACE_TYPE", "MYAPP");
        CHECK(backtrace_into_pipe(&r) == 0, "user backtrace result");
        CHECK(user_bt_calls == 1 && strstr(r.buf, "user backtrace hook ran"), "user hook: %s", r.buf);
        gasnett_setenv("GASNET_BACKTRACE_TYPE", "NATIVE");
        CHECK(backtrace_into_pipe(&r) == 0, "native backtrace result");
        CHECK(strstr(r.buf, "Backtrace of process") && r.len > 40, "native: %s", r.buf);
        CHECK(user_bt_calls == 1, "user hook not called for NATIVE");
        gasnett_setenv("GASNET_BACKTRACE_TYPE", "NONESUCH");
        CHECK(backtrace_into_pipe(&r) != 0 && r.len == 0, "unknown mechanism fails");
        gasnett_unsetenv("GASNET_BACKTRACE_TYPE");
        CHECK(backtrace_into_pipe(&r) == 0 && user_bt_calls == 2, "default order starts with USER");
        CHECK(gasnett_print_backtrace_ifenabled(1) == 0, "ifenabled off");
        /* The hook is an assignable function pointer. */
        int (*old)(int) = gasnett_print_backtrace_ifenabled;
        gasnett_print_backtrace_ifenabled = &user_backtrace;
        CHECK(backtrace_hook_via(gasnett_print_backtrace_ifenabled) == 0 && user_bt_calls == 3, "hook");
        gasnett_print_backtrace_ifenabled = old;
        CHECK(gasnett_print_backtrace_ifenabled == old, "hook restored");
    }

    /* GASNet-EX values as text. */
    {
        char b[256];
        size_t need = gasnett_format_ti(NULL, (1u << 1) | (1u << 2));
        CHECK(need == strlen("GEX_TI_EP|GEX_TI_ENTRY") + 1, "format_ti size %" PRIuSZ, need);
        CHECK(gasnett_format_ti(b, (1u << 1) | (1u << 2)) == need && !strcmp(b, "GEX_TI_EP|GEX_TI_ENTRY"),
              "%s", b);
        gasnett_format_dt(b, 1u << 5);
        CHECK(!strcmp(b, "GEX_DT_DBL"), "%s", b);
        gasnett_format_op(b, (1ull << 10) | (1ull << 26));
        CHECK(!strcmp(b, "GEX_OP_FADD|GEX_OP_USER_NC"), "%s", b);
        gasnett_format_op(b, 0);
        CHECK(!strcmp(b, "0"), "%s", b);
        void *addrs[2] = {(void *)0x1000, (void *)0x2000};
        char *al = (char *)malloc(gasnett_format_addrlist_bufsz(2));
        gasnett_format_addrlist(al, 2, addrs, 64);
        CHECK(!strcmp(al, "2 x 64: [0x1000 0x2000]"), "%s", al);
        free(al);
        struct {
            void *a;
            size_t n;
        } mv[1] = {{(void *)0x40, 8}};
        char *ml = (char *)malloc(gasnett_format_memveclist_bufsz(1));
        gasnett_format_memveclist(ml, 1, mv);
        CHECK(!strcmp(ml, "1: [{0x40,8}]"), "%s", ml);
        free(ml);
        ptrdiff_t ds[2] = {16, 64}, ss[2] = {8, 32};
        size_t cnt[3] = {4, 2, 2};
        char *pg = (char *)malloc(gasnett_format_putsgets_bufsz(2));
        gasnett_format_putsgets(pg, NULL, NULL, 3, (void *)0x100, ds, (void *)0x200, ss, 4, cnt, 2);
        CHECK(strstr(pg, "rank=3") && strstr(pg, "dststrides=[16,64]") && strstr(pg, "srcstrides=[8,32]") &&
                  strstr(pg, "count=[4,2]"),
              "%s", pg);
        free(pg);
    }

    /* Locks, condition variables, thread keys. */
    {
        gasnett_mutex_t m = GASNETT_MUTEX_INITIALIZER;
        gasnett_mutex_lock(&m);
        CHECK(gasnett_mutex_trylock(&m) == EBUSY, "trylock of a held mutex");
        gasnett_mutex_unlock(&m);
        CHECK(gasnett_mutex_trylock(&m) == 0, "trylock");
        gasnett_mutex_unlock(&m);
        gasnett_mutex_destroy(&m);
        gasnett_rwlock_t rw = GASNETT_RWLOCK_INITIALIZER;
        gasnett_rwlock_rdlock(&rw);
        CHECK(gasnett_rwlock_tryrdlock(&rw) == 0, "second reader");
        gasnett_rwlock_unlock(&rw);
        CHECK(gasnett_rwlock_trywrlock(&rw) != 0, "writer while a reader holds it");
        gasnett_rwlock_unlock(&rw);
        gasnett_rwlock_wrlock(&rw);
        gasnett_rwlock_unlock(&rw);
        gasnett_cond_t c;
        gasnett_cond_init(&c);
        gasnett_cond_signal(&c);
        gasnett_cond_destroy(&c);
        int x;
        CHECK(gasnett_threadkey_get(tk) == NULL, "fresh key");
        gasnett_threadkey_init(tk);
        gasnett_threadkey_set_noinit(tk, &x);
        CHECK(gasnett_threadkey_get(tk) == &x, "key");
    }

    /* Timers and sleep. */
    {
        gasnett_tick_t t0 = gasnett_ticks_now();
        uint64_t w0 = gasnett_gettimeofday_us();
        CHECK(gasnett_nsleep(2000000) == 0, "nsleep");
        CHECK(gasnett_nsleep(0) == 0, "nsleep(0)");
        gasnett_tick_t t1 = gasnett_ticks_now();
        uint64_t w1 = gasnett_gettimeofday_us();
        CHECK(gasnett_ticks_to_ns(t1 - t0) >= 2000000, "slept %" PRIu64 " ns", gasnett_ticks_to_ns(t1 - t0));
        CHECK(w1 - w0 >= 1900 && w1 - w0 < 10000000, "wall clock %" PRIu64 " us", w1 - w0);
        CHECK(w0 / 1000000 + 5 >= (uint64_t)time(NULL) && w0 / 1000000 <= (uint64_t)time(NULL), "epoch");
        CHECK(gasnett_tick_granularityus() > 0 && gasnett_tick_overheadus() > 0, "granularity, overhead");
    }

    /* Signals. */
    {
        gasnett_sighandlerfn_t prev = gasnett_reghandler(SIGUSR1, on_usr1);
        CHECK(prev == SIG_DFL, "previous handler");
        raise(SIGUSR1);
        CHECK(got_signal == SIGUSR1, "handler ran");
        CHECK(gasnett_reghandler(SIGUSR1, SIG_IGN) == on_usr1, "returns the handler replaced");
        raise(SIGUSR1); /* ignored */
        CHECK(gasnett_reghandler(SIGUSR1, SIG_DFL) == SIG_IGN, "SIG_IGN came back");
        CHECK(gasnett_reghandler(-1, SIG_DFL) == SIG_ERR, "bad signal number");
    }

    /* System queries. */
    {
        const char *exe = gasnett_exe_name();
        const char *base = strrchr(argv[0], '/');
        base = base ? base + 1 : argv[0];
        CHECK(exe[0] == '/' && strstr(exe, base), "exe_name %s", exe);
        CHECK(gasnett_cpu_count() > 0, "cpu count");
        CHECK(gasnett_getPhysMemSz(1) > (1u << 20), "physical memory");
        CHECK(*gasnett_gethostname() != 0, "hostname");
        char *p = (char *)gasnett_mmap(3 * GASNETT_PAGESIZE);
        CHECK(p && ((uintptr_t)p % GASNETT_PAGESIZE) == 0 && p[0] == 0 && p[3 * GASNETT_PAGESIZE - 1] == 0,
              "mmap");
        CHECK(gasnett_set_affinity(0) == 0, "affinity");
        CHECK(gasnett_maximize_rlimits() != 0, "rlimits");
        gasnett_setenv("GASNET_MAXIMIZE_RLIMIT_CPU", "0");
        CHECK(gasnett_maximize_rlimit(RLIMIT_CPU, "RLIMIT_CPU") != 0, "skipped limit is success");
        CHECK(gasnett_sched_yield() == 0, "yield");
        CHECK(gasnett_checksum("abc", 3) == gasnett_checksum("abc", 3) &&
                  gasnett_checksum("abc", 3) != gasnett_checksum("abd", 3),
              "checksum");
        gasnett_flush_streams();
    }

    if (failures) {
        fprintf(stderr, "tools_only: %d checks failed\n", failures);
        return 1;
    }
    printf("tools_only: all checks passed (%s)\n", GASNETT_THREAD_SAFE ? "par" : "seq");
    return 0;
}
