/* When the tagg VFD cannot be loaded, creating or opening an MPI-IO file
 * through the tagg VOL connector must fail (never fall back to MPI-IO
 * silently) with a message naming the cause on the error stack.
 *
 * argv[1]: an empty directory. After the connector itself is loaded, the
 * plugin search path is pointed there, so the VFD plugin cannot be found. */
#include "check.h"

#include <H5VLconnector_passthru.h>
#include <hdf5.h>
#include <mpi.h>
#include <string.h>

int check_failures = 0;

static char stack_text[8192];

static herr_t collect(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    (void)data;
    size_t used = strlen(stack_text);
    snprintf(stack_text + used, sizeof stack_text - used, "%s\n", e->desc ? e->desc : "");
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    REQUIRE(argc > 1);

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    REQUIRE(fapl >= 0);
    REQUIRE(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0);
    hid_t              vol_id = H5I_INVALID_HID;
    H5VL_class_value_t vol    = -1;
    REQUIRE(H5Pget_vol_id(fapl, &vol_id) >= 0);
    H5VLget_value(vol_id, &vol);
    H5VLclose(vol_id);
    REQUIRE(vol == 510); /* the connector is loaded */

    /* From now on, plugins are looked for in an empty directory only. */
    unsigned n = 0;
    REQUIRE(H5PLsize(&n) >= 0);
    while (n-- > 0)
        REQUIRE(H5PLremove(0) >= 0);
    REQUIRE(H5PLappend(argv[1]) >= 0);
    REQUIRE(H5FDis_driver_registered_by_name("tagg") == 0);

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const char *ops[2] = {"H5Fcreate", "H5Fopen"};
    for (int op = 0; op < 2; op++) {
        hid_t f = op == 0 ? H5Fcreate("vol_noload.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
                          : H5Fopen("vol_noload.h5", H5F_ACC_RDONLY, fapl);
        stack_text[0] = '\0';
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, NULL);
        if (f >= 0) {
            fprintf(stderr, "%s succeeded without the tagg VFD\n", ops[op]);
            check_failures++;
            H5Fclose(f);
            continue;
        }
        if (!strstr(stack_text, "tagg VOL: cannot load the tagg VFD") || !strstr(stack_text, "HDF5_PLUGIN_PATH")) {
            fprintf(stderr, "%s: the error stack does not explain:\n%s", ops[op], stack_text);
            check_failures++;
        }
    }
    H5Pclose(fapl);
    if (!check_failures)
        printf("vol redirect without the VFD: fails as it should\n");
    MPI_Finalize();
    return check_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
