/* Stripe codecs (core/src/codec.c): byte-exact round trips of every codec and
 * pre-conditioner on HACC-, S3D-shaped and random stripes of odd sizes, and
 * a bounded fuzz of every decoder: flipped bytes, truncations, foreign blocks
 * and random garbage must decode to an error with a message or to exactly the
 * expected size -- never a crash or an overrun (ASan build). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "data.h"

static void test_round_trips(void **state)
{
    (void)state;
    const char    *kinds[] = {"hacc", "s3d", "random"};
    const size_t   sizes[] = {1, 7, 4096, 65537, 1u << 20};
    tagg_shuffle_t sh[]    = {TAGG_SHUFFLE_NONE, TAGG_SHUFFLE_BYTE, TAGG_SHUFFLE_BIT};
    unsigned char *src = malloc(1u << 20), *back = malloc(1u << 20);
    int            n   = 0;
    for (int c = 0; tagg_codec_at(c); c++)
        for (size_t k = 0; k < 3; k++)
            for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
                for (size_t s = 0; s < 3; s++) {
                    const tagg_codec_t *cd = tagg_codec_at(c);
                    tagg_codec_opts_t   o;
                    tagg_codec_opts_default(&o);
                    o.shuffle = sh[s], o.typesize = s == 2 ? 8 : 4;
                    tagg_data_fill(kinds[k], src, sizes[z], z + 1);
                    size_t         cap = cd->bound(sizes[z]), stored;
                    unsigned char *dst = malloc(cap);
                    char           err[256];
                    if (cd->encode(&o, src, sizes[z], dst, cap, &stored, err, sizeof err) < 0)
                        fail_msg("%s encode: %s", cd->name, err);
                    assert_true(stored <= cap);
                    memset(back, 0xA5, sizes[z]);
                    if (cd->decode(dst, stored, back, sizes[z], err, sizeof err) < 0)
                        fail_msg("%s decode: %s", cd->name, err);
                    assert_memory_equal(src, back, sizes[z]);
                    /* the wrong expected size is an error, not a partial result */
                    assert_int_equal(cd->decode(dst, stored, back, sizes[z] + 1, err, sizeof err), -1);
                    free(dst);
                    n++;
                }
    print_message("%d round trips\n", n);
    free(src), free(back);
}

static void test_fuzz_decoders(void **state)
{
    (void)state;
    const size_t   N   = 65536;
    unsigned char *src = malloc(N), *back = malloc(N + 64), *blk[8], *mut = malloc(2 * N + 1024);
    size_t         len[8];
    uint64_t       r     = 0x243F6A8885A308D3ull;
    int            iters = getenv("TAGG_FUZZ_ITERS") ? atoi(getenv("TAGG_FUZZ_ITERS")) : 3000, ok = 0, refused = 0;
    int            nc = 0;
    tagg_data_fill("hacc", src, N, 3);
    for (; tagg_codec_at(nc); nc++) {
        const tagg_codec_t *cd = tagg_codec_at(nc);
        tagg_codec_opts_t   o;
        tagg_codec_opts_default(&o);
        blk[nc] = malloc(cd->bound(N));
        char err[256];
        assert_int_equal(cd->encode(&o, src, N, blk[nc], cd->bound(N), &len[nc], err, sizeof err), 0);
    }
#define RND() (r ^= r << 13, r ^= r >> 7, r ^= r << 17, r)
    for (int it = 0; it < iters; it++)
        for (int c = 0; c < nc; c++) {
            const tagg_codec_t *cd = tagg_codec_at(c);
            int                 from = (int)(RND() % (uint64_t)nc); /* sometimes another codec's block */
            size_t              n    = len[RND() % 4 == 0 ? from : c];
            memcpy(mut, blk[RND() % 4 == 0 ? from : c], n);
            switch (RND() % 4) {
            case 0: /* flip bytes */
                for (int f = 0, k = 1 + (int)(RND() % 8); f < k; f++) {
                    size_t at = RND() % n;
                    mut[at] ^= (unsigned char)(1 + RND() % 255);
                }
                break;
            case 1: n = RND() % n; break; /* truncate */
            case 2: /* garbage */
                n = RND() % 512;
                for (size_t i = 0; i < n; i++)
                    mut[i] = (unsigned char)RND();
                break;
            default: /* flip a header byte */
                {
                    size_t at = RND() % (n < 32 ? n : 32);
                    mut[at] ^= (unsigned char)(1u << (RND() % 8));
                }
                break;
            }
            char err[256] = "";
            /* guard bytes after the expected size must stay untouched */
            memset(back + N, 0x5A, 64);
            int rc = cd->decode(mut, n, back, N, err, sizeof err);
            for (int g = 0; g < 64; g++)
                assert_int_equal(back[N + g], 0x5A);
            if (rc == 0)
                ok++;
            else {
                assert_true(strlen(err) > 0);
                refused++;
            }
        }
#undef RND
    print_message("decoder fuzz: %d inputs, %d refused with a message, %d decoded to the right size\n", ok + refused,
                  refused, ok);
    for (int c = 0; c < nc; c++)
        free(blk[c]);
    free(src), free(back), free(mut);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_round_trips), cmocka_unit_test(test_fuzz_decoders)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
