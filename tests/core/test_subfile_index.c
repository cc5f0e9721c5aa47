/* The subfile layout's stripe map and index (subfile_index.c) and its path
 * rule (sf_path.c), no MPI: the map against a brute-force model, CRC-64
 * against its check value, the index round-trip (formats 1 to 3) through text
 * and through a file, the rejects, the names an index may hold, and the safe
 * opens (links, FIFOs, devices, hostile directories). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>

#include "sf_path.h"
#include "subfile_index.h"
#include "sf_stripe_codec.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

/* xorshift64: the tests' deterministic noise */
static uint64_t xorshift(uint64_t *r)
{
    *r ^= *r << 13, *r ^= *r >> 7, *r ^= *r << 17;
    return *r;
}

/* A scratch file already unlinked (gone when closed). */
static int scratch_file(void)
{
    char path[] = "/tmp/tagg-sfz-XXXXXX";
    int  fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    return fd;
}

/* Every byte of a small address space, for several S and N: locate agrees
 * with the definition, subfile_size counts the bytes each subfile gets and
 * logical_end maps each subfile's size back to the logical size. */
static void test_stripe_map(void **state)
{
    (void)state;
    const uint64_t Ss[] = {1, 3, 4096};
    const uint32_t Ns[] = {1, 2, 3, 7};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 4; b++) {
            uint64_t S = Ss[a];
            uint32_t N = Ns[b];
            uint64_t top = S * N * 3 + 5, max_local[8] = {0};
            for (uint64_t off = 0; off < top; off++) {
                uint32_t k;
                uint64_t local;
                tagg_sf_locate(off, S, N, &k, &local);
                assert_int_equal(k, (off / S) % N);
                assert_int_equal(local, (off / S / N) * S + off % S);
                if (local + 1 > max_local[k])
                    max_local[k] = local + 1;
                /* after writing [0, off], each subfile's size is what subfile_size says */
                uint64_t L = off + 1, end = 0;
                for (uint32_t j = 0; j < N; j++) {
                    assert_int_equal(tagg_sf_subfile_size(L, S, N, j), max_local[j]);
                    uint64_t e = tagg_sf_logical_end(max_local[j], S, N, j);
                    end        = e > end ? e : end;
                }
                assert_int_equal(end, L);
            }
            for (uint32_t j = 0; j < N; j++)
                assert_int_equal(tagg_sf_subfile_size(0, S, N, j), 0);
        }
    /* a concrete case: S = 4096, N = 3, logical size 78724 = 19 stripes + 900 bytes */
    assert_int_equal(tagg_sf_subfile_size(78724, 4096, 3, 0), 7 * 4096);
    assert_int_equal(tagg_sf_subfile_size(78724, 4096, 3, 1), 6 * 4096 + 900);
    assert_int_equal(tagg_sf_subfile_size(78724, 4096, 3, 2), 6 * 4096);
    assert_int_equal(tagg_sf_logical_end(6 * 4096 + 900, 4096, 3, 1), 78724);
}

/* The CRC-64/XZ register after one more byte, bit by bit: the reference. */
static uint64_t bit_crc(uint64_t reg, unsigned char byte)
{
    reg ^= byte;
    for (int b = 0; b < 8; b++)
        reg = (reg & 1) ? (reg >> 1) ^ UINT64_C(0xC96C5795D7870F42) : reg >> 1;
    return reg;
}

static void test_crc64(void **state)
{
    (void)state;
    assert_true(tagg_crc64(0, "123456789", 9) == UINT64_C(0x995dc9bbdf1939fa)); /* CRC-64/XZ check value */
    assert_true(tagg_crc64(0, NULL, 0) == 0);
    /* incremental equals whole */
    uint64_t c = tagg_crc64(0, "1234", 4);
    assert_true(tagg_crc64(c, "56789", 5) == UINT64_C(0x995dc9bbdf1939fa));
    /* the sliced implementation against a bit-by-bit one, every length and split up to 300 */
    unsigned char buf[300];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    for (size_t n = 0; n <= sizeof buf; n += 7) {
        uint64_t ref = ~UINT64_C(0);
        for (size_t i = 0; i < n; i++)
            ref = bit_crc(ref, buf[i]);
        ref = ~ref;
        assert_true(tagg_crc64(0, buf, n) == ref);
        size_t cut = n / 3;
        assert_true(tagg_crc64(tagg_crc64(0, buf, cut), buf + cut, n - cut) == ref);
        assert_true(tagg_crc64_with(0, 0, buf, n) == ref); /* the tables */
    }
    /* every implementation this CPU runs (the tables; carry-less folding on
     * 128-bit and 512-bit registers) against a bit-by-bit CRC: every length
     * up to 1100 (the folds' boundaries: 16, 64, 256 bytes and their
     * remainders) at odd offsets, then random lengths, chained start values */
    enum { BIG = 5000 };
    unsigned char *big = malloc(BIG + 16);
    assert_non_null(big);
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < BIG + 16; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        big[i] = (unsigned char)s;
    }
    int tested = 0;
    assert_null(tagg_crc64_impl(tagg_crc64_impl_count(), NULL));
    for (int impl = 0; impl < tagg_crc64_impl_count(); impl++) {
        int         usable = 0;
        const char *name   = tagg_crc64_impl(impl, &usable);
        assert_non_null(name);
        if (!usable)
            continue;
        tested++;
        for (size_t off = 0; off < 16; off += 5) {
            uint64_t start = off ? s : 0, ref = ~start;
            for (size_t n = 0; n <= 1100; n++) {
                if (n)
                    ref = bit_crc(ref, big[off + n - 1]);
                assert_true(tagg_crc64_with(impl, start, big + off, n) == ~ref);
            }
        }
        for (int t = 0; t < 400; t++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            size_t   off = s % 16, n = (size_t)(s >> 8) % BIG;
            uint64_t start = t % 3 ? s : 0, ref = ~start;
            for (size_t i = 0; i < n; i++)
                ref = bit_crc(ref, big[off + i]);
            ref = ~ref;
            assert_true(tagg_crc64_with(impl, start, big + off, n) == ref);
            assert_true(tagg_crc64(start, big + off, n) == ref);
        }
        print_message("crc64: implementation %s checked\n", name);
    }
    assert_true(tested >= 1);
    free(big);
}

/* A format 3 index of "<dir>/my file.h5": 20 stripes, stripes 0, 3, 19 written. */
static void make_index(tagg_sf_index_t *ix)
{
    assert_int_equal(tagg_sf_index_init(ix, 4096, 3), 0);
    ix->closed       = 1;
    ix->logical_size = 78724;
    for (uint32_t k = 0; k < 3; k++) {
        ix->sub[k].name = tagg_sf_default_name("/some/dir/my file.h5", k, 3);
        ix->sub[k].size = tagg_sf_subfile_size(78724, 4096, 3, k);
        ix->sub[k].crc  = UINT64_C(0xfedcba9876543210) ^ k;
    }
    ix->st  = calloc(3, sizeof *ix->st);
    ix->nst = 3;
    ix->st[0].j = 0, ix->st[0].crc = 1;
    ix->st[1].j = 3, ix->st[1].crc = UINT64_C(0xabcdef0123456789);
    ix->st[2].j = 19, ix->st[2].crc = 3;
}

static void assert_same(const tagg_sf_index_t *a, const tagg_sf_index_t *b)
{
    assert_int_equal(a->version, b->version);
    assert_int_equal(a->closed, b->closed);
    assert_int_equal(a->stripe, b->stripe);
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->logical_size, b->logical_size);
    for (uint32_t k = 0; k < a->count; k++) {
        assert_string_equal(a->sub[k].name, b->sub[k].name);
        assert_int_equal(a->sub[k].size, b->sub[k].size);
        if (a->version < 3)
            assert_true(a->sub[k].crc == b->sub[k].crc);
    }
    assert_int_equal(a->nst, b->nst);
    for (uint64_t i = 0; i < a->nst; i++)
        assert_true(a->st[i].j == b->st[i].j && a->st[i].crc == b->st[i].crc);
    assert_int_equal(a->block, b->block);
    assert_int_equal(a->nblk, b->nblk);
    for (uint64_t i = 0; i < a->nblk * TAGG_SF_BREC; i++)
        assert_true(a->blk[i] == b->blk[i]);
}

static void test_round_trip(void **state)
{
    (void)state;
    tagg_sf_index_t ix, back;
    char           *text, err[512];
    size_t          len;
    make_index(&ix);
    assert_string_equal(ix.sub[1].name, "my file.h5.tagg.1of3");
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    assert_int_equal(strncmp(text, "tagg subfiled HDF5 file, use tagg-fuse", 38), 0);
    assert_true(memcmp(text, "\211HDF", 4) != 0);
    /* format 3: the HDF5 signature at 512, then a superblock version no HDF5 knows */
    assert_true(len > 600);
    assert_memory_equal(text + 512, "\211HDF\r\n\032\n\377", 9);
    assert_non_null(strstr(text, "\nformat 3\n"));
    assert_non_null(strstr(text, "\ns 3 abcdef0123456789\n"));
    if (tagg_sf_index_parse(text, len, &back, err, sizeof err) < 0)
        fail_msg("parse: %s", err);
    assert_same(&ix, &back);
    tagg_sf_index_free(&back);
    free(text);

    /* through a file, atomically replaced */
    char dir[] = "/tmp/tagg-sfidx-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/my file.h5", dir);
    assert_int_equal(tagg_sf_probe(path, err, sizeof err), 0); /* absent */
    if (tagg_sf_index_write(path, &ix, 1, err, sizeof err) < 0)
        fail_msg("write: %s", err);
    ix.closed = 0; /* rewrite: the second write replaces the first */
    assert_int_equal(tagg_sf_index_write(path, &ix, 0, err, sizeof err), 0);
    assert_int_equal(tagg_sf_probe(path, err, sizeof err), 1);
    if (tagg_sf_index_read(path, &back, err, sizeof err) < 0)
        fail_msg("read: %s", err);
    assert_same(&ix, &back);
    /* the probe that brings the text along (the file layer's look at a path):
     * the whole index, which parses to the same; none for a plain file or an
     * absent one */
    char  *pt  = NULL;
    size_t plen = 0;
    int keep = 7;
    assert_int_equal(tagg_sf_probe_text(path, &pt, &plen, &keep, err, sizeof err), 1);
    assert_non_null(pt);
    assert_int_equal(keep, -1); /* an index: no descriptor kept */
    tagg_sf_index_t fromt;
    if (tagg_sf_index_from_text(path, pt, plen, &fromt, err, sizeof err) < 0)
        fail_msg("from text: %s", err);
    assert_same(&ix, &fromt);
    tagg_sf_index_free(&fromt);
    /* a changed byte of the text: refused from the text as from the file (the index's own checksum) */
    char *edited = malloc(plen);
    memcpy(edited, pt, plen);
    edited[plen - 3] ^= 1;
    assert_int_equal(tagg_sf_index_from_text(path, edited, plen, &fromt, err, sizeof err), -1);
    free(edited);
    free(pt);
    {
        char plain[96];
        snprintf(plain, sizeof plain, "%s/plain", dir);
        FILE *fp = fopen(plain, "w");
        fputs("not an index at all, just bytes", fp);
        fclose(fp);
        pt = (char *)1;
        assert_int_equal(tagg_sf_probe_text(plain, &pt, &plen, NULL, err, sizeof err), 0);
        assert_null(pt);
        /* a plain file's probe descriptor kept: that file, read-only, blocking, at its first byte */
        struct stat pst, fst;
        assert_int_equal(tagg_sf_probe_text(plain, &pt, &plen, &keep, err, sizeof err), 0);
        assert_true(keep >= 0);
        assert_int_equal(stat(plain, &pst), 0);
        assert_int_equal(fstat(keep, &fst), 0);
        assert_true(pst.st_ino == fst.st_ino && pst.st_dev == fst.st_dev);
        int fl = fcntl(keep, F_GETFL);
        assert_int_equal(fl & (O_ACCMODE | O_NONBLOCK), O_RDONLY);
        assert_true(fcntl(keep, F_GETFD) & FD_CLOEXEC);
        char first[4] = "";
        assert_int_equal(pread(keep, first, 3, 0), 3);
        assert_memory_equal(first, "not", 3);
        close(keep);
        /* a writer's look: read-write, and read-only where writing is refused
         * (an immutable file refuses even root; not every file system has the flag) */
        assert_int_equal(tagg_sf_probe_open(plain, NULL, NULL, &keep, 1, err, sizeof err), 0);
        assert_true(keep >= 0);
        assert_int_equal(fcntl(keep, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDWR);
        close(keep);
        int ifd = open(plain, O_RDONLY), attr = 0, immutable = 0;
        if (ifd >= 0 && ioctl(ifd, FS_IOC_GETFLAGS, &attr) == 0) {
            attr |= FS_IMMUTABLE_FL;
            immutable = ioctl(ifd, FS_IOC_SETFLAGS, &attr) == 0;
        }
        if (immutable) {
            assert_int_equal(tagg_sf_probe_open(plain, NULL, NULL, &keep, 1, err, sizeof err), 0);
            assert_true(keep >= 0);
            assert_int_equal(fcntl(keep, F_GETFL) & O_ACCMODE, O_RDONLY);
            close(keep);
            attr &= ~FS_IMMUTABLE_FL;
            assert_int_equal(ioctl(ifd, FS_IOC_SETFLAGS, &attr), 0);
        }
        else
            printf("probe_open: no immutable flag here, the read-only fallback did not run\n");
        if (ifd >= 0)
            close(ifd);
        unlink(plain);
        pt = (char *)1;
        assert_int_equal(tagg_sf_probe_text(plain, &pt, &plen, &keep, err, sizeof err), 0); /* absent */
        assert_null(pt);
        assert_int_equal(keep, -1);
    }
    char *sp = tagg_sf_path_of(path, &back, 2);
    assert_int_equal(strncmp(sp, dir, strlen(dir)), 0);
    assert_non_null(strstr(sp, "/my file.h5.tagg.2of3"));
    free(sp);
    tagg_sf_index_free(&back);
    unlink(path);

    /* fresh (a file being created): straight at an absent path, no temporary
     * left; over an existing file or a planted link: replaced, the link's
     * target untouched */
    char tmp[96], target[64];
    snprintf(tmp, sizeof tmp, "%s.tagg-tmp", path);
    snprintf(target, sizeof target, "%s/target", dir);
    struct stat st;
    for (int what = 0; what < 3; what++) {
        if (what == 1) {
            FILE *fp = fopen(path, "w"); /* longer than the index: nothing of it may stay */
            for (int i = 0; i < 4096; i++)
                fputc('x', fp);
            fclose(fp);
        }
        if (what == 2) {
            FILE *fp = fopen(target, "w");
            fputs("precious", fp);
            fclose(fp);
            assert_int_equal(symlink(target, path), 0);
        }
        if (tagg_sf_index_write_mode(path, &ix, 0, 1, NULL, NULL, err, sizeof err) < 0)
            fail_msg("fresh write (%d): %s", what, err);
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(access(tmp, F_OK), -1);
        if (tagg_sf_index_read(path, &back, err, sizeof err) < 0)
            fail_msg("read (%d): %s", what, err);
        assert_same(&ix, &back);
        tagg_sf_index_free(&back);
        unlink(path);
    }
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_size, 8); /* untouched */
    unlink(target);
    rmdir(dir);
    tagg_sf_index_free(&ix);
}

/* make_index's index with n stripes of 4 KiB written, and the sizes that go with them. */
static void many_stripes(tagg_sf_index_t *ix, uint64_t n)
{
    free(ix->st);
    ix->nst = n;
    ix->st  = calloc(n, sizeof *ix->st);
    for (uint64_t i = 0; i < n; i++)
        ix->st[i].j = i, ix->st[i].crc = 1000 + i;
    ix->logical_size = n * 4096;
    for (uint32_t k = 0; k < 3; k++)
        ix->sub[k].size = tagg_sf_subfile_size(ix->logical_size, 4096, 3, k);
}

/* The close's final index over the writer's own "state open" one: in place
 * (same inode, a longer old text cut, no temporary) when small and still
 * that file; replaced atomically when the path is another file now, a link,
 * or the text is larger than TAGG_SF_INPLACE_MAX. */
static void test_index_finish(void **state)
{
    (void)state;
    tagg_sf_index_t ix, back;
    char            err[512], dir[] = "/tmp/tagg-sffin-XXXXXX", path[96], tmp[128], target[96];
    struct stat     st, st2;
    int             inplace = -1;
    make_index(&ix);
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/my file.h5", dir); /* the name make_index's subfile names derive from */
    snprintf(tmp, sizeof tmp, "%s.tagg-tmp", path);
    snprintf(target, sizeof target, "%s/target", dir);
    /* the open index, made longer than the final by many stripe records */
    tagg_sf_index_t big;
    make_index(&big);
    big.closed = 0;
    many_stripes(&big, 40);
    unsigned long long id[2] = {0, 0};
    if (tagg_sf_index_write_mode(path, &big, 0, 1, id, NULL, err, sizeof err) < 0)
        fail_msg("open index: %s", err);
    assert_int_equal(stat(path, &st), 0);
    assert_true(id[0] == (unsigned long long)st.st_dev && id[1] == (unsigned long long)st.st_ino); /* from its descriptor */
    if (tagg_sf_index_finish(path, &ix, 1, id[0], id[1], NULL, &inplace, err, sizeof err) < 0)
        fail_msg("finish: %s", err);
    assert_int_equal(inplace, 1);
    assert_int_equal(stat(path, &st2), 0);
    assert_true(st2.st_ino == st.st_ino);
    assert_true(st2.st_size < st.st_size); /* the rest of the longer text cut */
    assert_int_equal(access(tmp, F_OK), -1);
    if (tagg_sf_index_read(path, &back, err, sizeof err) < 0)
        fail_msg("read: %s", err);
    assert_same(&ix, &back);
    tagg_sf_index_free(&back);
    /* another file at the path now (same name, another inode: made while
     * ours still exists, then renamed over it): replaced, not written into */
    char other[128];
    snprintf(other, sizeof other, "%s/other", dir);
    FILE *fp = fopen(other, "w");
    fputs("someone else's", fp);
    fclose(fp);
    assert_int_equal(rename(other, path), 0);
    if (tagg_sf_index_finish(path, &ix, 0, st.st_dev, st.st_ino, NULL, &inplace, err, sizeof err) < 0)
        fail_msg("finish over another file: %s", err);
    assert_int_equal(inplace, 0);
    if (tagg_sf_index_read(path, &back, err, sizeof err) < 0)
        fail_msg("read: %s", err);
    assert_same(&ix, &back);
    tagg_sf_index_free(&back);
    /* a link planted at the path: never followed, its target untouched */
    assert_int_equal(stat(path, &st), 0);
    unlink(path);
    fp = fopen(target, "w");
    fputs("precious", fp);
    fclose(fp);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(stat(target, &st2), 0);
    if (tagg_sf_index_finish(path, &ix, 0, st2.st_dev, st2.st_ino, NULL, &inplace, err, sizeof err) < 0)
        fail_msg("finish over a link: %s", err);
    assert_int_equal(inplace, 0);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_size, 8);
    /* a final text over TAGG_SF_INPLACE_MAX: replaced atomically */
    big.closed = 1;
    many_stripes(&big, 400);
    char  *text;
    size_t len;
    assert_int_equal(tagg_sf_index_format(&big, &text, &len), 0);
    assert_true(len > TAGG_SF_INPLACE_MAX);
    free(text);
    assert_int_equal(stat(path, &st), 0);
    if (tagg_sf_index_finish(path, &big, 0, st.st_dev, st.st_ino, NULL, &inplace, err, sizeof err) < 0)
        fail_msg("finish, large: %s", err);
    assert_int_equal(inplace, 0);
    assert_int_equal(stat(path, &st2), 0);
    assert_true(st2.st_ino != st.st_ino);
    if (tagg_sf_index_read(path, &back, err, sizeof err) < 0)
        fail_msg("read: %s", err);
    assert_same(&big, &back);
    tagg_sf_index_free(&back);
    unlink(path), unlink(target), rmdir(dir);
    tagg_sf_index_free(&big);
    tagg_sf_index_free(&ix);
}

/* The open index's descriptor kept for the final write (tagg_sf_ixfd_t):
 * written through it in place (no open by path), closed by the finish; when
 * another file was renamed over it, the path gets the final index by
 * replacement and the other file is not written into. */
static void test_index_finish_kept(void **state)
{
    (void)state;
    tagg_sf_index_t ix, big, back;
    char            err[512], dir[] = "/tmp/tagg-sfkeep-XXXXXX", path[96], other[128], other2[160];
    struct stat     st, st2;
    int             inplace = -1;
    make_index(&ix);
    make_index(&big);
    big.closed = 0;
    many_stripes(&big, 40);
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/my file.h5", dir);
    snprintf(other, sizeof other, "%s/other", dir);
    for (int renamed = 0; renamed < 2; renamed++) {
        unsigned long long id[2] = {0, 0};
        tagg_sf_ixfd_t     keep  = {-7, 7};
        if (tagg_sf_index_write_mode(path, &big, 0, 1, id, &keep, err, sizeof err) < 0)
            fail_msg("open index: %s", err);
        assert_true(keep.fd >= 0);
        assert_int_equal(fstat(keep.fd, &st), 0);
        assert_true((unsigned long long)st.st_ino == id[1]);
        assert_true(keep.len == (size_t)st.st_size);
        assert_int_equal(fcntl(keep.fd, F_GETFL) & O_ACCMODE, O_WRONLY);
        assert_true(fcntl(keep.fd, F_GETFD) & FD_CLOEXEC);
        if (renamed) {
            FILE *fp = fopen(other, "w");
            fputs("someone else's", fp);
            fclose(fp);
            snprintf(other2, sizeof other2, "%s.link", other);
            assert_int_equal(link(other, other2), 0); /* to look at it after the finish */
            assert_int_equal(rename(other, path), 0);
            assert_int_equal(stat(path, &st2), 0);
        }
        int fd = keep.fd;
        if (tagg_sf_index_finish(path, &ix, 1, id[0], id[1], &keep, &inplace, err, sizeof err) < 0)
            fail_msg("finish%s: %s", renamed ? " (renamed over)" : "", err);
        assert_int_equal(keep.fd, -1);
        errno = 0;
        assert_int_equal(fcntl(fd, F_GETFD), -1); /* closed by the finish */
        assert_int_equal(errno, EBADF);
        assert_int_equal(inplace, !renamed);
        struct stat now;
        assert_int_equal(stat(path, &now), 0);
        if (!renamed) {
            assert_true(now.st_ino == st.st_ino);
            assert_true(now.st_size < st.st_size); /* the longer open text cut */
        }
        else { /* replaced, not written into */
            char  got[32] = "";
            FILE *fp      = fopen(other2, "r");
            assert_non_null(fp);
            assert_non_null(fgets(got, sizeof got, fp));
            fclose(fp);
            assert_string_equal(got, "someone else's");
            assert_true(now.st_ino != st2.st_ino);
            unlink(other2);
        }
        if (tagg_sf_index_read(path, &back, err, sizeof err) < 0)
            fail_msg("read: %s", err);
        assert_same(&ix, &back);
        tagg_sf_index_free(&back);
        unlink(path);
    }
    rmdir(dir);
    tagg_sf_index_free(&big);
    tagg_sf_index_free(&ix);
}

/* Each damage must be rejected with its own message. */
static void expect_reject(const char *text, const char *want)
{
    tagg_sf_index_t ix;
    char            err[512] = "";
    if (tagg_sf_index_parse(text, strlen(text), &ix, err, sizeof err) == 0)
        fail_msg("accepted a damaged index (wanted '%s')", want);
    if (!strstr(err, want))
        fail_msg("message '%s' lacks '%s'", err, want);
    assert_null(ix.sub);
}

/* Format 2 (node-local subfiles): round trip, and what a reader refuses. */
static void test_format2(void **state)
{
    (void)state;
    tagg_sf_index_t ix, back;
    char           *text, err[256];
    size_t          len;
    assert_int_equal(tagg_sf_index_init(&ix, 4096, 2), 0);
    ix.version = 2, ix.nvr = 1, ix.closed = 1, ix.logical_size = 9000;
    ix.meta.name = tagg_sf_meta_name("/pfs/run/out.h5");
    ix.meta.size = 9000, ix.meta.crc = 7;
    assert_string_equal(ix.meta.name, "out.h5.tagg.meta");
    for (uint32_t k = 0; k < 2; k++) {
        ix.sub[k].node = strdup(k ? "host.vnode1" : "host.vnode0");
        ix.sub[k].name = tagg_sf_path_nvr("/local/ssd", ix.sub[k].node, "/pfs/run/out.h5", k, 2);
        ix.sub[k].size = 4096, ix.sub[k].crc = 100 + k;
    }
    char user[64];
    snprintf(user, sizeof user, "/local/ssd/tagg-%lu/host.vnode1/out.h5.", (unsigned long)geteuid());
    assert_non_null(strstr(ix.sub[1].name, user));
    assert_non_null(strstr(ix.sub[1].name, ".1of2"));
    char *other = tagg_sf_path_nvr("/local/ssd", "host.vnode1", "/pfs/other/out.h5", 1, 2);
    assert_string_not_equal(other, ix.sub[1].name); /* same base name, other directory: other path */
    free(other);
    /* format 3 derives these; a format 2 index must use its own directory form */
    ix.version = 3;
    if (tagg_sf_path_check("/pfs/run/out.h5", &ix, err, sizeof err) < 0)
        fail_msg("derived node-local names refused: %s", err);
    assert_int_equal(tagg_sf_path_check("/pfs/other/out.h5", &ix, err, sizeof err), -1); /* hash of another path */
    ix.version = 2;
    assert_int_equal(tagg_sf_path_check("/pfs/run/out.h5", &ix, err, sizeof err), -1);
    assert_non_null(strstr(err, "tagg-nvr.host.vnode0"));
    char *p = tagg_sf_path_of("/pfs/run/out.h5", &ix, 0);
    assert_string_equal(p, ix.sub[0].name); /* node-local paths are checked, then themselves */
    free(p);
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    assert_non_null(strstr(text, "\nformat 2\nlayout subfiles\ndestination nvr\n"));
    assert_non_null(strstr(text, "\nnode 1 host.vnode1\n"));
    assert_int_equal(tagg_sf_index_parse(text, len, &back, err, sizeof err), 0);
    assert_int_equal(back.nvr, 1);
    assert_int_equal(back.version, 2);
    assert_string_equal(back.meta.name, ix.meta.name);
    assert_true(back.meta.size == 9000 && back.meta.crc == 7);
    for (uint32_t k = 0; k < 2; k++) {
        assert_string_equal(back.sub[k].name, ix.sub[k].name);
        assert_string_equal(back.sub[k].node, ix.sub[k].node);
        assert_true(back.sub[k].crc == 100 + k);
    }
    tagg_sf_index_free(&back);
    free(text);
    /* a relative node-local path: refused (the index checksum is right, only the field is wrong) */
    free(ix.sub[0].name);
    ix.sub[0].name = strdup("relative.0of2");
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    assert_int_equal(tagg_sf_index_parse(text, len, &back, err, sizeof err), -1);
    assert_non_null(strstr(err, "is not absolute"));
    free(text);
    /* format 1 indexes can still be written (tests craft them) */
    ix.nvr = 0, ix.version = 1;
    free(ix.sub[0].name);
    ix.sub[0].name = strdup("out.h5.tagg.0of2");
    free(ix.sub[1].name);
    ix.sub[1].name = strdup("out.h5.tagg.1of2");
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    assert_non_null(strstr(text, "\nformat 1\nlayout subfiles\nstate closed\n"));
    assert_null(strstr(text, "node "));
    free(text);
    tagg_sf_index_free(&ix);
}

static void test_rejects(void **state)
{
    (void)state;
    tagg_sf_index_t ix;
    char           *text, *t;
    size_t          len;
    make_index(&ix);
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    t = strdup(text);

    t[0] = 'T';
    expect_reject(t, "bad magic");
    expect_reject("\211HDF\r\n\032\n", "bad magic");
    expect_reject("", "bad magic");

    strcpy(t, text);
    *strstr(t, "format 3") = 'F';
    expect_reject(t, "no 'format' line");
    strcpy(t, text);
    strstr(t, "format 3")[7] = '5';
    expect_reject(t, "unsupported index format version 5");

    strcpy(t, text);
    strstr(t, "stripe_size 4096")[12] = '8'; /* any change of the body */
    expect_reject(t, "index checksum mismatch");
    strcpy(t, text);
    strstr(t, "index_crc64 ")[12] ^= 1;
    expect_reject(t, "index checksum mismatch");
    strcpy(t, text);
    t[len - 1] = '\0'; /* lost the final newline */
    expect_reject(t, "truncated");
    strcpy(t, text);
    *strstr(t, "subfile 2 ") = '\0'; /* cut after subfile 1 */
    expect_reject(t, "truncated");
    free(t);
    free(text);

    /* a well-checksummed index with bad fields */
    ix.count = 2; /* the text then names 2 subfiles: fine */
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    tagg_sf_index_t back;
    char            err[256];
    assert_int_equal(tagg_sf_index_parse(text, len, &back, err, sizeof err), 0);
    assert_int_equal(back.count, 2);
    tagg_sf_index_free(&back);
    free(text);
    free(ix.sub[0].name);
    ix.sub[0].name = strdup("../escape");
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    expect_reject(text, "is not a plain name");
    free(text);
    ix.count = 3;
    tagg_sf_index_free(&ix);
}

/* Names an index may hold: exactly the derived ones; the error names the line. */
static void test_path_rule(void **state)
{
    (void)state;
    tagg_sf_index_t ix;
    char            err[1024];
    make_index(&ix);
    assert_int_equal(tagg_sf_path_check("/some/dir/my file.h5", &ix, err, sizeof err), 0);
    /* a sibling file of the index's directory */
    free(ix.sub[1].name);
    ix.sub[1].name = strdup("thesis.txt");
    char *text;
    size_t len;
    tagg_sf_index_t back;
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    assert_int_equal(tagg_sf_index_parse(text, len, &back, err, sizeof err), 0); /* well-formed ... */
    assert_int_equal(tagg_sf_path_check("/some/dir/my file.h5", &back, err, sizeof err), -1); /* ... not allowed */
    assert_non_null(strstr(err, "index line 14: subfile 1 is named 'thesis.txt'"));
    assert_non_null(strstr(err, "'my file.h5.tagg.1of3'"));
    tagg_sf_index_free(&back);
    free(text);
    /* another file's subfile (renamed index) */
    assert_int_equal(tagg_sf_path_check("/some/dir/other.h5", &ix, err, sizeof err), -1);
    tagg_sf_index_free(&ix);
    /* node-local names: outside files, "..", other users, other nodes */
    assert_int_equal(tagg_sf_index_init(&ix, 4096, 1), 0);
    ix.nvr = 1, ix.closed = 1;
    ix.meta.name = tagg_sf_meta_name("/pfs/a.h5");
    ix.sub[0].node = strdup("n0");
    const char *bad[] = {"/home/user/thesis.txt", "/dev/zero", "/tmp/tagg-0/../../etc/passwd", "relative/x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ix.sub[0].name = strdup(bad[i]);
        assert_int_equal(tagg_sf_path_check("/pfs/a.h5", &ix, err, sizeof err), -1);
        assert_non_null(strstr(err, "is not a path tagg derives"));
        free(ix.sub[0].name);
    }
    ix.sub[0].name = tagg_sf_path_nvr("/tmp", "n0", "/pfs/a.h5", 0, 1);
    assert_int_equal(tagg_sf_path_check("/pfs/a.h5", &ix, err, sizeof err), 0);
    free(ix.sub[0].node);
    ix.sub[0].node = strdup("n1"); /* the path of node n0 for a subfile of n1 */
    assert_int_equal(tagg_sf_path_check("/pfs/a.h5", &ix, err, sizeof err), -1);
    free(ix.sub[0].node);
    ix.sub[0].node = strdup("../n0");
    assert_int_equal(tagg_sf_path_check("/pfs/a.h5", &ix, err, sizeof err), -1);
    free(ix.sub[0].node);
    ix.sub[0].node = strdup("n0");
    free(ix.meta.name);
    ix.meta.name = strdup("thesis.txt");
    assert_int_equal(tagg_sf_path_check("/pfs/a.h5", &ix, err, sizeof err), -1);
    assert_non_null(strstr(err, "metadata file is named 'thesis.txt'"));
    tagg_sf_index_free(&ix);
}

/* The index text with suffix inserted after the line starting with `after`
 * (re-checksummed), parsed. */
static int parse_with(const char *text, size_t len, const char *after, const char *suffix, tagg_sf_index_t *out,
                      char *err)
{
    char  *at = strstr(text, after);
    size_t sl = strlen(suffix);
    assert_non_null(at);
    at += strlen(after);
    char  *t2   = malloc(len + sl + 1);
    size_t head = (size_t)(at - text);
    memcpy(t2, text, head);
    memcpy(t2 + head, suffix, sl);
    memcpy(t2 + head + sl, at, len - head);
    size_t l2   = len + sl;
    char  *last = t2 + l2 - 29; /* re-checksum: "index_crc64 " + 16 + '\n' */
    snprintf(last + 12, 18, "%016llx\n", (unsigned long long)tagg_crc64(0, t2, (size_t)(last - t2)));
    int rc = tagg_sf_index_parse(t2, l2, out, err, 512);
    free(t2);
    return rc;
}

/* Per-stripe records: lookup, checks, holes, and the stripe lines a reader refuses. */
static void test_stripes(void **state)
{
    (void)state;
    assert_int_equal(tagg_sf_stripe_len(78724, 4096, 19), 900);
    assert_int_equal(tagg_sf_stripe_len(78724, 4096, 18), 4096);
    assert_int_equal(tagg_sf_stripe_len(78724, 4096, 20), 0);
    assert_int_equal(tagg_sf_stripe_len(0, 4096, 0), 0);
    char buf[100];
    memset(buf, 0, sizeof buf);
    tagg_sf_stripe_t st[2] = {{2, 0, 0}, {5, 0, 0}};
    st[1].crc = tagg_crc64(0, "hello", 5);
    uint64_t got;
    assert_int_equal(tagg_sf_stripe_ok(st, 2, 0, buf, sizeof buf, &got), 1); /* a hole of zeros */
    buf[50] = 1;
    assert_int_equal(tagg_sf_stripe_ok(st, 2, 0, buf, sizeof buf, &got), 0); /* a hole with a byte in it */
    assert_int_equal(tagg_sf_stripe_ok(st, 2, 5, "hello", 5, &got), 1);
    assert_int_equal(tagg_sf_stripe_ok(st, 2, 5, "hellp", 5, &got), 0);
    assert_null(tagg_sf_stripe_find(st, 2, 3));
    /* stripe lines */
    tagg_sf_index_t ix;
    char           *text;
    size_t          len;
    char            err[512];
    make_index(&ix);
    ix.st[2].j = 20; /* past the logical size */
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    expect_reject(text, "lies past the logical size");
    free(text);
    ix.st[2].j = 2; /* out of order */
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    expect_reject(text, "out of order");
    free(text);
    tagg_sf_index_free(&ix);
    /* compressed stripes (issue 15): "s J CRC ENC STORED_OFFSET STORED_SIZE LOGICAL_SIZE" */
    make_index(&ix);
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    tagg_sf_index_t back;
    assert_int_equal(parse_with(text, len, "\ns 3 abcdef0123456789", " zstd 4096 100 4096", &back, err), 0);
    assert_int_equal(back.nst, 3);
    assert_int_equal(TAGG_SFZ_FORM_ENC(back.st[1].form), TAGG_SFZ_ZSTD);
    assert_int_equal(TAGG_SFZ_FORM_STORED(back.st[1].form), 100);
    assert_int_equal(back.st[0].form, 0); /* the others stay raw */
    assert_int_equal(tagg_sf_any_compressed(&back), 1);
    { /* written back the same */
        char  *t3;
        size_t l3;
        assert_int_equal(tagg_sf_index_format(&back, &t3, &l3), 0);
        assert_non_null(strstr(t3, "\ns 3 abcdef0123456789 zstd 4096 100 4096\n"));
        free(t3);
    }
    tagg_sf_index_free(&back);
    static const struct {
        const char *suffix, *msg;
    } bad[] = {
        {" brotli 4096 100 4096", "encoding this tagg does not know"}, /* a later codec: refused, never misread */
        {" zstd 0 100 4096", "impossible extent"},                    /* not the stripe's slot */
        {" zstd 4096 4096 4096", "impossible extent"},                /* does not shrink */
        {" zstd 4096 40 4096", "impossible extent"},                  /* not even a header */
        {" zstd 4096 100 2048", "impossible extent"},                 /* not a whole stripe */
        {" zstd 4096 100", "bad compressed stripe line"},
        {" zstd 4096 100 4096 7", "bad compressed stripe line"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(parse_with(text, len, "\ns 3 abcdef0123456789", bad[i].suffix, &back, err), -1);
        if (!strstr(err, bad[i].msg))
            fail_msg("'%s': %s", bad[i].suffix, err);
    }
    /* stripe 19 is the partial last one: never compressed */
    assert_int_equal(parse_with(text, len, "\ns 19 0000000000000003", " lz4 24576 100 4096", &back, err), -1);
    assert_non_null(strstr(err, "impossible extent"));
    free(text);
    tagg_sf_index_free(&ix);
}

/* Format 4: block checksums compose to the stripe's, go through the index
 * (format 4 only when a stripe has them), and every inconsistency is refused. */
static void test_blocks(void **state)
{
    (void)state;
    assert_int_equal(tagg_sf_block_size(4 << 20), 256 << 10);
    assert_int_equal(tagg_sf_block_size(65536), 4096);
    assert_int_equal(tagg_sf_block_size(32768), 0); /* blocks under 4 KiB: none */
    assert_int_equal(tagg_sf_block_size(65536 + 4096), 0);
    const uint64_t S = 65536, B = 4096, L = 5 * S + 5000;
    char          *data = malloc(S);
    uint64_t       bc[2][TAGG_SF_BLOCKS];
    for (uint64_t i = 0; i < S; i++)
        data[i] = (char)(i * 2654435761u >> 13);
    /* a whole stripe (16 blocks) and the partial last one (4096 + 904 bytes) */
    tagg_sf_block_crcs(data, S, B, bc[0]);
    tagg_sf_block_crcs(data, 5000, B, bc[1]);
    assert_true(bc[1][0] == bc[0][0] && bc[1][1] == tagg_crc64(0, data + 4096, 904));
    assert_true(tagg_sf_blocks_compose(bc[0], S, B) == tagg_crc64(0, data, S));
    assert_true(tagg_sf_blocks_compose(bc[1], 5000, B) == tagg_crc64(0, data, 5000));
    bc[0][7] ^= 1;
    assert_true(tagg_sf_blocks_compose(bc[0], S, B) != tagg_crc64(0, data, S));
    bc[0][7] ^= 1;

    tagg_sf_index_t ix, back;
    char           *text, err[512];
    size_t          len;
    assert_int_equal(tagg_sf_index_init(&ix, S, 2), 0);
    ix.closed = 1, ix.logical_size = L;
    for (uint32_t k = 0; k < 2; k++)
        ix.sub[k].name = tagg_sf_default_name("/d/f.h5", k, 2), ix.sub[k].size = tagg_sf_subfile_size(L, S, 2, k);
    /* stripes 1 (blocks), 2 (none: checked whole), 5 (blocks, partial) */
    assert_int_equal(tagg_sf_stripe_append(&ix.st, &ix.nst, 1, tagg_crc64(0, data, S)), 0);
    assert_int_equal(tagg_sf_stripe_append(&ix.st, &ix.nst, 2, 77), 0);
    assert_int_equal(tagg_sf_stripe_append(&ix.st, &ix.nst, 5, tagg_crc64(0, data, 5000)), 0);
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0); /* no block record: format 3 */
    assert_non_null(strstr(text, "\nformat 3\n"));
    assert_null(strstr(text, "block_size"));
    free(text);
    ix.block = B;
    assert_int_equal(tagg_sf_blocks_append(&ix.blk, &ix.nblk, 5, bc[1], 2), 0);
    assert_int_equal(tagg_sf_blocks_append(&ix.blk, &ix.nblk, 1, bc[0], TAGG_SF_BLOCKS), 0);
    tagg_sf_blocks_sort(ix.blk, ix.nblk);
    assert_true(tagg_sf_blocks_find(ix.blk, ix.nblk, 1)[15] == bc[0][15]);
    assert_true(tagg_sf_blocks_find(ix.blk, ix.nblk, 5)[1] == bc[1][1]);
    assert_null(tagg_sf_blocks_find(ix.blk, ix.nblk, 2));
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    assert_non_null(strstr(text, "\nformat 4\n"));
    assert_non_null(strstr(text, "\nchecksum crc64-xz per-stripe\nblock_size 4096\npad"));
    assert_int_equal(memcmp(text + TAGG_SF_HDF5_AT, TAGG_SF_HDF5_BLOCK, TAGG_SF_HDF5_BLOCK_LEN), 0);
    char line[64];
    snprintf(line, sizeof line, "\nb 5 %016llx %016llx\n", (unsigned long long)bc[1][0], (unsigned long long)bc[1][1]);
    assert_non_null(strstr(text, line));
    assert_int_equal(tagg_sf_index_parse(text, len, &back, err, sizeof err), 0);
    ix.version = TAGG_SF_VERSION_4;
    assert_same(&ix, &back);
    tagg_sf_index_free(&back);
    { /* an index too long with its block lines for a reader is written without them (format 3) */
        char  *t3;
        size_t l3;
        assert_int_equal(tagg_sf_index_format_within(&ix, len, &t3, &l3), 0); /* fits: as is */
        assert_true(l3 == len && !memcmp(t3, text, len));
        free(t3);
        assert_int_equal(tagg_sf_index_format_within(&ix, len - 1, &t3, &l3), 0);
        assert_true(l3 < len);
        assert_non_null(strstr(t3, "\nformat 3\n"));
        assert_null(strstr(t3, "\nb "));
        assert_int_equal(tagg_sf_index_parse(t3, l3, &back, err, sizeof err), 0);
        assert_true(back.nst == 3 && back.nblk == 0 && back.block == 0 && back.st[2].crc == ix.st[2].crc);
        tagg_sf_index_free(&back);
        free(t3);
    }
    /* what a reader refuses (each re-checksummed: only the field is wrong) */
    char s1[48], s5[48], b1first[40], b5line[64];
    snprintf(s1, sizeof s1, "\ns 1 %016llx", (unsigned long long)tagg_crc64(0, data, S));
    snprintf(s5, sizeof s5, "\ns 5 %016llx", (unsigned long long)tagg_crc64(0, data, 5000));
    snprintf(b1first, sizeof b1first, "\nb 1 %016llx", (unsigned long long)bc[0][0]);
    snprintf(b5line, sizeof b5line, "%.*s", (int)strlen(line) - 1, line); /* without its newline */
    char b1line[512] = "\nb 1";
    for (unsigned i = 0; i < TAGG_SF_BLOCKS; i++)
        snprintf(b1line + strlen(b1line), sizeof b1line - strlen(b1line), " %016llx", (unsigned long long)bc[0][i]);
    assert_non_null(strstr(text, b1line));
    static const struct {
        int         after; /* 0 b1line, 1 b5line, 2 s 2, 3 b1first, 4 s5 (its b line removed), 5 s1 */
        const char *suffix, *msg;
    } bad[] = {
        {0, " 0000000000000000", "bad block line"},                        /* a 17th block */
        {1, "\nb 5 0000000000000001 0000000000000002", "does not follow"}, /* a second line for 5 */
        {2, "\nb 3 0000000000000001", "does not follow"},                  /* not after its own s line */
        {3, "1", "bad block line"},                                        /* a 17th hex digit */
        {4, "\nb 5 0000000000000001", "block checksums, its 5000 bytes make 2 blocks"},
        {5, "\nb 5 0000000000000001 0000000000000002", "does not follow"}, /* after the s line of 1 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *after[] = {b1line, b5line, "\ns 2 000000000000004d", b1first, s5, s1};
        int         rc;
        if (bad[i].after == 4) { /* the b line of 5 removed first */
            char  *t2 = strdup(text), *bl = strstr(t2, line);
            size_t ll = strlen(line) - 1;
            memmove(bl, bl + ll, strlen(bl + ll) + 1);
            rc = parse_with(t2, len - ll, after[4], bad[i].suffix, &back, err);
            free(t2);
        }
        else
            rc = parse_with(text, len, after[bad[i].after], bad[i].suffix, &back, err);
        if (rc == 0)
            fail_msg("accepted bad block line %zu", i);
        if (!strstr(err, bad[i].msg))
            fail_msg("bad block line %zu: '%s' lacks '%s'", i, err, bad[i].msg);
    }
    /* blocks that do not compose to the stripe's checksum */
    {
        char wrong[40];
        snprintf(wrong, sizeof wrong, "\nb 1 %016llx", (unsigned long long)(bc[0][0] ^ 4));
        char  *t2 = strdup(text), *at = strstr(t2, b1first);
        memcpy(at, wrong, strlen(wrong));
        assert_int_equal(parse_with(t2, len, "\nformat 4", "", &back, err), -1);
        assert_non_null(strstr(err, "do not compose to its checksum"));
        free(t2);
    }
    /* a block line in format 3, and a format 4 index without its block size */
    {
        char *t2 = strdup(text);
        memcpy(strstr(t2, "format 4"), "format 3", 8);
        assert_int_equal(parse_with(t2, len, "\nformat 3", "", &back, err), -1);
        assert_non_null(strstr(err, "format 3 expects a 'pad' line")); /* the block_size line is not one */
        free(t2);
        t2 = strdup(text);
        memcpy(strstr(t2, "block_size 4096"), "block_size 8192", 15);
        assert_int_equal(parse_with(t2, len, "\nformat 4", "", &back, err), -1);
        assert_non_null(strstr(err, "format 4 expects 'block_size 4096'"));
        free(t2);
    }
    free(text);
    tagg_sf_index_free(&ix);
    free(data);
}

/* Large stripes are probed first: noise is stored raw without compressing the
 * whole (probe_raw), smooth data is compressed, and a stripe that is noise at
 * the three sample points but compressible elsewhere is stored raw (the price
 * of the probe), and reads back exactly either way. */
static void test_stripe_probe(void **state)
{
    (void)state;
    enum { S = 1 << 20 };
    int fd = scratch_file();
    static unsigned char noise[S], smooth[S], mixed[S], back[S], scratch[S];
    uint64_t r = 2463534242ULL;
    for (int i = 0; i < S; i++) {
        noise[i]  = (unsigned char)xorshift(&r);
        smooth[i] = (unsigned char)(i / 256);
        mixed[i]  = i < (16 << 10) || (i >= S / 2 && i < S / 2 + (16 << 10)) || i >= S - (16 << 10) ? noise[i] : 0;
    }
    char err[512];
    for (unsigned enc = 1; enc < TAGG_SFZ_COUNT_; enc++) {
        tagg_sfz_t z;
        uint64_t   form;
        assert_int_equal(tagg_sfz_init(&z, enc, NULL, S, err, sizeof err), 0);
        assert_int_equal(ftruncate(fd, 0), 0);
        const unsigned char *data[3] = {noise, smooth, mixed};
        int                  want_packed[3] = {0, 1, 0};
        for (int k = 0; k < 3; k++) {
            assert_int_equal(tagg_sfz_put_whole(&z, fd, (uint64_t)k * S, data[k], S, tagg_crc64(0, data[k], S), &form,
                                                err, sizeof err), 0);
            assert_int_equal(form != 0, want_packed[k]);
            memset(back, 0xee, S);
            assert_int_equal(tagg_sfz_slot_load(fd, (uint64_t)k * S, S, UINT64_MAX, back, scratch, &form, err, sizeof err), 0);
            assert_memory_equal(back, data[k], S);
        }
        assert_int_equal(z.probe_raw, 2);
        assert_int_equal(z.raw_stripes, 2);
        assert_int_equal(z.comp_stripes, 1);
        tagg_sfz_free(&z);
    }
    close(fd);
}

/* Compressed stripes (sf_stripe_codec.h) on a temporary subfile: a whole
 * stripe stored compressed and read back by its form and by probing the slot,
 * an incompressible one stored raw, a partial write that expands a compressed
 * stripe, a partial write to a raw one, a cut's expansion; then a bounded
 * fuzz of the stored block (payload bytes, header fields with a valid header
 * CRC, truncation): every result is an error or exactly the logical bytes. */
static void test_stripe_codec(void **state)
{
    (void)state;
    enum { S = 16384 };
    int fd = scratch_file();
    static unsigned char smooth[S], noise[S], back[S], scratch[S], blk[S];
    uint64_t r = 88172645463325252ULL;
    for (int i = 0; i < S; i++) {
        smooth[i] = (unsigned char)(i / 64 * 7);
        noise[i]  = (unsigned char)xorshift(&r);
    }
    char err[512];
    for (unsigned enc = 1; enc < TAGG_SFZ_COUNT_; enc++) {
        tagg_sfz_t z;
        assert_int_equal(tagg_sfz_init(&z, enc, NULL, S, err, sizeof err), 0);
        assert_int_equal(ftruncate(fd, 0), 0);
        uint64_t form, crc = tagg_crc64(0, smooth, S), f2;
        /* stripe 1 (slot S) compressed */
        assert_int_equal(tagg_sfz_put_whole(&z, fd, S, smooth, S, crc, &form, err, sizeof err), 0);
        assert_int_equal(TAGG_SFZ_FORM_ENC(form), enc);
        assert_true(TAGG_SFZ_FORM_STORED(form) > TAGG_SFZ_HDR && TAGG_SFZ_FORM_STORED(form) < S);
        struct stat st;
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_size, 2 * S); /* the raw layout's size */
        memset(back, 0, S);
        assert_int_equal(tagg_sfz_load_form(fd, S, S, 2 * S, form, crc, 1, back, scratch, err, sizeof err), 0);
        assert_memory_equal(back, smooth, S);
        assert_int_equal(tagg_sfz_slot_load(fd, S, S, UINT64_MAX, back, scratch, &f2, err, sizeof err), 0);
        assert_int_equal(f2, form);
        assert_memory_equal(back, smooth, S);
        /* a wrong CRC or codec in the record: an error */
        assert_int_equal(tagg_sfz_load_form(fd, S, S, 2 * S, form, crc ^ 1, 1, back, scratch, err, sizeof err), -1);
        assert_non_null(strstr(err, "does not match the index"));
        assert_int_equal(tagg_sfz_load_form(fd, S, S, 2 * S, TAGG_SFZ_FORM(enc % 4 + 1, TAGG_SFZ_FORM_STORED(form)), crc,
                                            1, back, scratch, err, sizeof err), -1);
        /* verify=0 (check 0): the CRC comparisons are skipped, a wrong codec still fails */
        memset(back, 0, S);
        assert_int_equal(tagg_sfz_load_form(fd, S, S, 2 * S, form, crc ^ 1, 0, back, scratch, err, sizeof err), 0);
        assert_memory_equal(back, smooth, S);
        assert_int_equal(tagg_sfz_load_form(fd, S, S, 2 * S, TAGG_SFZ_FORM(enc % 4 + 1, TAGG_SFZ_FORM_STORED(form)), crc,
                                            0, back, scratch, err, sizeof err), -1);
        /* stripe 0: noise does not shrink: raw */
        assert_int_equal(tagg_sfz_put_whole(&z, fd, 0, noise, S, tagg_crc64(0, noise, S), &f2, err, sizeof err), 0);
        assert_int_equal(f2, 0);
        assert_int_equal(tagg_sf_pread_upto(fd, back, S, 0, UINT64_MAX), 0);
        assert_memory_equal(back, noise, S);
        assert_int_equal(tagg_sfz_slot_load(fd, 0, S, UINT64_MAX, back, scratch, &f2, err, sizeof err), 0);
        assert_int_equal(f2, 0);
        assert_int_equal(z.comp_stripes, 1);
        assert_int_equal(z.raw_stripes, 1);
        assert_int_equal(z.probe_raw, 0); /* a 16 KiB stripe is tried whole */
        /* the stored block, for the fuzz */
        size_t n = (size_t)TAGG_SFZ_FORM_STORED(form);
        assert_int_equal(tagg_sf_pread_upto(fd, blk, n, S, UINT64_MAX), 0);
        for (int it = 0; it < 3000; it++) {
            static unsigned char m[S];
            memcpy(m, blk, n);
            size_t mn = n;
            switch (xorshift(&r) % 4) {
            case 0: /* payload bytes */
                for (int k = 0; k < 1 + (int)(r >> 8) % 8; k++)
                    m[TAGG_SFZ_HDR + (r >> (16 + k)) % (n - TAGG_SFZ_HDR)] ^= (unsigned char)(1u << k);
                break;
            case 1: /* truncated */
                mn = TAGG_SFZ_HDR + (size_t)((r >> 8) % (n - TAGG_SFZ_HDR));
                break;
            case 2: /* a header field changed, the header CRC made valid again */
            {
                int at = 6 + (int)((r >> 8) % 26);
                m[at] ^= (unsigned char)(1u << ((r >> 20) % 8));
                uint64_t hc = tagg_crc64(0, m, 32);
                for (int b = 0; b < 8; b++)
                    m[32 + b] = (unsigned char)(hc >> (8 * b));
                break;
            }
            default: /* the header damaged */
                m[(r >> 8) % TAGG_SFZ_HDR] ^= 0x10;
            }
            int rc = tagg_sfz_decode(m, mn, back, S, err, sizeof err);
            if (rc == 0)
                assert_memory_equal(back, smooth, S); /* accepted: exactly the data (CRC-checked) */
            else
                assert_true(strlen(err) > 0);
        }
        /* partial write into the compressed stripe: expanded, then the piece */
        int expanded = 0;
        assert_int_equal(tagg_sfz_put_part(&z, fd, S, S, 100, "hello", 5, NULL, &expanded, err, sizeof err), 0);
        assert_int_equal(expanded, 1);
        assert_int_equal(tagg_sf_pread_upto(fd, back, S, S, UINT64_MAX), 0);
        assert_memory_equal(back + 100, "hello", 5);
        assert_memory_equal(back, smooth, 100);
        assert_memory_equal(back + 105, smooth + 105, S - 105);
        /* again: the slot is raw now, the piece goes in place */
        assert_int_equal(tagg_sfz_put_part(&z, fd, S, S, 200, "world", 5, NULL, &expanded, err, sizeof err), 0);
        assert_int_equal(expanded, 0);
        assert_int_equal(tagg_sf_pread_upto(fd, back, S, S, UINT64_MAX), 0);
        assert_memory_equal(back + 200, "world", 5);
        assert_memory_equal(back + 100, "hello", 5);
        /* a cut through a compressed stripe expands it first */
        assert_int_equal(tagg_sfz_put_whole(&z, fd, S, smooth, S, crc, &form, err, sizeof err), 0);
        assert_true(form != 0);
        assert_int_equal(tagg_sfz_expand(&z, fd, S, err, sizeof err), 0);
        assert_int_equal(tagg_sf_pread_upto(fd, back, S, S, UINT64_MAX), 0);
        assert_memory_equal(back, smooth, S);
        /* a damaged compressed slot: a partial write fails, nothing is written */
        assert_int_equal(tagg_sfz_put_whole(&z, fd, S, smooth, S, crc, &form, err, sizeof err), 0);
        unsigned char x = 0x5a;
        assert_int_equal(pwrite(fd, &x, 1, S + TAGG_SFZ_HDR + 3), 1);
        assert_int_equal(tagg_sfz_put_part(&z, fd, S, S, 100, "hello", 5, NULL, &expanded, err, sizeof err), -1);
        tagg_sfz_free(&z);
    }
    close(fd);
}

/* The opens: links are not followed, FIFOs and devices refused, a planted
 * link at a name to create is refused and its target untouched, node-local
 * directories must be private. */
static void test_safe_open(void **state)
{
    (void)state;
    char dir[] = "/tmp/tagg-sfsafe-XXXXXX", a[128], b[128], c[128], err[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/outside", dir);
    snprintf(b, sizeof b, "%s/link", dir);
    snprintf(c, sizeof c, "%s/fifo", dir);
    FILE *fp = fopen(a, "w");
    fputs("precious", fp);
    fclose(fp);
    assert_int_equal(symlink(a, b), 0);
    assert_int_equal(tagg_sf_open(b, O_RDWR, err, sizeof err), -1);
    assert_non_null(strstr(err, "symbolic link"));
    assert_int_equal(tagg_sf_create(b, err, sizeof err), -1);
    assert_non_null(strstr(err, "symbolic link"));
    struct stat st;
    assert_int_equal(stat(a, &st), 0);
    assert_int_equal(st.st_size, 8); /* untouched */
    assert_int_equal(mkfifo(c, 0600), 0);
    assert_int_equal(tagg_sf_open(c, O_RDONLY, err, sizeof err), -1); /* does not block */
    assert_non_null(strstr(err, "FIFO"));
    assert_int_equal(tagg_sf_open("/dev/zero", O_RDONLY, err, sizeof err), -1);
    assert_non_null(strstr(err, "character device"));
    int fd = tagg_sf_open(a, O_RDONLY, err, sizeof err);
    assert_true(fd >= 0);
    close(fd);
    /* create over a stale regular file: replaced, new and empty */
    fd = tagg_sf_create(a, err, sizeof err);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, 0);
    close(fd);
    /* node-local directories */
    char nvr[160], sub[256];
    snprintf(nvr, sizeof nvr, "%s/nvr", dir);
    mkdir(nvr, 0755);
    char *p = tagg_sf_path_nvr(nvr, "n0", "/pfs/a.h5", 0, 1);
    assert_int_equal(tagg_sf_nvr_dirs(p, 3, 1, err, sizeof err), 0);
    snprintf(sub, sizeof sub, "%s/tagg-%lu", nvr, (unsigned long)geteuid());
    assert_int_equal(stat(sub, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    chmod(sub, 0777); /* hostile: world-writable */
    assert_int_equal(tagg_sf_nvr_dirs(p, 3, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "writable by others"));
    chmod(sub, 0700);
    snprintf(sub, sizeof sub, "%s/tagg-%lu/n0", nvr, (unsigned long)geteuid());
    rmdir(sub);
    assert_int_equal(symlink(dir, sub), 0); /* the node directory a link */
    assert_int_equal(tagg_sf_nvr_dirs(p, 3, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "symbolic link"));
    unlink(sub);
    free(p);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stripe_map),
        cmocka_unit_test(test_crc64),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_index_finish),
        cmocka_unit_test(test_index_finish_kept),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_format2),
        cmocka_unit_test(test_path_rule),
        cmocka_unit_test(test_stripes),
        cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_safe_open),
        cmocka_unit_test(test_stripe_codec),
        cmocka_unit_test(test_stripe_probe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
