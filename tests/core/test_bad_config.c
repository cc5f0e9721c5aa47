/* Bad configuration gives an HDF5 error with a clear message on every rank, and
 * no rank hangs (CTest's timeout catches a hang).
 *
 *   test_bad_config api   - H5Pset_driver_by_name(fapl, "tagg", <bad string>)
 *   test_bad_config env   - the driver and its config come from HDF5_DRIVER and
 *                           HDF5_DRIVER_CONFIG; EXPECT holds the message part */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char stack_text[8192];

static herr_t collect(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n, (void)data;
    size_t used = strlen(stack_text);
    snprintf(stack_text + used, sizeof stack_text - used, "%s\n", e->desc ? e->desc : "");
    return 0;
}

/* Tries to create a file; returns 1 when it failed with `expect` on the stack. */
static int create_fails_with(hid_t fapl, const char *expect, int rank)
{
    stack_text[0] = '\0';
    hid_t f;
    H5E_BEGIN_TRY { f = H5Fcreate("bad_config.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl); }
    H5E_END_TRY
    if (f >= 0) {
        fprintf(stderr, "rank %d: create succeeded, expected failure with '%s'\n", rank, expect);
        H5Fclose(f);
        return 0;
    }
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, NULL);
    if (!strstr(stack_text, expect)) {
        fprintf(stderr, "rank %d: error stack lacks '%s':\n%s", rank, expect, stack_text);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size, good = 1, total = 0, cases = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "api";
    if (!strcmp(mode, "api")) {
        static const char *const bad[][2] = {
            {"bogus=1", "unknown key 'bogus' (valid keys: verbose, summary, backend, aggregators,"},
            {"verbose=12", "key 'verbose': 12 is out of range [0, 2]"},
            {"verbose=x", "key 'verbose': 'x' is not a whole number"},
            {"fsync=perhaps", "'perhaps' is not a boolean"},
            {"backend=stdio", "unknown value 'stdio' (valid: tapioca, mpiio)"},
            {"buffer_size=12Q", "key 'buffer_size': '12Q' is not a size"},
            {"topology=/nonexistent/machine.topo", "topology: "},
            {"layout=subfiles;stripe_size=1K", "key 'stripe_size': 1024 is out of range [4096, 1073741824]"},
            {"verbose", "is not of the form key=value"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++, cases++) {
            hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
            H5Pset_mpi_params(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
            if (H5Pset_driver_by_name(fapl, "tagg", bad[i][0]) < 0) {
                fprintf(stderr, "rank %d: cannot load the tagg driver (HDF5_PLUGIN_PATH?)\n", rank);
                good = 0;
            }
            else
                good &= create_fails_with(fapl, bad[i][1], rank);
            H5Pclose(fapl);
        }
        /* a good string still works after the failures */
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
        H5Pset_mpi_params(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
        H5Pset_driver_by_name(fapl, "tagg", "verbose=0");
        hid_t f = H5Fcreate("bad_config.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        if (f < 0 || H5Fclose(f) < 0) {
            fprintf(stderr, "rank %d: a valid configuration failed after bad ones\n", rank);
            good = 0;
        }
        H5Pclose(fapl);
        cases++;
    }
    else {
        const char *expect = getenv("EXPECT");
        hid_t       fapl   = H5Pcreate(H5P_FILE_ACCESS);
        H5Pset_mpi_params(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
        good = expect && create_fails_with(fapl, expect, rank);
        H5Pclose(fapl);
        cases = 1;
    }
    MPI_Allreduce(&good, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", total == size ? cases : 0, total == size ? 0 : cases);
    MPI_Finalize();
    return total == size ? 0 : 1;
}
