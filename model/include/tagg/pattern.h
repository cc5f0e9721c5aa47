/* tagg/pattern.h - access patterns: bytes written by each rank.
 *
 * Spec strings (units accepted on sizes: B, KB, MB, GB, KiB, MiB, GiB...):
 *   uniform:SIZE                     every rank writes SIZE
 *   random:MIN:MAX[:SEED]            uniform in [MIN, MAX]        (1D-array, 002 4.2)
 *   normal:MEAN:SD[:SEED]            normal, clipped at 0          (1D-array, 002 4.2)
 *   hacc:PARTICLES                   HACC-IO: 38 bytes per particle (9 variables)
 *   s3d:NX:NY:NZ[:NVARS]             S3D-IO: local NX*NY*NZ block of NVARS doubles (default 11)
 *   list:S0,S1,...                   explicit sizes, cycled over the ranks
 *   file:PATH                        one size per line (`#` comments)
 */
#ifndef TAGG_PATTERN_H
#define TAGG_PATTERN_H

#include <stdint.h>
#include "tagg/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TAGG_HACC_BYTES_PER_PARTICLE 38 /* xx yy zz vx vy vz phi (float), pid (int64), mask (uint16) */

/* Fills bytes[0..nranks-1] from a spec. */
int tagg_pattern_fill(const char *spec, int nranks, uint64_t *bytes, tagg_err_t *err);

/* Parses "12", "1.5MB", "16MiB", "0.15GB/s" style numbers (suffix /s ignored).
 * Decimal units are powers of 1000, binary (KiB...) of 1024. */
int tagg_parse_size(const char *s, double *out);
/* Parses "30ms", "2.5us", "1ns", "0.1s", plain numbers are seconds. */
int tagg_parse_time(const char *s, double *out);

/* Deterministic generator (splitmix64) so plans are reproducible everywhere. */
uint64_t tagg_rng_next(uint64_t *state);
double tagg_rng_uniform(uint64_t *state); /* [0, 1) */

#ifdef __cplusplus
}
#endif
#endif
