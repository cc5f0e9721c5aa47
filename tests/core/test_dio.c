/* Direct I/O of large accesses (core/src/dio.c) against the same accesses
 * made buffered: random offsets, lengths and memory offsets, reads across the
 * end of the file, a file system that refuses a direct access, a descriptor
 * that cannot be opened, the size below which nothing goes direct. The file
 * is in the directory given (the build tree: a file system with O_DIRECT; the
 * test fails when it has none, it does not skip). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "dio.h"
#include "fs_kind.h"

static const char *dir = ".";

typedef struct {
    char     path[4096];
    int      fd;       /* buffered descriptor of the file */
    int      no_open;  /* the layout cannot open a direct descriptor */
    uint64_t buffered; /* bytes the buffered path moved */
} ctx_t;

static int open_direct(void *p)
{
    ctx_t *c = p;
    return c->no_open ? -1 : open(c->path, O_RDWR | O_DIRECT | O_CLOEXEC);
}

static int buffered(void *p, int write, uint64_t off, uint64_t len, void *buf)
{
    ctx_t *c = p;
    c->buffered += len;
    for (uint64_t done = 0; done < len;) {
        ssize_t got = write ? pwrite(c->fd, (char *)buf + done, len - done, (off_t)(off + done))
                            : pread(c->fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (got < 0)
            return -1;
        if (got == 0) { /* past the end */
            memset((char *)buf + done, 0, len - done);
            break;
        }
        done += (uint64_t)got;
    }
    return 0;
}

static const tagg_dio_ops_t ops = {.open = open_direct, .buffered = buffered};

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static void setup_file(ctx_t *c, const char *name)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s/%s", dir, name);
    c->fd = open(c->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(c->fd >= 0);
}

/* n random writes through d, then the whole file compared with a reference
 * image kept in memory; the source memory sits at a random offset in a
 * page-aligned allocation (so some accesses are aligned and some bounce). */
static void random_writes(tagg_dio_t *d, ctx_t *c, unsigned char *ref, uint64_t cap, int n, uint64_t *end)
{
    unsigned char *mem;
    assert_int_equal(posix_memalign((void **)&mem, 4096, cap + 8192), 0);
    for (int i = 0; i < n; i++) {
        uint64_t len = 1 + rnd() % (cap / 4), off = rnd() % (cap - len);
        if (i % 3 == 0) /* whole blocks at block offsets now and then */
            off = off / 4096 * 4096, len = (len + 4095) / 4096 * 4096, len = off + len > cap ? cap - off : len;
        uint64_t shift = i % 2 ? (off % 4096) : rnd() % 4096; /* same alignment as the file, or any */
        for (uint64_t k = 0; k < len; k++)
            mem[shift + k] = ref[off + k] = (unsigned char)rnd();
        assert_int_equal(tagg_dio_access(d, 1, off, len, mem + shift), 0);
        *end = off + len > *end ? off + len : *end;
    }
    free(mem);
    unsigned char *back = malloc(cap);
    assert_int_equal(pread(c->fd, back, cap, 0), (ssize_t)*end);
    assert_memory_equal(back, ref, *end);
    free(back);
}

/* random reads through d, some across the end of the file (zeros past it) */
static void random_reads(tagg_dio_t *d, const unsigned char *ref, uint64_t cap, uint64_t end, int n)
{
    unsigned char *mem, *want = malloc(2 * cap);
    assert_int_equal(posix_memalign((void **)&mem, 4096, 2 * cap + 8192), 0);
    for (int i = 0; i < n; i++) {
        uint64_t len = 1 + rnd() % cap, off = rnd() % cap;
        uint64_t shift = i % 2 ? (off % 4096) : rnd() % 4096;
        for (uint64_t k = 0; k < len; k++)
            want[k] = off + k < end ? ref[off + k] : 0;
        memset(mem + shift, 0xA5, len);
        assert_int_equal(tagg_dio_access(d, 0, off, len, mem + shift), 0);
        assert_memory_equal(mem + shift, want, len);
    }
    free(mem), free(want);
}

#define RANDOM_CAP ((uint64_t)6 << 20)

/* A new file `name` written by 60 random writes through d (tagg_dio_init's
 * `want`, min 8 KiB), checked against the returned reference image of
 * RANDOM_CAP bytes; *end: the file's end. */
static unsigned char *random_file(ctx_t *c, const char *name, tagg_dio_t *d, int want, uint64_t bytes[4],
                                  uint64_t *end)
{
    setup_file(c, name);
    unsigned char *ref = calloc(1, RANDOM_CAP);
    assert_non_null(ref);
    *end = 0;
    tagg_dio_init(d, &ops, c, c->path, want, 8192, bytes);
    random_writes(d, c, ref, RANDOM_CAP, 60, end);
    assert_int_equal(d->state, TAGG_DIO_ON); /* fails on a file system without O_DIRECT: see the header */
    return ref;
}

static void test_random(void **s)
{
    (void)s;
    const uint64_t cap = RANDOM_CAP;
    ctx_t          c;
    uint64_t       bytes[4] = {0, 0, 0, 0}, end;
    tagg_dio_t     d;
    unsigned char *ref = random_file(&c, "dio-random.bin", &d, TAGG_DIO_WANT_ALL, bytes, &end);
    assert_true(bytes[1] > 0);
    assert_true(c.buffered > 0); /* the heads, tails and small ones */
    random_reads(&d, ref, cap, end, 60);
    assert_true(bytes[0] > 0);
    tagg_dio_fini(&d);
    close(c.fd), unlink(c.path), free(ref);
}

/* An aligned access from aligned memory goes direct whole; one of the same
 * size one byte off goes direct in its whole blocks only; below min none. */
static void test_split(void **s)
{
    (void)s;
    ctx_t c;
    setup_file(&c, "dio-split.bin");
    uint64_t   bytes[4] = {0, 0, 0, 0};
    tagg_dio_t d;
    tagg_dio_init(&d, &ops, &c, c.path, 1, 65536, bytes);
    char *mem;
    assert_int_equal(posix_memalign((void **)&mem, 4096, 1 << 21), 0);
    memset(mem, 7, 1 << 21);
    assert_int_equal(tagg_dio_access(&d, 1, 1 << 20, 1 << 20, mem), 0);
    assert_int_equal(bytes[1], 1 << 20);
    assert_int_equal(c.buffered, 0);
    assert_int_equal(tagg_dio_access(&d, 1, (1 << 20) + 1, 1 << 20, mem + 1), 0);
    assert_int_equal(bytes[1], (1 << 20) + (1 << 20) - 4096); /* 255 whole blocks */
    assert_int_equal(c.buffered, 4096);                       /* 4095 head + 1 tail */
    assert_int_equal(bytes[3], 0); /* memory aligned as the file offset (both 1 past a block): in place */
    assert_int_equal(tagg_dio_access(&d, 1, 0, 65535, mem), 0); /* below min */
    assert_int_equal(bytes[1], (1 << 20) + (1 << 20) - 4096);
    /* a read of the same range, from unaligned memory: through the bounce buffer */
    assert_int_equal(tagg_dio_access(&d, 0, 1 << 20, 1 << 20, mem + 3), 0);
    assert_int_equal(bytes[0], 1 << 20);
    assert_int_equal(bytes[2], 1 << 20); /* counted as bounced */
    assert_int_equal(bytes[3], 0);
    tagg_dio_fini(&d);
    free(mem);
    close(c.fd), unlink(c.path);
}

/* tagg_dio_access_as: an access below min judged by a round of at least min
 * moves its whole blocks direct (a balanced domain's shorter round), judged
 * by a round below min none; judged by its own length as tagg_dio_access
 * (its aligned middle must reach min too); the bytes read back are those
 * written either way. */
static void test_judged_as(void **s)
{
    (void)s;
    ctx_t c;
    setup_file(&c, "dio-as.bin");
    uint64_t   bytes[4] = {0, 0, 0, 0};
    tagg_dio_t d;
    tagg_dio_init(&d, &ops, &c, c.path, 1, 1 << 20, bytes);
    unsigned char *mem, *back;
    assert_int_equal(posix_memalign((void **)&mem, 4096, 1 << 21), 0);
    assert_int_equal(posix_memalign((void **)&back, 4096, 1 << 21), 0);
    for (size_t i = 0; i < 1 << 21; i++)
        mem[i] = (unsigned char)(rnd() >> 24);
    uint64_t off = 1114112, len = 987136; /* the second of two balanced domains of [0, 2 MiB + 4 KiB) */
    assert_int_equal(tagg_dio_access_as(&d, 1, off, len, mem, 1114112), 0);
    assert_int_equal(bytes[1], len); /* aligned: whole, direct */
    assert_int_equal(c.buffered, 0);
    assert_int_equal(tagg_dio_access_as(&d, 1, off + 100, len - 200, mem + 100, 1114112), 0);
    assert_int_equal(bytes[1], len + len - 8192); /* its whole blocks direct, the ends buffered */
    assert_int_equal(c.buffered, 8192 - 200);
    assert_int_equal(tagg_dio_access_as(&d, 1, 0, 8192, mem, (1 << 20) - 4096), 0); /* a round below min */
    assert_int_equal(tagg_dio_access_as(&d, 1, 8192, 8192, mem, 8192), 0);           /* judged by itself */
    assert_int_equal(tagg_dio_access(&d, 1, 16384, len, mem), 0);                    /* the same */
    assert_int_equal(bytes[1], len + len - 8192);
    assert_int_equal(c.buffered, 8192 - 200 + 8192 + 8192 + len);
    assert_int_equal(tagg_dio_access_as(&d, 0, off, len, back, 1 << 20), 0);
    assert_int_equal(bytes[0], len);
    assert_memory_equal(back, mem, len);
    tagg_dio_fini(&d);
    free(mem), free(back);
    close(c.fd), unlink(c.path);
}

/* direct_io=write: large writes go direct, every read buffered (and the
 * bytes are the same as the writes made); the key's rule for each mode. */
static void test_writes_only(void **s)
{
    (void)s;
    const uint64_t cap = RANDOM_CAP;
    ctx_t          c;
    uint64_t       bytes[4] = {0, 0, 0, 0}, end;
    tagg_dio_t     d;
    unsigned char *ref = random_file(&c, "dio-writes.bin", &d, TAGG_DIO_WANT_WRITES, bytes, &end);
    assert_int_equal(d.writes_only, 1);
    assert_true(bytes[1] > 0);
    uint64_t before = c.buffered;
    random_reads(&d, ref, cap, end, 60);
    assert_int_equal(bytes[0], 0);      /* no read went direct */
    assert_true(c.buffered > before);   /* they went buffered */
    char *mem;
    assert_int_equal(posix_memalign((void **)&mem, 4096, 1 << 20), 0);
    before = c.buffered;
    assert_int_equal(tagg_dio_access(&d, 0, 0, 1 << 20, mem), 0); /* aligned, large: still buffered */
    assert_int_equal(c.buffered - before, 1 << 20);
    assert_int_equal(bytes[0], 0);
    free(mem);
    tagg_dio_fini(&d);
    close(c.fd), unlink(c.path), free(ref);
    for (int synced = 0; synced < 2; synced++) { /* explicit modes ignore syncs */
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_WRITE, 0, synced), TAGG_DIO_WANT_WRITES);
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_WRITE, TAGG_FS_SERIAL, synced), TAGG_DIO_WANT_WRITES);
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_ON, 0, synced), TAGG_DIO_WANT_ALL);
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_OFF, TAGG_FS_SERIAL, synced), TAGG_DIO_WANT_NONE);
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_OFF, TAGG_FS_LOCAL, synced), TAGG_DIO_WANT_NONE);
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_AUTO, TAGG_FS_SERIAL, synced), TAGG_DIO_WANT_ALL);
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_AUTO, TAGG_FS_NETWORK | TAGG_FS_SERIAL, synced),
                         TAGG_DIO_WANT_ALL);
        /* auto elsewhere: none, except writes on a local disk that will be synced */
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_AUTO, TAGG_FS_LOCAL, synced),
                         synced ? TAGG_DIO_WANT_WRITES : TAGG_DIO_WANT_NONE);
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_AUTO, TAGG_FS_TMPFS, synced), TAGG_DIO_WANT_NONE);
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_AUTO, TAGG_FS_PARALLEL, synced), TAGG_DIO_WANT_NONE);
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_AUTO, TAGG_FS_NETWORK, synced), TAGG_DIO_WANT_NONE);
        assert_int_equal(tagg_dio_wanted(TAGG_DIO_MODE_AUTO, TAGG_FS_OTHER, synced), TAGG_DIO_WANT_NONE);
    }
}

/* tagg_dio_reserve: with reserve set and direct writes, the range's blocks
 * are allocated and the file's size and bytes stay as they were; nothing
 * without reserve, below direct_io_min, or with direct I/O off. A write of
 * several bounced requests with reserve set lands byte for byte and ends the
 * file where it ends. */
static uint64_t allocated(const ctx_t *c)
{
    struct stat st;
    assert_int_equal(fstat(c->fd, &st), 0);
    return (uint64_t)st.st_blocks * 512;
}

static void test_reserve(void **state)
{
    (void)state;
    struct {
        int      reserve, want;
        uint64_t len, expect; /* bytes allocated at least (expect > 0) or none */
    } cases[] = {
        {1, TAGG_DIO_WANT_ALL, 8 << 20, 8 << 20},  {1, TAGG_DIO_WANT_WRITES, 8 << 20, 8 << 20},
        {0, TAGG_DIO_WANT_ALL, 8 << 20, 0},        {1, TAGG_DIO_WANT_ALL, 32 << 10, 0},
        {1, TAGG_DIO_WANT_NONE, 8 << 20, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ctx_t      c;
        tagg_dio_t d;
        uint64_t   bytes[4] = {0};
        setup_file(&c, "reserve.bin");
        tagg_dio_init(&d, &ops, &c, c.path, cases[i].want, 64 << 10, bytes);
        d.reserve = cases[i].reserve;
        tagg_dio_reserve(&d, 1 << 20, cases[i].len);
        struct stat st;
        assert_int_equal(fstat(c.fd, &st), 0);
        assert_int_equal(st.st_size, 0); /* the size is unchanged */
        if (cases[i].expect)
            assert_true(allocated(&c) >= cases[i].expect);
        else
            assert_int_equal(allocated(&c), 0);
        tagg_dio_fini(&d);
        close(c.fd), unlink(c.path);
    }
    /* a bounced write of several requests, reserved first */
    ctx_t      c;
    tagg_dio_t d;
    uint64_t   bytes[4] = {0}, off = 4096 + 777, len = ((uint64_t)9 << 20) + 1234;
    setup_file(&c, "reserve.bin");
    tagg_dio_init(&d, &ops, &c, c.path, TAGG_DIO_WANT_ALL, 64 << 10, bytes);
    d.reserve = 1;
    unsigned char *mem, *back = malloc(len);
    assert_int_equal(posix_memalign((void **)&mem, 4096, len + 4096), 0);
    for (uint64_t k = 0; k < len; k++)
        mem[1 + k] = (unsigned char)rnd();
    assert_int_equal(tagg_dio_access(&d, 1, off, len, mem + 1), 0); /* memory off the file's alignment */
    assert_true(bytes[3] > TAGG_DIO_BOUNCE);                         /* several bounced requests */
    struct stat st;
    assert_int_equal(fstat(c.fd, &st), 0);
    assert_int_equal(st.st_size, off + len);
    assert_int_equal(pread(c.fd, back, len, (off_t)off), (ssize_t)len);
    assert_memory_equal(back, mem + 1, len);
    free(mem), free(back);
    tagg_dio_fini(&d);
    close(c.fd), unlink(c.path);
}

/* The process's note of synced files, by file-system kind: a sync on a local
 * disk is not one on tmpfs; the FUSE flag does not make another kind. Then
 * a layout's rule with the note made (tagg_dio_file_rule). */
static void test_sync_note(void **state)
{
    (void)state;
    assert_false(tagg_dio_synced(TAGG_FS_LOCAL));
    assert_false(tagg_dio_synced(TAGG_FS_TMPFS));
    tagg_dio_note_sync(TAGG_FS_TMPFS);
    assert_true(tagg_dio_synced(TAGG_FS_TMPFS));
    assert_false(tagg_dio_synced(TAGG_FS_LOCAL));
    tagg_dio_note_sync(TAGG_FS_LOCAL | TAGG_FS_DIO);
    assert_true(tagg_dio_synced(TAGG_FS_LOCAL));
    assert_true(tagg_dio_synced(TAGG_FS_LOCAL | TAGG_FS_SERIAL));
    assert_false(tagg_dio_synced(TAGG_FS_NETWORK));
    assert_false(tagg_dio_synced(0xffu)); /* out of the table: never noted, never seen */
    tagg_dio_note_sync(0xffu);
    assert_false(tagg_dio_synced(0xffu));
    /* a layout's rule: the note counts as fsync=1; a read-only open has no writes to move directly */
    int reserve = -1;
    assert_int_equal(tagg_dio_file_rule(TAGG_DIO_MODE_AUTO, 0, TAGG_FS_LOCAL, 1, &reserve), TAGG_DIO_WANT_WRITES);
    assert_int_equal(reserve, 1);
    assert_int_equal(tagg_dio_file_rule(TAGG_DIO_MODE_AUTO, 0, TAGG_FS_LOCAL, 0, &reserve), TAGG_DIO_WANT_NONE);
    assert_int_equal(tagg_dio_file_rule(TAGG_DIO_MODE_WRITE, 0, TAGG_FS_LOCAL, 0, &reserve), TAGG_DIO_WANT_NONE);
    assert_int_equal(tagg_dio_file_rule(TAGG_DIO_MODE_OFF, 1, TAGG_FS_LOCAL, 1, &reserve), TAGG_DIO_WANT_NONE);
    assert_int_equal(tagg_dio_file_rule(TAGG_DIO_MODE_AUTO, 1, TAGG_FS_TMPFS, 1, &reserve), TAGG_DIO_WANT_NONE);
    assert_int_equal(reserve, 0);
    assert_int_equal(tagg_dio_file_rule(TAGG_DIO_MODE_AUTO, 0, TAGG_FS_NETWORK | TAGG_FS_SERIAL, 0, &reserve),
                     TAGG_DIO_WANT_ALL);
    assert_int_equal(reserve, 0);
    assert_int_equal(tagg_dio_file_rule(TAGG_DIO_MODE_AUTO, 1, TAGG_FS_PARALLEL, 1, &reserve), TAGG_DIO_WANT_NONE);
}

/* The file system refuses (EINVAL): here, direct requests one byte long at odd
 * offsets (a test-only alignment of 1): the bytes still land, buffered, and
 * the file stays buffered from then on. A descriptor that cannot be opened:
 * buffered throughout. Disabled: never tried. */
static void test_fallbacks(void **s)
{
    (void)s;
    const uint64_t cap = 1 << 20;
    for (int mode = 0; mode < 3; mode++) {
        ctx_t c;
        setup_file(&c, "dio-fallback.bin");
        c.no_open = mode == 1;
        unsigned char *ref = calloc(1, cap);
        uint64_t       bytes[4] = {0, 0, 0, 0}, end = 0;
        tagg_dio_t     d;
        tagg_dio_init(&d, &ops, &c, c.path, mode != 2, 4096, bytes);
        if (mode == 0)
            d.align = 1;
        random_writes(&d, &c, ref, cap, 30, &end);
        random_reads(&d, ref, cap, end, 30);
        assert_int_equal(d.state, TAGG_DIO_OFF);
        assert_int_equal(bytes[0] + bytes[1], 0);
        tagg_dio_fini(&d);
        close(c.fd), unlink(c.path), free(ref);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_judged_as),
        cmocka_unit_test(test_fallbacks),
        cmocka_unit_test(test_writes_only),
        cmocka_unit_test(test_sync_note),
        cmocka_unit_test(test_reserve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
