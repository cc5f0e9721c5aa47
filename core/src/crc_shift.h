/* Algebra of the CRC-64 (subfile_index.h: tagg_crc64, CRC-64/XZ) that lets a
 * stripe's checksum be followed through partial rewrites without reading the
 * stripe whole. Pure C, no MPI.
 *
 * The CRC register is a linear function over GF(2) of the bytes fed in, and
 * the init/final inversions only add a constant that depends on the length:
 * for equal-length blocks crc(A ^ B ^ C) = crc(A) ^ crc(B) ^ crc(C), and
 * leading zero bytes do not change the linear part. So each block of a
 * stripe slot of S bytes gets a "padded form": the linear part of the CRC of
 * the block followed by zeros up to S bytes. Padded forms of one slot add by
 * XOR: rewriting bytes [a, a+n) from O to N changes the slot's padded form by
 * tagg_crc_delta(crc(O), crc(N), a, n, S), whatever other pieces change, in
 * whatever order. */
#ifndef TAGG_CRC_SHIFT_H
#define TAGG_CRC_SHIFT_H

#include <stdint.h>

/* CRC-64 of n zero bytes. */
uint64_t tagg_crc_zeros(uint64_t n);
/* The padded form (to `to` bytes, to >= len) of a len-byte block with CRC crc. */
uint64_t tagg_crc_pad(uint64_t crc, uint64_t len, uint64_t to);
/* Inverse of tagg_crc_pad: the CRC of the len-byte block whose padded form is p. */
uint64_t tagg_crc_unpad(uint64_t p, uint64_t len, uint64_t to);
/* The change of a slot's padded form (slot of `to` bytes) when its bytes
 * [at, at+n) go from a block with CRC crc_old to one with CRC crc_new. */
uint64_t tagg_crc_delta(uint64_t crc_old, uint64_t crc_new, uint64_t at, uint64_t n, uint64_t to);

#endif
