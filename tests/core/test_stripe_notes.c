/* The subfile layout's per-rank stripe notes (stripe_notes.c) and the CRC
 * algebra they carry (crc_shift.c), no MPI: notes of events and of writes,
 * the spans they keep apart, and the checksum a close composes for a new
 * file's stripe from its writers' changes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc_shift.h"
#include "stripe_notes.h"
#include "subfile_index.h"

/* The per-rank stripe notes: last event wins, growth keeps every key, a cut drops the stripes past it. */
static void test_notes(void **state)
{
    (void)state;
    notes_t m = {0};
    for (uint64_t k = 0; k < 10000; k++)
        assert_int_equal(tagg_notes_put(&m, k * 7, NOTE_FULL, k), 0);
    assert_int_equal(m.n, 10000);
    assert_int_equal(tagg_notes_put(&m, 14, NOTE_DIRTY, 0), 0);
    assert_int_equal(m.n, 10000);
    assert_int_equal(tagg_notes_get(&m, 14), NOTE_DIRTY);
    assert_int_equal(tagg_notes_get(&m, 21), NOTE_FULL);
    assert_int_equal(tagg_notes_get(&m, 22), 0);
    tagg_notes_cut(&m, 100); /* keys 2*j + space: stripes below 100 are keys below 200 */
    for (uint64_t k = 0; k < 70000; k += 7)
        assert_int_equal(tagg_notes_get(&m, k) != 0, k < 200);
    tagg_notes_free(&m);
}

/* The CRC algebra behind rewrite checks: padded forms, their inverse, and
 * changes from partial rewrites adding up in any order to the CRC of the
 * stripe that results, against tagg_crc64 over the bytes themselves. */
static void test_crc_shift(void **state)
{
    (void)state;
    enum { S = 4096 };
    static unsigned char a[S], b[S], z[S];
    unsigned             seed = 7;
    for (int i = 0; i < S; i++)
        a[i] = (unsigned char)(seed = seed * 1103515245u + 12345u) >> 16;
    assert_true(tagg_crc_zeros(S) == tagg_crc64(0, z, S));
    assert_true(tagg_crc_zeros(0) == 0);
    for (uint64_t len = 0; len <= S; len += 511) {
        uint64_t c = tagg_crc64(0, a, (size_t)len);
        memcpy(b, a, (size_t)len), memset(b + len, 0, (size_t)(S - len));
        /* padded form of a len-byte block = that of the block with zeros to S */
        assert_true(tagg_crc_pad(c, len, S) == tagg_crc_pad(tagg_crc64(0, b, S), S, S));
        assert_true(tagg_crc_unpad(tagg_crc_pad(c, len, S), len, S) == c);
    }
    /* a stripe rewritten piece by piece, in shuffled order, some pieces twice */
    for (int round = 0; round < 50; round++) {
        uint64_t len  = round % 3 ? S : 1 + (seed = seed * 1103515245u + 12345u) % S; /* short last stripes too */
        uint64_t form = tagg_crc_pad(tagg_crc64(0, a, (size_t)len), len, S), delta = 0;
        memcpy(b, a, (size_t)len), memset(b + len, 0, (size_t)(S - len));
        for (int p = 0; p < 20; p++) {
            uint64_t at = (seed = seed * 1103515245u + 12345u) % S, n = 1 + (seed = seed * 1103515245u + 12345u) % (S - at);
            unsigned char nw[S];
            for (uint64_t i = 0; i < n; i++)
                nw[i] = (unsigned char)(seed = seed * 1103515245u + 12345u) >> 20;
            delta ^= tagg_crc_delta(tagg_crc64(0, b + at, (size_t)n), tagg_crc64(0, nw, (size_t)n), at, n, S);
            memcpy(b + at, nw, (size_t)n);
            if (at + n > len)
                len = at + n;
        }
        assert_true(tagg_crc_pad(tagg_crc64(0, b, (size_t)len), len, S) == (form ^ delta));
        /* one flipped byte outside the rewrites is seen */
        b[len - 1] ^= 1;
        assert_true(tagg_crc_pad(tagg_crc64(0, b, (size_t)len), len, S) != (form ^ delta));
    }
}

/* Notes of writes: deltas add, a whole write replaces the delta and leaves
 * its flag, spans grow to cover the writes, cuts keep both below the cut. */
static void test_notes_write(void **state)
{
    (void)state;
    notes_t  m = {0};
    uint64_t lo, hi;
    for (uint64_t k = 0; k < 3000; k++) {
        assert_int_equal(tagg_notes_write(&m, k, 0, 0, 0, k * 3, NULL, 100, 200, 0), 0);
        assert_int_equal(tagg_notes_write(&m, k, 0, 0, 0, k * 5, NULL, 50, 60, 0), 0);
    }
    assert_int_equal(tagg_notes_write(&m, 8, 1, 99, 0, 7, NULL, 0, 4096, 0), 0);
    assert_int_equal(tagg_notes_write(&m, 8, 0, 0, 0, 1, NULL, 10, 20, 0), 0);
    assert_int_equal(tagg_notes_get(&m, 8), NOTE_DIRTY | NOTE_HADFULL);
    assert_int_equal(tagg_notes_get(&m, 9), NOTE_DIRTY);
    assert_true(tagg_notes_delta(&m, 9) == ((9 * 3) ^ (9 * 5)));
    assert_true(tagg_notes_delta(&m, 8) == (7 ^ 1)); /* the whole write replaced what came before */
    uint64_t sp[2 * NOTE_SPANS];
    assert_int_equal(tagg_notes_spans(&m, 9, sp), 2); /* [50, 60) and [100, 200) */
    assert_true(sp[0] == 50 && sp[1] == 60 && sp[2] == 100 && sp[3] == 200);
    assert_int_equal(tagg_notes_touch(&m, 9, 55, 150, &lo, &hi), 1); /* from the first byte touched to the last */
    assert_true(lo == 55 && hi == 150);
    assert_int_equal(tagg_notes_touch(&m, 9, 60, 100, &lo, &hi), 0); /* the gap between them */
    assert_int_equal(tagg_notes_touch(&m, 9, 0, 50, &lo, &hi), 0);
    assert_int_equal(tagg_notes_touch(&m, 9, 199, 300, &lo, &hi), 1);
    assert_true(lo == 199 && hi == 200);
    assert_int_equal(tagg_notes_spans(&m, 8, sp), 1); /* the whole write covers the rest */
    assert_true(sp[0] == 0 && sp[1] == 4096);
    assert_int_equal(tagg_notes_spans(&m, 5000, sp), 0);
    assert_int_equal(tagg_notes_touch(&m, 5000, 0, 10, &lo, &hi), 0);
    assert_int_equal(tagg_notes_put(&m, 9, NOTE_SUSPECT, 0), 0);
    assert_int_equal(NOTE_KIND(tagg_notes_get(&m, 9)), NOTE_SUSPECT);
    assert_true(tagg_notes_delta(&m, 9) == ((9 * 3) ^ (9 * 5)));
    /* a cut at byte 200 of stripe 3 (keys 6, 7): a span past it makes the note unsure, one up to it does not */
    assert_int_equal(tagg_notes_write(&m, 7, 0, 0, 0, 0, NULL, 300, 400, 0), 0);
    tagg_notes_cut_within(&m, 3, 200);
    assert_false(tagg_notes_get(&m, 6) & NOTE_UNSURE);
    assert_true(tagg_notes_get(&m, 7) & NOTE_UNSURE);
    tagg_notes_cut_within(&m, 2, 199); /* keys 4, 5: their last span ends at 200 */
    assert_true(tagg_notes_get(&m, 4) & NOTE_UNSURE);
    assert_true(tagg_notes_get(&m, 5) & NOTE_UNSURE);
    tagg_notes_cut(&m, 10);
    assert_int_equal(m.n, 20);
    assert_true(tagg_notes_delta(&m, 19) == ((19 * 3) ^ (19 * 5)));
    assert_int_equal(tagg_notes_spans(&m, 19, sp), 2);
    assert_true(sp[0] == 50 && sp[3] == 200);
    assert_true(tagg_notes_get(&m, 7) & NOTE_UNSURE);
    assert_false(tagg_notes_get(&m, 6) & NOTE_UNSURE);
    assert_int_equal(tagg_notes_get(&m, 20), 0);
    tagg_notes_free(&m);
}

/* Block deltas (format 4, nb > 0): partial writes add theirs, a whole write
 * replaces them and clears NOTE_NOBLOCKS, a write without them sets it; they
 * survive the table's growth and a cut below them. */
static void test_notes_blocks(void **state)
{
    (void)state;
    notes_t  m = {0};
    uint64_t a[4] = {1, 2, 4, 8}, b[4] = {16, 0, 32, 0}, w[4] = {100, 200, 300, 400};
    m.nb = 4;
    assert_null(tagg_notes_bdelta(&m, 3));
    assert_int_equal(tagg_notes_write(&m, 3, 0, 0, 0, 0, a, 0, 10, 0), 0);
    assert_int_equal(tagg_notes_write(&m, 3, 0, 0, 0, 0, b, 20, 30, 0), 0);
    const uint64_t *d = tagg_notes_bdelta(&m, 3);
    assert_true(d[0] == (1 ^ 16) && d[1] == 2 && d[2] == (4 ^ 32) && d[3] == 8);
    assert_false(tagg_notes_get(&m, 3) & NOTE_NOBLOCKS);
    assert_int_equal(tagg_notes_write(&m, 3, 0, 0, 0, 0, NULL, 40, 50, 0), 0); /* unknown: stays unknown */
    assert_true(tagg_notes_get(&m, 3) & NOTE_NOBLOCKS);
    assert_int_equal(tagg_notes_write(&m, 3, 0, 0, 0, 0, a, 60, 70, 0), 0);
    assert_true(tagg_notes_get(&m, 3) & NOTE_NOBLOCKS);
    assert_int_equal(tagg_notes_write(&m, 3, 1, 9, 0, 0, w, 0, 4096, 0), 0); /* whole: replaced, known again */
    d = tagg_notes_bdelta(&m, 3);
    assert_true(d[0] == 100 && d[3] == 400);
    assert_false(tagg_notes_get(&m, 3) & NOTE_NOBLOCKS);
    for (uint64_t k = 10; k < 2000; k++) /* growth keeps every note's blocks */
        assert_int_equal(tagg_notes_write(&m, k, 0, 0, 0, 0, a, 0, 1, 0), 0);
    d = tagg_notes_bdelta(&m, 3);
    assert_true(d[0] == 100 && d[1] == 200 && d[2] == 300 && d[3] == 400);
    assert_true(tagg_notes_bdelta(&m, 1999)[2] == 4);
    tagg_notes_cut(&m, 100); /* keys below 200 stay */
    assert_true(tagg_notes_bdelta(&m, 3)[1] == 200 && tagg_notes_bdelta(&m, 150)[3] == 8);
    assert_null(tagg_notes_bdelta(&m, 1999));
    tagg_notes_free(&m);
}

/* Spans: touching writes join, apart ones stay apart up to NOTE_SPANS, one
 * more closes the smallest gap; always disjoint, sorted, covering every write. */
static void test_notes_spans(void **state)
{
    (void)state;
    notes_t  m = {0};
    uint64_t v[2 * NOTE_SPANS];
    assert_int_equal(tagg_notes_write(&m, 1, 0, 0, 0, 0, NULL, 100, 110, 0), 0);
    assert_int_equal(tagg_notes_write(&m, 1, 0, 0, 0, 0, NULL, 110, 120, 0), 0); /* touches: one span */
    assert_int_equal(tagg_notes_spans(&m, 1, v), 1);
    assert_true(v[0] == 100 && v[1] == 120);
    assert_int_equal(tagg_notes_write(&m, 1, 0, 0, 0, 0, NULL, 10, 20, 0), 0);
    assert_int_equal(tagg_notes_write(&m, 1, 0, 0, 0, 0, NULL, 300, 310, 0), 0);
    assert_int_equal(tagg_notes_write(&m, 1, 0, 0, 0, 0, NULL, 200, 205, 0), 0);
    assert_int_equal(tagg_notes_spans(&m, 1, v), 4);
    assert_true(v[0] == 10 && v[2] == 100 && v[4] == 200 && v[6] == 300);
    assert_int_equal(tagg_notes_write(&m, 1, 0, 0, 0, 0, NULL, 400, 401, 0), 0); /* gaps 80, 80, 95, 90: [10,20) joins [100,120) */
    assert_int_equal(tagg_notes_spans(&m, 1, v), 4);
    assert_true(v[0] == 10 && v[1] == 120 && v[2] == 200 && v[3] == 205 && v[6] == 400 && v[7] == 401);
    assert_int_equal(tagg_notes_write(&m, 1, 0, 0, 0, 0, NULL, 150, 350, 0), 0); /* swallows two */
    assert_int_equal(tagg_notes_spans(&m, 1, v), 3);
    assert_true(v[0] == 10 && v[1] == 120 && v[2] == 150 && v[3] == 350 && v[4] == 400);
    uint64_t seed = 7;
    for (int t = 0; t < 2000; t++) { /* random writes: the spans stay sorted, disjoint, covering */
        uint64_t a = seed % 5000, n = 1 + (seed >> 20) % 300;
        seed       = seed * UINT64_C(6364136223846793005) + 1;
        assert_int_equal(tagg_notes_write(&m, 2, 0, 0, 0, 0, NULL, a, a + n, 0), 0);
        int c = tagg_notes_spans(&m, 2, v), hit = 0;
        assert_true(c >= 1 && c <= NOTE_SPANS);
        for (int k = 0; k < c; k++) {
            assert_true(v[2 * k] < v[2 * k + 1]);
            if (k)
                assert_true(v[2 * k] > v[2 * k - 1]);
            hit |= v[2 * k] <= a && a + n <= v[2 * k + 1];
        }
        assert_true(hit);
    }
    tagg_notes_free(&m);
}

static uint64_t lcg(uint64_t *x)
{
    *x = *x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return *x;
}

/* What a close composes for a new file's stripe (store_subfiles_close.c):
 * the stripe begins as zeros; every write adds the change from the bytes it
 * replaces (zeros, or what the same writer put there before) to the note's
 * delta, a whole-stripe write replaces it; the CRC of the final len bytes is
 * tagg_crc_unpad(XOR of the writers' deltas). Checked against the CRC of the
 * bytes, over random writes by 1-4 writers of disjoint regions and lengths. */
static void test_notes_compose(void **state)
{
    (void)state;
    enum { S = 4096 };
    unsigned char content[S], data[S], before[S];
    uint64_t      seed = 12345;
    for (int trial = 0; trial < 400; trial++) {
        uint64_t len = trial % 4 ? 1 + (lcg(&seed) >> 20) % S : S, writers = 1 + (lcg(&seed) >> 20) % 4;
        notes_t  m[4] = {{0}};
        memset(content, 0, sizeof content);
        for (int w = 0; w < 80; w++) {
            uint64_t r = (lcg(&seed) >> 20) % writers;
            /* writer r owns bytes [r*len/writers, (r+1)*len/writers) */
            uint64_t lo = r * len / writers, hi = (r + 1) * len / writers;
            int      full = len == S && writers == 1 && (lcg(&seed) >> 20) % 10 == 0;
            if (hi == lo)
                continue;
            uint64_t a = full ? 0 : lo + (lcg(&seed) >> 20) % (hi - lo);
            uint64_t n = full ? S : 1 + (lcg(&seed) >> 20) % (hi - a);
            for (uint64_t i = 0; i < n; i++)
                data[i] = (unsigned char)(lcg(&seed) >> 33);
            memcpy(before, content + a, n);
            memcpy(content + a, data, n);
            uint64_t cn = tagg_crc64(0, data, n);
            uint64_t d  = full ? tagg_crc_delta(tagg_crc_zeros(n), cn, 0, n, S)
                               : tagg_crc_delta(tagg_crc64(0, before, n), cn, a, n, S);
            assert_int_equal(tagg_notes_write(&m[r], 0, full, full ? cn : 0, 0, d, NULL, a, a + n, 0), 0);
        }
        uint64_t dx = 0;
        for (uint64_t r = 0; r < writers; r++)
            dx ^= tagg_notes_delta(&m[r], 0), tagg_notes_free(&m[r]);
        assert_true(tagg_crc_unpad(dx, len, S) == tagg_crc64(0, content, (size_t)len));
        content[lcg(&seed) % len] ^= 0x10; /* and a changed byte is seen */
        assert_true(tagg_crc_unpad(dx, len, S) != tagg_crc64(0, content, (size_t)len));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notes),
        cmocka_unit_test(test_crc_shift),
        cmocka_unit_test(test_notes_write),
        cmocka_unit_test(test_notes_compose),
        cmocka_unit_test(test_notes_spans),
        cmocka_unit_test(test_notes_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
