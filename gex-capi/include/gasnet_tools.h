/*
 * gasnet_tools.h: gex's GASNet tools, the communication-independent
 * utilities of GASNet (tools specification 1.20, as the GASNet-EX 2025.8.0
 * release documents them in README-tools). Written for gex.
 *
 * Usable alone (a tools-only program links libgasnet_tools-seq.a or
 * libgasnet_tools-par.a, the gex-tools crate) or with gasnetex.h (libgex
 * holds the same functions). What is inline here: the platform and
 * compiler macros, the annotations, atomics and fences (compiler __atomic
 * builtins), mutexes, condition variables, reader/writer locks and thread
 * keys (pthreads), the byte counts of single words. The rest is out of line
 * in Rust. Tracing and statistics are compiled out: their macros are the
 * documented no-ops (API.md lists them).
 *
 * Threading: GASNETT_THREAD_SAFE is 1 when the client asks for it
 * (-DGASNETT_THREAD_SAFE=1, or GASNET_PAR / GASNET_PARSYNC) or names no
 * model, 0 with GASNETT_THREAD_SINGLE or GASNET_SEQ. Either way every
 * atomic here is a real atomic and every lock a real lock, so the "weak"
 * atomics are as strong as the strong ones.
 */
#ifndef GEX_GASNET_TOOLS_H
#define GEX_GASNET_TOOLS_H

#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>

/* ---- Thread model -------------------------------------------------------- */

#if defined(GASNETT_THREAD_SAFE)
#if defined(GASNETT_THREAD_SINGLE)
#error gasnet_tools.h: define at most one of GASNETT_THREAD_SAFE and GASNETT_THREAD_SINGLE
#endif
#elif defined(GASNETT_THREAD_SINGLE)
#define GASNETT_THREAD_SAFE 0
#elif defined(GASNET_SEQ) && !defined(GASNET_PAR) && !defined(GASNET_PARSYNC)
#define GASNETT_THREAD_SAFE 0
#else
#define GASNETT_THREAD_SAFE 1
#endif

/* ---- Configuration the reference's configure would have probed ---------- */
/* What is true of gex's platforms (Linux, glibc, gcc or clang). Each is
 * guarded: a client's own definition wins. */
#ifndef HAVE_PTHREAD_H
#define HAVE_PTHREAD_H 1
#endif
#ifndef HAVE_PTHREAD_SETCONCURRENCY
#define HAVE_PTHREAD_SETCONCURRENCY 1
#endif
#ifndef HAVE_MMAP
#define HAVE_MMAP 1
#endif
#ifndef HAVE_INTTYPES_H
#define HAVE_INTTYPES_H 1
#endif
#ifndef HAVE_STDINT_H
#define HAVE_STDINT_H 1
#endif
#ifndef SIZEOF_CHAR
#define SIZEOF_CHAR 1
#endif
#ifndef SIZEOF_SHORT
#define SIZEOF_SHORT 2
#endif
#ifndef SIZEOF_INT
#define SIZEOF_INT 4
#endif
#ifndef SIZEOF_LONG
#define SIZEOF_LONG __SIZEOF_LONG__
#endif
#ifndef SIZEOF_LONG_LONG
#define SIZEOF_LONG_LONG 8
#endif
#ifndef SIZEOF_VOID_P
#define SIZEOF_VOID_P __SIZEOF_POINTER__
#endif
#ifndef SIZEOF_SIZE_T
#define SIZEOF_SIZE_T __SIZEOF_SIZE_T__
#endif
#ifndef SIZEOF_FLOAT
#define SIZEOF_FLOAT 4
#endif
#ifndef SIZEOF_DOUBLE
#define SIZEOF_DOUBLE 8
#endif

/* Feature controls (README-tools "Feature control"): gcc and clang have
 * each of these. */
#ifndef GASNETT_USE_GCC_ATTRIBUTE_ALWAYSINLINE
#define GASNETT_USE_GCC_ATTRIBUTE_ALWAYSINLINE 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_NOINLINE
#define GASNETT_USE_GCC_ATTRIBUTE_NOINLINE 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_MALLOC
#define GASNETT_USE_GCC_ATTRIBUTE_MALLOC 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_WARNUNUSEDRESULT
#define GASNETT_USE_GCC_ATTRIBUTE_WARNUNUSEDRESULT 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_USED
#define GASNETT_USE_GCC_ATTRIBUTE_USED 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_MAYALIAS
#define GASNETT_USE_GCC_ATTRIBUTE_MAYALIAS 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_NORETURN
#define GASNETT_USE_GCC_ATTRIBUTE_NORETURN 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_PURE
#define GASNETT_USE_GCC_ATTRIBUTE_PURE 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_CONST
#define GASNETT_USE_GCC_ATTRIBUTE_CONST 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_DEPRECATED
#define GASNETT_USE_GCC_ATTRIBUTE_DEPRECATED 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_FORMAT
#define GASNETT_USE_GCC_ATTRIBUTE_FORMAT 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_FORMAT_FUNCPTR
#define GASNETT_USE_GCC_ATTRIBUTE_FORMAT_FUNCPTR 1
#endif
#ifndef GASNETT_USE_GCC_ATTRIBUTE_FORMAT_FUNCPTR_ARG
#define GASNETT_USE_GCC_ATTRIBUTE_FORMAT_FUNCPTR_ARG 1
#endif
#ifndef GASNETT_USE_BUILTIN_CONSTANT_P
#define GASNETT_USE_BUILTIN_CONSTANT_P 1
#endif
#ifndef GASNETT_USE_BUILTIN_PREFETCH
#define GASNETT_USE_BUILTIN_PREFETCH 1
#endif
#ifndef GASNETT_USE_BUILTIN_EXPECT
#define GASNETT_USE_BUILTIN_EXPECT 1
#endif
#ifndef GASNETT_USE_BUILTIN_UNREACHABLE
#define GASNETT_USE_BUILTIN_UNREACHABLE 1
#endif
#ifndef GASNETT_USE_PRAGMA_GCC_DIAGNOSTIC
#define GASNETT_USE_PRAGMA_GCC_DIAGNOSTIC 1
#endif
#ifndef GASNETT_USE_TRUE_MUTEXES
#define GASNETT_USE_TRUE_MUTEXES 1
#endif
#ifndef GASNETT_USE_CTYPE_WRAPPERS
#define GASNETT_USE_CTYPE_WRAPPERS 0
#endif

/* ---- Portable platform macros -------------------------------------------- */
/* Only the true ones are defined (an #if on another platform's name is 0). */

/* Compiler. Family ids are gex's own small integers. */
#define _GEX_TOOLS_STR1(x) #x
#define _GEX_TOOLS_STR(x) _GEX_TOOLS_STR1(x)
/* GASNet's stringizing and pasting helpers (macro arguments expanded
 * first), which clients use beside the tools. */
#ifndef _STRINGIFY
#define _STRINGIFY(x) _GEX_TOOLS_STR(x)
#endif
#ifndef _CONCAT
#define _GEX_TOOLS_CONCAT1(a, b) a##b
#define _CONCAT(a, b) _GEX_TOOLS_CONCAT1(a, b)
#endif
#define PLATFORM_COMPILER_VERSION_INT(maj, min, pat) (((maj) << 16) | ((min) << 8) | (pat))
/* Other portable-platform headers (Open MPI's mpi.h brings one) spell the
 * compiler version differently: gex's take their place. */
#undef PLATFORM_COMPILER_VERSION
#undef PLATFORM_COMPILER_VERSION_STR
#if defined(__clang__)
#define PLATFORM_COMPILER_CLANG 1
#define PLATFORM_COMPILER_FAMILYNAME CLANG
#define PLATFORM_COMPILER_FAMILYID 2
#ifdef __cplusplus
#define PLATFORM_COMPILER_CLANG_CXX 1
#else
#define PLATFORM_COMPILER_CLANG_C 1
#endif
#define PLATFORM_COMPILER_VERSION                                                                 \
    PLATFORM_COMPILER_VERSION_INT(__clang_major__, __clang_minor__, __clang_patchlevel__)
#define PLATFORM_COMPILER_VERSION_STR                                                             \
    _GEX_TOOLS_STR(__clang_major__) "." _GEX_TOOLS_STR(__clang_minor__) "." _GEX_TOOLS_STR(      \
        __clang_patchlevel__)
#elif defined(__GNUC__)
#define PLATFORM_COMPILER_GNU 1
#define PLATFORM_COMPILER_FAMILYNAME GNU
#define PLATFORM_COMPILER_FAMILYID 1
#ifdef __cplusplus
#define PLATFORM_COMPILER_GNU_CXX 1
#else
#define PLATFORM_COMPILER_GNU_C 1
#endif
#define PLATFORM_COMPILER_VERSION                                                                 \
    PLATFORM_COMPILER_VERSION_INT(__GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__)
#define PLATFORM_COMPILER_VERSION_STR                                                             \
    _GEX_TOOLS_STR(__GNUC__) "." _GEX_TOOLS_STR(__GNUC_MINOR__) "." _GEX_TOOLS_STR(              \
        __GNUC_PATCHLEVEL__)
#else
#error gasnet_tools.h: gex supports gcc and clang (and compilers that present as them)
#endif
#ifdef __cplusplus
#define PLATFORM_COMPILER_CXX 1
#define PLATFORM_COMPILER_CXX_LANGLVL __cplusplus
#define PLATFORM_COMPILER_ID (PLATFORM_COMPILER_FAMILYID * 2 + 1)
#else
#define PLATFORM_COMPILER_C 1
#ifdef __STDC_VERSION__
#define PLATFORM_COMPILER_C_LANGLVL __STDC_VERSION__
#else
#define PLATFORM_COMPILER_C_LANGLVL 199000L
#endif
#define PLATFORM_COMPILER_ID (PLATFORM_COMPILER_FAMILYID * 2)
#endif
#define PLATFORM_COMPILER_VERSION_GT(maj, min, pat)                                               \
    (PLATFORM_COMPILER_VERSION > PLATFORM_COMPILER_VERSION_INT(maj, min, pat))
#define PLATFORM_COMPILER_VERSION_GE(maj, min, pat)                                               \
    (PLATFORM_COMPILER_VERSION >= PLATFORM_COMPILER_VERSION_INT(maj, min, pat))
#define PLATFORM_COMPILER_VERSION_EQ(maj, min, pat)                                               \
    (PLATFORM_COMPILER_VERSION == PLATFORM_COMPILER_VERSION_INT(maj, min, pat))
#define PLATFORM_COMPILER_VERSION_LT(maj, min, pat)                                               \
    (PLATFORM_COMPILER_VERSION < PLATFORM_COMPILER_VERSION_INT(maj, min, pat))
#define PLATFORM_COMPILER_VERSION_LE(maj, min, pat)                                               \
    (PLATFORM_COMPILER_VERSION <= PLATFORM_COMPILER_VERSION_INT(maj, min, pat))
#define PLATFORM_COMPILER_IDSTR                                                                   \
    "|COMPILER_FAMILY:" _GEX_TOOLS_STR(PLATFORM_COMPILER_FAMILYNAME) "|COMPILER_VERSION:"        \
        PLATFORM_COMPILER_VERSION_STR "|COMPILER_FAMILYID:" _GEX_TOOLS_STR(                      \
            PLATFORM_COMPILER_FAMILYID) "|"

/* Operating system. */
#if defined(__linux__)
#define PLATFORM_OS_LINUX 1
#define PLATFORM_OS_FAMILYNAME LINUX
#define PLATFORM_OS_FAMILYID 1
#else
#error gasnet_tools.h: gex runs on Linux
#endif

/* Architecture. */
#if defined(__x86_64__)
#define PLATFORM_ARCH_X86_64 1
#define PLATFORM_ARCH_FAMILYNAME X86_64
#define PLATFORM_ARCH_FAMILYID 1
#elif defined(__aarch64__)
#define PLATFORM_ARCH_AARCH64 1
#define PLATFORM_ARCH_FAMILYNAME AARCH64
#define PLATFORM_ARCH_FAMILYID 2
#elif defined(__powerpc64__)
#define PLATFORM_ARCH_POWERPC 1
#define PLATFORM_ARCH_FAMILYNAME POWERPC
#define PLATFORM_ARCH_FAMILYID 3
#elif defined(__riscv)
#define PLATFORM_ARCH_RISCV 1
#define PLATFORM_ARCH_FAMILYNAME RISCV
#define PLATFORM_ARCH_FAMILYID 4
#else
#define PLATFORM_ARCH_UNKNOWN 1
#define PLATFORM_ARCH_FAMILYNAME UNKNOWN
#define PLATFORM_ARCH_FAMILYID 0
#endif
#if __SIZEOF_POINTER__ == 8
#define PLATFORM_ARCH_64 1
#elif __SIZEOF_POINTER__ == 4
#define PLATFORM_ARCH_32 1
#else
#error gasnet_tools.h: pointers of 4 or 8 bytes
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define PLATFORM_ARCH_BIG_ENDIAN 1
#else
#define PLATFORM_ARCH_LITTLE_ENDIAN 1
#endif

/* ---- Linkage and compiler annotations -------------------------------------- */

#ifdef __cplusplus
#define GASNETT_EXTERNC extern "C"
#define GASNETT_BEGIN_EXTERNC extern "C" {
#define GASNETT_END_EXTERNC }
#else
#define GASNETT_EXTERNC extern
#define GASNETT_BEGIN_EXTERNC
#define GASNETT_END_EXTERNC
#endif

#define GASNETT_INLINE(fnname) static __inline__ __attribute__((__always_inline__))
#define GASNETT_NEVER_INLINE(fnname, declarator) __attribute__((__noinline__)) declarator
#define GASNETT_NORETURN __attribute__((__noreturn__))
#define GASNETT_NORETURNP(fnname)
#define GASNETT_MALLOC __attribute__((__malloc__))
#define GASNETT_MALLOCP(fnname)
#define GASNETT_PURE __attribute__((__pure__))
#define GASNETT_PUREP(fnname)
#define GASNETT_CONST __attribute__((__const__))
#define GASNETT_CONSTP(fnname)
#define GASNETT_HOT __attribute__((__hot__))
#define GASNETT_COLD __attribute__((__cold__))
#define GASNETT_DEPRECATED __attribute__((__deprecated__))
#define GASNETT_WARN_UNUSED_RESULT __attribute__((__warn_unused_result__))
#define GASNETT_USED __attribute__((__used__))
#define GASNETT_UNUSED __attribute__((__unused__))
#define GASNETT_MAY_ALIAS __attribute__((__may_alias__))
#define GASNETT_FORMAT_PRINTF(fnname, fmtarg, firstvararg, declarator)                            \
    __attribute__((__format__(__printf__, fmtarg, firstvararg))) declarator
#define GASNETT_FORMAT_PRINTF_FUNCPTR(fnname, fmtarg, firstvararg, declarator)                    \
    declarator __attribute__((__format__(__printf__, fmtarg, firstvararg)))
#if defined(__cplusplus) && __cplusplus >= 201703L
#define GASNETT_FALLTHROUGH [[fallthrough]];
#elif defined(__has_attribute)
#if __has_attribute(__fallthrough__)
#define GASNETT_FALLTHROUGH __attribute__((__fallthrough__));
#endif
#endif
#ifndef GASNETT_FALLTHROUGH
#define GASNETT_FALLTHROUGH
#endif
#define GASNETT_CURRENT_FUNCTION __func__
#define GASNETT_PREDICT_TRUE(expr) __builtin_expect(!!(expr), 1)
#define GASNETT_PREDICT_FALSE(expr) __builtin_expect(!!(expr), 0)
#define GASNETT_LIKELY(expr) GASNETT_PREDICT_TRUE(expr)
#define GASNETT_UNLIKELY(expr) GASNETT_PREDICT_FALSE(expr)
#ifndef if_pf
#define if_pf(cond) if (GASNETT_PREDICT_FALSE(cond))
#endif
#ifndef if_pt
#define if_pt(cond) if (GASNETT_PREDICT_TRUE(cond))
#endif
#define gasnett_constant_p(expr) __builtin_constant_p(expr)
#define gasnett_unreachable() __builtin_unreachable()
#define gasnett_assume(cond) ((cond) ? (void)0 : __builtin_unreachable())
#define GASNETT_PREFETCH_READ(addr) __builtin_prefetch((addr), 0)
#define GASNETT_PREFETCH_WRITE(addr) __builtin_prefetch((addr), 1)
#define GASNETT_RESTRICT __restrict__
#define GASNETT_IDENT(identName, identText)                                                       \
    extern char identName[];                                                                     \
    __attribute__((__used__)) char identName[] = identText

/* Each argument evaluated exactly once, its value discarded. */
#define GASNETT_UNUSED_ARGS1(a1) ((void)(a1))
#define GASNETT_UNUSED_ARGS2(a1, a2) ((void)(a1), (void)(a2))
#define GASNETT_UNUSED_ARGS3(a1, a2, a3) ((void)(a1), (void)(a2), (void)(a3))
#define GASNETT_UNUSED_ARGS4(a1, a2, a3, a4) ((void)(a1), (void)(a2), (void)(a3), (void)(a4))
#define GASNETT_UNUSED_ARGS5(a1, a2, a3, a4, a5)                                                  \
    (GASNETT_UNUSED_ARGS4(a1, a2, a3, a4), (void)(a5))
#define GASNETT_UNUSED_ARGS6(a1, a2, a3, a4, a5, a6)                                              \
    (GASNETT_UNUSED_ARGS4(a1, a2, a3, a4), (void)(a5), (void)(a6))
#define GASNETT_UNUSED_ARGS7(a1, a2, a3, a4, a5, a6, a7)                                          \
    (GASNETT_UNUSED_ARGS4(a1, a2, a3, a4), (void)(a5), (void)(a6), (void)(a7))
#define GASNETT_UNUSED_ARGS8(a1, a2, a3, a4, a5, a6, a7, a8)                                      \
    (GASNETT_UNUSED_ARGS4(a1, a2, a3, a4), GASNETT_UNUSED_ARGS4(a5, a6, a7, a8))

/* C99 formats of size_t and ssize_t (GASNet's spelling beside inttypes.h's). */
#ifndef PRIuSZ
#define PRIuSZ "zu"
#endif
#ifndef PRIdSZ
#define PRIdSZ "zd"
#endif
#ifndef PRIxSZ
#define PRIxSZ "zx"
#endif
#ifndef PRIXSZ
#define PRIXSZ "zX"
#endif
#ifndef PRIoSZ
#define PRIoSZ "zo"
#endif
#ifndef PRIiSZ
#define PRIiSZ "zi"
#endif

/* ---- Versions, configuration, system ----------------------------------------- */

#define GASNETT_SPEC_VERSION_MAJOR 1
#define GASNETT_SPEC_VERSION_MINOR 20
/* The GASNet-EX release whose interface gex provides. */
#define GASNETT_RELEASE_VERSION_MAJOR 2025
#define GASNETT_RELEASE_VERSION_MINOR 8
#define GASNETT_RELEASE_VERSION_PATCH 0
/* The same numbers under GASNet's names, for tools-only clients (gasnetex.h
 * defines them identically). */
#ifndef GASNET_RELEASE_VERSION_MAJOR
#define GASNET_RELEASE_VERSION_MAJOR 2025
#endif
#ifndef GASNET_RELEASE_VERSION_MINOR
#define GASNET_RELEASE_VERSION_MINOR 8
#endif
#ifndef GASNET_RELEASE_VERSION_PATCH
#define GASNET_RELEASE_VERSION_PATCH 0
#endif

#if GASNETT_THREAD_SAFE
#define _GEX_TOOLS_THREADMODEL "PAR"
#else
#define _GEX_TOOLS_THREADMODEL "SEQ"
#endif
#if PLATFORM_ARCH_64
#define _GEX_TOOLS_PTRBITS "64bit"
#else
#define _GEX_TOOLS_PTRBITS "32bit"
#endif
#define GASNETT_CONFIG_STRING                                                                     \
    "RELEASE=2025.8.0,SPEC=1.20,TOOLS=gex,THREADMODEL=" _GEX_TOOLS_THREADMODEL                   \
    ",PTR=" _GEX_TOOLS_PTRBITS ",nodebug,notrace,nostats"

#if defined(__x86_64__)
#define GASNETT_SYSTEM_TUPLE "x86_64-pc-linux-gnu"
#elif defined(__aarch64__)
#define GASNETT_SYSTEM_TUPLE "aarch64-unknown-linux-gnu"
#elif defined(__powerpc64__)
#define GASNETT_SYSTEM_TUPLE "powerpc64le-unknown-linux-gnu"
#elif defined(__riscv)
#define GASNETT_SYSTEM_TUPLE "riscv64-unknown-linux-gnu"
#else
#define GASNETT_SYSTEM_TUPLE "unknown-unknown-linux-gnu"
#endif
#define GASNETT_SYSTEM_NAME GASNETT_SYSTEM_TUPLE

#if defined(__aarch64__) || defined(__powerpc64__)
#define GASNETT_CACHE_LINE_BYTES 128
#else
#define GASNETT_CACHE_LINE_BYTES 64
#endif
#define GASNETT_PAGESIZE 4096
#define GASNETT_PAGESHIFT 12
/* The threads a process may have that use the tools (test sizing only:
 * gex sets no limit of its own below this). */
#define GASNETT_MAX_THREADS 256
#define GASNETT_SET_AFFINITY_SUPPORT 1

GASNETT_BEGIN_EXTERNC

extern const char *gasnett_performance_warning_str(void);
extern const char *gasnett_release_version_str(void);
extern uint64_t gasnett_release_version(void);
extern const char *gasnett_gethostname(void);
extern const char *gasnett_exe_name(void);
extern int gasnett_cpu_count(void);
extern uint64_t gasnett_getPhysMemSz(int failureIsFatal);
static __inline__ int gasnett_isLittleEndian(void) {
    const union {
        uint32_t w;
        unsigned char b[4];
    } u = {1};
    return u.b[0] == 1;
}
extern int gasnett_set_affinity(int rank);
extern int gasnett_sched_yield(void);
extern int gasnett_nsleep(uint64_t ns_delay);
extern void gasnett_flush_streams(void);
extern void gasnett_close_streams(void);
extern void gasnett_killmyprocess(int exitcode) __attribute__((__noreturn__));
typedef void (*gasnett_sighandlerfn_t)(int);
extern gasnett_sighandlerfn_t gasnett_reghandler(int sigtocatch, gasnett_sighandlerfn_t fp);
extern int gasnett_maximize_rlimits(void);
extern int gasnett_maximize_rlimit(int res, const char *lim_desc);
extern void *gasnett_mmap(size_t size);
extern uint64_t gasnett_checksum(const void *p, size_t numbytes);

/* ---- Timers -------------------------------------------------------------- */
/* Ticks are nanoseconds of CLOCK_MONOTONIC. */

typedef uint64_t gasnett_tick_t;
#define GASNETT_TICK_MIN ((gasnett_tick_t)0)
#define GASNETT_TICK_MAX (~(gasnett_tick_t)0)
extern gasnett_tick_t gasnett_ticks_now(void);
extern uint64_t gasnett_ticks_to_us(gasnett_tick_t ticks);
extern uint64_t gasnett_ticks_to_ns(gasnett_tick_t ticks);
extern double gasnett_tick_granularityus(void);
extern double gasnett_tick_overheadus(void);
extern uint64_t gasnett_gettimeofday_us(void);

/* ---- Memory fences ----------------------------------------------------------- */

#define gasnett_compiler_fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define gasnett_local_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define gasnett_local_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define gasnett_local_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#if GASNETT_THREAD_SAFE
#define gasnett_weak_mb() gasnett_local_mb()
#define gasnett_weak_wmb() gasnett_local_wmb()
#define gasnett_weak_rmb() gasnett_local_rmb()
#else
#define gasnett_weak_mb() gasnett_compiler_fence()
#define gasnett_weak_wmb() gasnett_compiler_fence()
#define gasnett_weak_rmb() gasnett_compiler_fence()
#endif
#if defined(__x86_64__) || defined(__i386__)
#define gasnett_spinloop_hint() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define gasnett_spinloop_hint() __asm__ __volatile__("yield" ::: "memory")
#else
#define gasnett_spinloop_hint() gasnett_compiler_fence()
#endif

/* ---- Atomics ----------------------------------------------------------------- */
/* Each operation is a relaxed __atomic builtin between the fences its flags
 * ask for: a read fence is an acquire fence, a write fence a release fence,
 * both a full fence (sequentially consistent). The flags are usually
 * constants, so the fences not asked for compile away. */
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

#define GASNETT_HAVE_ATOMIC_ADD_SUB 1
#define GASNETT_HAVE_ATOMIC_CAS 1
#define GASNETT_HAVE_STRONGATOMIC_ADD_SUB 1
#define GASNETT_HAVE_STRONGATOMIC_CAS 1
/* The builtins are lock-free and signal-safe on gex's platforms, so
 * GASNETT_STRONGATOMIC{,32,64}_NOT_SIGNALSAFE are not defined. */

static __inline__ void _gex_tools_fence_before(int flags) {
    switch (flags & (GASNETT_ATOMIC_RMB_PRE | GASNETT_ATOMIC_WMB_PRE)) {
    case 0: break;
    case GASNETT_ATOMIC_RMB_PRE: __atomic_thread_fence(__ATOMIC_ACQUIRE); break;
    case GASNETT_ATOMIC_WMB_PRE: __atomic_thread_fence(__ATOMIC_RELEASE); break;
    default: __atomic_thread_fence(__ATOMIC_SEQ_CST); break;
    }
}
static __inline__ void _gex_tools_fence_after(int flags) {
    switch (flags & (GASNETT_ATOMIC_RMB_POST | GASNETT_ATOMIC_WMB_POST)) {
    case 0: break;
    case GASNETT_ATOMIC_RMB_POST: __atomic_thread_fence(__ATOMIC_ACQUIRE); break;
    case GASNETT_ATOMIC_WMB_POST: __atomic_thread_fence(__ATOMIC_RELEASE); break;
    default: __atomic_thread_fence(__ATOMIC_SEQ_CST); break;
    }
}
/* After a boolean operation (compare-and-swap, decrement-and-test). */
static __inline__ int _gex_tools_fence_after_bool(int flags, int result) {
    _gex_tools_fence_after(flags);
    if ((flags & GASNETT_ATOMIC_RMB_POST_IF_TRUE) && result) __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if ((flags & GASNETT_ATOMIC_RMB_POST_IF_FALSE) && !result) __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return result;
}

/* One family of operations over a struct holding one integer (_gex_v):
 * PFX_read, _set, _increment, _decrement, _decrement_and_test, _add,
 * _subtract, _compare_and_swap, _swap. */
#define _GEX_TOOLS_ATOMIC_OPS(PFX, T, V)                                                          \
    static __inline__ V PFX##_read(T *p, int flags) {                                             \
        _gex_tools_fence_before(flags);                                                          \
        V v = __atomic_load_n(&p->_gex_v, __ATOMIC_RELAXED);                                     \
        _gex_tools_fence_after(flags);                                                           \
        return v;                                                                                \
    }                                                                                            \
    static __inline__ void PFX##_set(T *p, V v, int flags) {                                      \
        _gex_tools_fence_before(flags);                                                          \
        __atomic_store_n(&p->_gex_v, v, __ATOMIC_RELAXED);                                       \
        _gex_tools_fence_after(flags);                                                           \
    }                                                                                            \
    static __inline__ V PFX##_add(T *p, V v, int flags) {                                         \
        _gex_tools_fence_before(flags);                                                          \
        V r = __atomic_add_fetch(&p->_gex_v, v, __ATOMIC_RELAXED);                               \
        _gex_tools_fence_after(flags);                                                           \
        return r;                                                                                \
    }                                                                                            \
    static __inline__ V PFX##_subtract(T *p, V v, int flags) {                                    \
        _gex_tools_fence_before(flags);                                                          \
        V r = __atomic_sub_fetch(&p->_gex_v, v, __ATOMIC_RELAXED);                               \
        _gex_tools_fence_after(flags);                                                           \
        return r;                                                                                \
    }                                                                                            \
    static __inline__ void PFX##_increment(T *p, int flags) { (void)PFX##_add(p, 1, flags); }     \
    static __inline__ void PFX##_decrement(T *p, int flags) { (void)PFX##_subtract(p, 1, flags); }\
    static __inline__ int PFX##_decrement_and_test(T *p, int flags) {                             \
        _gex_tools_fence_before(flags);                                                          \
        int r = __atomic_sub_fetch(&p->_gex_v, 1, __ATOMIC_RELAXED) == 0;                        \
        return _gex_tools_fence_after_bool(flags, r);                                            \
    }                                                                                            \
    static __inline__ int PFX##_compare_and_swap(T *p, V oldval, V newval, int flags) {           \
        _gex_tools_fence_before(flags);                                                          \
        int r = __atomic_compare_exchange_n(&p->_gex_v, &oldval, newval, 0, __ATOMIC_RELAXED,    \
                                            __ATOMIC_RELAXED);                                   \
        return _gex_tools_fence_after_bool(flags, r);                                            \
    }                                                                                            \
    static __inline__ V PFX##_swap(T *p, V v, int flags) {                                        \
        _gex_tools_fence_before(flags);                                                          \
        V r = __atomic_exchange_n(&p->_gex_v, v, __ATOMIC_RELAXED);                              \
        _gex_tools_fence_after(flags);                                                           \
        return r;                                                                                \
    }

/* gasnett_atomic_t: 32 bits, wrapping. */
typedef uint32_t gasnett_atomic_val_t;
typedef int32_t gasnett_atomic_sval_t;
#define GASNETT_ATOMIC_MAX ((gasnett_atomic_val_t)0xFFFFFFFFu)
#define GASNETT_ATOMIC_SIGNED_MIN ((gasnett_atomic_sval_t)INT32_MIN)
#define GASNETT_ATOMIC_SIGNED_MAX ((gasnett_atomic_sval_t)INT32_MAX)
#define gasnett_atomic_signed(v) ((gasnett_atomic_sval_t)(v))
typedef struct {
    gasnett_atomic_val_t _gex_v;
} gasnett_atomic_t;
#define gasnett_atomic_init(v) {(gasnett_atomic_val_t)(v)}
_GEX_TOOLS_ATOMIC_OPS(gasnett_atomic, gasnett_atomic_t, gasnett_atomic_val_t)

/* Strong atomics: the same operations (the weak ones are already atomic
 * and signal-safe). */
typedef gasnett_atomic_val_t gasnett_strongatomic_val_t;
typedef gasnett_atomic_sval_t gasnett_strongatomic_sval_t;
#define GASNETT_STRONGATOMIC_MAX GASNETT_ATOMIC_MAX
#define GASNETT_STRONGATOMIC_SIGNED_MIN GASNETT_ATOMIC_SIGNED_MIN
#define GASNETT_STRONGATOMIC_SIGNED_MAX GASNETT_ATOMIC_SIGNED_MAX
#define gasnett_strongatomic_signed(v) ((gasnett_strongatomic_sval_t)(v))
typedef struct {
    gasnett_strongatomic_val_t _gex_v;
} gasnett_strongatomic_t;
#define gasnett_strongatomic_init(v) {(gasnett_strongatomic_val_t)(v)}
_GEX_TOOLS_ATOMIC_OPS(gasnett_strongatomic, gasnett_strongatomic_t, gasnett_strongatomic_val_t)

/* Fixed-width atomics: exactly the width of their integer (storage of an
 * int32_t, uint32_t or float may be cast to gasnett_atomic32_t, of an
 * int64_t, uint64_t or double to gasnett_atomic64_t). */
typedef struct {
    uint32_t _gex_v;
} gasnett_atomic32_t;
typedef struct {
    uint64_t _gex_v __attribute__((__aligned__(8)));
} gasnett_atomic64_t;
#define gasnett_atomic32_init(v) {(uint32_t)(v)}
#define gasnett_atomic64_init(v) {(uint64_t)(v)}
_GEX_TOOLS_ATOMIC_OPS(gasnett_atomic32, gasnett_atomic32_t, uint32_t)
_GEX_TOOLS_ATOMIC_OPS(gasnett_atomic64, gasnett_atomic64_t, uint64_t)
typedef gasnett_atomic32_t gasnett_strongatomic32_t;
typedef gasnett_atomic64_t gasnett_strongatomic64_t;
#define gasnett_strongatomic32_init(v) gasnett_atomic32_init(v)
#define gasnett_strongatomic64_init(v) gasnett_atomic64_init(v)
_GEX_TOOLS_ATOMIC_OPS(gasnett_strongatomic32, gasnett_strongatomic32_t, uint32_t)
_GEX_TOOLS_ATOMIC_OPS(gasnett_strongatomic64, gasnett_strongatomic64_t, uint64_t)
/* 64-bit values kept for GASNet-1-era clients. */
typedef uint64_t gasnett_atomic64_val_t;
typedef int64_t gasnett_atomic64_sval_t;
typedef uint32_t gasnett_atomic32_val_t;
typedef int32_t gasnett_atomic32_sval_t;

/* ---- Mutexes, condition variables, reader/writer locks, thread keys ------------ */
/* Real pthread locks in every thread model. */

typedef pthread_mutex_t gasnett_mutex_t;
#define GASNETT_MUTEX_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#define gasnett_mutex_init(pl) ((void)pthread_mutex_init((pl), 0))
#define gasnett_mutex_destroy(pl) ((void)pthread_mutex_destroy(pl))
#define gasnett_mutex_destroy_ignoreerr(pl) pthread_mutex_destroy(pl)
#define gasnett_mutex_lock(pl) ((void)pthread_mutex_lock(pl))
#define gasnett_mutex_unlock(pl) ((void)pthread_mutex_unlock(pl))
#define gasnett_mutex_trylock(pl) (pthread_mutex_trylock(pl) == 0 ? 0 : EBUSY)
#define gasnett_mutex_assertlocked(pl) ((void)(pl))
#define gasnett_mutex_assertunlocked(pl) ((void)(pl))

typedef pthread_cond_t gasnett_cond_t;
#define GASNETT_COND_INITIALIZER PTHREAD_COND_INITIALIZER
#define gasnett_cond_init(pc) ((void)pthread_cond_init((pc), 0))
#define gasnett_cond_destroy(pc) ((void)pthread_cond_destroy(pc))
#define gasnett_cond_signal(pc) ((void)pthread_cond_signal(pc))
#define gasnett_cond_broadcast(pc) ((void)pthread_cond_broadcast(pc))
#define gasnett_cond_wait(pc, pl) ((void)pthread_cond_wait((pc), (pl)))

/* pthread rwlocks where the C library shows them (glibc does under POSIX
 * 2001 and later, e.g. with _GNU_SOURCE); otherwise plain mutexes, as
 * README-tools allows. */
#if defined(__USE_XOPEN2K) || defined(__USE_UNIX98) || !defined(__GLIBC__)
typedef pthread_rwlock_t gasnett_rwlock_t;
#define GASNETT_RWLOCK_INITIALIZER PTHREAD_RWLOCK_INITIALIZER
#define gasnett_rwlock_init(pl) ((void)pthread_rwlock_init((pl), 0))
#define gasnett_rwlock_destroy(pl) ((void)pthread_rwlock_destroy(pl))
static __inline__ void gasnett_rwlock_rdlock(gasnett_rwlock_t *l) {
    /* A reader limit (EAGAIN) waits like a held lock. */
    while (pthread_rwlock_rdlock(l) == EAGAIN) sched_yield();
}
#define gasnett_rwlock_wrlock(pl) ((void)pthread_rwlock_wrlock(pl))
#define gasnett_rwlock_unlock(pl) ((void)pthread_rwlock_unlock(pl))
#define gasnett_rwlock_tryrdlock(pl) pthread_rwlock_tryrdlock(pl)
#define gasnett_rwlock_trywrlock(pl) pthread_rwlock_trywrlock(pl)
#else
typedef pthread_mutex_t gasnett_rwlock_t;
#define GASNETT_RWLOCK_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#define gasnett_rwlock_init(pl) gasnett_mutex_init(pl)
#define gasnett_rwlock_destroy(pl) gasnett_mutex_destroy(pl)
#define gasnett_rwlock_rdlock(pl) gasnett_mutex_lock(pl)
#define gasnett_rwlock_wrlock(pl) gasnett_mutex_lock(pl)
#define gasnett_rwlock_unlock(pl) gasnett_mutex_unlock(pl)
#define gasnett_rwlock_tryrdlock(pl) gasnett_mutex_trylock(pl)
#define gasnett_rwlock_trywrlock(pl) gasnett_mutex_trylock(pl)
#endif
#define gasnett_rwlock_assertrdlocked(pl) ((void)(pl))
#define gasnett_rwlock_assertwrlocked(pl) ((void)(pl))
#define gasnett_rwlock_assertlocked(pl) ((void)(pl))
#define gasnett_rwlock_assertunlocked(pl) ((void)(pl))

/* A thread key holds one void* per thread (a __thread variable). */
#define GASNETT_THREADKEY_DECLARE(key) extern __thread void *_gex_tk_##key
#define GASNETT_THREADKEY_DEFINE(key) __thread void *_gex_tk_##key
#define gasnett_threadkey_get(key) (_gex_tk_##key)
#define gasnett_threadkey_set(key, newvalue) ((void)(_gex_tk_##key = (void *)(newvalue)))
#define gasnett_threadkey_get_noinit(key) gasnett_threadkey_get(key)
#define gasnett_threadkey_set_noinit(key, newvalue) gasnett_threadkey_set(key, newvalue)
#define gasnett_threadkey_init(key) ((void)0)

/* ---- Environment ---------------------------------------------------------------- */

extern char *gasnett_getenv(const char *keyname);
extern char *gasnett_getenv_withdefault(const char *keyname, const char *defaultval);
extern int gasnett_getenv_yesno_withdefault(const char *keyname, int defaultval);
extern int64_t gasnett_getenv_int_withdefault(const char *keyname, int64_t defaultval,
                                              uint64_t mem_size_multiplier);
extern double gasnett_getenv_dbl_withdefault(const char *keyname, double defaultval);
extern int gasnett_verboseenv(void);
extern void gasnett_envint_display(const char *key, int64_t val, int is_dflt, int is_mem_size);
extern void gasnett_envstr_display(const char *key, const char *val, int is_dflt);
extern void gasnett_envdbl_display(const char *key, double val, int is_dflt);
extern void gasnett_setenv(const char *key, const char *value);
extern void gasnett_unsetenv(const char *key);
extern char *gasnett_format_number(int64_t val, char *buf, size_t bufsz, int is_mem_size);
extern int64_t gasnett_parse_int(const char *str, uint64_t mem_size_multiplier);

/* ---- Formatting GASNet-EX values ---------------------------------------------- */
/* The parameter types are gasnetex.h's written out (gex_TI_t and gex_DT_t
 * are uint32_t, gex_OP_t uint64_t, gex_Rank_t uint32_t, gex_TM_t a struct
 * gex_TM_opaque pointer, a gex_Memvec_t list a pointer), so that this
 * header stands alone and may come before gasnetex.h's types. */
struct gex_TM_opaque;
/* The names of the bits set (GEX_TI_EP|GEX_TI_ENTRY, "0" for none); with a
 * NULL buf only the size needed, NUL included, which is also the result. */
extern size_t gasnett_format_ti(char *buf, uint32_t ti);
extern size_t gasnett_format_dt(char *buf, uint32_t dt);
extern size_t gasnett_format_op(char *buf, uint64_t op);
/* Lists and strided transfers as text, into a buffer of the _bufsz size. */
extern size_t gasnett_format_memveclist_bufsz(size_t count);
extern char *gasnett_format_memveclist(char *buf, size_t count, const void *list);
extern size_t gasnett_format_addrlist_bufsz(size_t count);
extern char *gasnett_format_addrlist(char *buf, size_t count, void *const *list, size_t len);
extern size_t gasnett_format_putsgets_bufsz(size_t stridelevels);
extern char *gasnett_format_putsgets(char *buf, const void *pathdesc, struct gex_TM_opaque *tm,
                                     uint32_t rank, void *dstaddr, const ptrdiff_t dststrides[],
                                     void *srcaddr, const ptrdiff_t srcstrides[], size_t elemsz,
                                     const size_t count[], size_t stridelevels);

/* ---- Backtraces, debugger freeze, fatal errors ------------------------------------ */

typedef struct {
    const char *name;
    int (*fnp)(int fd);
    int threadsupport;
} gasnett_backtrace_type_t;
/* A client may define gasnett_backtrace_user to add its own backtrace
 * mechanism; the weak declaration lets a program without it link. */
#define _GEX_TOOLS_WEAK __attribute__((__weak__))
extern gasnett_backtrace_type_t gasnett_backtrace_user _GEX_TOOLS_WEAK;
extern void _gex_tools_backtrace_init(const char *exename, const gasnett_backtrace_type_t *user);
#define gasnett_backtrace_init(exename) _gex_tools_backtrace_init((exename), &gasnett_backtrace_user)
extern int gasnett_print_backtrace(int fd);
/* The backtrace hook of fatal errors: an assignable function pointer. */
extern int (**_gex_tools_print_backtrace_ifenabled_slot(void))(int);
#define gasnett_print_backtrace_ifenabled (*_gex_tools_print_backtrace_ifenabled_slot())
extern void gasnett_freezeForDebuggerNow(volatile int *flag, const char *flagsymname);
extern void gasnett_freezeForDebuggerErr(void);

extern char *_gex_tools_current_loc(const char *func, const char *file, int line);
#define gasnett_current_loc _gex_tools_current_loc(GASNETT_CURRENT_FUNCTION, __FILE__, __LINE__)

extern void _gex_tools_fatal(const char *func, const char *file, int line, const char *msg)
    __attribute__((__noreturn__));
__attribute__((__noreturn__, __format__(__printf__, 4, 5))) static __inline__ void
_gex_tools_fatalerror(const char *func, const char *file, int line, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    _gex_tools_fatal(func, file, line, buf);
}
#define gasnett_fatalerror(...)                                                                   \
    _gex_tools_fatalerror(GASNETT_CURRENT_FUNCTION, __FILE__, __LINE__, __VA_ARGS__)
#define gasnett_fatalerror_nopos(...) _gex_tools_fatalerror(0, 0, 0, __VA_ARGS__)

/* ---- Counting zero bytes --------------------------------------------------------- */

static __inline__ int gasnett_count0s_uint32_t(uint32_t x) {
    return !(x & 0xffu) + !(x & 0xff00u) + !(x & 0xff0000u) + !(x & 0xff000000u);
}
static __inline__ int gasnett_count0s_uint64_t(uint64_t x) {
    return gasnett_count0s_uint32_t((uint32_t)x) + gasnett_count0s_uint32_t((uint32_t)(x >> 32));
}
static __inline__ int gasnett_count0s_uintptr_t(uintptr_t x) {
#if PLATFORM_ARCH_64
    return gasnett_count0s_uint64_t((uint64_t)x);
#else
    return gasnett_count0s_uint32_t((uint32_t)x);
#endif
}
extern size_t gasnett_count0s(const void *p, size_t numbytes);
extern size_t gasnett_count0s_copy(void *GASNETT_RESTRICT dst, const void *GASNETT_RESTRICT src,
                                   size_t numbytes);

/* ---- Tracing and statistics: compiled out ---------------------------------------- */

#define GASNETT_TRACE_ENABLED 0
#define GASNETT_STATS_ENABLED 0
#define GASNETT_TRACE_PRINTF(...) ((void)0)
#define GASNETT_TRACE_PRINTF_FORCE(...) ((void)0)
#define GASNETT_STATS_PRINTF(...) ((void)0)
#define GASNETT_STATS_PRINTF_FORCE(...) ((void)0)
#define GASNETT_TRACE_GETMASK() ((const char *)"")
#define GASNETT_STATS_GETMASK() ((const char *)"")
#define GASNETT_TRACE_SETMASK(mask) GASNETT_UNUSED_ARGS1(mask)
#define GASNETT_STATS_SETMASK(mask) GASNETT_UNUSED_ARGS1(mask)
#define GASNETT_TRACE_GET_TRACELOCAL() 0
#define GASNETT_TRACE_SET_TRACELOCAL(newval) GASNETT_UNUSED_ARGS1(newval)
#define GASNETT_TRACE_SETSOURCELINE(file, line) GASNETT_UNUSED_ARGS2(file, line)
#define GASNETT_TRACE_GETSOURCELINE(pfile, pline) ((void)(*(pfile) = "", *(pline) = 0))
#define GASNETT_TRACE_FREEZESOURCELINE() ((void)0)
#define GASNETT_TRACE_UNFREEZESOURCELINE() ((void)0)
#define GASNETT_STATS_INIT(callback) ((void)0)
#define GASNETT_STATS_DUMP(reset) GASNETT_UNUSED_ARGS1(reset)

GASNETT_END_EXTERNC

#endif /* GEX_GASNET_TOOLS_H */
