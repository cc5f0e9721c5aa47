/* A parallel HDF5 workload used to check tagg against the MPI-IO driver.
 *
 *   h5_workload FILE FAPL MD [verify|delete]
 *     FAPL: mpio     - H5Pset_fapl_mpio (what most applications do; tagg via the VOL)
 *           default  - H5Pset_mpi_params only (the driver comes from HDF5_DRIVER)
 *     MD:   coll     - collective metadata reads and writes
 *           indep    - independent metadata
 *     verify: only open an existing FILE and check it (expected values do not
 *             depend on the number of ranks that wrote it, so any count reads back)
 *     delete: only H5Fdelete(FILE) through the file-access list's driver
 *   WORKLOAD_XFER=coll in the environment makes every dataset transfer
 *   collective with selection I/O on, writes the bytes the other mode leaves
 *   to the fill value (whole rows of the strided dataset, element 0 of the
 *   byte dataset; else unwritten raw bytes may hold stale metadata bytes
 *   under MPI-IO and zeros with node-local subfiles), (without it HDF5 turns a collective
 *   transfer with type conversion into independent writes), turns the chunk
 *   cache off (in a read-only file HDF5 reads whole chunks into it, each rank
 *   independently) and leaves out the fill-value write at allocation (which HDF5
 *   does from rank 0 alone): same datasets, same values, for destination=nvr,
 *   where an independent access to another node's data is refused
 *
 * Writes groups, attributes, contiguous and chunked datasets with per-rank
 * hyperslabs (uneven sizes, an empty rank, odd offsets, strided rows, a
 * non-contiguous memory selection, a type conversion), each in independent and
 * collective transfer mode and with selection I/O on and off; closes, reopens
 * and checks every element on every rank. Values depend only on the position,
 * so files written by different drivers must compare equal with h5diff.
 * Prints "workload: raw_bytes_written=N raw_bytes_read=M" on rank 0 and exits 0
 * when every check passed. */
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int       rank, nranks, failures;
static long long raw_written, raw_read;

#define CHECK(cond, ...)                                                                                    \
    do {                                                                                                    \
        if (!(cond)) {                                                                                      \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", rank, __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                                                   \
            fprintf(stderr, "\n");                                                                          \
            failures++;                                                                                     \
        }                                                                                                   \
    } while (0)
#define OKH5(call) CHECK((call) >= 0, "%s", "HDF5 call failed")

static double value(int ds, hsize_t i) { return ds * 1000003.0 + (double)i * 0.5 + 1.0; }

/* 1D decomposition with uneven sizes; rank 1 is empty when there are 3 ranks or more. */
static void block_1d(int r, hsize_t *start, hsize_t *count)
{
    hsize_t s = 0;
    *start = *count = 0;
    for (int k = 0; k <= r; k++) {
        hsize_t c = (nranks > 2 && k == 1) ? 0 : (hsize_t)(k * 37 + 11);
        if (k == r) {
            *start = s;
            *count = c;
        }
        s += c;
    }
}
static hsize_t total_1d(void)
{
    hsize_t s, c;
    block_1d(nranks - 1, &s, &c);
    return s + c;
}

/* Object creation lists without timestamps, so runs are byte-comparable. */
static hid_t dcpl_new(void)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    return dcpl;
}

static hid_t dxpl_for(int collective, int selection_io)
{
    hid_t       dxpl = H5Pcreate(H5P_DATASET_XFER);
    const char *only = getenv("WORKLOAD_XFER"); /* "coll": every transfer collective (node-local subfiles) */
    if (only && !strcmp(only, "coll")) /* HDF5 breaks collective I/O for a type conversion without selection I/O */
        collective = 1, selection_io = 1;
    H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
    H5Pset_selection_io(dxpl, selection_io ? H5D_SELECTION_IO_MODE_ON : H5D_SELECTION_IO_MODE_OFF);
    return dxpl;
}

/* --- the datasets; each has a writer and an expected-value function --- */

/* 1D contiguous double, uneven blocks. */
static void w_contig(hid_t loc, const char *name, int ds, hid_t dxpl)
{
    hsize_t n = total_1d(), start, count;
    block_1d(rank, &start, &count);
    hid_t fs = H5Screate_simple(1, &n, NULL);
    hid_t dcpl = dcpl_new();
    hid_t d    = H5Dcreate2(loc, name, H5T_IEEE_F64LE, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    double *buf = malloc((count ? count : 1) * sizeof *buf);
    for (hsize_t i = 0; i < count; i++)
        buf[i] = value(ds, start + i);
    hid_t ms = H5Screate_simple(1, &count, NULL);
    if (count)
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    else
        H5Sselect_none(fs), H5Sselect_none(ms);
    OKH5(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf));
    raw_written += (long long)count * 8;
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d), free(buf);
}

/* 2D contiguous double (rows x 29): rank r writes every nranks-th row, columns 3..25. */
#define ROWS 24
#define COLS 29
static void w_strided(hid_t loc, const char *name, int ds, hid_t dxpl)
{
    const char *only = getenv("WORKLOAD_XFER");
    int         all  = only && !strcmp(only, "coll"); /* whole rows, the fill value written by the program */
    hsize_t dims[2] = {ROWS, COLS}, start[2] = {(hsize_t)rank, all ? 0 : 3}, stride[2] = {(hsize_t)nranks, 1};
    hsize_t count[2] = {(ROWS - (hsize_t)rank + nranks - 1) / nranks, 1}, block[2] = {1, all ? COLS : 23};
    /* Columns 0-2 and 26-28 are never written: have HDF5 write the fill value at
     * allocation, so that every byte of the file is defined. */
    hid_t dcpl = dcpl_new();
    if (!all) /* HDF5 writes fill values from rank 0 alone: an independent access */
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC);
    hid_t fs = H5Screate_simple(2, dims, NULL);
    hid_t d  = H5Dcreate2(loc, name, H5T_IEEE_F64LE, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, stride, count, block);
    hsize_t n   = (hsize_t)H5Sget_select_npoints(fs);
    double *buf = malloc((n ? n : 1) * sizeof *buf);
    hsize_t k   = 0;
    for (hsize_t r = (hsize_t)rank; r < ROWS; r += (hsize_t)nranks)
        for (hsize_t c = all ? 0 : 3; c < (all ? COLS : 26); c++)
            buf[k++] = (c >= 3 && c < 26) ? value(ds, r * COLS + c) : 0.0;
    hid_t ms = H5Screate_simple(1, &n, NULL);
    OKH5(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf));
    raw_written += (long long)n * 8;
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d), free(buf);
}

/* 2D chunked int32 (40 x 36, chunks 7 x 5): rank r writes a band of rows whose
 * edges do not match the chunks; the memory buffer is a 2-column-wider array
 * with a hyperslab, so memory is not contiguous either. */
#define CROWS 40
#define CCOLS 36
static void w_chunked(hid_t loc, const char *name, int ds, hid_t dxpl)
{
    hsize_t dims[2] = {CROWS, CCOLS}, chunk[2] = {7, 5};
    hsize_t r0 = (hsize_t)(CROWS * rank / nranks), r1 = (hsize_t)(CROWS * (rank + 1) / nranks);
    hid_t   dcpl = dcpl_new();
    H5Pset_chunk(dcpl, 2, chunk);
    hid_t fs = H5Screate_simple(2, dims, NULL);
    hid_t d  = H5Dcreate2(loc, name, H5T_STD_I32LE, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    hsize_t mdims[2] = {r1 - r0 ? r1 - r0 : 1, CCOLS + 2};
    int32_t *buf     = calloc(mdims[0] * mdims[1], sizeof *buf);
    for (hsize_t r = r0; r < r1; r++)
        for (hsize_t c = 0; c < CCOLS; c++)
            buf[(r - r0) * mdims[1] + c + 1] = (int32_t)value(ds, r * CCOLS + c);
    hid_t   ms     = H5Screate_simple(2, mdims, NULL);
    hsize_t fst[2] = {r0, 0}, cnt[2] = {r1 - r0, CCOLS}, mst[2] = {0, 1};
    if (r1 > r0) {
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, fst, NULL, cnt, NULL);
        H5Sselect_hyperslab(ms, H5S_SELECT_SET, mst, NULL, cnt, NULL);
    }
    else
        H5Sselect_none(fs), H5Sselect_none(ms);
    OKH5(H5Dwrite(d, H5T_NATIVE_INT32, ms, fs, dxpl, buf));
    raw_written += (long long)(r1 - r0) * CCOLS * 4;
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d), H5Pclose(dcpl), free(buf);
}

/* 1D uint8 with odd lengths at odd offsets, written from int memory (conversion). */
static void w_bytes(hid_t loc, const char *name, int ds, hid_t dxpl)
{
    hsize_t n = total_1d() * 3 + 5, start, count;
    block_1d(rank, &start, &count);
    start = start * 3 + 1, count = count * 3; /* odd offsets, lengths multiple of 3 */
    if (rank == nranks - 1)
        count += 4; /* the last rank writes up to the end */
    const char *only = getenv("WORKLOAD_XFER");
    int         first = only && !strcmp(only, "coll") && rank == 0; /* element 0 (0) written, not left undefined */
    if (first)
        start = 0, count++;
    hid_t fs = H5Screate_simple(1, &n, NULL);
    hid_t dcpl = dcpl_new();
    hid_t d    = H5Dcreate2(loc, name, H5T_STD_U8LE, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    int  *buf = malloc((count ? count : 1) * sizeof *buf);
    for (hsize_t i = 0; i < count; i++)
        buf[i] = start + i == 0 ? 0 : (int)((uint64_t)value(ds, start + i) % 251);
    hid_t ms = H5Screate_simple(1, &count, NULL);
    if (count)
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    else
        H5Sselect_none(fs), H5Sselect_none(ms);
    OKH5(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, dxpl, buf));
    raw_written += (long long)count;
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d), free(buf);
}

/* Expected value of element i of a dataset kind, or -1 for "not written" (fill 0). */
static double expect(const char *kind, int ds, hsize_t i)
{
    if (!strcmp(kind, "contig"))
        return value(ds, i);
    if (!strcmp(kind, "strided")) {
        hsize_t c = i % COLS;
        return (c >= 3 && c < 26) ? value(ds, i) : 0.0;
    }
    if (!strcmp(kind, "chunked"))
        return (double)(int32_t)value(ds, i);
    if (!strcmp(kind, "bytes")) /* every element but the first is written, whatever the rank count */
        return i >= 1 ? (double)((uint64_t)value(ds, i) % 251) : 0.0;
    return -1;
}

/* Reads the whole dataset on every rank (collectively or not) and checks every element. */
static void verify(hid_t loc, const char *name, const char *kind, int ds, hid_t dxpl)
{
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    CHECK(d >= 0, "cannot open %s", name);
    if (d < 0)
        return;
    hid_t   fs = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(fs);
    double *buf = malloc((size_t)n * sizeof *buf);
    OKH5(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, buf));
    raw_read += n; /* elements; the driver's byte count depends on the stored type */
    int bad = 0;
    for (hssize_t i = 0; i < n; i++)
        if (buf[i] != expect(kind, ds, (hsize_t)i) && bad++ < 3)
            CHECK(0, "%s[%lld] = %g, expected %g", name, (long long)i, buf[i], expect(kind, ds, (hsize_t)i));
    H5Sclose(fs), H5Dclose(d), free(buf);
}

typedef void (*writer_t)(hid_t, const char *, int, hid_t);
static const struct {
    const char *kind;
    writer_t    write;
} kinds[] = {{"contig", w_contig}, {"strided", w_strided}, {"chunked", w_chunked}, {"bytes", w_bytes}};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])

static hid_t make_fapl(const char *mode, int coll_md)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (!strcmp(mode, "mpio"))
        H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    else
        H5Pset_mpi_params(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl, coll_md);
    H5Pset_coll_metadata_write(fapl, coll_md);
    const char *only = getenv("WORKLOAD_XFER");
    if (only && !strcmp(only, "coll")) /* no chunk cache: HDF5 fills it with independent whole-chunk reads */
        H5Pset_cache(fapl, 0, 0, 0, 0.75);
    return fapl;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *only = argc == 5 ? argv[4] : "";
    if ((argc != 4 && argc != 5) || (strcmp(argv[2], "mpio") && strcmp(argv[2], "default")) ||
        (strcmp(argv[3], "coll") && strcmp(argv[3], "indep")) ||
        (argc == 5 && strcmp(only, "verify") && strcmp(only, "delete"))) {
        if (rank == 0)
            fprintf(stderr, "usage: %s FILE mpio|default coll|indep [verify|delete]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    int   coll_md = !strcmp(argv[3], "coll");
    hid_t fapl    = make_fapl(argv[2], coll_md), f, g1, g2, a;
    int   av[5]   = {1, 1, 2, 3, 5}, ds;
    if (!strcmp(only, "delete")) {
        OKH5(H5Fdelete(argv[1], fapl));
        goto end;
    }
    if (!strcmp(only, "verify"))
        goto check;
    f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f >= 0, "cannot create %s", argv[1]);
    if (f < 0)
        goto end;

    /* groups and attributes */
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_obj_track_times(gcpl, 0);
    g1 = H5Gcreate2(f, "g1", H5P_DEFAULT, gcpl, H5P_DEFAULT);
    g2 = H5Gcreate2(g1, "g2", H5P_DEFAULT, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    hsize_t an = 5;
    hid_t   as = H5Screate_simple(1, &an, NULL);
    a          = H5Acreate2(g2, "fib", H5T_STD_I32LE, as, H5P_DEFAULT, H5P_DEFAULT);
    OKH5(H5Awrite(a, H5T_NATIVE_INT, av));
    H5Aclose(a), H5Sclose(as);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 12);
    hid_t ss = H5Screate(H5S_SCALAR);
    a        = H5Acreate2(f, "title", st, ss, H5P_DEFAULT, H5P_DEFAULT);
    OKH5(H5Awrite(a, st, "tagg test\0\0\0"));
    H5Aclose(a), H5Sclose(ss), H5Tclose(st);

    /* datasets: every kind x {independent, collective} x {selection I/O on, off} */
    ds = 0;
    for (int k = 0; k < NKINDS; k++)
        for (int coll = 0; coll < 2; coll++)
            for (int sel = 1; sel >= 0; sel--) {
                char name[64];
                snprintf(name, sizeof name, "%s_%s_%s", kinds[k].kind, coll ? "coll" : "indep", sel ? "sel" : "nosel");
                hid_t dxpl = dxpl_for(coll, sel);
                kinds[k].write(k % 2 ? g2 : f, name, ++ds, dxpl);
                H5Pclose(dxpl);
            }
    H5Gclose(g2), H5Gclose(g1);
    OKH5(H5Fclose(f));

    /* reopen and check, reading collectively and independently */
check:
    f = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
    CHECK(f >= 0, "cannot reopen %s", argv[1]);
    if (f < 0)
        goto end;
    g2 = H5Gopen2(f, "g1/g2", H5P_DEFAULT);
    a  = H5Aopen(g2, "fib", H5P_DEFAULT);
    int rv[5] = {0};
    OKH5(H5Aread(a, H5T_NATIVE_INT, rv));
    CHECK(!memcmp(rv, av, sizeof av), "attribute fib differs");
    H5Aclose(a);
    ds = 0;
    for (int k = 0; k < NKINDS; k++)
        for (int coll = 0; coll < 2; coll++)
            for (int sel = 1; sel >= 0; sel--) {
                char name[64];
                snprintf(name, sizeof name, "%s_%s_%s", kinds[k].kind, coll ? "coll" : "indep", sel ? "sel" : "nosel");
                hid_t dxpl = dxpl_for(!coll, sel); /* read in the other mode than written */
                verify(k % 2 ? g2 : f, name, kinds[k].kind, ++ds, dxpl);
                H5Pclose(dxpl);
            }
    H5Gclose(g2);
    OKH5(H5Fclose(f));
end:
    H5Pclose(fapl);
    long long sums[3] = {raw_written, raw_read, failures}, tot[3];
    MPI_Allreduce(sums, tot, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("workload: raw_bytes_written=%lld elements_read=%lld failures=%lld\n", tot[0], tot[1], tot[2]);
    MPI_Finalize();
    return tot[2] ? 1 : 0;
}
