/* A small HDF5 program for the security tests (attacks.sh): the driver comes
 * from HDF5_DRIVER (tagg), the configuration from HDF5_DRIVER_CONFIG.
 *
 *   h5_attack write  FILE N   create (truncate) FILE, dataset "d" of N int32 = i, collective
 *   h5_attack read   FILE N   open read-only, read "d" collectively, check d[i] = i
 *   h5_attack rw     FILE N   open read-write, write d[i] = i + 1, close
 *   h5_attack append FILE N   open read-write, add dataset "e" of N int32 (the file grows), close
 *   h5_attack where  FILE     print "address A" of dataset "d" (rank 0)
 *   h5_attack poke   FILE     open read-write, rank 0 writes d[0] = 1 (one element, independent), close
 *   h5_attack rwread FILE N   open read-write, read "d" collectively and check it, close
 *   h5_attack delete FILE     H5Fdelete
 *   h5_attack sparse FILE     create a 2^33 x 15 float32 contiguous dataset (480 GiB of
 *                             address space), write nothing, close; reopen read-only and
 *                             read 4 elements at each end: the fill value 0
 *
 * Each rank prints "rank R: ok OP" or "rank R: FAILED OP" (after HDF5's error
 * stack) and the program exits 1 when any rank failed; it never aborts. */
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static hid_t fapl(void)
{
    hid_t p = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_mpi_params(p, MPI_COMM_WORLD, MPI_INFO_NULL);
    return p;
}

static hid_t coll(void)
{
    hid_t x = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE);
    return x;
}

/* this rank's part of n elements */
static void part(hsize_t n, hsize_t *off, hsize_t *cnt)
{
    hsize_t per = (n + (hsize_t)size - 1) / (hsize_t)size;
    *off        = per * (hsize_t)rank < n ? per * (hsize_t)rank : n;
    *cnt        = *off + per <= n ? per : n - *off;
}

static int write_d(const char *path, hsize_t n, int create, int add, const char *name)
{
    hid_t fa = fapl(), x = coll(), f, d = -1, fs = -1, ms = -1;
    int   rc = -1;
    f        = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fa) : H5Fopen(path, H5F_ACC_RDWR, fa);
    if (f < 0)
        goto done;
    fs = H5Screate_simple(1, &n, NULL);
    d  = create || strcmp(name, "d") ? H5Dcreate2(f, name, H5T_NATIVE_INT32, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                                     : H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0)
        goto done;
    hsize_t off, cnt;
    part(n, &off, &cnt);
    int32_t *buf = malloc((cnt ? cnt : 1) * sizeof *buf);
    for (hsize_t i = 0; i < cnt; i++)
        buf[i] = (int32_t)(off + i) + add;
    ms = H5Screate_simple(1, &cnt, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &off, NULL, &cnt, NULL);
    if (!cnt)
        H5Sselect_none(fs), H5Sselect_none(ms);
    rc = H5Dwrite(d, H5T_NATIVE_INT32, ms, fs, x, buf) < 0 ? -1 : 0;
    free(buf);
done:
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    if (d >= 0 && H5Dclose(d) < 0)
        rc = -1;
    if (f >= 0 && H5Fclose(f) < 0)
        rc = -1;
    H5Pclose(fa), H5Pclose(x);
    return rc;
}

/* Reads all of d (n elements) and checks d[i] = i or i + 1; wrong data prints
 * "WRONG DATA" and is a failure when strict (else only the read's result counts). */
static int read_check(hid_t d, hid_t x, hsize_t n, int strict)
{
    int      rc  = -1;
    int32_t *buf = malloc(n * sizeof *buf);
    if (H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, x, buf) >= 0) {
        rc = 0;
        for (hsize_t i = 0; i < n; i++)
            if (buf[i] != (int32_t)i && buf[i] != (int32_t)i + 1) {
                printf("rank %d: WRONG DATA at %llu: %d\n", rank, (unsigned long long)i, buf[i]);
                rc = strict ? -1 : 0;
                break;
            }
    }
    free(buf);
    return rc;
}

static int read_d(const char *path, hsize_t n)
{
    hid_t fa = fapl(), x = coll(), f, d = -1;
    int   rc = -1;
    if ((f = H5Fopen(path, H5F_ACC_RDONLY, fa)) < 0 || (d = H5Dopen2(f, "d", H5P_DEFAULT)) < 0)
        goto done;
    rc = read_check(d, x, n, 1);
done:
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0 && H5Fclose(f) < 0)
        rc = -1;
    H5Pclose(fa), H5Pclose(x);
    return rc;
}

/* where / poke / rwread: small read-write opens for the rewrite checks */
static int small_op(const char *op, const char *path, hsize_t n)
{
    hid_t fa = fapl(), f, d = -1;
    int   rc = -1;
    int   rw = strcmp(op, "where") != 0;
    if ((f = H5Fopen(path, rw ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fa)) < 0 || (d = H5Dopen2(f, "d", H5P_DEFAULT)) < 0)
        goto done;
    if (!strcmp(op, "where")) {
        haddr_t a = H5Dget_offset(d);
        if (rank == 0)
            printf("address %llu\n", (unsigned long long)a);
        rc = a == HADDR_UNDEF ? -1 : 0;
    }
    else if (!strcmp(op, "poke")) {
        hid_t   fs = H5Dget_space(d), ms;
        hsize_t one = 1, zero = 0;
        int32_t v = 1;
        ms = H5Screate_simple(1, &one, NULL);
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &zero, NULL, &one, NULL);
        rc = rank != 0 || H5Dwrite(d, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, &v) >= 0 ? 0 : -1;
        H5Sclose(ms), H5Sclose(fs);
    }
    else {
        hid_t x = coll();
        rc      = read_check(d, x, n, 0);
        H5Pclose(x);
    }
done:
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0 && H5Fclose(f) < 0)
        rc = -1;
    H5Pclose(fa);
    return rc;
}

static int sparse(const char *path)
{
    hsize_t dims[2] = {(hsize_t)1 << 33, 15};
    hid_t   fa = fapl(), f, d, s;
    int     rc = -1;
    double  t0 = MPI_Wtime();
    if ((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fa)) < 0)
        goto out;
    s  = H5Screate_simple(2, dims, NULL);
    d  = H5Dcreate2(f, "big", H5T_NATIVE_FLOAT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    rc = d < 0 ? -1 : 0;
    if (d >= 0 && H5Dclose(d) < 0)
        rc = -1;
    H5Sclose(s);
    if (H5Fclose(f) < 0)
        rc = -1;
    double t1 = MPI_Wtime();
    if (rc == 0) {
        rc = -1;
        if ((f = H5Fopen(path, H5F_ACC_RDONLY, fa)) >= 0) {
            if ((d = H5Dopen2(f, "big", H5P_DEFAULT)) >= 0) {
                hid_t   fs = H5Dget_space(d);
                hsize_t cnt[2] = {1, 4}, m = 4;
                hid_t   ms = H5Screate_simple(1, &m, NULL);
                float   v[8];
                hsize_t at[2][2] = {{0, 0}, {dims[0] - 1, 11}};
                rc = 0;
                for (int e = 0; e < 2 && rc == 0; e++) {
                    H5Sselect_hyperslab(fs, H5S_SELECT_SET, at[e], NULL, cnt, NULL);
                    if (H5Dread(d, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, v + 4 * e) < 0)
                        rc = -1;
                }
                for (int i = 0; i < 8 && rc == 0; i++)
                    if (v[i] != 0.0f)
                        printf("rank %d: element %d is %g, not the fill value 0\n", rank, i, (double)v[i]), rc = -1;
                H5Sclose(ms), H5Sclose(fs);
                if (H5Dclose(d) < 0)
                    rc = -1;
            }
            if (H5Fclose(f) < 0)
                rc = -1;
        }
    }
    if (rank == 0)
        printf("sparse: create+close %.2f s, reopen+read %.2f s\n", t1 - t0, MPI_Wtime() - t1);
out:
    H5Pclose(fa);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: %s write|read|rw|append|where|poke|rwread|delete|sparse FILE [N]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *op = argv[1], *path = argv[2];
    hsize_t     n  = argc > 3 ? (hsize_t)strtoull(argv[3], NULL, 10) : 4096;
    int         rc;
    if (!strcmp(op, "write"))
        rc = write_d(path, n, 1, 0, "d");
    else if (!strcmp(op, "rw"))
        rc = write_d(path, n, 0, 1, "d");
    else if (!strcmp(op, "append"))
        rc = write_d(path, n, 0, 0, "e");
    else if (!strcmp(op, "read"))
        rc = read_d(path, n);
    else if (!strcmp(op, "where") || !strcmp(op, "poke") || !strcmp(op, "rwread"))
        rc = small_op(op, path, n);
    else if (!strcmp(op, "delete")) {
        hid_t fa = fapl();
        rc       = H5Fdelete(path, fa) < 0 ? -1 : 0;
        H5Pclose(fa);
    }
    else if (!strcmp(op, "sparse"))
        rc = sparse(path);
    else
        rc = -1;
    fflush(stderr);
    printf("rank %d: %s %s\n", rank, rc == 0 ? "ok" : "FAILED", op);
    fflush(stdout);
    int any = 0;
    MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Finalize();
    return any < 0 ? 1 : 0;
}
