/* tagg-fuse: turns a file of tagg's subfile layout into one plain HDF5 file, or
 * checks one. No MPI, no HDF5: the index reader is core/src/subfile_index.c.
 *
 *   tagg-fuse IN OUT     writes the logical address space of IN to OUT, byte
 *                        for byte (stock HDF5 tools read OUT); checks every
 *                        subfile's size and CRC-64 on the way (each subfile is
 *                        read once, in order) and removes OUT when one differs
 *   tagg-fuse --check IN verifies the index's checksum, that the file was
 *                        closed, every subfile's presence, size and CRC-64
 *   tagg-fuse --drain IN node-local subfiles (destination=nvr, index format 2):
 *                        copies each beside IN with the metadata merged in,
 *                        replaces IN's index by an ordinary (format 1) one, then
 *                        removes the node-local subfiles and the metadata file.
 *                        Serial: it must see every node's node-local directory
 *                        (one host, as with emulated nodes, or directories
 *                        exported to it); otherwise drain with drain=close,
 *                        which runs on the nodes
 *
 * Format 2 files fuse and check like format 1 ones: the metadata file is
 * checked too and its bytes merged in (tagg_sf_overlay_meta).
 *
 * Exit status: 0 fine, 1 a problem with IN or OUT (each one printed), 2 usage. */
#include "subfile_index.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK ((uint64_t)4 << 20)

static const char *prog = "tagg-fuse";

static int usage(void)
{
    fprintf(stderr,
            "usage: %s IN OUT        write the subfiled file IN as one HDF5 file OUT\n"
            "       %s --check IN    verify IN's index, subfile sizes and checksums\n"
            "       %s --drain IN    copy IN's node-local subfiles (destination=nvr) beside it: an ordinary subfiled file\n"
            "IN is the file the application named (its index); the subfiles are beside it or node-local.\n",
            prog, prog, prog);
    return 2;
}

/* Reads the index; prints why not. */
static int load(const char *in, tagg_sf_index_t *ix)
{
    char err[1024];
    if (tagg_sf_index_read(in, ix, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    return 0;
}

static int check(const char *in)
{
    tagg_sf_index_t ix;
    int             problems = 0;
    uint64_t        end      = 0;
    if (load(in, &ix) < 0)
        return 1;
    if (!ix.closed) {
        fprintf(stderr, "%s: %s: NOT CLOSED: the index says a writer still has the file open (or crashed); "
                        "sizes and checksums are not final\n", prog, in);
        problems++;
    }
    for (uint32_t k = 0; k < ix.count; k++) {
        char       *p = tagg_sf_subfile_path(in, ix.sub[k].name), err[1024];
        struct stat st;
        uint64_t    size, crc;
        if (!p) {
            fprintf(stderr, "%s: out of memory\n", prog);
            return 1;
        }
        if (stat(p, &st) < 0) {
            fprintf(stderr, "%s: MISSING subfile %" PRIu32 " '%s': %s\n", prog, k, p, strerror(errno));
            problems++;
        }
        else if ((uint64_t)st.st_size != ix.sub[k].size) {
            fprintf(stderr, "%s: SIZE MISMATCH subfile %" PRIu32 " '%s': %" PRIu64 " bytes, the index records %" PRIu64 "\n",
                    prog, k, p, (uint64_t)st.st_size, ix.sub[k].size);
            problems++;
        }
        else if (tagg_sf_file_crc(p, &size, &crc, err, sizeof err) < 0) {
            fprintf(stderr, "%s: UNREADABLE subfile %" PRIu32 ": %s\n", prog, k, err);
            problems++;
        }
        else if (crc != ix.sub[k].crc || size != ix.sub[k].size) {
            fprintf(stderr, "%s: CHECKSUM MISMATCH subfile %" PRIu32 " '%s': crc64 %016" PRIx64 ", the index records %016" PRIx64 "\n",
                    prog, k, p, crc, ix.sub[k].crc);
            problems++;
        }
        uint64_t e = tagg_sf_logical_end(ix.sub[k].size, ix.stripe, ix.count, k);
        end        = e > end ? e : end;
        free(p);
    }
    if (ix.nvr) { /* the metadata file */
        char       *p = tagg_sf_subfile_path(in, ix.meta.name), err[1024];
        uint64_t    size, crc;
        if (!p || tagg_sf_file_crc(p, &size, &crc, err, sizeof err) < 0) {
            fprintf(stderr, "%s: MISSING metadata file: %s\n", prog, p ? err : "out of memory");
            problems++;
        }
        else if (size != ix.meta.size || crc != ix.meta.crc) {
            fprintf(stderr, "%s: %s metadata file '%s': %" PRIu64 " bytes crc64 %016" PRIx64 ", the index records %" PRIu64
                            " bytes crc64 %016" PRIx64 "\n", prog, size != ix.meta.size ? "SIZE MISMATCH" : "CHECKSUM MISMATCH",
                    p, size, crc, ix.meta.size, ix.meta.crc);
            problems++;
        }
        end = ix.meta.size > end ? ix.meta.size : end;
        free(p);
    }
    if (end != ix.logical_size) {
        fprintf(stderr, "%s: %s: INCONSISTENT index: subfile sizes make %" PRIu64 " bytes, logical_size is %" PRIu64 "\n",
                prog, in, end, ix.logical_size);
        problems++;
    }
    if (!problems)
        printf("%s: %s: OK: %" PRIu32 " %ssubfiles, stripe %" PRIu64 " bytes, %" PRIu64 " bytes of HDF5 data, checksums match\n",
               prog, in, ix.count, ix.nvr ? "node-local " : "", ix.stripe, ix.logical_size);
    else
        fprintf(stderr, "%s: %s: %d problem%s found\n", prog, in, problems, problems > 1 ? "s" : "");
    tagg_sf_index_free(&ix);
    return problems ? 1 : 0;
}

/* Full write, or -1 with errno. */
static int put(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return -1;
        }
        buf += w, n -= (size_t)w;
    }
    return 0;
}

static int fuse(const char *in, const char *out)
{
    tagg_sf_index_t ix;
    int             rc = 1, ofd = -1, *fds = NULL, mfd = -1;
    uint64_t       *got = NULL, *crc = NULL;
    char           *buf = NULL;
    if (load(in, &ix) < 0)
        return 1;
    if (!ix.closed) {
        fprintf(stderr, "%s: %s was not closed (its index says a writer has it open); not fusing\n", prog, in);
        goto done;
    }
    fds = malloc(ix.count * sizeof *fds);
    got = calloc(ix.count, sizeof *got);
    crc = calloc(ix.count, sizeof *crc);
    buf = malloc(CHUNK);
    if (!fds || !got || !crc || !buf) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto done;
    }
    for (uint32_t k = 0; k < ix.count; k++)
        fds[k] = -1;
    for (uint32_t k = 0; k < ix.count; k++) {
        char *p = tagg_sf_subfile_path(in, ix.sub[k].name);
        if (!p || (fds[k] = open(p, O_RDONLY)) < 0) {
            fprintf(stderr, "%s: MISSING subfile %" PRIu32 " '%s': %s\n", prog, k, p ? p : "?", strerror(errno));
            free(p);
            goto done;
        }
        free(p);
    }
    if (ix.nvr) {
        char    *p = tagg_sf_subfile_path(in, ix.meta.name), err[1024];
        uint64_t size, crc;
        if (!p || tagg_sf_file_crc(p, &size, &crc, err, sizeof err) < 0 || (mfd = open(p, O_RDONLY)) < 0) {
            fprintf(stderr, "%s: MISSING metadata file '%s': %s\n", prog, p ? p : "?", strerror(errno));
            free(p);
            goto done;
        }
        free(p);
        if (size != ix.meta.size || crc != ix.meta.crc) {
            fprintf(stderr, "%s: CHECKSUM MISMATCH metadata file of %s\n", prog, in);
            goto done;
        }
    }
    struct stat os, is;
    if (stat(out, &os) == 0) { /* never overwrite the input */
        int same = stat(in, &is) == 0 && is.st_dev == os.st_dev && is.st_ino == os.st_ino;
        for (uint32_t k = 0; k < ix.count && !same; k++)
            same = fstat(fds[k], &is) == 0 && is.st_dev == os.st_dev && is.st_ino == os.st_ino;
        if (same) {
            fprintf(stderr, "%s: OUT '%s' is IN or one of its subfiles\n", prog, out);
            goto done;
        }
    }
    if ((ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0) {
        fprintf(stderr, "%s: cannot create '%s': %s\n", prog, out, strerror(errno));
        goto done;
    }
    /* Stripe by stripe in logical order: each subfile is read front to back,
     * so its checksum accumulates along the way. */
    for (uint64_t off = 0; off < ix.logical_size;) {
        uint32_t k;
        uint64_t local, n = ix.stripe - off % ix.stripe;
        if (n > CHUNK)
            n = CHUNK;
        if (n > ix.logical_size - off)
            n = ix.logical_size - off;
        tagg_sf_locate(off, ix.stripe, ix.count, &k, &local);
        ssize_t r;
        do
            r = pread(fds[k], buf, (size_t)n, (off_t)local);
        while (r < 0 && errno == EINTR);
        if (r < 0) {
            fprintf(stderr, "%s: reading subfile '%s' at %" PRIu64 ": %s\n", prog, ix.sub[k].name, local, strerror(errno));
            goto done;
        }
        if (r > 0 && local == got[k]) {
            crc[k] = tagg_crc64(crc[k], buf, (size_t)r);
            got[k] += (uint64_t)r;
        }
        memset(buf + r, 0, (size_t)(n - (uint64_t)r)); /* a short subfile reads as zeros, as through tagg */
        char err[1024];
        if (mfd >= 0 && tagg_sf_overlay_meta(mfd, off, buf, (size_t)n, err, sizeof err) < 0) {
            fprintf(stderr, "%s: %s\n", prog, err);
            goto done;
        }
        if (put(ofd, buf, (size_t)n) < 0) {
            fprintf(stderr, "%s: writing '%s' at %" PRIu64 ": %s\n", prog, out, off, strerror(errno));
            goto done;
        }
        off += n;
    }
    if (fsync(ofd) < 0 || close(ofd) < 0) {
        ofd = -1;
        fprintf(stderr, "%s: writing '%s': %s\n", prog, out, strerror(errno));
        goto done;
    }
    ofd = -1;
    rc  = 0;
    for (uint32_t k = 0; k < ix.count; k++)
        if (got[k] != ix.sub[k].size || crc[k] != ix.sub[k].crc) {
            fprintf(stderr, "%s: %s subfile %" PRIu32 " '%s' (read %" PRIu64 " bytes crc64 %016" PRIx64
                            ", the index records %" PRIu64 " bytes crc64 %016" PRIx64 ")\n",
                    prog, got[k] != ix.sub[k].size ? "SIZE MISMATCH" : "CHECKSUM MISMATCH", k, ix.sub[k].name,
                    got[k], crc[k], ix.sub[k].size, ix.sub[k].crc);
            rc = 1;
        }
    if (rc) {
        fprintf(stderr, "%s: '%s' removed: its data would not be what was written\n", prog, out);
        unlink(out);
    }
    else
        printf("%s: %s -> %s: %" PRIu64 " bytes from %" PRIu32 " subfiles, checksums match\n", prog, in, out,
               ix.logical_size, ix.count);
done:
    if (ofd >= 0) {
        close(ofd);
        unlink(out);
    }
    for (uint32_t k = 0; fds && k < ix.count; k++)
        if (fds[k] >= 0)
            close(fds[k]);
    if (mfd >= 0)
        close(mfd);
    free(fds), free(got), free(crc), free(buf);
    tagg_sf_index_free(&ix);
    return rc;
}

/* Serial drain of a format 2 file (see the top of this file). */
static int drain(const char *in)
{
    tagg_sf_index_t ix, nx;
    char            err[1024], *mp = NULL, **out = NULL;
    int             rc = 1, mfd = -1;
    memset(&nx, 0, sizeof nx);
    if (load(in, &ix) < 0)
        return 1;
    if (!ix.nvr) {
        fprintf(stderr, "%s: %s has no node-local subfiles (not destination=nvr): nothing to drain\n", prog, in);
        goto done;
    }
    if (!ix.closed) {
        fprintf(stderr, "%s: %s was not closed (its index says a writer has it open); not draining\n", prog, in);
        goto done;
    }
    if (!(mp = tagg_sf_subfile_path(in, ix.meta.name)) || !(out = calloc(ix.count, sizeof *out)) ||
        tagg_sf_index_init(&nx, ix.stripe, ix.count) < 0) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto done;
    }
    if ((mfd = open(mp, O_RDONLY)) < 0) {
        fprintf(stderr, "%s: MISSING metadata file '%s': %s\n", prog, mp, strerror(errno));
        goto done;
    }
    nx.closed       = 1;
    nx.logical_size = ix.logical_size;
    for (uint32_t k = 0; k < ix.count; k++) {
        if (!(nx.sub[k].name = tagg_sf_default_name(in, k, ix.count)) || !(out[k] = tagg_sf_subfile_path(in, nx.sub[k].name))) {
            fprintf(stderr, "%s: out of memory\n", prog);
            goto undo;
        }
        if (tagg_sf_drain_one(in, &ix, k, mfd, out[k], &nx.sub[k].size, &nx.sub[k].crc, err, sizeof err) < 0) {
            fprintf(stderr, "%s: %s\n", prog, err);
            goto undo;
        }
    }
    if (tagg_sf_index_write(in, &nx, 1, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        goto undo;
    }
    for (uint32_t k = 0; k < ix.count; k++) {
        char *p = tagg_sf_subfile_path(in, ix.sub[k].name);
        if (p && unlink(p) < 0)
            fprintf(stderr, "%s: warning: cannot remove node-local subfile '%s': %s\n", prog, p, strerror(errno));
        free(p);
    }
    unlink(mp);
    printf("%s: %s: drained %" PRIu32 " node-local subfiles beside it (%" PRIu64 " bytes of HDF5 data)\n", prog, in,
           ix.count, ix.logical_size);
    rc = 0;
    goto done;
undo: /* the node-local file stays as it was */
    for (uint32_t k = 0; k < ix.count; k++)
        if (out && out[k])
            unlink(out[k]);
done:
    for (uint32_t k = 0; out && k < ix.count; k++)
        free(out[k]);
    if (mfd >= 0)
        close(mfd);
    free(out), free(mp);
    tagg_sf_index_free(&nx);
    tagg_sf_index_free(&ix);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--check"))
        return check(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "--drain"))
        return drain(argv[2]);
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage();
        return 0;
    }
    if (argc != 3 || argv[1][0] == '-')
        return usage();
    return fuse(argv[1], argv[2]);
}
