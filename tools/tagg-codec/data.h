/* Synthetic data with the structure of the seeds' kernels, for codec
 * measurements and compression benchmarks (deterministic from a seed).
 *   hacc:   HACC-IO particles, SoA: x y z (float32, clustered in halos of a
 *           256^3 box: 70 % of particles in 2,000 Gaussian halos of radius
 *           0.5-3, the rest uniform), vx vy vz (float32, Gaussian, 300 km/s,
 *           halo members share their halo's bulk velocity), phi (float32,
 *           smooth in position), pid (int64, sequential), mask (uint16, 0).
 *   s3d:    S3D-IO state, AoS [z][y][x][11 float64]: smooth fields (sums of
 *           a few sines) plus 1e-6 relative noise.
 *   random: bytes from a 64-bit xorshift (incompressible). */
#ifndef TAGG_CODEC_DATA_H
#define TAGG_CODEC_DATA_H
#include <stddef.h>
#include <stdint.h>
/* Fills n bytes of kind ("hacc", "s3d", "random"); 0, or -1 for an unknown kind. */
int tagg_data_fill(const char *kind, void *buf, size_t n, uint64_t seed);
#endif
