#!/usr/bin/env python3
"""Writes the [M] arity wrappers of the AM calls (0 to 16 arguments) as
static inline functions, to stdout (the Commit calls with their _v2 forms). gasnetex.h and gasnet.h include the
output between their GENERATED markers: run
    python3 gen/arity.py ex   # gasnetex.h section
    python3 gen/arity.py g1   # gasnet.h section
and paste it in place."""
import sys

MAX = 16


def args_decl(n, ty):
    return "".join(f", {ty} a{i}" for i in range(n))


def arr(n, ty):
    if n == 0:
        return ""
    vals = ", ".join(f"a{i}" for i in range(n))
    return f"    {ty} _a[{n}] = {{{vals}}};\n"


def ptr(n):
    return "_a" if n else "(const gex_AM_Arg_t *)0"


def ex():
    out = []
    A = "gex_AM_Arg_t"
    for n in range(MAX + 1):
        out.append(
            f"static inline int gex_AM_RequestShort{n}(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gex_AM_RequestShort(tm, rank, handler, flags, {n}, {ptr(n)});\n}}\n"
            f"static inline int gex_AM_RequestMedium{n}(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gex_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, {n}, {ptr(n)});\n}}\n"
            f"static inline int gex_AM_RequestLong{n}(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gex_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, {n}, {ptr(n)});\n}}\n"
            f"static inline int gex_AM_ReplyShort{n}(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gex_AM_ReplyShort(token, handler, flags, {n}, {ptr(n)});\n}}\n"
            f"static inline int gex_AM_ReplyMedium{n}(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gex_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, {n}, {ptr(n)});\n}}\n"
            f"static inline int gex_AM_ReplyLong{n}(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gex_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, {n}, {ptr(n)});\n}}\n"
        )
    for n in range(MAX + 1):
        for kind in ("Request", "Reply"):
            out.append(
                f"static inline void gex_AM_Commit{kind}Medium{n}(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes{args_decl(n, A)}) {{\n"
                f"{arr(n, A)}    _gex_AM_CommitMedium(sd, handler, nbytes, {n}, {ptr(n)});\n}}\n"
                f"static inline void gex_AM_Commit{kind}Long{n}(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr{args_decl(n, A)}) {{\n"
                f"{arr(n, A)}    _gex_AM_CommitLong(sd, handler, nbytes, dest_addr, {n}, {ptr(n)});\n}}\n"
            )
    for n in range(MAX + 1):
        for kind, k in (("Request", "_GEX_AM_KIND_REQUEST"), ("Reply", "_GEX_AM_KIND_REPLY")):
            out.append(
                f"static inline int gex_AM_Commit{kind}Medium{n}_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_Flags_t commit_flags{args_decl(n, A)}) {{\n"
                f"{arr(n, A)}    return _gex_AM_Commit_v2(sd, {k} | _GEX_AM_KIND_MEDIUM, handler, nbytes, (void *)0, commit_flags, {n}, {ptr(n)});\n}}\n"
                f"static inline int gex_AM_Commit{kind}Long{n}_v2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_Flags_t commit_flags{args_decl(n, A)}) {{\n"
                f"{arr(n, A)}    return _gex_AM_Commit_v2(sd, {k} | _GEX_AM_KIND_LONG, handler, nbytes, dest_addr, commit_flags, {n}, {ptr(n)});\n}}\n"
            )
    return "".join(out)


def g1():
    out = []
    A = "gasnet_handlerarg_t"
    for n in range(MAX + 1):
        out.append(
            f"static inline int gasnet_AMRequestShort{n}(gasnet_node_t dest, gasnet_handler_t handler{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gasnet_AMRequestShort(dest, handler, {n}, {ptr(n)});\n}}\n"
            f"static inline int gasnet_AMRequestMedium{n}(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gasnet_AMRequestMedium(dest, handler, source_addr, nbytes, {n}, {ptr(n)});\n}}\n"
            f"static inline int gasnet_AMRequestLong{n}(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, {n}, {ptr(n)});\n}}\n"
            f"static inline int gasnet_AMRequestLongAsync{n}(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gasnet_AMRequestLong(dest, handler, source_addr, nbytes, dest_addr, {n}, {ptr(n)});\n}}\n"
            f"static inline int gasnet_AMReplyShort{n}(gasnet_token_t token, gasnet_handler_t handler{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gasnet_AMReplyShort(token, handler, {n}, {ptr(n)});\n}}\n"
            f"static inline int gasnet_AMReplyMedium{n}(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gasnet_AMReplyMedium(token, handler, source_addr, nbytes, {n}, {ptr(n)});\n}}\n"
            f"static inline int gasnet_AMReplyLong{n}(gasnet_token_t token, gasnet_handler_t handler, void *source_addr, size_t nbytes, void *dest_addr{args_decl(n, A)}) {{\n"
            f"{arr(n, A)}    return _gasnet_AMReplyLong(token, handler, source_addr, nbytes, dest_addr, {n}, {ptr(n)});\n}}\n"
        )
    return "".join(out)


if __name__ == "__main__":
    sys.stdout.write({"ex": ex, "g1": g1}[sys.argv[1]]())
