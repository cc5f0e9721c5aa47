/* CRC-64 algebra (crc_shift.h). Feeding one zero byte to the register is a
 * linear map Z on 64 bits; feeding n zero bytes is Z^n, applied from the
 * precomputed powers Z^(2^i) (and their inverses), one per bit of n. */
#include "crc_shift.h"

#include "subfile_index.h"

#include <pthread.h>

static uint64_t       zpow[64][64]; /* zpow[i][b]: Z^(2^i) applied to bit b */
static uint64_t       zinv[64][64]; /* the same for Z^-1 */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint64_t apply(const uint64_t m[64], uint64_t v)
{
    uint64_t r = 0;
    for (int b = 0; v; b++, v >>= 1)
        if (v & 1)
            r ^= m[b];
    return r;
}

/* m: columns of an invertible 64 x 64 matrix over GF(2); inv: its inverse,
 * by Gauss-Jordan elimination on rows. */
static void invert(const uint64_t m[64], uint64_t inv[64])
{
    uint64_t row[64], irow[64]; /* row r of m and of the identity, bit c = column c */
    for (int r = 0; r < 64; r++) {
        row[r] = 0, irow[r] = UINT64_C(1) << r;
        for (int c = 0; c < 64; c++)
            row[r] |= ((m[c] >> r) & 1) << c;
    }
    for (int c = 0; c < 64; c++) {
        int p = c;
        while (p < 64 && !((row[p] >> c) & 1))
            p++;
        if (p == 64)
            continue; /* singular: cannot happen for Z (its polynomial has a constant term) */
        uint64_t t = row[p];
        row[p] = row[c], row[c] = t;
        t = irow[p], irow[p] = irow[c], irow[c] = t;
        for (int r = 0; r < 64; r++)
            if (r != c && ((row[r] >> c) & 1))
                row[r] ^= row[c], irow[r] ^= irow[c];
    }
    for (int c = 0; c < 64; c++) { /* back to columns */
        inv[c] = 0;
        for (int r = 0; r < 64; r++)
            inv[c] |= ((irow[r] >> c) & 1) << r;
    }
}

static void setup(void)
{
    static const unsigned char zero = 0;
    for (int b = 0; b < 64; b++) { /* register s, one zero byte: ~crc(~s, "\0") */
        uint64_t s = UINT64_C(1) << b;
        zpow[0][b] = ~tagg_crc64(~s, &zero, 1);
    }
    invert(zpow[0], zinv[0]);
    for (int i = 1; i < 64; i++)
        for (int b = 0; b < 64; b++) {
            zpow[i][b] = apply(zpow[i - 1], zpow[i - 1][b]);
            zinv[i][b] = apply(zinv[i - 1], zinv[i - 1][b]);
        }
}

static uint64_t shift(uint64_t (*m)[64], uint64_t reg, uint64_t n)
{
    pthread_once(&once, setup);
    for (int i = 0; n; i++, n >>= 1)
        if (n & 1)
            reg = apply(m[i], reg);
    return reg;
}

uint64_t tagg_crc_zeros(uint64_t n) { return ~shift(zpow, ~UINT64_C(0), n); }

uint64_t tagg_crc_pad(uint64_t crc, uint64_t len, uint64_t to)
{
    return shift(zpow, crc ^ tagg_crc_zeros(len), to - len);
}

uint64_t tagg_crc_unpad(uint64_t p, uint64_t len, uint64_t to)
{
    return shift(zinv, p, to - len) ^ tagg_crc_zeros(len);
}

uint64_t tagg_crc_delta(uint64_t crc_old, uint64_t crc_new, uint64_t at, uint64_t n, uint64_t to)
{
    return shift(zpow, crc_old ^ crc_new, to - at - n);
}
