/* The page cache's share of a file range (core/src/pagecache.c), by
 * cachestat(2) where the kernel has it and by mincore(2) on a mapping: bytes
 * just written are all resident, by both ways alike; a range past the end of
 * the file holds none; after the file's pages are synced and dropped
 * (POSIX_FADV_DONTNEED) fewer are, and reading them back brings them in again;
 * a bad descriptor, an empty or overflowing range cannot be told; pages that
 * readahead has put in the cache but not read yet are not resident (a read
 * of them waits for the storage) but in flight (tagg_pagecache_state). The file
 * lies in the working directory (the build tree), where a drop is possible;
 * on tmpfs, whose pages are the storage, the drop is not checked. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "pagecache.h"

#define LEN (1u << 20)
#define TMPFS_MAGIC_ 0x01021994

/* A file of `bytes` (a multiple of LEN) in the working directory, just written. */
static int make_file(char *path, size_t n, uint64_t bytes)
{
    snprintf(path, n, "pagecache-test-%ld.bin", (long)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    char *buf = malloc(LEN);
    assert_non_null(buf);
    memset(buf, 0x5a, LEN);
    for (uint64_t o = 0; o < bytes; o += LEN)
        assert_int_equal(pwrite(fd, buf, LEN, (off_t)o), (ssize_t)LEN);
    free(buf);
    return fd;
}

static void written_then_dropped(void **state)
{
    (void)state;
    char path[64];
    int  fd = make_file(path, sizeof path, LEN);
    uint64_t b = 0, m = 0;
    /* written just now: in the cache, by both ways */
    assert_int_equal(tagg_pagecache_resident(fd, 0, LEN, &b), 0);
    assert_int_equal(b, LEN);
    assert_int_equal(tagg_pagecache_resident_by(TAGG_PAGECACHE_MINCORE, fd, 0, LEN, &m), 0);
    assert_int_equal(m, LEN);
    if (tagg_pagecache_resident_by(TAGG_PAGECACHE_CACHESTAT, fd, 4096, 8192, &b) == 0) /* kernel 6.5+ */
        assert_int_equal(b, 8192);
    /* an unaligned part: whole pages counted, never more than asked */
    assert_int_equal(tagg_pagecache_resident(fd, 100, 10, &b), 0);
    assert_int_equal(b, 10);
    /* past the end of the file: nothing there */
    assert_int_equal(tagg_pagecache_resident(fd, 4 * (uint64_t)LEN, LEN, &b), 0);
    assert_int_equal(b, 0);
    assert_int_equal(tagg_pagecache_resident_by(TAGG_PAGECACHE_MINCORE, fd, 4 * (uint64_t)LEN, LEN, &m), 0);
    assert_int_equal(m, 0);
    /* synced and dropped: fewer (none, on a disk file system); read: all again */
    struct statfs sfs;
    assert_int_equal(fstatfs(fd, &sfs), 0);
    assert_int_equal(fdatasync(fd), 0);
    assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    assert_int_equal(tagg_pagecache_resident(fd, 0, LEN, &b), 0);
    assert_int_equal(tagg_pagecache_resident_by(TAGG_PAGECACHE_MINCORE, fd, 0, LEN, &m), 0);
    if (sfs.f_type != TMPFS_MAGIC_) {
        assert_true(b < LEN);
        assert_true(m < LEN);
    }
    char *buf = malloc(LEN);
    assert_non_null(buf);
    assert_int_equal(pread(fd, buf, LEN, 0), (ssize_t)LEN);
    free(buf);
    assert_int_equal(tagg_pagecache_resident(fd, 0, LEN, &b), 0);
    assert_int_equal(b, LEN);
    close(fd);
    unlink(path);
}

/* Bytes of [0, len) a read can have without waiting (preadv2 RWF_NOWAIT,
 * page by page): once up to date, a page stays so until it is evicted. */
static uint64_t readable_now(int fd, uint64_t len)
{
    char          page[4096];
    uint64_t      n = 0;
    struct iovec  v = {page, sizeof page};
    for (uint64_t o = 0; o < len; o += sizeof page)
        if (preadv2(fd, &v, 1, (off_t)o, RWF_NOWAIT) == (ssize_t)sizeof page)
            n += sizeof page;
    return n;
}

/* Dropped, then read ahead (POSIX_FADV_WILLNEED starts the reads and returns):
 * what is counted resident right away must be readable without waiting after
 * it. cachestat alone counts every page the readahead put in the cache at
 * once, while they are still being read from the disk (tried on this
 * machine's: all 8 MiB counted, none readable). Those pages are in flight
 * (tagg_pagecache_state), where the kernel has cachestat: some in one of
 * the rounds at least (8 MiB from a disk take milliseconds; every round
 * here), none once the file is read. */
static void readahead_in_flight(void **state)
{
    (void)state;
    const uint64_t BIG = 8 * (uint64_t)LEN;
    char path[64];
    int  fd = make_file(path, sizeof path, BIG);
    struct statfs sfs;
    assert_int_equal(fstatfs(fd, &sfs), 0);
    /* the check needs a drop (not on tmpfs) and reads that do not wait (RWF_NOWAIT:
     * pages just written are all readable so where the file system has them) */
    int checkable = sfs.f_type != TMPFS_MAGIC_ && readable_now(fd, BIG) == BIG;
    if (!checkable)
        print_message("pagecache: no drop or no RWF_NOWAIT reads here: readahead's pages not checked\n");
    assert_int_equal(fdatasync(fd), 0);
    uint64_t c = 0, most_flight = 0, f = 0;
    int      has_cachestat = tagg_pagecache_resident_by(TAGG_PAGECACHE_CACHESTAT, fd, 0, BIG, &c) == 0;
    for (int round = 0; round < 3 && checkable; round++) {
        assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        assert_int_equal(posix_fadvise(fd, 0, BIG, POSIX_FADV_WILLNEED), 0);
        uint64_t b = 0;
        assert_int_equal(tagg_pagecache_state(fd, 0, BIG, &b, &f), 0);
        uint64_t r = readable_now(fd, BIG);
        if (b > r)
            fail_msg("round %d: %llu bytes counted resident, %llu readable without waiting after", round,
                     (unsigned long long)b, (unsigned long long)r);
        assert_true(b + f <= BIG);
        most_flight = f > most_flight ? f : most_flight;
    }
    if (checkable && has_cachestat && most_flight == 0)
        fail_msg("no byte in flight right after a drop and a readahead of %llu bytes, in 3 rounds",
                 (unsigned long long)BIG);
    /* all read: all resident, none in flight, and (where that can be told)
     * all readable without waiting. The kernel may reclaim a few pages
     * between the read and the count (seen once in a fresh-clone .ci/run:
     * 3 pages short), so a short count is read again, at most 3 times; a
     * count that never reaches the whole file still fails. */
    char *buf = malloc(BIG);
    assert_non_null(buf);
    uint64_t b = 0;
    for (int tries = 0; tries < 3 && b != BIG; tries++) {
        assert_int_equal(pread(fd, buf, BIG, 0), (ssize_t)BIG);
        assert_int_equal(tagg_pagecache_state(fd, 0, BIG, &b, &f), 0);
        assert_true(b <= BIG);
    }
    free(buf);
    assert_int_equal(b, BIG);
    assert_int_equal(f, 0);
    if (checkable)
        assert_int_equal(readable_now(fd, BIG), BIG);
    close(fd);
    unlink(path);
}

/* mincore counts a range longer than one mapping part by part: the file's
 * written MiB at its start, nothing in the rest past its end */
static void larger_than_one_mapping(void **state)
{
    (void)state;
    char path[64];
    int  fd = make_file(path, sizeof path, LEN);
    uint64_t m = 0;
    assert_int_equal(tagg_pagecache_resident_by(TAGG_PAGECACHE_MINCORE, fd, 0, TAGG_PAGECACHE_MINCORE_MAX + 4096, &m), 0);
    assert_int_equal(m, LEN);
    assert_int_equal(tagg_pagecache_resident_by(TAGG_PAGECACHE_MINCORE, fd, 4096, 2 * TAGG_PAGECACHE_MINCORE_MAX, &m), 0);
    assert_int_equal(m, LEN - 4096);
    close(fd);
    unlink(path);
}

static void cannot_tell(void **state)
{
    (void)state;
    uint64_t b = 7;
    assert_int_equal(tagg_pagecache_resident(-1, 0, 4096, &b), -1);
    char path[64];
    int  fd = make_file(path, sizeof path, LEN);
    assert_int_equal(tagg_pagecache_resident(fd, 0, 0, &b), -1);                  /* nothing asked */
    assert_int_equal(tagg_pagecache_resident(fd, UINT64_MAX - 10, 100, &b), -1);  /* wraps */
    assert_int_equal(tagg_pagecache_resident(fd, (uint64_t)INT64_MAX, 4096, &b), -1); /* past off_t */
    assert_int_equal(b, 7);
    close(fd);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(written_then_dropped),
        cmocka_unit_test(readahead_in_flight),
        cmocka_unit_test(larger_than_one_mapping),
        cmocka_unit_test(cannot_tell),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
