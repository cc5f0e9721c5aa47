/* A read-only open's kept covers (rcache.h) through the file layer:
 *
 *   test_rcache_open DIR        (2 ranks or more)
 *
 * Rank 0 writes a file of the shared layout (direct_io=on, direct_io_min=64K,
 * so the kept covers are on: the build tree is not FUSE); then a read-only
 * open reads 1 MiB at an odd offset twice and pieces inside it (served from
 * its cover: rc_reads[0] > 0, one cover read), and reads under 64 KiB are not
 * for the cache; every byte checked. While that open stays open, a read-write
 * open changes the bytes: a SWMR reader's open (TAGG_OPEN_SWMR_READ, HDF5's
 * H5F_ACC_SWMR_READ) keeps nothing and reads the new bytes; a read-write open
 * keeps nothing either. Prints "N passed, M failed". */
#include "config.h"
#include "error.h"
#include "io.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1u << 20)
enum { SIZE = 3 * MiB + 777 };

static int passed, failed;
static void check(int rank, int cond, const char *what)
{
    int all = 0;
    MPI_Allreduce(&cond, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %s\n", all ? "PASS" : "FAIL", what);
    all ? passed++ : failed++;
}

static tagg_file_t *open_with(const char *path, unsigned flags)
{
    tagg_config_t cfg;
    char          err[512];
    if (tagg_config_build(&cfg, NULL, "direct_io=on;direct_io_min=64K", err, sizeof err) < 0) {
        fprintf(stderr, "bad config: %s\n", err);
        return NULL;
    }
    tagg_file_t *f = tagg_file_open(path, flags, MPI_COMM_WORLD, MPI_INFO_NULL, &cfg);
    tagg_config_clear(&cfg);
    if (!f)
        H5Eprint2(H5E_DEFAULT, stderr);
    return f;
}

/* Independent: [off, off + len) of f on this rank, compared with want. */
static int read_is(tagg_file_t *f, uint64_t off, uint64_t len, const unsigned char *want)
{
    unsigned char *buf = malloc(len);
    tagg_extents_t x;
    tagg_extents_init(&x);
    tagg_extents_push(&x, off, len, buf);
    int rc = tagg_io_read(f, &x, TAGG_RAW, false);
    tagg_extents_free(&x);
    if (rc < 0)
        H5Eprint2(H5E_DEFAULT, stderr);
    int same = rc == 0 && memcmp(buf, want + off, len) == 0;
    free(buf);
    return same;
}

static int write_all(tagg_file_t *f, const unsigned char *image, int rank)
{
    tagg_extents_t x;
    tagg_extents_init(&x);
    if (rank == 0)
        tagg_extents_push(&x, 0, SIZE, (void *)image);
    int rc = tagg_io_write(f, &x, TAGG_RAW, true);
    tagg_extents_free(&x);
    if (rc == 0)
        rc = tagg_file_sync(f);
    if (rc < 0)
        H5Eprint2(H5E_DEFAULT, stderr);
    return rc;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 %s DIR\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/rcache-open.bin", argv[1]);
    unsigned char *old = malloc(SIZE), *cur = malloc(SIZE);
    for (uint32_t i = 0; i < SIZE; i++)
        old[i] = (unsigned char)(i * 2654435761u >> 11), cur[i] = (unsigned char)~old[i];

    tagg_file_t *w = open_with(path, TAGG_OPEN_RDWR | TAGG_OPEN_CREAT | TAGG_OPEN_TRUNC);
    check(rank, w && write_all(w, old, rank) == 0, "the file written");
    check(rank, w && w->stats.rc_reads[0] == 0 && w->stats.rc_reads[1] == 0, "a read-write open keeps no cover");
    if (w)
        tagg_file_close(w);

    /* a read-only open: HDF5's 1 MiB reads at an odd offset, again and in pieces */
    uint64_t     off = MiB + 2384;
    tagg_file_t *r   = open_with(path, 0);
    int          ok  = r != NULL;
    ok = ok && read_is(r, off, MiB, old) && read_is(r, off, MiB, old) && read_is(r, off + 4096, 512 * 1024, old) &&
         read_is(r, MiB, 100000, old) && read_is(r, 5, 1000, old) && read_is(r, SIZE - 70000, 70000, old);
    check(rank, ok, "read-only open: every byte as written");
    check(rank, r && r->stats.rc_reads[0] == 3 && r->stats.rc_reads[1] == 2,
          "read-only open: 3 reads from 2 kept covers (the 1 MiB read again, two pieces in it; the file's end)");

    /* a SWMR reader beside it; then the bytes change */
    tagg_file_t *sw = open_with(path, TAGG_OPEN_SWMR_READ);
    ok              = sw && read_is(sw, off, MiB, old) && read_is(sw, off, MiB, old);
    w               = open_with(path, TAGG_OPEN_RDWR);
    check(rank, w && write_all(w, cur, rank) == 0, "the bytes changed by a read-write open");
    if (w)
        tagg_file_close(w);
    MPI_Barrier(MPI_COMM_WORLD);
    ok = ok && read_is(sw, off, MiB, cur) && read_is(sw, off + 4096, 512 * 1024, cur);
    check(rank, ok, "SWMR reader: its re-reads see the new bytes");
    check(rank, sw && sw->stats.rc_reads[0] == 0 && sw->stats.rc_reads[1] == 0, "SWMR reader: no cover kept");
    if (sw)
        tagg_file_close(sw);
    if (r)
        tagg_file_close(r);
    if (rank == 0)
        remove(path);
    free(old), free(cur);
    if (rank == 0)
        printf("%d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
