/*
 * gasnet_mk.h: memory kinds of gex's C interface (GASNet-EX spec v0.17,
 * [PROPOSED] "Memory Kinds"): creating and destroying a kind. GEX_MK_HOST,
 * gex_Segment_Create and the endpoint calls are in gasnetex.h. Device
 * classes are refused (GASNET_ERR_RESOURCE, naming the runtime this build
 * of gex lacks), so GASNET_HAVE_MK_CLASS_CUDA_UVA, _HIP, _ZE and _MULTIPLE
 * stay undefined (the reference's convention for "not supported"). Written
 * for gex from the spec.
 */
#ifndef GEX_GASNET_MK_H
#define GEX_GASNET_MK_H

#include <gasnetex.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    GEX_MK_CLASS_HOST = 0,
    GEX_MK_CLASS_CUDA_UVA = 1,
    GEX_MK_CLASS_HIP = 2,
    GEX_MK_CLASS_ZE = 3
} gex_MK_Class_t;

typedef struct {
    uint64_t gex_flags; /* reserved: 0 */
    gex_MK_Class_t gex_class;
    union {
        struct {
            int gex_CUdevice;
        } gex_class_cuda_uva;
        struct {
            int gex_hipDevice;
        } gex_class_hip;
        struct {
            void *gex_zeDevice;
            void *gex_zeContext;
            uint32_t gex_zeMemoryOrdinal;
        } gex_class_ze;
    } gex_args;
} gex_MK_Create_args_t;

extern int gex_MK_Create(gex_MK_t *memkind_p, gex_Client_t client, const gex_MK_Create_args_t *args,
                         gex_Flags_t flags);
extern void gex_MK_Destroy(gex_MK_t memkind, gex_Flags_t flags);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEX_GASNET_MK_H */
