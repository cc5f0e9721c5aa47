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
 * Format 3 files are checked and fused stripe by stripe, each against its
 * CRC-64 (holes: zeros). Format 2 files fuse and check like format 1 ones: the
 * metadata file is checked too and its bytes merged in. Every file is opened
 * by the path rule (sf_path.h): derived names only, never through a symbolic
 * link, regular files only, never read past the size the index records.
 *
 * Exit status: 0 fine, 1 a problem with IN or OUT (each one printed), 2 usage. */
#include "subfile_index.h"
#include "sf_stripe_codec.h"
#include "sf_path.h"

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

/* Opens every subfile (and the metadata file) of ix safely: derived paths
 * only, no links, regular files; reports each problem. fds[k] = -1 when not. */
static int open_all(const char *in, const tagg_sf_index_t *ix, int *fds, int *mfd)
{
    int problems = 0;
    for (uint32_t k = 0; k < ix->count; k++) {
        char *p = tagg_sf_path_of(in, ix, k), err[1024];
        fds[k]  = -1;
        if (!p) {
            fprintf(stderr, "%s: out of memory\n", prog);
            return -1;
        }
        if (ix->nvr && tagg_sf_nvr_dirs(p, ix->version, 0, err, sizeof err) < 0) {
            fprintf(stderr, "%s: REFUSED subfile %" PRIu32 ": %s\n", prog, k, err);
            problems++;
        }
        else if ((fds[k] = tagg_sf_open(p, O_RDONLY, err, sizeof err)) < 0) {
            fprintf(stderr, "%s: %s subfile %" PRIu32 " '%s': %s\n", prog, errno == ENOENT ? "MISSING" : "REFUSED", k, p,
                    err);
            problems++;
        }
        free(p);
    }
    *mfd = -1;
    if (ix->nvr) {
        char *p = tagg_sf_path_meta(in), err[1024];
        if (!p || (*mfd = tagg_sf_open(p, O_RDONLY, err, sizeof err)) < 0) {
            fprintf(stderr, "%s: MISSING metadata file: %s\n", prog, p ? err : "out of memory");
            problems++;
        }
        free(p);
    }
    return problems;
}

static void close_all(const tagg_sf_index_t *ix, int *fds, int mfd)
{
    for (uint32_t k = 0; fds && k < ix->count; k++)
        if (fds[k] >= 0)
            close(fds[k]);
    if (mfd >= 0)
        close(mfd);
}

/* Formats 1, 2: the whole file's size and CRC-64 (at most its recorded size is read). */
static int whole_crc(int fd, uint64_t size, uint64_t *crc)
{
    char    *buf = malloc(CHUNK);
    uint64_t c   = 0;
    if (!buf)
        return -1;
    for (uint64_t at = 0; at < size;) {
        size_t n = size - at < CHUNK ? (size_t)(size - at) : (size_t)CHUNK;
        if (tagg_sf_pread_upto(fd, buf, n, at, size) < 0) {
            free(buf);
            return -1;
        }
        c = tagg_crc64(c, buf, n);
        at += n;
    }
    free(buf);
    *crc = c;
    return 0;
}

static int check(const char *in)
{
    tagg_sf_index_t ix;
    int             problems = 0, mfd = -1, *fds = NULL;
    uint64_t        end      = 0;
    char           *buf      = NULL;
    if (load(in, &ix) < 0)
        return 1;
    if (!ix.closed) {
        fprintf(stderr, "%s: %s: NOT CLOSED: the index says 'state open': a writer still has the file open, or crashed "
                        "or failed; sizes and checksums are not final. Save what it holds with a read-only open and "
                        "salvage=1, or with the writer's own output\n", prog, in);
        problems++;
    }
    if (!(fds = malloc(ix.count * sizeof *fds)) || !(buf = malloc((size_t)ix.stripe))) {
        fprintf(stderr, "%s: out of memory\n", prog);
        free(fds), free(buf);
        tagg_sf_index_free(&ix);
        return 1;
    }
    int opened = open_all(in, &ix, fds, &mfd);
    if (opened < 0)
        problems++;
    else
        problems += opened;
    for (uint32_t k = 0; k < ix.count; k++) {
        struct stat st;
        char       *p = tagg_sf_path_of(in, &ix, k);
        if (fds[k] >= 0 && fstat(fds[k], &st) == 0 && (uint64_t)st.st_size != ix.sub[k].size) {
            fprintf(stderr, "%s: SIZE MISMATCH subfile %" PRIu32 " '%s': %" PRIu64 " bytes, the index records %" PRIu64 "\n",
                    prog, k, p ? p : "?", (uint64_t)st.st_size, ix.sub[k].size);
            problems++;
        }
        else if (fds[k] >= 0 && ix.version < TAGG_SF_VERSION_3) {
            uint64_t crc;
            if (whole_crc(fds[k], ix.sub[k].size, &crc) < 0) {
                fprintf(stderr, "%s: UNREADABLE subfile %" PRIu32 " '%s': %s\n", prog, k, p ? p : "?", strerror(errno));
                problems++;
            }
            else if (crc != ix.sub[k].crc) {
                fprintf(stderr, "%s: CHECKSUM MISMATCH subfile %" PRIu32 " '%s': crc64 %016" PRIx64 ", the index records %016" PRIx64 "\n",
                        prog, k, p ? p : "?", crc, ix.sub[k].crc);
                problems++;
            }
        }
        free(p);
        uint64_t e = tagg_sf_logical_end(ix.sub[k].size, ix.stripe, ix.count, k);
        end        = e > end ? e : end;
    }
    if (ix.nvr && mfd >= 0 && ix.version < TAGG_SF_VERSION_3) { /* format 2: the metadata file whole */
        uint64_t    crc;
        struct stat st;
        if (fstat(mfd, &st) < 0 || (uint64_t)st.st_size != ix.meta.size || whole_crc(mfd, ix.meta.size, &crc) < 0 ||
            crc != ix.meta.crc) {
            fprintf(stderr, "%s: CHECKSUM MISMATCH metadata file of %s (or its size differs from the index's)\n", prog, in);
            problems++;
        }
    }
    if (ix.nvr)
        end = ix.meta.size > end ? ix.meta.size : end;
    /* format 3: every stripe against its record (holes: zeros) */
    if (ix.version >= TAGG_SF_VERSION_3 && ix.closed && !opened) {
        uint64_t nstripes = ix.logical_size / ix.stripe + (ix.logical_size % ix.stripe != 0), bad = 0;
        for (uint64_t j = 0; j < nstripes; j++) {
            char err[1024];
            if (tagg_sf_read_stripe(in, &ix, fds, mfd, j, buf, err, sizeof err) < 0) {
                if (bad++ < 10)
                    fprintf(stderr, "%s: %s\n", prog, err);
                problems++;
            }
        }
        if (bad > 10)
            fprintf(stderr, "%s: ... %" PRIu64 " damaged stripes in all\n", prog, bad);
    }
    if (end != ix.logical_size) {
        fprintf(stderr, "%s: %s: INCONSISTENT index: subfile sizes make %" PRIu64 " bytes, logical_size is %" PRIu64 "\n",
                prog, in, end, ix.logical_size);
        problems++;
    }
    if (!problems) {
        printf("%s: %s: OK: %" PRIu32 " %ssubfiles, stripe %" PRIu64 " bytes, %" PRIu64
               " bytes of HDF5 data, index format %u, checksums match\n",
               prog, in, ix.count, ix.nvr ? "node-local " : "", ix.stripe, ix.logical_size, ix.version);
        uint64_t nz = 0, zs = 0; /* compressed stripes (issue 15) */
        for (uint64_t i = 0; i < ix.nst; i++)
            if (ix.st[i].form)
                nz++, zs += TAGG_SFZ_FORM_STORED(ix.st[i].form);
        if (nz)
            printf("%s: %s: %" PRIu64 " of %" PRIu64 " written stripes compressed: %" PRIu64 " stored bytes for %" PRIu64
                   " logical bytes (ratio %.4f)\n",
                   prog, in, nz, ix.nst, zs, nz * ix.stripe, (double)zs / (double)(nz * ix.stripe));
    }
    else
        fprintf(stderr, "%s: %s: %d problem%s found\n", prog, in, problems, problems > 1 ? "s" : "");
    close_all(&ix, fds, mfd);
    free(fds), free(buf);
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
    if (open_all(in, &ix, fds, &mfd) != 0)
        goto done;
    if (ix.nvr && ix.version < TAGG_SF_VERSION_3) {
        uint64_t    c;
        struct stat st;
        if (fstat(mfd, &st) < 0 || (uint64_t)st.st_size != ix.meta.size || whole_crc(mfd, ix.meta.size, &c) < 0 ||
            c != ix.meta.crc) {
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
    if (ix.version >= TAGG_SF_VERSION_3) { /* stripe by stripe, each verified */
        if (ix.stripe > CHUNK && !(buf = realloc(buf, (size_t)ix.stripe))) {
            fprintf(stderr, "%s: out of memory\n", prog);
            goto done;
        }
        uint64_t nstripes = ix.logical_size / ix.stripe + (ix.logical_size % ix.stripe != 0);
        for (uint64_t j = 0; j < nstripes; j++) {
            char     err[1024];
            uint64_t len = tagg_sf_stripe_len(ix.logical_size, ix.stripe, j);
            if (tagg_sf_read_stripe(in, &ix, fds, mfd, j, buf, err, sizeof err) < 0) {
                fprintf(stderr, "%s: %s\n%s: '%s' removed: its data would not be what was written\n", prog, err, prog, out);
                goto done;
            }
            if (tagg_sf_all_zero(buf, (size_t)len)) /* a hole stays one */
                continue;
            if (tagg_sf_pwrite_all(ofd, buf, (size_t)len, j * ix.stripe) < 0) { /* ENOSPC: a write wrote nothing */
                fprintf(stderr, "%s: writing '%s': %s\n", prog, out, strerror(errno));
                goto done;
            }
        }
        if (ftruncate(ofd, (off_t)ix.logical_size) < 0 || fsync(ofd) < 0 || close(ofd) < 0) {
            ofd = -1;
            fprintf(stderr, "%s: writing '%s': %s\n", prog, out, strerror(errno));
            goto done;
        }
        ofd = -1;
        rc  = 0;
        printf("%s: %s -> %s: %" PRIu64 " bytes from %" PRIu32 " subfiles, checksums match\n", prog, in, out,
               ix.logical_size, ix.count);
        goto done;
    }
    /* Formats 1, 2: stripe by stripe in logical order: each subfile is read
     * front to back, so its checksum accumulates along the way. */
    for (uint64_t off = 0; off < ix.logical_size;) {
        uint32_t k;
        uint64_t local, n = ix.stripe - off % ix.stripe;
        if (n > CHUNK)
            n = CHUNK;
        if (n > ix.logical_size - off)
            n = ix.logical_size - off;
        tagg_sf_locate(off, ix.stripe, ix.count, &k, &local);
        ssize_t r;
        uint64_t lim = local >= ix.sub[k].size ? 0 : ix.sub[k].size - local; /* never past the recorded size */
        do
            r = pread(fds[k], buf, (size_t)(n < lim ? n : lim), (off_t)local);
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
    if (fds)
        close_all(&ix, fds, mfd);
    free(fds), free(got), free(crc), free(buf);
    tagg_sf_index_free(&ix);
    return rc;
}

/* Serial drain of a node-local file (see the top of this file). */
static int drain(const char *in)
{
    tagg_sf_index_t   ix, nx;
    tagg_sf_stripe_t *st = NULL;
    uint64_t          nst = 0;
    char              err[1024], *mp = NULL, **out = NULL;
    int               rc = 1, mfd = -1;
    memset(&nx, 0, sizeof nx);
    if (load(in, &ix) < 0)
        return 1;
    if (!ix.nvr) {
        fprintf(stderr, "%s: %s has no node-local subfiles (not destination=nvr): nothing to drain\n", prog, in);
        goto done;
    }
    if (!ix.closed) {
        fprintf(stderr, "%s: %s was not closed (its index says 'state open'); not draining\n", prog, in);
        goto done;
    }
    if (!(mp = tagg_sf_path_meta(in)) || !(out = calloc(ix.count, sizeof *out)) ||
        tagg_sf_index_init(&nx, ix.stripe, ix.count) < 0) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto done;
    }
    if ((mfd = tagg_sf_open(mp, O_RDONLY, err, sizeof err)) < 0) {
        fprintf(stderr, "%s: MISSING metadata file: %s\n", prog, err);
        goto done;
    }
    if (ix.version < TAGG_SF_VERSION_3) {
        uint64_t    c;
        struct stat sb;
        if (fstat(mfd, &sb) < 0 || (uint64_t)sb.st_size != ix.meta.size || whole_crc(mfd, ix.meta.size, &c) < 0 ||
            c != ix.meta.crc) {
            fprintf(stderr, "%s: CHECKSUM MISMATCH metadata file of %s\n", prog, in);
            goto done;
        }
    }
    nx.closed       = 1;
    nx.logical_size = ix.logical_size;
    for (uint32_t k = 0; k < ix.count; k++) {
        if (!(nx.sub[k].name = tagg_sf_default_name(in, k, ix.count)) || !(out[k] = tagg_sf_path_beside(in, k, ix.count))) {
            fprintf(stderr, "%s: out of memory\n", prog);
            goto undo;
        }
        if (tagg_sf_drain_one(in, &ix, k, mfd, out[k], &nx.sub[k].size, &st, &nst, err, sizeof err) < 0) {
            fprintf(stderr, "%s: %s\n", prog, err);
            goto undo;
        }
    }
    tagg_sf_stripes_sort(st, nst);
    nx.st = st, nx.nst = nst, st = NULL;
    if (tagg_sf_index_write(in, &nx, 1, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        goto undo;
    }
    for (uint32_t k = 0; k < ix.count; k++) {
        char *p = tagg_sf_path_of(in, &ix, k);
        if (p && tagg_sf_remove(p, err, sizeof err) < 0)
            fprintf(stderr, "%s: warning: %s\n", prog, err);
        free(p);
    }
    tagg_sf_remove(mp, NULL, 0);
    printf("%s: %s: drained %" PRIu32 " node-local subfiles beside it (%" PRIu64 " bytes of HDF5 data)\n", prog, in,
           ix.count, ix.logical_size);
    rc = 0;
    goto done;
undo: /* the node-local file stays as it was */
    for (uint32_t k = 0; k < ix.count; k++)
        if (out && out[k])
            tagg_sf_remove(out[k], NULL, 0);
done:
    for (uint32_t k = 0; out && k < ix.count; k++)
        free(out[k]);
    if (mfd >= 0)
        close(mfd);
    free(out), free(mp), free(st);
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
