/* What the core-level MPI tests share (test_reuse.c, test_wbehind.c): a check
 * every rank agrees on, and a field of tagg's summary file. */
#ifndef TAGG_TEST_MPI_CHECK_H
#define TAGG_TEST_MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif
