/* A raw stripe that looks compressed (layout=subfiles, compression):
 *
 *   test_sf_lookalike DIR        (2 ranks or more)
 *
 * Stripe 0's data begins with a valid compressed stripe of another content (a
 * tagg stripe header and its lz4 block, as sf_stripe_codec.c writes them),
 * followed by noise, so it does not shrink and is stored raw; stripe 1 is
 * compressible and stored compressed. A read-write open without compression
 * must then read stripe 0, and rewrite a piece of it, as the raw bytes the
 * index says they are, not decode the block they happen to hold; a fresh
 * read-only open checks every byte. Prints "N passed, M failed". */
#include "config.h"
#include "error.h"
#include "io.h"
#include "sf_stripe_codec.h"
#include "subfile_index.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { S = 8192 };

static int passed, failed;
static void check(int rank, int cond, const char *what)
{
    if (rank == 0)
        printf("%s: %s\n", cond ? "PASS" : "FAIL", what);
    cond ? passed++ : failed++;
}

static tagg_file_t *open_with(const char *path, unsigned flags, const char *conf)
{
    tagg_config_t cfg;
    char          err[512];
    if (tagg_config_build(&cfg, NULL, conf, err, sizeof err) < 0) {
        fprintf(stderr, "bad config '%s': %s\n", conf, err);
        return NULL;
    }
    tagg_file_t *f = tagg_file_open(path, flags, MPI_COMM_WORLD, MPI_INFO_NULL, &cfg);
    tagg_config_clear(&cfg);
    if (!f)
        H5Eprint2(H5E_DEFAULT, stderr);
    return f;
}

static int io(tagg_file_t *f, uint64_t off, uint64_t len, void *buf, int write)
{
    tagg_extents_t x;
    tagg_extents_init(&x);
    tagg_extents_push(&x, off, len, buf);
    int rc = write ? tagg_io_write(f, &x, TAGG_RAW, false) : tagg_io_read(f, &x, TAGG_RAW, false);
    tagg_extents_free(&x);
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
    static unsigned char smooth[S], image[S], back[2 * S];
    char                 path[4096], tmp[4200], err[512];
    snprintf(path, sizeof path, "%s/lookalike.bin", argv[1]);
    uint64_t r = 88172645463325252ULL;
    for (int i = 0; i < S; i++)
        smooth[i] = (unsigned char)(i / 64 * 7);

    /* the look-alike: a real compressed stripe of `smooth` (header + lz4 block), then noise */
    tagg_sfz_t z;
    uint64_t   form = 0;
    snprintf(tmp, sizeof tmp, "%s/lookalike-%d.tmp", argv[1], rank);
    FILE *t  = fopen(tmp, "w+");
    int   ok = t && tagg_sfz_init(&z, TAGG_SFZ_LZ4, NULL, S, err, sizeof err) == 0 &&
             tagg_sfz_put_whole(&z, fileno(t), 0, smooth, S, tagg_crc64(0, smooth, S), &form, err, sizeof err) == 0 &&
             form && pread(fileno(t), image, S, 0) == S;
    if (t)
        fclose(t), unlink(tmp), tagg_sfz_free(&z);
    for (size_t i = (size_t)TAGG_SFZ_FORM_STORED(form); ok && i < S; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        image[i] = (unsigned char)r;
    }
    unsigned enc;
    uint64_t lg, pl, crc;
    check(rank, ok && tagg_sfz_header(image, &enc, &lg, &pl, &crc) && lg == S, "stripe 0's data begins with a valid compressed stripe");

    /* written with compression=lz4: stripe 0 stays raw (noise), stripe 1 is compressed */
    tagg_file_t *f = open_with(path, TAGG_OPEN_RDWR | TAGG_OPEN_CREAT | TAGG_OPEN_TRUNC,
                               "layout=subfiles;stripe_size=8K;subfiles=2;compression=lz4");
    if (!f)
        return MPI_Abort(MPI_COMM_WORLD, 1), 1;
    ok = rank != 0 || (io(f, 0, S, image, 1) == 0 && io(f, S, S, smooth, 1) == 0);
    int stored[2] = {rank == 0 ? (int)f->stats.comp_raw : 0, rank == 0 ? (int)f->stats.comp_stripes : 0};
    ok = tagg_file_close(f) == 0 && ok;
    MPI_Bcast(stored, 2, MPI_INT, 0, MPI_COMM_WORLD);
    check(rank, ok && stored[0] == 1 && stored[1] == 1, "written: stripe 0 raw, stripe 1 compressed");

    /* a read-write open without compression: rank 1 reads stripe 0, then rewrites a piece of it */
    f = open_with(path, TAGG_OPEN_RDWR, "layout=subfiles");
    if (!f)
        return MPI_Abort(MPI_COMM_WORLD, 1), 1;
    int same = 1;
    if (rank == 1) {
        memset(back, 0, S);
        same = io(f, 0, S, back, 0) == 0 && memcmp(back, image, S) == 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    check(rank, same, "read-write open: stripe 0 reads as its raw bytes");
    memcpy(image + 1000, "hello", 5);
    ok = rank != 1 || io(f, 1000, 5, "hello", 1) == 0;
    ok = tagg_file_close(f) == 0 && ok;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    check(rank, ok, "read-write open: a piece of stripe 0 rewritten, closed (its checks pass)");

    /* a fresh read-only open: every byte */
    f = open_with(path, 0, "");
    if (!f)
        return MPI_Abort(MPI_COMM_WORLD, 1), 1;
    same = 1;
    if (rank == 0) {
        memset(back, 0, sizeof back);
        same = io(f, 0, 2 * S, back, 0) == 0 && memcmp(back, image, S) == 0 && memcmp(back + S, smooth, S) == 0;
    }
    ok = tagg_file_close(f) == 0;
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    check(rank, same && ok, "read-only open: stripe 0 holds its bytes and the piece, stripe 1 its data");
    if (rank == 0) {
        unlink(path);
        snprintf(tmp, sizeof tmp, "%s.tagg.0of2", path), unlink(tmp);
        snprintf(tmp, sizeof tmp, "%s.tagg.1of2", path), unlink(tmp);
        printf("%d passed, %d failed\n", passed, failed);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
