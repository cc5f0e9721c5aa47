/* The page cache's share of a file range (core/src/pagecache.c), by
 * cachestat(2) where the kernel has it and by mincore(2) on a mapping: bytes
 * just written are all resident, by both ways alike; a range past the end of
 * the file holds none; after the file's pages are synced and dropped
 * (POSIX_FADV_DONTNEED) fewer are, and reading them back brings them in again;
 * a bad descriptor, an empty or overflowing range cannot be told. The file
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
#include <sys/vfs.h>
#include <unistd.h>

#include "pagecache.h"

#define LEN (1u << 20)
#define TMPFS_MAGIC_ 0x01021994

static int make_file(char *path, size_t n)
{
    snprintf(path, n, "pagecache-test-%ld.bin", (long)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    char *buf = malloc(LEN);
    assert_non_null(buf);
    memset(buf, 0x5a, LEN);
    assert_int_equal(pwrite(fd, buf, LEN, 0), (ssize_t)LEN);
    free(buf);
    return fd;
}

static void written_then_dropped(void **state)
{
    (void)state;
    char path[64];
    int  fd = make_file(path, sizeof path);
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

static void cannot_tell(void **state)
{
    (void)state;
    uint64_t b = 7;
    assert_int_equal(tagg_pagecache_resident(-1, 0, 4096, &b), -1);
    char path[64];
    int  fd = make_file(path, sizeof path);
    assert_int_equal(tagg_pagecache_resident(fd, 0, 0, &b), -1);                  /* nothing asked */
    assert_int_equal(tagg_pagecache_resident(fd, UINT64_MAX - 10, 100, &b), -1);  /* wraps */
    assert_int_equal(tagg_pagecache_resident(fd, (uint64_t)INT64_MAX, 4096, &b), -1); /* past off_t */
    /* the mapping's fallback has a limit */
    assert_int_equal(tagg_pagecache_resident_by(TAGG_PAGECACHE_MINCORE, fd, 0, TAGG_PAGECACHE_MINCORE_MAX + 4096, &b), -1);
    assert_int_equal(b, 7);
    close(fd);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(written_then_dropped),
        cmocka_unit_test(cannot_tell),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
