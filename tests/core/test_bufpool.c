/* The process's pool of large buffers (core/src/bufpool.c): a buffer given
 * back is handed out again for its size, aligned; the pool keeps at most
 * TAGG_BUFPOOL_KEEP buffers and TAGG_BUFPOOL_BYTES, giving up the least
 * recently returned first; a buffer larger than the cap is never kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bufpool.h"
#include "dio.h"

#define MiB ((size_t)1 << 20)

static unsigned long long made(void)
{
    unsigned long long r, m;
    tagg_buf_counts(&r, &m);
    return m;
}

static unsigned long long reused(void)
{
    unsigned long long r, m;
    tagg_buf_counts(&r, &m);
    return r;
}

/* Empties the pool: takes every kept buffer of these sizes and frees it. */
static void drain(void)
{
    size_t sizes[] = {MiB, 2 * MiB, 4 * MiB, 3 * MiB, 5000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int k = 0; k < TAGG_BUFPOOL_KEEP + 1; k++) {
            unsigned long long m = made();
            void              *b = tagg_buf_get(sizes[i]);
            assert_non_null(b);
            free(b);
            if (made() != m) /* a new one: nothing of this size was kept */
                break;
        }
}

static void test_reuse(void **st)
{
    (void)st;
    drain();
    unsigned long long m0 = made(), r0 = reused();
    char *a = tagg_buf_get(4 * MiB);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % TAGG_DIO_ALIGN, 0);
    assert_int_equal(made(), m0 + 1);
    memset(a, 0x3c, 4 * MiB);
    tagg_buf_put(a, 4 * MiB);
    char *b = tagg_buf_get(4 * MiB); /* the same buffer again, its pages touched */
    assert_ptr_equal(b, a);
    assert_int_equal(made(), m0 + 1);
    assert_int_equal(reused(), r0 + 1);
    char *c = tagg_buf_get(2 * MiB); /* another size: a new one */
    assert_non_null(c);
    assert_int_equal((uintptr_t)c % TAGG_DIO_ALIGN, 0);
    assert_int_equal(made(), m0 + 2);
    tagg_buf_put(b, 4 * MiB);
    tagg_buf_put(c, 2 * MiB);
    char *d = tagg_buf_get(2 * MiB);
    assert_ptr_equal(d, c);
    tagg_buf_put(d, 2 * MiB);
    tagg_buf_put(NULL, MiB); /* nothing */
    drain();
}

static void test_most_recent_first(void **st)
{
    (void)st;
    drain();
    char *a = tagg_buf_get(MiB), *b = tagg_buf_get(MiB);
    tagg_buf_put(a, MiB);
    tagg_buf_put(b, MiB);
    assert_ptr_equal(tagg_buf_get(MiB), b); /* the last one given back, its pages the warmest */
    assert_ptr_equal(tagg_buf_get(MiB), a);
    free(a), free(b);
    drain();
}

static void test_count_cap(void **st)
{
    (void)st;
    drain();
    char *v[TAGG_BUFPOOL_KEEP + 1];
    for (int i = 0; i <= TAGG_BUFPOOL_KEEP; i++)
        assert_non_null(v[i] = tagg_buf_get(5000));
    for (int i = 0; i <= TAGG_BUFPOOL_KEEP; i++)
        tagg_buf_put(v[i], 5000); /* the last one makes the first (oldest) go */
    unsigned long long m = made();
    for (int i = TAGG_BUFPOOL_KEEP; i >= 1; i--)
        assert_ptr_equal(tagg_buf_get(5000), v[i]);
    assert_int_equal(made(), m); /* all from the pool ... */
    char *x = tagg_buf_get(5000);
    assert_int_equal(made(), m + 1); /* ... but v[0], given up */
    free(x);
    for (int i = 1; i <= TAGG_BUFPOOL_KEEP; i++)
        free(v[i]);
    drain();
}

static void test_byte_cap(void **st)
{
    (void)st;
    drain();
    size_t n     = TAGG_BUFPOOL_BYTES / (4 * MiB); /* 4 MiB buffers that fit */
    char  *v[16] = {0};
    assert_true(n >= 2 && n < 16 && n < TAGG_BUFPOOL_KEEP);
    for (size_t i = 0; i <= n; i++)
        assert_non_null(v[i] = tagg_buf_get(4 * MiB));
    for (size_t i = 0; i <= n; i++)
        tagg_buf_put(v[i], 4 * MiB); /* one too many bytes: the oldest goes */
    unsigned long long m = made();
    for (size_t i = n; i >= 1; i--)
        assert_ptr_equal(tagg_buf_get(4 * MiB), v[i]);
    assert_int_equal(made(), m);
    char *x = tagg_buf_get(4 * MiB);
    assert_int_equal(made(), m + 1);
    /* a buffer larger than the cap is freed, not kept */
    char *big = tagg_buf_get(TAGG_BUFPOOL_BYTES + MiB);
    assert_non_null(big);
    tagg_buf_put(big, TAGG_BUFPOOL_BYTES + MiB);
    m = made();
    free(tagg_buf_get(TAGG_BUFPOOL_BYTES + MiB));
    assert_int_equal(made(), m + 1);
    free(x);
    for (size_t i = 1; i <= n; i++)
        free(v[i]);
    drain();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_most_recent_first),
        cmocka_unit_test(test_count_cap),
        cmocka_unit_test(test_byte_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
