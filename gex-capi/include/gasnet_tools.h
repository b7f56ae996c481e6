/*
 * gasnet_tools.h: the portable tools GASNet client programs use beside the
 * API, as gex provides them: timers, atomics, memory fences, mutexes,
 * condition variables, thread keys, processor and host queries, sleeping,
 * the environment, a checksum and portability macros. Written for gex.
 *
 * Atomics, fences, locks and thread keys are inline (compiler builtins and
 * pthreads); the rest is in libgex. Tracing and statistics macros are
 * no-ops.
 */
#ifndef GEX_GASNET_TOOLS_H
#define GEX_GASNET_TOOLS_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Portability macros ---------------------------------------------------- */

#define GASNETT_INLINE(fnname) static inline
#define GASNETT_NEVER_INLINE(fnname, declarator) __attribute__((__noinline__)) declarator
#define GASNETT_NORETURN __attribute__((__noreturn__))
#define GASNETT_NORETURNP(fnptr)
#define GASNETT_MALLOC __attribute__((__malloc__))
#define GASNETT_PURE __attribute__((__pure__))
#define GASNETT_CONST __attribute__((__const__))
#define GASNETT_HOT __attribute__((__hot__))
#define GASNETT_COLD __attribute__((__cold__))
#define GASNETT_UNUSED __attribute__((__unused__))
#define GASNETT_FORMAT_PRINTF(fn, fmtarg, firstvararg, declarator)                               \
    __attribute__((__format__(__printf__, fmtarg, firstvararg))) declarator
#define GASNETT_CURRENT_FUNCTION __func__
#define GASNETT_PREDICT_TRUE(exp) __builtin_expect(!!(exp), 1)
#define GASNETT_PREDICT_FALSE(exp) __builtin_expect(!!(exp), 0)
#define GASNETT_LIKELY(exp) GASNETT_PREDICT_TRUE(exp)
#define GASNETT_UNLIKELY(exp) GASNETT_PREDICT_FALSE(exp)
#define GASNETT_PREFETCH_READ(addr) __builtin_prefetch((addr), 0)
#define GASNETT_PREFETCH_WRITE(addr) __builtin_prefetch((addr), 1)
#ifdef __cplusplus
#define GASNETT_RESTRICT __restrict__
#else
#define GASNETT_RESTRICT restrict
#endif
#define GASNETT_IDENT(identifiername, identifierstr)                                             \
    extern char identifiername[];                                                                \
    char identifiername[] = identifierstr
#define GASNETT_CACHE_LINE_BYTES 64
#define GASNETT_PAGESIZE 4096

/* Tracing and statistics: no-ops. */
#define GASNETT_TRACE_ENABLED 0
#define GASNETT_STATS_ENABLED 0
#define GASNETT_TRACE_PRINTF(...) ((void)0)
#define GASNETT_TRACE_PRINTF_FORCE(...) ((void)0)
#define GASNETT_TRACE_SETSOURCELINE(file, line) ((void)0)
#define GASNETT_TRACE_GETSOURCELINE(pfile, pline) ((void)0)
#define GASNETT_TRACE_FREEZESOURCELINE() ((void)0)
#define GASNETT_TRACE_UNFREEZESOURCELINE() ((void)0)
#define GASNETT_STATS_INIT(callback) ((void)0)
#define GASNETT_STATS_PRINTF(...) ((void)0)
#define GASNETT_STATS_PRINTF_FORCE(...) ((void)0)

/* ---- Timers ---------------------------------------------------------------- */

typedef uint64_t gasnett_tick_t;
#define GASNETT_TICK_MIN ((gasnett_tick_t)0)
#define GASNETT_TICK_MAX (~(gasnett_tick_t)0)
extern gasnett_tick_t gasnett_ticks_now(void);
extern uint64_t gasnett_ticks_to_us(gasnett_tick_t ticks);
extern uint64_t gasnett_ticks_to_ns(gasnett_tick_t ticks);
extern double gasnett_tick_granularityus(void);
extern double gasnett_tick_overheadus(void);

/* ---- Memory fences --------------------------------------------------------- */

#define gasnett_compiler_fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define gasnett_local_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define gasnett_local_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define gasnett_local_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)

/* ---- Atomics --------------------------------------------------------------- */
/* The memory-order flags of each call; every operation here is
 * sequentially consistent, which satisfies each of them. */
#define GASNETT_ATOMIC_NONE 0x00
#define GASNETT_ATOMIC_RMB_PRE 0x01
#define GASNETT_ATOMIC_WMB_PRE 0x02
#define GASNETT_ATOMIC_RMB_POST 0x04
#define GASNETT_ATOMIC_WMB_POST 0x08
#define GASNETT_ATOMIC_RMB_POST_IF_TRUE 0x10
#define GASNETT_ATOMIC_RMB_POST_IF_FALSE 0x20
#define GASNETT_ATOMIC_MB_PRE (GASNETT_ATOMIC_RMB_PRE | GASNETT_ATOMIC_WMB_PRE)
#define GASNETT_ATOMIC_MB_POST (GASNETT_ATOMIC_RMB_POST | GASNETT_ATOMIC_WMB_POST)
#define GASNETT_ATOMIC_REL GASNETT_ATOMIC_WMB_PRE
#define GASNETT_ATOMIC_ACQ GASNETT_ATOMIC_RMB_POST
#define GASNETT_ATOMIC_ACQ_IF_TRUE GASNETT_ATOMIC_RMB_POST_IF_TRUE
#define GASNETT_ATOMIC_ACQ_IF_FALSE GASNETT_ATOMIC_RMB_POST_IF_FALSE

typedef uint32_t gasnett_atomic_val_t;
typedef int32_t gasnett_atomic_sval_t;
#define GASNETT_ATOMIC_MAX ((gasnett_atomic_val_t)0xFFFFFFFFu)
#define GASNETT_ATOMIC_SIGNED_MIN ((gasnett_atomic_sval_t)INT32_MIN)
#define GASNETT_ATOMIC_SIGNED_MAX ((gasnett_atomic_sval_t)INT32_MAX)
typedef struct {
    gasnett_atomic_val_t _gex_v;
} gasnett_atomic_t;
#define gasnett_atomic_init(v) {(gasnett_atomic_val_t)(v)}
#define gasnett_atomic_signed(v) ((gasnett_atomic_sval_t)(v))

static inline gasnett_atomic_val_t gasnett_atomic_read(gasnett_atomic_t *p, int flags) {
    (void)flags;
    return __atomic_load_n(&p->_gex_v, __ATOMIC_SEQ_CST);
}
static inline void gasnett_atomic_set(gasnett_atomic_t *p, gasnett_atomic_val_t v, int flags) {
    (void)flags;
    __atomic_store_n(&p->_gex_v, v, __ATOMIC_SEQ_CST);
}
static inline void gasnett_atomic_increment(gasnett_atomic_t *p, int flags) {
    (void)flags;
    __atomic_add_fetch(&p->_gex_v, 1, __ATOMIC_SEQ_CST);
}
static inline void gasnett_atomic_decrement(gasnett_atomic_t *p, int flags) {
    (void)flags;
    __atomic_sub_fetch(&p->_gex_v, 1, __ATOMIC_SEQ_CST);
}
static inline int gasnett_atomic_decrement_and_test(gasnett_atomic_t *p, int flags) {
    (void)flags;
    return __atomic_sub_fetch(&p->_gex_v, 1, __ATOMIC_SEQ_CST) == 0;
}
static inline gasnett_atomic_val_t gasnett_atomic_add(gasnett_atomic_t *p, gasnett_atomic_val_t v, int flags) {
    (void)flags;
    return __atomic_add_fetch(&p->_gex_v, v, __ATOMIC_SEQ_CST);
}
static inline gasnett_atomic_val_t gasnett_atomic_subtract(gasnett_atomic_t *p, gasnett_atomic_val_t v, int flags) {
    (void)flags;
    return __atomic_sub_fetch(&p->_gex_v, v, __ATOMIC_SEQ_CST);
}
static inline int gasnett_atomic_compare_and_swap(gasnett_atomic_t *p, gasnett_atomic_val_t oldval,
                                                  gasnett_atomic_val_t newval, int flags) {
    (void)flags;
    return __atomic_compare_exchange_n(&p->_gex_v, &oldval, newval, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
static inline gasnett_atomic_val_t gasnett_atomic_swap(gasnett_atomic_t *p, gasnett_atomic_val_t v, int flags) {
    (void)flags;
    return __atomic_exchange_n(&p->_gex_v, v, __ATOMIC_SEQ_CST);
}

typedef uint64_t gasnett_atomic64_val_t;
typedef int64_t gasnett_atomic64_sval_t;
typedef struct {
    gasnett_atomic64_val_t _gex_v;
} gasnett_atomic64_t;
#define gasnett_atomic64_init(v) {(gasnett_atomic64_val_t)(v)}
static inline gasnett_atomic64_val_t gasnett_atomic64_read(gasnett_atomic64_t *p, int flags) {
    (void)flags;
    return __atomic_load_n(&p->_gex_v, __ATOMIC_SEQ_CST);
}
static inline void gasnett_atomic64_set(gasnett_atomic64_t *p, gasnett_atomic64_val_t v, int flags) {
    (void)flags;
    __atomic_store_n(&p->_gex_v, v, __ATOMIC_SEQ_CST);
}
static inline void gasnett_atomic64_increment(gasnett_atomic64_t *p, int flags) {
    (void)flags;
    __atomic_add_fetch(&p->_gex_v, 1, __ATOMIC_SEQ_CST);
}
static inline void gasnett_atomic64_decrement(gasnett_atomic64_t *p, int flags) {
    (void)flags;
    __atomic_sub_fetch(&p->_gex_v, 1, __ATOMIC_SEQ_CST);
}
static inline int gasnett_atomic64_decrement_and_test(gasnett_atomic64_t *p, int flags) {
    (void)flags;
    return __atomic_sub_fetch(&p->_gex_v, 1, __ATOMIC_SEQ_CST) == 0;
}
static inline gasnett_atomic64_val_t gasnett_atomic64_add(gasnett_atomic64_t *p, gasnett_atomic64_val_t v, int flags) {
    (void)flags;
    return __atomic_add_fetch(&p->_gex_v, v, __ATOMIC_SEQ_CST);
}
static inline gasnett_atomic64_val_t gasnett_atomic64_subtract(gasnett_atomic64_t *p, gasnett_atomic64_val_t v,
                                                               int flags) {
    (void)flags;
    return __atomic_sub_fetch(&p->_gex_v, v, __ATOMIC_SEQ_CST);
}
static inline int gasnett_atomic64_compare_and_swap(gasnett_atomic64_t *p, gasnett_atomic64_val_t oldval,
                                                    gasnett_atomic64_val_t newval, int flags) {
    (void)flags;
    return __atomic_compare_exchange_n(&p->_gex_v, &oldval, newval, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
static inline gasnett_atomic64_val_t gasnett_atomic64_swap(gasnett_atomic64_t *p, gasnett_atomic64_val_t v,
                                                           int flags) {
    (void)flags;
    return __atomic_exchange_n(&p->_gex_v, v, __ATOMIC_SEQ_CST);
}

/* ---- Mutexes, condition variables, thread keys ----------------------------- */

typedef pthread_mutex_t gasnett_mutex_t;
#define GASNETT_MUTEX_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#define gasnett_mutex_init(pl) pthread_mutex_init((pl), 0)
#define gasnett_mutex_destroy(pl) pthread_mutex_destroy(pl)
#define gasnett_mutex_lock(pl) pthread_mutex_lock(pl)
#define gasnett_mutex_unlock(pl) pthread_mutex_unlock(pl)
#define gasnett_mutex_trylock(pl) (pthread_mutex_trylock(pl) == 0 ? 0 : EBUSY_GASNETT)
#define EBUSY_GASNETT 16
#define gasnett_mutex_assertlocked(pl) ((void)0)
#define gasnett_mutex_assertunlocked(pl) ((void)0)

typedef pthread_cond_t gasnett_cond_t;
#define GASNETT_COND_INITIALIZER PTHREAD_COND_INITIALIZER
#define gasnett_cond_init(pc) pthread_cond_init((pc), 0)
#define gasnett_cond_destroy(pc) pthread_cond_destroy(pc)
#define gasnett_cond_signal(pc) pthread_cond_signal(pc)
#define gasnett_cond_broadcast(pc) pthread_cond_broadcast(pc)
#define gasnett_cond_wait(pc, pl) pthread_cond_wait((pc), (pl))

/* A thread key holds one void* per thread. */
#define GASNETT_THREADKEY_DECLARE(key) extern __thread void *_gex_tk_##key
#define GASNETT_THREADKEY_DEFINE(key) __thread void *_gex_tk_##key
#define gasnett_threadkey_get(key) (_gex_tk_##key)
#define gasnett_threadkey_set(key, newvalue) ((void)(_gex_tk_##key = (void *)(newvalue)))
#define gasnett_threadkey_get_noinit(key) gasnett_threadkey_get(key)
#define gasnett_threadkey_set_noinit(key, newvalue) gasnett_threadkey_set(key, newvalue)
#define gasnett_threadkey_init(key) ((void)0)

/* ---- Processor, host, sleeping, environment, checksum ---------------------- */

extern int gasnett_cpu_count(void);
extern int gasnett_sched_yield(void);
extern void gasnett_nsleep(uint64_t ns_delay);
extern const char *gasnett_gethostname(void);
extern const char *gasnett_getenv(const char *name);
extern const char *gasnett_getenv_withdefault(const char *name, const char *dflt);
extern int gasnett_getenv_yesno_withdefault(const char *name, int dflt);
extern int64_t gasnett_getenv_int_withdefault(const char *name, int64_t dflt, uint64_t mem_size_multiplier);
extern void gasnett_setenv(const char *name, const char *value);
extern void gasnett_unsetenv(const char *name);
extern uint64_t gasnett_checksum(const void *p, size_t numbytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEX_GASNET_TOOLS_H */
