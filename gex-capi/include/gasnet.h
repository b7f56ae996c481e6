/*
 * gasnet.h: the GASNet-1 interface of gex (GASNet-1 spec v0.5, with the
 * gasnet_init + gasnet_attach pair of later GASNet-1 releases), over the
 * GASNet-EX calls of gasnetex.h, which it includes. Written for gex from the
 * GASNet-1 specification.
 *
 * - gasnet_init takes either form: gasnet_init(&argc, &argv) followed by
 *   gasnet_attach(table, n, segsize, minheapoffset), or spec v0.5's
 *   gasnet_init(&argc, &argv, table, n, segbase, segsize, allowFaults).
 * - Handler indices: 128 to 255 (0: "don't care", assigned from the top).
 *   gasnet_attach registers GASNet-1 handlers in the primordial endpoint's
 *   EX table, each at its own index, accepting any category and argument
 *   count (the client's to keep, as in GASNet-1); GASNet-1 messages are EX
 *   messages to those indices, with the EX limits (gasnet_AMMaxMedium is
 *   the smaller Medium LUB, gasnet_AMMaxLongReply the Long reply LUB).
 * - Handlers run only inside calls that poll (gasnet_AMPoll,
 *   GASNET_BLOCKUNTIL, the sync calls): no-interrupt sections are no-ops.
 */
#ifndef GEX_GASNET_H
#define GEX_GASNET_H
/* Defined once gasnet.h is in (clients test it). */
#define _INCLUDED_GASNET_H 1

#include <gasnetex.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GASNET_VERSION 1

typedef uint8_t gasnet_handler_t;
typedef int32_t gasnet_handlerarg_t;
typedef gex_Token_t gasnet_token_t;
typedef gex_Event_t gasnet_handle_t;
#define GASNET_INVALID_HANDLE ((gasnet_handle_t)0)
typedef uint64_t gasnet_register_value_t;
#define SIZEOF_GASNET_REGISTER_VALUE_T 8
/* The value get completes at initiation: the handle is the value. */
typedef gasnet_register_value_t gasnet_valget_handle_t;

typedef struct {
    gasnet_handler_t index; /* 0: don't care */
    void (*fnptr)();
} gasnet_handlerentry_t;

#define GASNET_SEGBASE_ANY ((void *)-1)
#define GASNET_SEGSIZE_EVERYTHING ((uintptr_t)-1)

/* ---- Job control --------------------------------------------------------- */

extern int _gasnet_init2(int *argc, char ***argv);
extern int _gasnet_init7(int *argc, char ***argv, gasnet_handlerentry_t *table, int numentries,
                         void *segbase, uintptr_t segsize, int allowFaults);
#define _GASNET_INIT_PICK(a1, a2, a3, a4, a5, a6, a7, name, ...) name
#define gasnet_init(...)                                                                          \
    _GASNET_INIT_PICK(__VA_ARGS__, _gasnet_init7, _gasnet_init_takes_2_or_7_arguments,            \
                      _gasnet_init_takes_2_or_7_arguments, _gasnet_init_takes_2_or_7_arguments,   \
                      _gasnet_init_takes_2_or_7_arguments, _gasnet_init2,                         \
                      _gasnet_init_takes_2_or_7_arguments)(__VA_ARGS__)
extern int gasnet_attach(gasnet_handlerentry_t *table, int numentries, uintptr_t segsize,
                         uintptr_t minheapoffset);
extern gasnet_node_t gasnet_mynode(void);
extern gasnet_node_t gasnet_nodes(void);
extern uintptr_t gasnet_getMaxNativeSegmentSize(void);
/* gasnet_exit, gasnet_getSegmentInfo, gasnet_getNodeInfo, the maximum
 * segment sizes, gasnet_getenv, gasnet_QueryGexObjects, the barrier, the
 * wait mode, the error names: gasnetex.h */

/* testlegacy's name for this rank (the reference's internal variable). */
#define gasneti_mynode (gasnet_mynode())

/* ---- Active Messages ------------------------------------------------------ */

extern size_t gasnet_AMMaxArgs(void);
extern size_t gasnet_AMMaxMedium(void);
extern size_t gasnet_AMMaxLongRequest(void);
extern size_t gasnet_AMMaxLongReply(void);
extern int gasnet_AMGetMsgSource(gasnet_token_t token, gasnet_node_t *srcindex);
/* gasnet_AMPoll, GASNET_BLOCKUNTIL: gasnetex.h */

extern int _gasnet_AMRequestShort(gasnet_node_t dest, gasnet_handler_t handler, unsigned int nargs,
                                  const gasnet_handlerarg_t *args);
extern int _gasnet_AMRequestMedium(gasnet_node_t dest, gasnet_handler_t handler,
                                   const void *source_addr, size_t nbytes, unsigned int nargs,
                                   const gasnet_handlerarg_t *args);
extern int _gasnet_AMRequestLong(gasnet_node_t dest, gasnet_handler_t handler,
                                 const void *source_addr, size_t nbytes, void *dest_addr,
                                 unsigned int nargs, const gasnet_handlerarg_t *args);
extern int _gasnet_AMReplyShort(gasnet_token_t token, gasnet_handler_t handler, unsigned int nargs,
                                const gasnet_handlerarg_t *args);
extern int _gasnet_AMReplyMedium(gasnet_token_t token, gasnet_handler_t handler,
                                 const void *source_addr, size_t nbytes, unsigned int nargs,
                                 const gasnet_handlerarg_t *args);
extern int _gasnet_AMReplyLong(gasnet_token_t token, gasnet_handler_t handler,
                               const void *source_addr, size_t nbytes, void *dest_addr,
                               unsigned int nargs, const gasnet_handlerarg_t *args);

/* GENERATED BEGIN (gen/arity.py g1) */
static inline int gasnet_AMRequestShort0(gasnet_node_t dest, gasnet_handler_t handler) {
    return _gasnet_AMRequestShort(dest, handler, 0, (const gex_AM_Arg_t *)0);
}
static inline int gasnet_AMRequestMedium0(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes) {
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 0, (const gex_AM_Arg_t *)0);
}
static inline int gasnet_AMRequestLong0(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr) {
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 0, (const gex_AM_Arg_t *)0);
}
static inline int gasnet_AMRequestLongAsync0(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr) {
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 0, (const gex_AM_Arg_t *)0);
}
static inline int gasnet_AMReplyShort0(gasnet_token_t token, gasnet_handler_t handler) {
    return _gasnet_AMReplyShort(token, handler, 0, (const gex_AM_Arg_t *)0);
}
static inline int gasnet_AMReplyMedium0(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes) {
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 0, (const gex_AM_Arg_t *)0);
}
static inline int gasnet_AMReplyLong0(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr) {
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 0, (const gex_AM_Arg_t *)0);
}
static inline int gasnet_AMRequestShort1(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0) {
    gasnet_handlerarg_t _a[1] = {a0};
    return _gasnet_AMRequestShort(dest, handler, 1, _a);
}
static inline int gasnet_AMRequestMedium1(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0) {
    gasnet_handlerarg_t _a[1] = {a0};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 1, _a);
}
static inline int gasnet_AMRequestLong1(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0) {
    gasnet_handlerarg_t _a[1] = {a0};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 1, _a);
}
static inline int gasnet_AMRequestLongAsync1(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0) {
    gasnet_handlerarg_t _a[1] = {a0};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 1, _a);
}
static inline int gasnet_AMReplyShort1(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0) {
    gasnet_handlerarg_t _a[1] = {a0};
    return _gasnet_AMReplyShort(token, handler, 1, _a);
}
static inline int gasnet_AMReplyMedium1(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0) {
    gasnet_handlerarg_t _a[1] = {a0};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 1, _a);
}
static inline int gasnet_AMReplyLong1(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0) {
    gasnet_handlerarg_t _a[1] = {a0};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 1, _a);
}
static inline int gasnet_AMRequestShort2(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1) {
    gasnet_handlerarg_t _a[2] = {a0, a1};
    return _gasnet_AMRequestShort(dest, handler, 2, _a);
}
static inline int gasnet_AMRequestMedium2(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1) {
    gasnet_handlerarg_t _a[2] = {a0, a1};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 2, _a);
}
static inline int gasnet_AMRequestLong2(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1) {
    gasnet_handlerarg_t _a[2] = {a0, a1};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 2, _a);
}
static inline int gasnet_AMRequestLongAsync2(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1) {
    gasnet_handlerarg_t _a[2] = {a0, a1};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 2, _a);
}
static inline int gasnet_AMReplyShort2(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1) {
    gasnet_handlerarg_t _a[2] = {a0, a1};
    return _gasnet_AMReplyShort(token, handler, 2, _a);
}
static inline int gasnet_AMReplyMedium2(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1) {
    gasnet_handlerarg_t _a[2] = {a0, a1};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 2, _a);
}
static inline int gasnet_AMReplyLong2(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1) {
    gasnet_handlerarg_t _a[2] = {a0, a1};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 2, _a);
}
static inline int gasnet_AMRequestShort3(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2) {
    gasnet_handlerarg_t _a[3] = {a0, a1, a2};
    return _gasnet_AMRequestShort(dest, handler, 3, _a);
}
static inline int gasnet_AMRequestMedium3(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2) {
    gasnet_handlerarg_t _a[3] = {a0, a1, a2};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 3, _a);
}
static inline int gasnet_AMRequestLong3(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2) {
    gasnet_handlerarg_t _a[3] = {a0, a1, a2};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 3, _a);
}
static inline int gasnet_AMRequestLongAsync3(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2) {
    gasnet_handlerarg_t _a[3] = {a0, a1, a2};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 3, _a);
}
static inline int gasnet_AMReplyShort3(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2) {
    gasnet_handlerarg_t _a[3] = {a0, a1, a2};
    return _gasnet_AMReplyShort(token, handler, 3, _a);
}
static inline int gasnet_AMReplyMedium3(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2) {
    gasnet_handlerarg_t _a[3] = {a0, a1, a2};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 3, _a);
}
static inline int gasnet_AMReplyLong3(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2) {
    gasnet_handlerarg_t _a[3] = {a0, a1, a2};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 3, _a);
}
static inline int gasnet_AMRequestShort4(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3) {
    gasnet_handlerarg_t _a[4] = {a0, a1, a2, a3};
    return _gasnet_AMRequestShort(dest, handler, 4, _a);
}
static inline int gasnet_AMRequestMedium4(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3) {
    gasnet_handlerarg_t _a[4] = {a0, a1, a2, a3};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 4, _a);
}
static inline int gasnet_AMRequestLong4(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3) {
    gasnet_handlerarg_t _a[4] = {a0, a1, a2, a3};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 4, _a);
}
static inline int gasnet_AMRequestLongAsync4(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3) {
    gasnet_handlerarg_t _a[4] = {a0, a1, a2, a3};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 4, _a);
}
static inline int gasnet_AMReplyShort4(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3) {
    gasnet_handlerarg_t _a[4] = {a0, a1, a2, a3};
    return _gasnet_AMReplyShort(token, handler, 4, _a);
}
static inline int gasnet_AMReplyMedium4(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3) {
    gasnet_handlerarg_t _a[4] = {a0, a1, a2, a3};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 4, _a);
}
static inline int gasnet_AMReplyLong4(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3) {
    gasnet_handlerarg_t _a[4] = {a0, a1, a2, a3};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 4, _a);
}
static inline int gasnet_AMRequestShort5(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4) {
    gasnet_handlerarg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gasnet_AMRequestShort(dest, handler, 5, _a);
}
static inline int gasnet_AMRequestMedium5(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4) {
    gasnet_handlerarg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 5, _a);
}
static inline int gasnet_AMRequestLong5(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4) {
    gasnet_handlerarg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 5, _a);
}
static inline int gasnet_AMRequestLongAsync5(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4) {
    gasnet_handlerarg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 5, _a);
}
static inline int gasnet_AMReplyShort5(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4) {
    gasnet_handlerarg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gasnet_AMReplyShort(token, handler, 5, _a);
}
static inline int gasnet_AMReplyMedium5(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4) {
    gasnet_handlerarg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 5, _a);
}
static inline int gasnet_AMReplyLong5(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4) {
    gasnet_handlerarg_t _a[5] = {a0, a1, a2, a3, a4};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 5, _a);
}
static inline int gasnet_AMRequestShort6(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5) {
    gasnet_handlerarg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gasnet_AMRequestShort(dest, handler, 6, _a);
}
static inline int gasnet_AMRequestMedium6(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5) {
    gasnet_handlerarg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 6, _a);
}
static inline int gasnet_AMRequestLong6(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5) {
    gasnet_handlerarg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 6, _a);
}
static inline int gasnet_AMRequestLongAsync6(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5) {
    gasnet_handlerarg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 6, _a);
}
static inline int gasnet_AMReplyShort6(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5) {
    gasnet_handlerarg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gasnet_AMReplyShort(token, handler, 6, _a);
}
static inline int gasnet_AMReplyMedium6(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5) {
    gasnet_handlerarg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 6, _a);
}
static inline int gasnet_AMReplyLong6(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5) {
    gasnet_handlerarg_t _a[6] = {a0, a1, a2, a3, a4, a5};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 6, _a);
}
static inline int gasnet_AMRequestShort7(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6) {
    gasnet_handlerarg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gasnet_AMRequestShort(dest, handler, 7, _a);
}
static inline int gasnet_AMRequestMedium7(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6) {
    gasnet_handlerarg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 7, _a);
}
static inline int gasnet_AMRequestLong7(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6) {
    gasnet_handlerarg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 7, _a);
}
static inline int gasnet_AMRequestLongAsync7(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6) {
    gasnet_handlerarg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 7, _a);
}
static inline int gasnet_AMReplyShort7(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6) {
    gasnet_handlerarg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gasnet_AMReplyShort(token, handler, 7, _a);
}
static inline int gasnet_AMReplyMedium7(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6) {
    gasnet_handlerarg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 7, _a);
}
static inline int gasnet_AMReplyLong7(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6) {
    gasnet_handlerarg_t _a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 7, _a);
}
static inline int gasnet_AMRequestShort8(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7) {
    gasnet_handlerarg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gasnet_AMRequestShort(dest, handler, 8, _a);
}
static inline int gasnet_AMRequestMedium8(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7) {
    gasnet_handlerarg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 8, _a);
}
static inline int gasnet_AMRequestLong8(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7) {
    gasnet_handlerarg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 8, _a);
}
static inline int gasnet_AMRequestLongAsync8(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7) {
    gasnet_handlerarg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 8, _a);
}
static inline int gasnet_AMReplyShort8(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7) {
    gasnet_handlerarg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gasnet_AMReplyShort(token, handler, 8, _a);
}
static inline int gasnet_AMReplyMedium8(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7) {
    gasnet_handlerarg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 8, _a);
}
static inline int gasnet_AMReplyLong8(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7) {
    gasnet_handlerarg_t _a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 8, _a);
}
static inline int gasnet_AMRequestShort9(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8) {
    gasnet_handlerarg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gasnet_AMRequestShort(dest, handler, 9, _a);
}
static inline int gasnet_AMRequestMedium9(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8) {
    gasnet_handlerarg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 9, _a);
}
static inline int gasnet_AMRequestLong9(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8) {
    gasnet_handlerarg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 9, _a);
}
static inline int gasnet_AMRequestLongAsync9(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8) {
    gasnet_handlerarg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 9, _a);
}
static inline int gasnet_AMReplyShort9(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8) {
    gasnet_handlerarg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gasnet_AMReplyShort(token, handler, 9, _a);
}
static inline int gasnet_AMReplyMedium9(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8) {
    gasnet_handlerarg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 9, _a);
}
static inline int gasnet_AMReplyLong9(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8) {
    gasnet_handlerarg_t _a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 9, _a);
}
static inline int gasnet_AMRequestShort10(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9) {
    gasnet_handlerarg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gasnet_AMRequestShort(dest, handler, 10, _a);
}
static inline int gasnet_AMRequestMedium10(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9) {
    gasnet_handlerarg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 10, _a);
}
static inline int gasnet_AMRequestLong10(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9) {
    gasnet_handlerarg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 10, _a);
}
static inline int gasnet_AMRequestLongAsync10(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9) {
    gasnet_handlerarg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 10, _a);
}
static inline int gasnet_AMReplyShort10(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9) {
    gasnet_handlerarg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gasnet_AMReplyShort(token, handler, 10, _a);
}
static inline int gasnet_AMReplyMedium10(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9) {
    gasnet_handlerarg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 10, _a);
}
static inline int gasnet_AMReplyLong10(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9) {
    gasnet_handlerarg_t _a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 10, _a);
}
static inline int gasnet_AMRequestShort11(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10) {
    gasnet_handlerarg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gasnet_AMRequestShort(dest, handler, 11, _a);
}
static inline int gasnet_AMRequestMedium11(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10) {
    gasnet_handlerarg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 11, _a);
}
static inline int gasnet_AMRequestLong11(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10) {
    gasnet_handlerarg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 11, _a);
}
static inline int gasnet_AMRequestLongAsync11(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10) {
    gasnet_handlerarg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 11, _a);
}
static inline int gasnet_AMReplyShort11(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10) {
    gasnet_handlerarg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gasnet_AMReplyShort(token, handler, 11, _a);
}
static inline int gasnet_AMReplyMedium11(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10) {
    gasnet_handlerarg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 11, _a);
}
static inline int gasnet_AMReplyLong11(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10) {
    gasnet_handlerarg_t _a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 11, _a);
}
static inline int gasnet_AMRequestShort12(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11) {
    gasnet_handlerarg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gasnet_AMRequestShort(dest, handler, 12, _a);
}
static inline int gasnet_AMRequestMedium12(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11) {
    gasnet_handlerarg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 12, _a);
}
static inline int gasnet_AMRequestLong12(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11) {
    gasnet_handlerarg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 12, _a);
}
static inline int gasnet_AMRequestLongAsync12(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11) {
    gasnet_handlerarg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 12, _a);
}
static inline int gasnet_AMReplyShort12(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11) {
    gasnet_handlerarg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gasnet_AMReplyShort(token, handler, 12, _a);
}
static inline int gasnet_AMReplyMedium12(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11) {
    gasnet_handlerarg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 12, _a);
}
static inline int gasnet_AMReplyLong12(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11) {
    gasnet_handlerarg_t _a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 12, _a);
}
static inline int gasnet_AMRequestShort13(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12) {
    gasnet_handlerarg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gasnet_AMRequestShort(dest, handler, 13, _a);
}
static inline int gasnet_AMRequestMedium13(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12) {
    gasnet_handlerarg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 13, _a);
}
static inline int gasnet_AMRequestLong13(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12) {
    gasnet_handlerarg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 13, _a);
}
static inline int gasnet_AMRequestLongAsync13(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12) {
    gasnet_handlerarg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 13, _a);
}
static inline int gasnet_AMReplyShort13(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12) {
    gasnet_handlerarg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gasnet_AMReplyShort(token, handler, 13, _a);
}
static inline int gasnet_AMReplyMedium13(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12) {
    gasnet_handlerarg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 13, _a);
}
static inline int gasnet_AMReplyLong13(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12) {
    gasnet_handlerarg_t _a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 13, _a);
}
static inline int gasnet_AMRequestShort14(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13) {
    gasnet_handlerarg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gasnet_AMRequestShort(dest, handler, 14, _a);
}
static inline int gasnet_AMRequestMedium14(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13) {
    gasnet_handlerarg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 14, _a);
}
static inline int gasnet_AMRequestLong14(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13) {
    gasnet_handlerarg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 14, _a);
}
static inline int gasnet_AMRequestLongAsync14(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13) {
    gasnet_handlerarg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 14, _a);
}
static inline int gasnet_AMReplyShort14(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13) {
    gasnet_handlerarg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gasnet_AMReplyShort(token, handler, 14, _a);
}
static inline int gasnet_AMReplyMedium14(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13) {
    gasnet_handlerarg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 14, _a);
}
static inline int gasnet_AMReplyLong14(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13) {
    gasnet_handlerarg_t _a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 14, _a);
}
static inline int gasnet_AMRequestShort15(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14) {
    gasnet_handlerarg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gasnet_AMRequestShort(dest, handler, 15, _a);
}
static inline int gasnet_AMRequestMedium15(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14) {
    gasnet_handlerarg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 15, _a);
}
static inline int gasnet_AMRequestLong15(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14) {
    gasnet_handlerarg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 15, _a);
}
static inline int gasnet_AMRequestLongAsync15(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14) {
    gasnet_handlerarg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 15, _a);
}
static inline int gasnet_AMReplyShort15(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14) {
    gasnet_handlerarg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gasnet_AMReplyShort(token, handler, 15, _a);
}
static inline int gasnet_AMReplyMedium15(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14) {
    gasnet_handlerarg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 15, _a);
}
static inline int gasnet_AMReplyLong15(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14) {
    gasnet_handlerarg_t _a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 15, _a);
}
static inline int gasnet_AMRequestShort16(gasnet_node_t dest, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_handlerarg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gasnet_AMRequestShort(dest, handler, 16, _a);
}
static inline int gasnet_AMRequestMedium16(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_handlerarg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, 16, _a);
}
static inline int gasnet_AMRequestLong16(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_handlerarg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 16, _a);
}
static inline int gasnet_AMRequestLongAsync16(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_handlerarg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, 16, _a);
}
static inline int gasnet_AMReplyShort16(gasnet_token_t token, gasnet_handler_t handler, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_handlerarg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gasnet_AMReplyShort(token, handler, 16, _a);
}
static inline int gasnet_AMReplyMedium16(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_handlerarg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, 16, _a);
}
static inline int gasnet_AMReplyLong16(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5, gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9, gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13, gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_handlerarg_t _a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, 16, _a);
}
/* GENERATED END */

/* ---- No-interrupt sections and handler-safe locks -------------------------- */

#define gasnet_hold_interrupts() ((void)0)
#define gasnet_resume_interrupts() ((void)0)
typedef gex_HSL_t gasnet_hsl_t;
#define GASNET_HSL_INITIALIZER GEX_HSL_INITIALIZER
#define gasnet_hsl_init(hsl) gex_HSL_Init(hsl)
#define gasnet_hsl_destroy(hsl) gex_HSL_Destroy(hsl)
#define gasnet_hsl_lock(hsl) gex_HSL_Lock(hsl)
#define gasnet_hsl_unlock(hsl) gex_HSL_Unlock(hsl)
#define gasnet_hsl_trylock(hsl) gex_HSL_Trylock(hsl)

/* ---- Puts and gets over the primordial team -------------------------------- */

extern gex_TM_t _gasnet_tm(void);
/* The team of gasnet_init, read from the table gasnetex.h's inline RMA
 * calls read (the library call before gasnet_init, which reports it). */
#if defined(__GNUC__)
static inline gex_TM_t _gasnet_tm_fast(void) {
    gex_TM_t t = __atomic_load_n(&_gex_rma_fast.g1_tm, __ATOMIC_ACQUIRE);
    return t != NULL ? t : _gasnet_tm();
}
#else
#define _gasnet_tm_fast() _gasnet_tm()
#endif

static inline void gasnet_put(gasnet_node_t node, void *dest, void *src, size_t nbytes) {
    gex_RMA_PutBlocking(_gasnet_tm_fast(), node, dest, src, nbytes, 0);
}
static inline void gasnet_put_bulk(gasnet_node_t node, void *dest, void *src, size_t nbytes) {
    gex_RMA_PutBlocking(_gasnet_tm_fast(), node, dest, src, nbytes, 0);
}
static inline void gasnet_get(void *dest, gasnet_node_t node, void *src, size_t nbytes) {
    gex_RMA_GetBlocking(_gasnet_tm_fast(), dest, node, src, nbytes, 0);
}
static inline void gasnet_get_bulk(void *dest, gasnet_node_t node, void *src, size_t nbytes) {
    gex_RMA_GetBlocking(_gasnet_tm_fast(), dest, node, src, nbytes, 0);
}
static inline gasnet_handle_t gasnet_put_nb(gasnet_node_t node, void *dest, void *src, size_t nbytes) {
    return gex_RMA_PutNB(_gasnet_tm_fast(), node, dest, src, nbytes, GEX_EVENT_NOW, 0);
}
static inline gasnet_handle_t gasnet_put_nb_bulk(gasnet_node_t node, void *dest, void *src, size_t nbytes) {
    return gex_RMA_PutNB(_gasnet_tm_fast(), node, dest, src, nbytes, GEX_EVENT_DEFER, 0);
}
static inline gasnet_handle_t gasnet_get_nb(void *dest, gasnet_node_t node, void *src, size_t nbytes) {
    return gex_RMA_GetNB(_gasnet_tm_fast(), dest, node, src, nbytes, 0);
}
static inline gasnet_handle_t gasnet_get_nb_bulk(void *dest, gasnet_node_t node, void *src, size_t nbytes) {
    return gex_RMA_GetNB(_gasnet_tm_fast(), dest, node, src, nbytes, 0);
}
static inline void gasnet_put_nbi(gasnet_node_t node, void *dest, void *src, size_t nbytes) {
    gex_RMA_PutNBI(_gasnet_tm_fast(), node, dest, src, nbytes, GEX_EVENT_NOW, 0);
}
static inline void gasnet_put_nbi_bulk(gasnet_node_t node, void *dest, void *src, size_t nbytes) {
    gex_RMA_PutNBI(_gasnet_tm_fast(), node, dest, src, nbytes, GEX_EVENT_DEFER, 0);
}
static inline void gasnet_get_nbi(void *dest, gasnet_node_t node, void *src, size_t nbytes) {
    gex_RMA_GetNBI(_gasnet_tm_fast(), dest, node, src, nbytes, 0);
}
static inline void gasnet_get_nbi_bulk(void *dest, gasnet_node_t node, void *src, size_t nbytes) {
    gex_RMA_GetNBI(_gasnet_tm_fast(), dest, node, src, nbytes, 0);
}
static inline void gasnet_put_val(gasnet_node_t node, void *dest, gasnet_register_value_t value, size_t nbytes) {
    gex_RMA_PutBlockingVal(_gasnet_tm_fast(), node, dest, value, nbytes, 0);
}
static inline gasnet_handle_t gasnet_put_nb_val(gasnet_node_t node, void *dest, gasnet_register_value_t value,
                                                size_t nbytes) {
    return gex_RMA_PutNBVal(_gasnet_tm_fast(), node, dest, value, nbytes, 0);
}
static inline void gasnet_put_nbi_val(gasnet_node_t node, void *dest, gasnet_register_value_t value, size_t nbytes) {
    gex_RMA_PutNBIVal(_gasnet_tm_fast(), node, dest, value, nbytes, 0);
}
static inline gasnet_register_value_t gasnet_get_val(gasnet_node_t node, void *src, size_t nbytes) {
    return gex_RMA_GetBlockingVal(_gasnet_tm_fast(), node, src, nbytes, 0);
}
static inline gasnet_valget_handle_t gasnet_get_nb_val(gasnet_node_t node, void *src, size_t nbytes) {
    return gex_RMA_GetBlockingVal(_gasnet_tm_fast(), node, src, nbytes, 0);
}
static inline gasnet_register_value_t gasnet_wait_syncnb_valget(gasnet_valget_handle_t handle) { return handle; }
extern void gasnet_memset(gasnet_node_t node, void *dest, int val, size_t nbytes);
extern gasnet_handle_t gasnet_memset_nb(gasnet_node_t node, void *dest, int val, size_t nbytes);
/* Completes before it returns (an NBI operation may): a later
 * gasnet_wait_syncnbi_puts has nothing left to wait for. */
extern void gasnet_memset_nbi(gasnet_node_t node, void *dest, int val, size_t nbytes);

/* ---- Synchronisation --------------------------------------------------------- */

static inline void gasnet_wait_syncnb(gasnet_handle_t handle) { gex_Event_Wait(handle); }
static inline int gasnet_try_syncnb(gasnet_handle_t handle) {
    gasnet_AMPoll();
    return gex_Event_Test(handle);
}
static inline void gasnet_wait_syncnb_all(gasnet_handle_t *phandle, size_t numhandles) {
    gex_Event_WaitAll(phandle, numhandles, 0);
}
static inline int gasnet_try_syncnb_all(gasnet_handle_t *phandle, size_t numhandles) {
    gasnet_AMPoll();
    return gex_Event_TestAll(phandle, numhandles, 0);
}
static inline void gasnet_wait_syncnb_some(gasnet_handle_t *phandle, size_t numhandles) {
    gex_Event_WaitSome(phandle, numhandles, 0);
}
static inline int gasnet_try_syncnb_some(gasnet_handle_t *phandle, size_t numhandles) {
    gasnet_AMPoll();
    return gex_Event_TestSome(phandle, numhandles, 0);
}
static inline void gasnet_wait_syncnbi_gets(void) { gex_NBI_Wait(GEX_EC_GET, 0); }
static inline void gasnet_wait_syncnbi_puts(void) { gex_NBI_Wait(GEX_EC_PUT | GEX_EC_LC, 0); }
static inline void gasnet_wait_syncnbi_all(void) { gex_NBI_Wait(GEX_EC_ALL, 0); }
static inline int gasnet_try_syncnbi_gets(void) {
    gasnet_AMPoll();
    return gex_NBI_Test(GEX_EC_GET, 0);
}
static inline int gasnet_try_syncnbi_puts(void) {
    gasnet_AMPoll();
    return gex_NBI_Test(GEX_EC_PUT | GEX_EC_LC, 0);
}
static inline int gasnet_try_syncnbi_all(void) {
    gasnet_AMPoll();
    return gex_NBI_Test(GEX_EC_ALL, 0);
}
static inline void gasnet_begin_nbi_accessregion(void) { gex_NBI_BeginAccessRegion(0); }
static inline gasnet_handle_t gasnet_end_nbi_accessregion(void) { return gex_NBI_EndAccessRegion(0); }

/* The barrier (gasnet_barrier_notify/wait/try, gasnet_barrier,
 * gasnet_barrier_result, GASNET_BARRIERFLAG_*): gasnetex.h. */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEX_GASNET_H */
