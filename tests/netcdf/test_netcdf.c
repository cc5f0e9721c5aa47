/* netCDF-4 users through tagg.
 *
 *   mpiexec -n N test_netcdf par <file>   nc_create_par, define, write (rows per
 *                                         rank and an interleaved strided
 *                                         variable, collective), close;
 *                                         nc_open_par, read everything on every
 *                                         rank, check every value, close
 *   test_netcdf serial <file> <N>         one process: nc_open, read and check
 *                                         every value a <N>-rank "par" run wrote
 *
 * The program names no tagg API: tagg comes in through the environment (the VOL
 * connector for nc_*_par, which asks HDF5 for MPI-IO; HDF5_DRIVER=tagg for the
 * serial nc_open). Prints "netcdf <mode>: all checks passed" on success. */
#include <mpi.h>
#include <netcdf.h>
#include <netcdf_par.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS_PER_RANK 8
#define COLS 33
#define STRIDED_PER_RANK 100
#define TITLE "tagg netCDF-4 round trip"

static int failures = 0;

#define NC(call)                                                                                   \
    do {                                                                                           \
        int nc_rc_ = (call);                                                                       \
        if (nc_rc_ != NC_NOERR) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, nc_strerror(nc_rc_));    \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static int grid_value(size_t r, size_t c) { return (int)(r * 1000 + c * 7 + 3); }
static double strided_value(size_t i) { return (double)i * 0.5 - 17.25; }

/* Reads the whole file and checks every value against what nranks wrote. */
static int check_file(int ncid, int nranks, const char *who)
{
    int    grid, strided, ndims, nvars;
    size_t ny, nx, ns, tlen;
    int    dy, dx, ds;
    char   title[128];
    NC(nc_inq(ncid, &ndims, &nvars, NULL, NULL));
    if (ndims != 3 || nvars != 2) {
        fprintf(stderr, "%s: %d dimensions and %d variables, expected 3 and 2\n", who, ndims, nvars);
        failures++;
    }
    NC(nc_inq_dimid(ncid, "y", &dy));
    NC(nc_inq_dimid(ncid, "x", &dx));
    NC(nc_inq_dimid(ncid, "s", &ds));
    NC(nc_inq_dimlen(ncid, dy, &ny));
    NC(nc_inq_dimlen(ncid, dx, &nx));
    NC(nc_inq_dimlen(ncid, ds, &ns));
    if (ny != (size_t)nranks * ROWS_PER_RANK || nx != COLS || ns != (size_t)nranks * STRIDED_PER_RANK) {
        fprintf(stderr, "%s: dimensions %zu x %zu, %zu, expected %d x %d, %d\n", who, ny, nx, ns,
                nranks * ROWS_PER_RANK, COLS, nranks * STRIDED_PER_RANK);
        return 1;
    }
    NC(nc_inq_attlen(ncid, NC_GLOBAL, "title", &tlen));
    if (tlen >= sizeof title || nc_get_att_text(ncid, NC_GLOBAL, "title", title) != NC_NOERR ||
        (title[tlen] = '\0', strcmp(title, TITLE) != 0)) {
        fprintf(stderr, "%s: global attribute title wrong\n", who);
        failures++;
    }
    NC(nc_inq_varid(ncid, "grid", &grid));
    NC(nc_inq_varid(ncid, "strided", &strided));
    int    *g = malloc(ny * nx * sizeof *g);
    double *s = malloc(ns * sizeof *s);
    if (!g || !s) {
        fprintf(stderr, "%s: out of memory\n", who);
        return 1;
    }
    size_t start[2] = {0, 0}, count[2] = {ny, nx};
    NC(nc_get_vara_int(ncid, grid, start, count, g));
    NC(nc_get_vara_double(ncid, strided, start, &ns, s));
    long bad = 0;
    for (size_t r = 0; r < ny; r++)
        for (size_t c = 0; c < nx; c++)
            if (g[r * nx + c] != grid_value(r, c) && bad++ < 5)
                fprintf(stderr, "%s: grid[%zu][%zu] = %d, expected %d\n", who, r, c, g[r * nx + c], grid_value(r, c));
    for (size_t i = 0; i < ns; i++)
        if (s[i] != strided_value(i) && bad++ < 10)
            fprintf(stderr, "%s: strided[%zu] = %g, expected %g\n", who, i, s[i], strided_value(i));
    if (bad) {
        fprintf(stderr, "%s: %ld wrong values\n", who, bad);
        failures++;
    }
    free(g);
    free(s);
    return 0;
}

static int run_par(const char *path)
{
    int rank, nranks, ncid, dims[3], grid, strided;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    NC(nc_create_par(path, NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    NC(nc_def_dim(ncid, "y", (size_t)nranks * ROWS_PER_RANK, &dims[0]));
    NC(nc_def_dim(ncid, "x", COLS, &dims[1]));
    NC(nc_def_dim(ncid, "s", (size_t)nranks * STRIDED_PER_RANK, &dims[2]));
    NC(nc_def_var(ncid, "grid", NC_INT, 2, dims, &grid));
    NC(nc_def_var(ncid, "strided", NC_DOUBLE, 1, &dims[2], &strided));
    NC(nc_put_att_text(ncid, NC_GLOBAL, "title", strlen(TITLE), TITLE));
    NC(nc_enddef(ncid));
    NC(nc_var_par_access(ncid, grid, NC_COLLECTIVE));
    NC(nc_var_par_access(ncid, strided, NC_COLLECTIVE));

    /* grid: a block of rows per rank */
    int buf[ROWS_PER_RANK * COLS];
    for (size_t r = 0; r < ROWS_PER_RANK; r++)
        for (size_t c = 0; c < COLS; c++)
            buf[r * COLS + c] = grid_value((size_t)rank * ROWS_PER_RANK + r, c);
    size_t start[2] = {(size_t)rank * ROWS_PER_RANK, 0}, count[2] = {ROWS_PER_RANK, COLS};
    NC(nc_put_vara_int(ncid, grid, start, count, buf));
    /* strided: element i belongs to rank i % nranks, so every rank's piece
     * interleaves with every other's (what aggregation is for) */
    double    sbuf[STRIDED_PER_RANK];
    size_t    sstart = (size_t)rank, scount = STRIDED_PER_RANK;
    ptrdiff_t sstride = nranks;
    for (size_t k = 0; k < STRIDED_PER_RANK; k++)
        sbuf[k] = strided_value((size_t)rank + k * (size_t)nranks);
    NC(nc_put_vars_double(ncid, strided, &sstart, &scount, &sstride, sbuf));
    NC(nc_close(ncid));

    NC(nc_open_par(path, NC_NOWRITE, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    NC(nc_var_par_access(ncid, grid, NC_COLLECTIVE));
    char who[32];
    snprintf(who, sizeof who, "rank %d", rank);
    if (check_file(ncid, nranks, who))
        return 1;
    NC(nc_close(ncid));
    return 0;
}

static int run_serial(const char *path, int nranks)
{
    int ncid;
    NC(nc_open(path, NC_NOWRITE, &ncid));
    if (check_file(ncid, nranks, "serial"))
        return 1;
    NC(nc_close(ncid));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "par") && strcmp(argv[1], "serial")) ||
        (!strcmp(argv[1], "serial") && argc < 4)) {
        fprintf(stderr, "usage: %s par <file> | serial <file> <ranks that wrote it>\n", argv[0]);
        return 2;
    }
    int rc;
    if (!strcmp(argv[1], "par")) {
        MPI_Init(&argc, &argv);
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        rc = run_par(argv[2]);
        int all = rc || failures;
        MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        int nranks;
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        if (rank == 0 && !all)
            printf("netcdf par: all checks passed on %d ranks\n", nranks);
        MPI_Finalize();
        return all ? 1 : 0;
    }
    rc = run_serial(argv[2], atoi(argv[3]));
    if (rc || failures)
        return 1;
    printf("netcdf serial: all checks passed\n");
    return 0;
}
