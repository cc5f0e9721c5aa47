/* tagg/tiers.h - memory and storage tiers (MA-TAPIOCA section 3.1, memory abstraction).
 *
 * A tier is what memLatency / memBandwidth / memCapacity / memPersistency of
 * MA-TAPIOCA Listing 1 return: latency, bandwidth, capacity and persistency.
 * Every node of the machine offers the same list of tiers; one tier is the
 * source of the producers' data (DRAM by default) and one is the target of the
 * aggregated data (the file system, PFS, by default). */
#ifndef TAGG_TIERS_H
#define TAGG_TIERS_H

#include <stdint.h>
#include <stdio.h>
#include "tagg/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { TAGG_TIER_DRAM = 0, TAGG_TIER_HBM, TAGG_TIER_NVR, TAGG_TIER_PFS } tagg_tier_kind_t;

/* Ordered: a tier satisfies a requirement r when its persistency >= r. */
typedef enum { TAGG_PERSIST_NONE = 0, TAGG_PERSIST_JOB, TAGG_PERSIST_PERMANENT } tagg_persist_t;

#define TAGG_MAX_TIERS 8
#define TAGG_TIER_NAME_MAX 32

typedef struct tagg_tier {
  char name[TAGG_TIER_NAME_MAX];
  tagg_tier_kind_t kind;
  double latency;       /* seconds */
  double bandwidth;     /* bytes per second */
  uint64_t capacity;    /* bytes available per node */
  tagg_persist_t persistency;
} tagg_tier_t;

typedef struct tagg_tiers {
  int ntiers;
  tagg_tier_t tier[TAGG_MAX_TIERS];
  int source;  /* index of the tier holding the producers' data */
  int target;  /* index of the destination tier (file system) */
} tagg_tiers_t;

/* Built-in defaults: a KNL-like node (HBM 16 GB, DRAM 192 GB, NVR 128 GB SSD,
 * Lustre PFS) with the vendor values of MA-TAPIOCA Table 1. */
void tagg_tiers_default(tagg_tiers_t *t);

/* Parses a tier file (format in model/README.md).  Errors name file, line, field. */
int tagg_tiers_load(const char *path, tagg_tiers_t *t, tagg_err_t *err);
/* Same, from a string; `name` is used in messages. */
int tagg_tiers_parse(const char *text, const char *name, tagg_tiers_t *t, tagg_err_t *err);
/* Checks internal consistency (source/target set, positive bandwidths...). */
int tagg_tiers_validate(const tagg_tiers_t *t, tagg_err_t *err);
/* Index of the tier with this name (case-insensitive) or kind name, -1 if none. */
int tagg_tiers_find(const tagg_tiers_t *t, const char *name);
/* Writes the tiers back in the file format. */
void tagg_tiers_print(const tagg_tiers_t *t, FILE *out);

const char *tagg_tier_kind_name(tagg_tier_kind_t k);
const char *tagg_persist_name(tagg_persist_t p);
int tagg_persist_from_name(const char *s, tagg_persist_t *out);

#ifdef __cplusplus
}
#endif
#endif
