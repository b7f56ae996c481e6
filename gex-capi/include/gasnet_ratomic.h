/*
 * gasnet_ratomic.h: remote atomics of gex's C interface (GASNet-EX spec
 * v0.17, "Remote Atomics"): atomic domains over a team for one data type
 * and a set of operations, and the typed operation calls. Written for gex
 * from the spec.
 */
#ifndef GEX_GASNET_RATOMIC_H
#define GEX_GASNET_RATOMIC_H

#include <gasnetex.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gex_AD_opaque *gex_AD_t;
#define GEX_AD_INVALID ((gex_AD_t)0)

extern void gex_AD_Create(gex_AD_t *ad_p, gex_TM_t tm, gex_DT_t dt, gex_OP_t ops, gex_Flags_t flags);
extern void gex_AD_Destroy(gex_AD_t ad);
extern gex_Flags_t gex_AD_QueryFlags(gex_AD_t ad);
extern gex_TM_t gex_AD_QueryTM(gex_AD_t ad);
extern gex_DT_t gex_AD_QueryDT(gex_AD_t ad);
extern gex_OP_t gex_AD_QueryOps(gex_AD_t ad);
extern void gex_AD_SetCData(gex_AD_t ad, const void *val);
extern void *gex_AD_QueryCData(gex_AD_t ad);

extern gex_Event_t gex_AD_OpNB_I32(gex_AD_t ad, int32_t *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                                    gex_OP_t opcode, int32_t operand1, int32_t operand2, gex_Flags_t flags);
extern int gex_AD_OpNBI_I32(gex_AD_t ad, int32_t *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                             gex_OP_t opcode, int32_t operand1, int32_t operand2, gex_Flags_t flags);
extern gex_Event_t gex_AD_OpNB_U32(gex_AD_t ad, uint32_t *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                                    gex_OP_t opcode, uint32_t operand1, uint32_t operand2, gex_Flags_t flags);
extern int gex_AD_OpNBI_U32(gex_AD_t ad, uint32_t *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                             gex_OP_t opcode, uint32_t operand1, uint32_t operand2, gex_Flags_t flags);
extern gex_Event_t gex_AD_OpNB_I64(gex_AD_t ad, int64_t *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                                    gex_OP_t opcode, int64_t operand1, int64_t operand2, gex_Flags_t flags);
extern int gex_AD_OpNBI_I64(gex_AD_t ad, int64_t *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                             gex_OP_t opcode, int64_t operand1, int64_t operand2, gex_Flags_t flags);
extern gex_Event_t gex_AD_OpNB_U64(gex_AD_t ad, uint64_t *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                                    gex_OP_t opcode, uint64_t operand1, uint64_t operand2, gex_Flags_t flags);
extern int gex_AD_OpNBI_U64(gex_AD_t ad, uint64_t *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                             gex_OP_t opcode, uint64_t operand1, uint64_t operand2, gex_Flags_t flags);
extern gex_Event_t gex_AD_OpNB_FLT(gex_AD_t ad, float *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                                    gex_OP_t opcode, float operand1, float operand2, gex_Flags_t flags);
extern int gex_AD_OpNBI_FLT(gex_AD_t ad, float *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                             gex_OP_t opcode, float operand1, float operand2, gex_Flags_t flags);
extern gex_Event_t gex_AD_OpNB_DBL(gex_AD_t ad, double *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                                    gex_OP_t opcode, double operand1, double operand2, gex_Flags_t flags);
extern int gex_AD_OpNBI_DBL(gex_AD_t ad, double *result_p, gex_Rank_t tgt_rank, void *tgt_addr,
                             gex_OP_t opcode, double operand1, double operand2, gex_Flags_t flags);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEX_GASNET_RATOMIC_H */
