/* CRC-64/XZ (reflected ECMA-182 polynomial, init and final value ~0) of the
 * subfile layout's stripes and index (subfile_index.h: tagg_crc64).
 *
 * Three implementations of one function, in a table (crc_impls) from the
 * portable one to the fastest; tagg_crc64 takes the fastest the CPU runs:
 *   - tables: slicing by 8 over eight 256-entry tables (about 1.5-2 GB/s);
 *   - clmul: carry-less multiplication (x86-64 PCLMULQDQ): four 128-bit
 *     accumulators fold the data 64 bytes at a time (about 6 GB/s here);
 *   - clmul512: the same folding on 512-bit registers (AVX-512 VPCLMULQDQ):
 *     four accumulators of four blocks each fold 256 bytes at a time, then
 *     fold into one register 64 bytes at a time and into one block.
 * A stripe written in the subfile layout is checksummed by its aggregator in
 * the round loop, a stripe read is checked whole: the checksum's time is on
 * the critical path of both, beside the copy.
 *
 * The folding, in the reflected representation (a 64-bit word w stands for
 * sum w_i x^(63-i); a 128-bit block loaded from memory with low word L and
 * high word H stands for L(x) x^64 + H(x)):
 *   - the register R after a prefix is (prefix(x) x^64) mod P; processing a
 *     message from R equals processing it from 0 with R XORed into its first
 *     8 bytes;
 *   - an accumulator A standing d bits before the data still to come moves
 *     past them as A x^d = L x^(64+d) + H x^d (mod P). A carry-less product
 *     of two reflected words a, b is the 128-bit block of x a(x) b(x), so
 *     L x^(64+d) is clmul(L, x^(63+d) mod P) and H x^d is clmul(H, x^(d-1) mod P),
 *     each of degree < 128: it stays one block;
 *   - at the end the remaining block B has R = (B x^64) mod P, which is the
 *     portable CRC of B's 16 bytes from a zero register; the tail (< 16 bytes)
 *     follows in the portable code.
 * The constants x^e mod P are computed at start-up (multiplying by x in the
 * reflected representation is a right shift that folds the polynomial back in,
 * as when making the tables). The unit test checks both implementations
 * against a bit-by-bit CRC over many lengths, offsets and start values. */
#include "subfile_index.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TAGG_CRC_CLMUL 1
#include <immintrin.h>
#endif

#define POLY UINT64_C(0xC96C5795D7870F42)

static uint64_t crc_table[8][256];
static uint64_t k_fold[6]; /* x^(63+d), x^(d-1) mod P for d = 512, 128 and 2048 */
static int      have_clmul, have_clmul512;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static uint64_t xpow_mod(unsigned e) /* x^e mod P, reflected */
{
    uint64_t v = UINT64_C(1) << 63; /* x^0 */
    while (e--)
        v = (v & 1) ? (v >> 1) ^ POLY : v >> 1;
    return v;
}

static void crc_init(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint64_t c = i;
        for (int b = 0; b < 8; b++)
            c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        crc_table[0][i] = c;
    }
    for (unsigned i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++)
            crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^ crc_table[0][crc_table[k - 1][i] & 0xff];
    k_fold[0] = xpow_mod(63 + 512), k_fold[1] = xpow_mod(512 - 1);
    k_fold[2] = xpow_mod(63 + 128), k_fold[3] = xpow_mod(128 - 1);
    k_fold[4] = xpow_mod(63 + 2048), k_fold[5] = xpow_mod(2048 - 1);
#ifdef TAGG_CRC_CLMUL
    __builtin_cpu_init();
    have_clmul    = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
    have_clmul512 = have_clmul && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq");
#endif
}

/* The register (no inversions) over len bytes. */
static uint64_t update_portable(uint64_t crc, const unsigned char *p, size_t len)
{
    for (; len >= 8; len -= 8, p += 8) {
        uint64_t w = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
                     (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
        crc ^= w;
        crc = crc_table[7][crc & 0xff] ^ crc_table[6][(crc >> 8) & 0xff] ^ crc_table[5][(crc >> 16) & 0xff] ^
              crc_table[4][(crc >> 24) & 0xff] ^ crc_table[3][(crc >> 32) & 0xff] ^ crc_table[2][(crc >> 40) & 0xff] ^
              crc_table[1][(crc >> 48) & 0xff] ^ crc_table[0][crc >> 56];
    }
    for (size_t i = 0; i < len; i++)
        crc = crc_table[0][(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

#ifdef TAGG_CRC_CLMUL
__attribute__((target("pclmul,sse4.1"))) static inline __m128i fold(__m128i a, __m128i k)
{
    /* k: low word multiplies a's low word, high word a's high word */
    return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11));
}

/* The end of both foldings: four consecutive blocks a0..a3 into one, then
 * the len bytes left at p, 16 at a time, then the register of the block and
 * the tail (< 16 bytes) in the portable code. */
__attribute__((target("pclmul,sse4.1"))) static uint64_t fold_finish(__m128i a0, __m128i a1, __m128i a2, __m128i a3,
                                                                      const unsigned char *p, size_t len)
{
    const __m128i k128 = _mm_set_epi64x((long long)k_fold[3], (long long)k_fold[2]);
    __m128i       a    = _mm_xor_si128(fold(a0, k128), a1);
    a                  = _mm_xor_si128(fold(a, k128), a2);
    a                  = _mm_xor_si128(fold(a, k128), a3);
    for (; len >= 16; p += 16, len -= 16)
        a = _mm_xor_si128(fold(a, k128), _mm_loadu_si128((const __m128i *)p));
    unsigned char last[16];
    _mm_storeu_si128((__m128i *)last, a);
    return update_portable(update_portable(0, last, 16), p, len);
}

/* The register over len >= 64 bytes. */
__attribute__((target("pclmul,sse4.1"))) static uint64_t update_clmul(uint64_t crc, const unsigned char *p, size_t len)
{
    const __m128i k512 = _mm_set_epi64x((long long)k_fold[1], (long long)k_fold[0]);
    __m128i       a0 = _mm_loadu_si128((const __m128i *)p), a1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i       a2 = _mm_loadu_si128((const __m128i *)(p + 32)), a3 = _mm_loadu_si128((const __m128i *)(p + 48));
    a0 = _mm_xor_si128(a0, _mm_set_epi64x(0, (long long)crc));
    p += 64, len -= 64;
    for (; len >= 64; p += 64, len -= 64) {
        a0 = _mm_xor_si128(fold(a0, k512), _mm_loadu_si128((const __m128i *)p));
        a1 = _mm_xor_si128(fold(a1, k512), _mm_loadu_si128((const __m128i *)(p + 16)));
        a2 = _mm_xor_si128(fold(a2, k512), _mm_loadu_si128((const __m128i *)(p + 32)));
        a3 = _mm_xor_si128(fold(a3, k512), _mm_loadu_si128((const __m128i *)(p + 48)));
    }
    return fold_finish(a0, a1, a2, a3, p, len);
}

/* The 512-bit folding: a register's four 128-bit lanes are four consecutive
 * blocks, each folded as fold() folds one. */
__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1"))) static inline __m512i fold512(__m512i a, __m512i k)
{
    return _mm512_xor_si512(_mm512_clmulepi64_epi128(a, k, 0x00), _mm512_clmulepi64_epi128(a, k, 0x11));
}

/* The register over len >= 256 bytes. */
__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1"))) static uint64_t update_clmul512(uint64_t crc, const unsigned char *p,
                                                                                           size_t len)
{
    const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k_fold[5], (long long)k_fold[4]));
    const __m512i k512  = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k_fold[1], (long long)k_fold[0]));
    __m512i a0 = _mm512_loadu_si512((const void *)p), a1 = _mm512_loadu_si512((const void *)(p + 64));
    __m512i a2 = _mm512_loadu_si512((const void *)(p + 128)), a3 = _mm512_loadu_si512((const void *)(p + 192));
    a0 = _mm512_xor_si512(a0, _mm512_inserti32x4(_mm512_setzero_si512(), _mm_set_epi64x(0, (long long)crc), 0));
    p += 256, len -= 256;
    for (; len >= 256; p += 256, len -= 256) {
        a0 = _mm512_xor_si512(fold512(a0, k2048), _mm512_loadu_si512((const void *)p));
        a1 = _mm512_xor_si512(fold512(a1, k2048), _mm512_loadu_si512((const void *)(p + 64)));
        a2 = _mm512_xor_si512(fold512(a2, k2048), _mm512_loadu_si512((const void *)(p + 128)));
        a3 = _mm512_xor_si512(fold512(a3, k2048), _mm512_loadu_si512((const void *)(p + 192)));
    }
    __m512i a = _mm512_xor_si512(fold512(a0, k512), a1); /* the four registers into one */
    a         = _mm512_xor_si512(fold512(a, k512), a2);
    a         = _mm512_xor_si512(fold512(a, k512), a3);
    for (; len >= 64; p += 64, len -= 64)
        a = _mm512_xor_si512(fold512(a, k512), _mm512_loadu_si512((const void *)p));
    return fold_finish(_mm512_extracti32x4_epi32(a, 0), _mm512_extracti32x4_epi32(a, 1),
                       _mm512_extracti32x4_epi32(a, 2), _mm512_extracti32x4_epi32(a, 3), p, len);
}
#endif

/* The implementations, portable first; usable() is asked after crc_init. */
static int usable_always(void) { return 1; }
#ifdef TAGG_CRC_CLMUL
static int usable_clmul(void) { return have_clmul; }
static int usable_clmul512(void) { return have_clmul512; }
#endif

static const struct crc_impl {
    const char *name;
    int (*usable)(void);
    size_t min_len; /* shorter buffers go to the tables */
    uint64_t (*update)(uint64_t crc, const unsigned char *p, size_t len);
} crc_impls[] = {
    {"tables", usable_always, 0, update_portable},
#ifdef TAGG_CRC_CLMUL
    {"clmul", usable_clmul, 64, update_clmul},
    {"clmul512", usable_clmul512, 256, update_clmul512},
#endif
};
enum { N_IMPLS = sizeof crc_impls / sizeof crc_impls[0] };
static int best_impl; /* set by crc_pick */
static pthread_once_t pick_once = PTHREAD_ONCE_INIT;

static void crc_pick(void)
{
    pthread_once(&crc_once, crc_init);
    for (int i = 0; i < N_IMPLS; i++)
        if (crc_impls[i].usable())
            best_impl = i;
}

static uint64_t crc_run(int i, uint64_t crc, const void *buf, size_t len)
{
    const struct crc_impl *c = &crc_impls[i];
    if (len < c->min_len) /* the best of the others that takes len */
        while (--i > 0 && (!crc_impls[i].usable() || len < crc_impls[i].min_len))
            ;
    return ~crc_impls[i].update(~crc, buf, len);
}

uint64_t tagg_crc64(uint64_t crc, const void *buf, size_t len)
{
    pthread_once(&pick_once, crc_pick);
    return crc_run(best_impl, crc, buf, len);
}

int tagg_crc64_impl_count(void) { return N_IMPLS; }

const char *tagg_crc64_impl(int impl, int *usable)
{
    pthread_once(&pick_once, crc_pick);
    if (impl < 0 || impl >= N_IMPLS)
        return NULL;
    if (usable)
        *usable = crc_impls[impl].usable();
    return crc_impls[impl].name;
}

uint64_t tagg_crc64_with(int impl, uint64_t crc, const void *buf, size_t len)
{
    pthread_once(&pick_once, crc_pick);
    if (impl < 0 || impl >= N_IMPLS || !crc_impls[impl].usable())
        impl = 0;
    return crc_run(impl, crc, buf, len);
}
