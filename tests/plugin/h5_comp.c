/* Compression through HDF5 (issue 15): datasets shaped like the seeds'
 * kernels, large enough to fill many stripes, written collectively in blocks
 * by every rank, so that aggregators write whole stripes.
 *
 *   h5_comp FILE mpio|default write   NPART   create and write (then reads back)
 *   h5_comp FILE mpio|default rewrite NPART   open read-write: partial rewrites
 *                                             (independent, by every rank, several
 *                                             in one stripe) and a new attribute
 *   h5_comp FILE mpio|default verify  NPART   read-only, any number of ranks: every
 *                                             element (rewritten ones when the
 *                                             attribute "rewritten" exists)
 *
 * Datasets of NPART elements each: "ids" int64 sequential (HACC's particle ids),
 * "x" float32 clustered positions (HACC), "temp" float64 smooth field (S3D),
 * "noise" uint32 from a hash (incompressible: stored raw). Prints
 * "failures=N" and exits non-zero on any difference. */
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31, x *= 0x7fb5d329728ea185ULL, x ^= x >> 27, x *= 0x81dadef4bc2dd44dULL, x ^= x >> 33;
    return x;
}

/* Element i of dataset d, as a double (exact in each type); gen 1: rewritten. */
static double value(int d, uint64_t i, int gen)
{
    switch (d) {
        case 0: return (double)(i + (gen ? 1000000000ULL : 0));
        case 1: return (double)(float)((double)(i / 4096) * 8.0 + (double)(mix(i) % 1024) / 512.0 + gen);
        case 2: return 300.0 + 50.0 * sin((double)i * 1e-4) + 10.0 * cos((double)i * 3e-3) + gen;
        default: return (double)(uint32_t)(mix(i * 3 + (uint64_t)gen));
    }
}
static const char *names[4] = {"ids", "x", "temp", "noise"};
static hid_t       mtype(int d)
{
    return d == 0 ? H5T_NATIVE_INT64 : d == 1 ? H5T_NATIVE_FLOAT : d == 2 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_UINT32;
}
static void   put(int d, void *buf, uint64_t k, double v)
{
    if (d == 0)
        ((int64_t *)buf)[k] = (int64_t)v;
    else if (d == 1)
        ((float *)buf)[k] = (float)v;
    else if (d == 2)
        ((double *)buf)[k] = v;
    else
        ((uint32_t *)buf)[k] = (uint32_t)v;
}
static double get(int d, const void *buf, uint64_t k)
{
    return d == 0 ? (double)((const int64_t *)buf)[k] : d == 1 ? (double)((const float *)buf)[k]
                                                     : d == 2 ? ((const double *)buf)[k]
                                                              : (double)((const uint32_t *)buf)[k];
}

/* The rewritten ranges of dataset d (the same on every rank): piece p of
 * rewrite r, for r in 0..nranks-1 (rank r writes it), adjacent pieces. */
#define NREW 3
static void rew_range(int d, uint64_t n, int r, int p, uint64_t *a, uint64_t *len)
{
    uint64_t base = (mix((uint64_t)d * 77 + (uint64_t)p) % n), l = 1 + mix((uint64_t)p * 13 + (uint64_t)d) % 700;
    *a   = base + (uint64_t)r * l;
    *len = l;
    if (*a >= n)
        *a = n - 1, *len = 1;
    if (*a + *len > n)
        *len = n - *a;
}
static int rewritten(int d, uint64_t n, int nw, uint64_t i)
{
    for (int p = 0; p < NREW; p++)
        for (int r = 0; r < nw; r++) {
            uint64_t a, l;
            rew_range(d, n, r, p, &a, &l);
            if (i >= a && i < a + l)
                return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5) {
        if (!rank)
            fprintf(stderr, "usage: %s FILE mpio|default write|rewrite|verify NPART\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *path = argv[1], *mode = argv[3];
    uint64_t    n    = strtoull(argv[4], NULL, 10);
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (!strcmp(argv[2], "mpio"))
        H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    uint64_t lo = n * (uint64_t)rank / (uint64_t)size, hi = n * (uint64_t)(rank + 1) / (uint64_t)size, mine = hi - lo;
    char    *buf = malloc(8 * (n + 1));
    hid_t    f;
    int      nw = 0; /* ranks of the rewrite (attribute), 0: none */
    if (!strcmp(mode, "write")) {
        f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        if (f < 0)
            goto fail;
        hsize_t dim = n;
        hid_t   fs  = H5Screate_simple(1, &dim, NULL);
        for (int d = 0; d < 4; d++) {
            hid_t   ds = H5Dcreate2(f, names[d], mtype(d), fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            hsize_t start = lo, cnt = mine;
            hid_t   ms = H5Screate_simple(1, &cnt, NULL), sel = H5Scopy(fs);
            for (uint64_t k = 0; k < mine; k++)
                put(d, buf, k, value(d, lo + k, 0));
            H5Sselect_hyperslab(sel, H5S_SELECT_SET, &start, NULL, &cnt, NULL);
            if (ds < 0 || H5Dwrite(ds, mtype(d), ms, sel, dxpl, buf) < 0)
                failures++;
            H5Sclose(ms), H5Sclose(sel), H5Dclose(ds);
        }
        H5Sclose(fs);
        if (H5Fclose(f) < 0)
            failures++;
    }
    else if (!strcmp(mode, "rewrite")) {
        f = H5Fopen(path, H5F_ACC_RDWR, fapl);
        if (f < 0)
            goto fail;
        H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_INDEPENDENT);
        for (int p = 0; p < NREW; p++) {
            for (int d = 0; d < 4; d++) {
                hid_t    ds = H5Dopen2(f, names[d], H5P_DEFAULT), fs = H5Dget_space(ds);
                uint64_t a, l;
                rew_range(d, n, rank, p, &a, &l);
                hsize_t start = a, cnt = l;
                hid_t   ms = H5Screate_simple(1, &cnt, NULL);
                for (uint64_t k = 0; k < l; k++)
                    put(d, buf, k, value(d, a + k, 1));
                H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL);
                if (H5Dwrite(ds, mtype(d), ms, fs, dxpl, buf) < 0)
                    failures++;
                H5Sclose(ms), H5Sclose(fs), H5Dclose(ds);
            }
            MPI_Barrier(MPI_COMM_WORLD); /* overlapping pieces of the next round come after */
        }
        hid_t as = H5Screate(H5S_SCALAR), at = H5Acreate2(f, "rewritten", H5T_NATIVE_INT, as, H5P_DEFAULT, H5P_DEFAULT);
        if (at < 0 || H5Awrite(at, H5T_NATIVE_INT, &size) < 0)
            failures++;
        H5Aclose(at), H5Sclose(as);
        if (H5Fclose(f) < 0)
            failures++;
    }
    else if (strcmp(mode, "verify"))
        goto fail;
    /* verify: every rank reads its block of every dataset, collectively */
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    if (f < 0)
        goto fail;
    if (H5Aexists(f, "rewritten") > 0) {
        hid_t at = H5Aopen(f, "rewritten", H5P_DEFAULT);
        H5Aread(at, H5T_NATIVE_INT, &nw);
        H5Aclose(at);
    }
    for (int d = 0; d < 4; d++) {
        hid_t   ds = H5Dopen2(f, names[d], H5P_DEFAULT), fs = ds < 0 ? -1 : H5Dget_space(ds);
        hsize_t start = lo, cnt = mine;
        hid_t   ms = H5Screate_simple(1, &cnt, NULL);
        if (ds < 0 || fs < 0) {
            failures++;
            continue;
        }
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL);
        if (H5Dread(ds, mtype(d), ms, fs, dxpl, buf) < 0)
            failures++;
        else
            for (uint64_t k = 0; k < mine; k++) {
                double want = value(d, lo + k, nw && rewritten(d, n, nw, lo + k));
                if (get(d, buf, k) != want && failures++ < 5)
                    fprintf(stderr, "rank %d: %s[%llu] = %.17g, expected %.17g\n", rank, names[d],
                            (unsigned long long)(lo + k), get(d, buf, k), want);
            }
        H5Sclose(ms), H5Sclose(fs), H5Dclose(ds);
    }
    if (H5Fclose(f) < 0)
        failures++;
    goto done;
fail:
    failures++;
    fprintf(stderr, "rank %d: cannot %s '%s'\n", rank, mode, path);
done:
    free(buf);
    H5Pclose(fapl), H5Pclose(dxpl);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank)
        printf("%s %s: failures=%d\n", mode, path, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
