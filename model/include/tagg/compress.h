/* tagg/compress.h - the cost of stripe compression (issue 15): compression
 * trades the aggregator's CPU for file-system bandwidth. tagg-calibrate
 * measures each codec on the node (on HACC-like data) and writes lines
 *   codec NAME compress=RATE decompress=RATE ratio=R
 * into the tier file (RATE in logical bytes per second of one core, R the
 * stored/logical ratio it reached). compression=auto compresses a stripe of S
 * bytes only when the codec's time plus the target's time for R*S bytes is
 * below the target's time for S bytes (tagg_fs_request_time): only where the
 * codec's throughput beats the target's bandwidth. */
#ifndef TAGG_COMPRESS_H
#define TAGG_COMPRESS_H

#include "tagg/callplan.h"
#include "tagg/error.h"
#include "tagg/tiers.h"

#include <stdint.h>

#define TAGG_CODEC_PERF_MAX 8
typedef struct {
  int n;
  char name[TAGG_CODEC_PERF_MAX][16];
  double compress[TAGG_CODEC_PERF_MAX];   /* logical bytes per second */
  double decompress[TAGG_CODEC_PERF_MAX]; /* logical bytes per second */
  double ratio[TAGG_CODEC_PERF_MAX];      /* stored / logical, in (0, 1] */
} tagg_codec_perf_t;

/* The 'codec' lines of a tier file; none: cp->n == 0. Errors name file, line, field. */
int tagg_codec_perf_parse(const char *text, const char *name, tagg_codec_perf_t *cp, tagg_err_t *err);
int tagg_codec_perf_load(const char *path, tagg_codec_perf_t *cp, tagg_err_t *err);

/* Seconds to write one stripe of S bytes raw (*raw) and through codec i
 * (*comp: compression + the stored bytes); returns 1 when compression pays. */
int tagg_compress_pays(const tagg_codec_perf_t *cp, int i, const tagg_fs_perf_t *fs, const tagg_tiers_t *tiers,
                       uint64_t S, double *raw, double *comp);

/* The codec of cp that writes a stripe of S bytes fastest when that beats
 * writing it raw, else -1 (no codec measured, or none pays). */
int tagg_compress_choose(const tagg_codec_perf_t *cp, const tagg_fs_perf_t *fs, const tagg_tiers_t *tiers, uint64_t S);

#endif
