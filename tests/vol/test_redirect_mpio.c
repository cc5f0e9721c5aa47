/* Redirect of MPI-IO files to the tagg VFD, on several ranks.
 *
 * The program is written like an ordinary parallel HDF5 application: it calls
 * H5Pset_fapl_mpio itself. Run with HDF5_VOL_CONNECTOR naming tagg, it checks
 * that the file still looks like an MPI-IO file to it (driver, communicator),
 * that MPI atomicity can be switched, that data written collectively and
 * independently by per-rank hyperslabs reads back, before and after reopening,
 * and that H5Fis_accessible and H5Fdelete with its list see the file tagg
 * wrote (with layout=subfiles: delete removes every subfile). */
#include "check.h"

#include <H5VLconnector_passthru.h>
#include <hdf5.h>
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int check_failures = 0;

#define ROWS 4 /* rows per rank */
#define COLS 8

static int rank, nprocs;

/* What the application sees of a redirected file: the driver it asked for,
 * MPI-IO, on its communicator (H5Fget_access_plist, H5Pget_driver,
 * H5Pget_fapl_mpio). That the data went through tagg shows in tagg's summary
 * (the ctest checks it) and in what delete removes (below). */
static void expect_mpio_view(hid_t file, const char *when)
{
    hid_t fapl = H5Fget_access_plist(file);
    REQUIRE(fapl >= 0);
    hid_t drv = H5Pget_driver(fapl);
    if (drv != H5FD_MPIO) {
        fprintf(stderr, "rank %d, %s: the file's access list names driver %lld, not MPI-IO\n", rank, when,
                (long long)drv);
        check_failures++;
    }
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    CHECK(H5Pget_fapl_mpio(fapl, &comm, &info) >= 0);
    if (comm != MPI_COMM_NULL) {
        int result = MPI_UNEQUAL;
        MPI_Comm_compare(comm, MPI_COMM_WORLD, &result);
        CHECK(result == MPI_CONGRUENT); /* a duplicate of ours */
        MPI_Comm_free(&comm);
    }
    else
        CHECK(!"no communicator on the file's access list");
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    H5Pclose(fapl);
}

/* MPI atomicity (H5Fset/get_mpi_atomicity): off at open, then on, then off. */
static void check_atomicity(hid_t f)
{
    hbool_t flag = 1;
    CHECK(H5Fget_mpi_atomicity(f, &flag) >= 0 && !flag);
    CHECK(H5Fset_mpi_atomicity(f, 1) >= 0);
    CHECK(H5Fget_mpi_atomicity(f, &flag) >= 0 && flag);
    CHECK(H5Fset_mpi_atomicity(f, 0) >= 0);
    CHECK(H5Fget_mpi_atomicity(f, &flag) >= 0 && !flag);
}

/* Rank 0: how many directory entries start with the file's name (the file and,
 * in the subfiles layout, its subfiles). */
static int entries_named(const char *fn)
{
    const char *slash = strrchr(fn, '/');
    char        dir[4096];
    const char *base = slash ? slash + 1 : fn;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - fn) : 1, slash ? fn : ".");
    DIR *d = opendir(dir);
    REQUIRE(d);
    int            n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, base, strlen(base)) == 0;
    closedir(d);
    return n;
}

static int value(int row, int col, int which)
{
    return which * 100000 + row * 100 + col;
}

/* Each rank writes its ROWS rows of "coll" collectively and of "indep" independently. */
static void write_data(hid_t f)
{
    hsize_t dims[2] = {(hsize_t)nprocs * ROWS, COLS};
    hid_t   fs      = H5Screate_simple(2, dims, NULL);
    hsize_t start[2] = {(hsize_t)rank * ROWS, 0}, count[2] = {ROWS, COLS};
    hid_t   ms       = H5Screate_simple(2, count, NULL);
    int     buf[ROWS][COLS];
    const char *names[2] = {"coll", "indep"};
    for (int which = 0; which < 2; which++) {
        hid_t d = H5Dcreate2(f, names[which], H5T_NATIVE_INT, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        REQUIRE(d >= 0);
        hid_t sel = H5Dget_space(d);
        H5Sselect_hyperslab(sel, H5S_SELECT_SET, start, NULL, count, NULL);
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < COLS; j++)
                buf[i][j] = value(rank * ROWS + i, j, which);
        hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
        H5Pset_dxpl_mpio(dxpl, which == 0 ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
        CHECK(H5Dwrite(d, H5T_NATIVE_INT, ms, sel, dxpl, buf) >= 0);
        H5Pclose(dxpl);
        H5Sclose(sel);
        H5Dclose(d);
    }
    /* An attribute too: metadata written collectively. */
    hid_t scalar = H5Screate(H5S_SCALAR);
    hid_t a      = H5Acreate2(f, "nprocs", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(a >= 0);
    CHECK(H5Awrite(a, H5T_NATIVE_INT, &nprocs) >= 0);
    H5Aclose(a);
    H5Sclose(scalar);
    H5Sclose(ms);
    H5Sclose(fs);
}

/* Every rank reads both datasets whole and checks every value. */
static void check_data(hid_t f)
{
    int        n   = nprocs * ROWS * COLS;
    int       *all = malloc(sizeof(int) * (size_t)n);
    const char *names[2] = {"coll", "indep"};
    REQUIRE(all);
    for (int which = 0; which < 2; which++) {
        hid_t d = H5Dopen2(f, names[which], H5P_DEFAULT);
        CHECK(d >= 0);
        memset(all, 0, sizeof(int) * (size_t)n);
        CHECK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0);
        int bad = 0;
        for (int r = 0; r < nprocs * ROWS; r++)
            for (int c = 0; c < COLS; c++)
                bad += all[r * COLS + c] != value(r, c, which);
        if (bad)
            fprintf(stderr, "rank %d: %s: %d wrong values\n", rank, names[which], bad);
        CHECK(bad == 0);
        H5Dclose(d);
    }
    int   np = 0;
    hid_t a  = H5Aopen(f, "nprocs", H5P_DEFAULT);
    CHECK(a >= 0 && H5Aread(a, H5T_NATIVE_INT, &np) >= 0);
    CHECK(np == nprocs);
    H5Aclose(a);
    free(all);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *fn = argc > 1 ? argv[1] : "vol_redirect_mpio.h5";

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    REQUIRE(fapl >= 0);
    REQUIRE(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0);

    /* Without tagg as the default connector this test proves nothing. */
    hid_t              vol_id = H5I_INVALID_HID;
    H5VL_class_value_t vol    = -1;
    REQUIRE(H5Pget_vol_id(fapl, &vol_id) >= 0);
    H5VLget_value(vol_id, &vol);
    H5VLclose(vol_id);
    if (vol != 510) {
        fprintf(stderr, "rank %d: default VOL connector has value %d, not tagg's 510\n", rank, (int)vol);
        MPI_Finalize();
        return EXIT_FAILURE;
    }

    hid_t f = H5Fcreate(fn, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    REQUIRE(f >= 0);
    expect_mpio_view(f, "after H5Fcreate");
    check_atomicity(f);
    write_data(f);
    /* Other ranks' independent writes are visible only after a sync and a
     * barrier (MPI-IO consistency): flush is collective and syncs the file. */
    CHECK(H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0);
    MPI_Barrier(MPI_COMM_WORLD);
    check_data(f);
    /* The open file opened again under other spellings of its name ("./name",
     * the absolute path): HDF5 compares it with its open files through the
     * driver (tagg resolves the canonical path at that compare), finds it and
     * shares it -- the same file number, the data there. Read-write again in
     * the shared layout only: a subfiled file open for writing says "state
     * open" in its index, which a second read-write open in parallel meets
     * before HDF5 can compare, and refuses (a read-only one is let through
     * for the process that holds it; one process shares the open file by its
     * canonical path instead: plugin.vfd.reopen_*). */
    {
        const char *vol_env  = getenv("HDF5_VOL_CONNECTOR");
        int         subfiled = vol_env && strstr(vol_env, "layout=subfiles");
        char        dot[4200], abs[4200], cwd[4096];
        REQUIRE(getcwd(cwd, sizeof cwd) && fn[0] != '/');
        snprintf(dot, sizeof dot, "./%s", fn);
        snprintf(abs, sizeof abs, "%s/%s", cwd, fn);
        unsigned long no = 0, no2 = 1, no3 = 2;
        CHECK(H5Fget_fileno(f, &no) >= 0);
        hid_t g = H5Fopen(dot, H5F_ACC_RDONLY, fapl);
        CHECK(g >= 0 && H5Fget_fileno(g, &no2) >= 0 && no2 == no);
        if (g >= 0) {
            check_data(g);
            CHECK(H5Fclose(g) >= 0);
        }
        if (!subfiled) {
            hid_t h = H5Fopen(abs, H5F_ACC_RDWR, fapl);
            CHECK(h >= 0 && H5Fget_fileno(h, &no3) >= 0 && no3 == no);
            if (h >= 0)
                CHECK(H5Fclose(h) >= 0);
        }
    }
    CHECK(H5Fclose(f) >= 0);

    f = H5Fopen(fn, H5F_ACC_RDONLY, fapl);
    REQUIRE(f >= 0);
    expect_mpio_view(f, "after H5Fopen");
    check_data(f);
    CHECK(H5Fclose(f) >= 0);

    /* H5Fis_accessible and H5Fdelete with the MPI-IO list reach tagg too: the
     * file is recognised, and delete removes it with all its parts. */
    CHECK(H5Fis_accessible(fn, fapl) > 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(entries_named(fn) >= 1);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(H5Fdelete(fn, fapl) >= 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && entries_named(fn) != 0) {
        fprintf(stderr, "rank 0: after H5Fdelete, %d entries named %s* remain\n", entries_named(fn), fn);
        check_failures++;
    }
    H5Pclose(fapl);

    int failures = 0;
    MPI_Allreduce(&check_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(failures ? "vol redirect: %d check(s) failed\n" : "vol redirect: all checks passed on %d ranks\n",
               failures ? failures : nprocs);
    H5close(); /* the VFD's summary is printed at file close, before MPI goes */
    MPI_Finalize();
    return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
