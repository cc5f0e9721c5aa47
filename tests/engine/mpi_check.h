/* What the core-level MPI tests share (test_reuse.c, test_wbehind.c,
 * test_speculate.c): a check every rank agrees on, a field of tagg's summary
 * file, opening a file with a configuration, a file against its image. Include
 * after config.h and io.h. */
#ifndef TAGG_TEST_MPI_CHECK_H
#define TAGG_TEST_MPI_CHECK_H

#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nranks, passed, failed;

/* Passes only when ok on every rank; rank 0 prints PASS or FAIL and what. */
static void check(int ok, const char *what)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %s\n", all ? "PASS" : "FAIL", what);
    all ? passed++ : failed++;
}

/* The value of key ("name=") in the last summary line of path that has it; -1
 * when none has. */
static long summary_field(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    char  line[4096];
    long  v = -1;
    while (f && fgets(line, sizeof line, f)) {
        char *p = strstr(line, key);
        if (p && strstr(line, "raw_write_bytes="))
            v = strtol(p + strlen(key), NULL, 10);
    }
    if (f)
        fclose(f);
    return v;
}

/* full = cfgtext with summary=sum, sum removed first (rank 0) before any rank opens. */
static void with_summary(char *full, size_t len, const char *cfgtext, const char *sum)
{
    snprintf(full, len, "%s;summary=%s", cfgtext, sum);
    if (rank == 0)
        unlink(sum);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Builds cfg from cfgtext and opens path (core API); a failure aborts the job. */
static tagg_file_t *open_file(const char *path, const char *cfgtext, unsigned flags, tagg_config_t *cfg)
{
    char err[1024];
    if (tagg_config_build(cfg, NULL, cfgtext, err, sizeof err) < 0) {
        fprintf(stderr, "config: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tagg_file_t *f = tagg_file_open(path, flags, MPI_COMM_WORLD, MPI_INFO_NULL, cfg);
    if (!f) {
        fprintf(stderr, "rank %d: open of %s failed\n", rank, path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return f;
}

/* The file at path (read with POSIX) equals img[0, size): its bytes are the
 * image's, and any part of the image past the file's end is zero. */
static inline int file_is_image(const char *path, const unsigned char *img, uint64_t size)
{
    unsigned char *got = calloc(size ? size : 1, 1);
    int            fd  = open(path, O_RDONLY);
    ssize_t        n   = fd >= 0 && got ? pread(fd, got, size, 0) : -1;
    if (fd >= 0)
        close(fd);
    int ok = n > 0 && memcmp(img, got, (size_t)n) == 0;
    for (ssize_t i = n; ok && i < (ssize_t)size; i++)
        ok = img[i] == 0;
    free(got);
    return ok;
}

#endif
