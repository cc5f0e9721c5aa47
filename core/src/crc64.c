/* CRC-64/XZ (reflected ECMA-182 polynomial, init and final value ~0) of the
 * subfile layout's stripes and index (subfile_index.h: tagg_crc64).
 *
 * Two implementations of one function:
 *   - portable: slicing by 8 over eight 256-entry tables (about 1.5-2 GB/s);
 *   - carry-less multiplication (x86-64 PCLMULQDQ, chosen at run time when the
 *     CPU has it): four 128-bit accumulators fold the data 64 bytes at a time,
 *     several times faster, so that checksumming every stripe written and read
 *     costs little next to the copy.
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
static uint64_t k_fold[4]; /* x^(63+d), x^(d-1) mod P for d = 512 and d = 128 */
static int      have_clmul;
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
#ifdef TAGG_CRC_CLMUL
    __builtin_cpu_init();
    have_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
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

/* The register over len >= 64 bytes. */
__attribute__((target("pclmul,sse4.1"))) static uint64_t update_clmul(uint64_t crc, const unsigned char *p, size_t len)
{
    const __m128i k512 = _mm_set_epi64x((long long)k_fold[1], (long long)k_fold[0]);
    const __m128i k128 = _mm_set_epi64x((long long)k_fold[3], (long long)k_fold[2]);
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
    __m128i a = _mm_xor_si128(fold(a0, k128), a1); /* the four blocks into one */
    a         = _mm_xor_si128(fold(a, k128), a2);
    a         = _mm_xor_si128(fold(a, k128), a3);
    for (; len >= 16; p += 16, len -= 16)
        a = _mm_xor_si128(fold(a, k128), _mm_loadu_si128((const __m128i *)p));
    unsigned char last[16];
    _mm_storeu_si128((__m128i *)last, a);
    return update_portable(update_portable(0, last, 16), p, len);
}
#endif

uint64_t tagg_crc64_portable(uint64_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
    return ~update_portable(~crc, buf, len);
}

uint64_t tagg_crc64(uint64_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
#ifdef TAGG_CRC_CLMUL
    if (have_clmul && len >= 64)
        return ~update_clmul(~crc, buf, len);
#endif
    return ~update_portable(~crc, buf, len);
}
