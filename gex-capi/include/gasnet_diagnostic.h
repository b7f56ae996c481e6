/*
 * gasnet_diagnostic.h: gex's internal diagnostics, callable from C clients
 * (GASNet-EX's testinternal calls them). gasnetex.h includes this header.
 * Written for gex.
 *
 * gasnett_diagnostic_gethandlers gives a table of 6 handlers (indices
 * 250-255) to register on the primordial endpoint before the run.
 * gasnett_run_diagnostics is called by every rank of tm: each rank checks
 * Active Messages of every category, blocking, non-blocking and NBI puts
 * and gets against `peer` (whose segment starts at `peerseg`; the first
 * 64 KiB of it are written, so each rank should name a different peer,
 * e.g. its successor), and `threads` threads contending on a lock, each
 * section `iters` times with lengths, offsets and contents seeded by
 * `seed`. `sections` picks sections by letter (A: Short, B: Medium, C:
 * Long, D: blocking RMA, E: NB/NBI RMA, F: threads; NULL or "" for all).
 * Returns the number of errors found on this rank, each printed to stderr
 * on a line starting "ERROR".
 */
#ifndef GEX_GASNET_DIAGNOSTIC_H
#define GEX_GASNET_DIAGNOSTIC_H

#include <gasnetex.h>

#ifdef __cplusplus
extern "C" {
#endif

extern void gasnett_diagnostic_gethandlers(gex_AM_Entry_t **table, int *count);
extern int gasnett_run_diagnostics(int iters, int threads, const char *sections, gex_TM_t tm,
                                   void *myseg, gex_Rank_t peer, void *peerseg, unsigned int seed);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEX_GASNET_DIAGNOSTIC_H */
