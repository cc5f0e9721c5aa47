/* Re-reads from kept covers (core/src/rcache.c): a read of at least `min`
 * bytes is read as its aligned cover into a kept buffer and copied out; a
 * later read inside a kept cover comes from memory, one that is not inside
 * one reads a new cover; too small or too large a read is not for the cache;
 * the cover that served a read longest ago is given up first; a failed fill
 * keeps nothing; the process's caches together stay within their budget. The "file" is memory, bytes past its end read as zeros. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rcache.h"

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)
#define FILE_SIZE (20 * MiB + 1234)

typedef struct {
    unsigned char *data;
    uint64_t       fills, last_off, last_len;
    int            fail;
} file_t;

static int fill(void *ctx, uint64_t off, uint64_t len, void *buf)
{
    file_t *f = ctx;
    if (f->fail)
        return -1;
    f->fills++, f->last_off = off, f->last_len = len;
    for (uint64_t i = 0; i < len; i++)
        ((unsigned char *)buf)[i] = off + i < FILE_SIZE ? f->data[off + i] : 0;
    return 0;
}

static file_t *file_new(void)
{
    file_t *f = calloc(1, sizeof *f);
    f->data   = malloc(FILE_SIZE);
    for (uint64_t i = 0; i < FILE_SIZE; i++)
        f->data[i] = (unsigned char)(i * 2654435761u >> 13);
    return f;
}

static void file_free(file_t *f)
{
    free(f->data);
    free(f);
}

/* Reads [off, off + len) through the cache: its return, the bytes checked
 * against the file (zeros past its end). */
static int read_check(tagg_rcache_t *c, file_t *f, uint64_t off, uint64_t len)
{
    unsigned char *buf = malloc(len);
    int            r   = tagg_rcache_read(c, off, len, buf, fill, f);
    if (r == 1)
        for (uint64_t i = 0; i < len; i++)
            assert_int_equal(buf[i], off + i < FILE_SIZE ? f->data[off + i] : 0);
    free(buf);
    return r;
}

static void covers_and_hits(void **state)
{
    (void)state;
    file_t       *f = file_new();
    uint64_t      counts[2] = {0, 0};
    tagg_rcache_t c;
    tagg_rcache_init(&c, 4 * KiB, 64 * KiB, counts);
    /* too small, too large: not for the cache, nothing read */
    assert_int_equal(read_check(&c, f, 100, 64 * KiB - 1), 0);
    assert_int_equal(read_check(&c, f, 100, 4 * MiB), 0); /* its cover is over 4 MiB */
    assert_int_equal(f->fills, 0);
    /* HDF5's 1 MiB conversion-buffer reads at an odd offset: the cover, aligned */
    uint64_t off = 16 * MiB + 2384;
    assert_int_equal(read_check(&c, f, off, MiB), 1);
    assert_int_equal(f->fills, 1);
    assert_int_equal(f->last_off, 16 * MiB);
    assert_int_equal(f->last_len, MiB + 4 * KiB);
    assert_int_equal(counts[1], 1);
    /* again, and pieces inside the cover: from memory */
    assert_int_equal(read_check(&c, f, off, MiB), 1);
    assert_int_equal(read_check(&c, f, 16 * MiB, 64 * KiB), 1);
    assert_int_equal(read_check(&c, f, off + MiB - 64 * KiB + 1000, 64 * KiB), 1);
    assert_int_equal(f->fills, 1);
    assert_int_equal(counts[0], 3);
    /* one byte past the cover: a new cover */
    assert_int_equal(read_check(&c, f, off + 4 * KiB, MiB), 1);
    assert_int_equal(f->fills, 2);
    /* the end of the file: zeros past it, from the cover too */
    assert_int_equal(read_check(&c, f, FILE_SIZE - 100 * KiB, 200 * KiB), 1);
    assert_int_equal(read_check(&c, f, FILE_SIZE - 10, 70 * KiB), 1);
    assert_int_equal(f->fills, 3);
    tagg_rcache_fini(&c);
    file_free(f);
}

static void least_recent_goes(void **state)
{
    (void)state;
    file_t       *f = file_new();
    uint64_t      counts[2] = {0, 0};
    tagg_rcache_t c;
    tagg_rcache_init(&c, 4 * KiB, 64 * KiB, counts);
    for (uint64_t k = 0; k < TAGG_RCACHE_SLOTS; k++) /* every slot: covers of 1 MiB at k MiB */
        assert_int_equal(read_check(&c, f, k * MiB, MiB), 1);
    assert_int_equal(f->fills, TAGG_RCACHE_SLOTS);
    assert_int_equal(read_check(&c, f, 0, MiB), 1); /* the first one, used again */
    assert_int_equal(read_check(&c, f, 10 * MiB, MiB), 1); /* a new one: the cover at 1 MiB goes */
    assert_int_equal(f->fills, TAGG_RCACHE_SLOTS + 1);
    assert_int_equal(read_check(&c, f, 0, MiB), 1); /* kept */
    for (uint64_t k = 2; k < TAGG_RCACHE_SLOTS; k++)
        assert_int_equal(read_check(&c, f, k * MiB, MiB), 1); /* kept */
    assert_int_equal(f->fills, TAGG_RCACHE_SLOTS + 1);
    assert_int_equal(read_check(&c, f, MiB, MiB), 1); /* given up: read again */
    assert_int_equal(f->fills, TAGG_RCACHE_SLOTS + 2);
    tagg_rcache_fini(&c);
    file_free(f);
}

static void failed_fill_keeps_nothing(void **state)
{
    (void)state;
    file_t       *f = file_new();
    uint64_t      counts[2] = {0, 0};
    tagg_rcache_t c;
    tagg_rcache_init(&c, 4 * KiB, 64 * KiB, counts);
    assert_int_equal(read_check(&c, f, 3 * MiB, MiB), 1);
    f->fail = 1;
    assert_int_equal(read_check(&c, f, 8 * MiB, MiB), -1);
    assert_int_equal(read_check(&c, f, 8 * MiB, 100 * KiB), -1); /* nothing of it was kept */
    assert_int_equal(read_check(&c, f, 3 * MiB, MiB), 1);       /* the earlier cover still serves */
    f->fail = 0;
    assert_int_equal(read_check(&c, f, 8 * MiB, MiB), 1);
    assert_int_equal(counts[1], 2);
    assert_int_equal(counts[0], 1);
    tagg_rcache_fini(&c);
    file_free(f);
}

static void process_budget(void **state)
{
    (void)state;
    file_t       *f = file_new();
    uint64_t      counts[2] = {0, 0};
    tagg_rcache_t c[3];
    uint64_t      per = TAGG_RCACHE_SLOTS * TAGG_RCACHE_MAX, full = TAGG_RCACHE_PROCESS / per;
    assert_true(full >= 1 && full < 3);
    for (int i = 0; i < 3; i++)
        tagg_rcache_init(&c[i], 4 * KiB, 64 * KiB, counts);
    for (uint64_t i = 0; i < full; i++) /* these take the whole budget */
        for (uint64_t k = 0; k < TAGG_RCACHE_SLOTS; k++)
            assert_int_equal(read_check(&c[i], f, k * MiB, MiB), 1);
    assert_int_equal(read_check(&c[full], f, 0, MiB), 0); /* over it: read as usual */
    tagg_rcache_fini(&c[0]);
    assert_int_equal(read_check(&c[full], f, 0, MiB), 1);
    for (uint64_t i = 1; i <= full; i++)
        tagg_rcache_fini(&c[i]);
    file_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(covers_and_hits),
        cmocka_unit_test(least_recent_goes),
        cmocka_unit_test(failed_fill_keeps_nothing),
        cmocka_unit_test(process_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
