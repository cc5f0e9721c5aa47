/* Metadata echoes (core/src/md_echo.c): a write repeats a remembered one only
 * with the same offset, length and bytes, and nothing written over it since. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "md_echo.h"

static tagg_extents_t one(uint64_t off, uint64_t len, const void *mem)
{
    tagg_extents_t x;
    tagg_extents_init(&x);
    assert_int_equal(tagg_extents_push(&x, off, len, mem), 0);
    return x;
}

static void test_repeats(void **s)
{
    (void)s;
    static tagg_md_echo_t m;
    tagg_md_echo_init(&m);
    char sb[96], other[96], big[TAGG_MD_ECHO_MAX + 1], tail[8] = {0};
    memset(sb, 0x5a, sizeof sb), memset(other, 0x5a, sizeof other), memset(big, 1, sizeof big);
    other[95] = 0;
    tagg_extents_t x = one(0, 96, sb), y = one(0, 96, other), z = one(0, 95, sb), w = one(4096, 96, sb);
    tagg_extents_t empty;
    tagg_extents_init(&empty);
    assert_int_equal(tagg_md_echo_repeats(&m, &x), 0); /* nothing remembered */
    tagg_md_echo_wrote(&m, &x, 1);
    assert_int_equal(tagg_md_echo_repeats(&m, &x), 1);
    assert_int_equal(tagg_md_echo_repeats(&m, &y), 0);     /* one byte differs */
    assert_int_equal(tagg_md_echo_repeats(&m, &z), 1);     /* inside it, the same bytes */
    assert_int_equal(tagg_md_echo_repeats(&m, &w), 0);     /* elsewhere */
    assert_int_equal(tagg_md_echo_repeats(&m, &empty), 0); /* nothing to write is no echo */
    tagg_extents_t t = one(92, 8, tail);                   /* reaches past it */
    assert_int_equal(tagg_md_echo_repeats(&m, &t), 0);
    tagg_extents_free(&t);
    sb[0] = 1; /* the caller's buffer changed after the write: the copy still says what was written */
    assert_int_equal(tagg_md_echo_repeats(&m, &x), 0);
    sb[0] = 0x5a;
    /* a write over one byte of it (raw data, not remembered) forgets it */
    char b = 7;
    tagg_extents_t r = one(95, 1, &b);
    tagg_md_echo_wrote(&m, &r, 0);
    assert_int_equal(tagg_md_echo_repeats(&m, &x), 0);
    /* remembered again, then forgotten as a whole */
    tagg_md_echo_wrote(&m, &x, 1);
    tagg_md_echo_forget(&m);
    assert_int_equal(tagg_md_echo_repeats(&m, &x), 0);
    /* a write larger than TAGG_MD_ECHO_MAX is not remembered */
    tagg_extents_t g = one(8192, sizeof big, big);
    tagg_md_echo_wrote(&m, &g, 1);
    assert_int_equal(tagg_md_echo_repeats(&m, &g), 0);
    tagg_extents_free(&x), tagg_extents_free(&y), tagg_extents_free(&z), tagg_extents_free(&w);
    tagg_extents_free(&r), tagg_extents_free(&g);
}

/* Several extents: all must repeat; the oldest of more than the slots is dropped. */
static void test_slots(void **s)
{
    (void)s;
    static tagg_md_echo_t m;
    tagg_md_echo_init(&m);
    char mem[TAGG_MD_ECHO_SLOTS + 1][64];
    for (int i = 0; i <= TAGG_MD_ECHO_SLOTS; i++)
        memset(mem[i], i + 1, 64);
    tagg_extents_t two;
    tagg_extents_init(&two);
    assert_int_equal(tagg_extents_push(&two, 0, 64, mem[0]), 0);
    assert_int_equal(tagg_extents_push(&two, 1024, 64, mem[1]), 0);
    tagg_md_echo_wrote(&m, &two, 1);
    assert_int_equal(tagg_md_echo_repeats(&m, &two), 1);
    tagg_extents_t half = one(0, 64, mem[0]), mixed;
    assert_int_equal(tagg_md_echo_repeats(&m, &half), 1);
    tagg_extents_init(&mixed);
    assert_int_equal(tagg_extents_push(&mixed, 0, 64, mem[0]), 0);
    assert_int_equal(tagg_extents_push(&mixed, 2048, 64, mem[1]), 0); /* the second never written */
    assert_int_equal(tagg_md_echo_repeats(&m, &mixed), 0);
    tagg_md_echo_forget(&m);
    for (int i = 0; i <= TAGG_MD_ECHO_SLOTS; i++) {
        tagg_extents_t x = one((uint64_t)i * 4096, 64, mem[i]);
        tagg_md_echo_wrote(&m, &x, 1);
        tagg_extents_free(&x);
    }
    for (int i = 0; i <= TAGG_MD_ECHO_SLOTS; i++) {
        tagg_extents_t x = one((uint64_t)i * 4096, 64, mem[i]);
        assert_int_equal(tagg_md_echo_repeats(&m, &x), i > 0); /* the first, the oldest, is gone */
        tagg_extents_free(&x);
    }
    tagg_extents_free(&two), tagg_extents_free(&half), tagg_extents_free(&mixed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_repeats), cmocka_unit_test(test_slots)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
