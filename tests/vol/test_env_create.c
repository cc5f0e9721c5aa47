/* Creates one file with the default file-access list and says which VOL
 * connector it went through. Used to observe what HDF5 does with the
 * connector named in HDF5_VOL_CONNECTOR, good or bad. Prints:
 *   H5open: <return value>
 *   H5Fcreate: ok|failed
 *   connector: <name of the file's connector>
 * Exit code 0 when the file was created and closed. */
#include <hdf5.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    const char *fn = argc > 1 ? argv[1] : "vol_env_create.h5";
    /* The first HDF5 call initializes the library and reads HDF5_VOL_CONNECTOR. */
    herr_t open_ret = H5open();
    printf("H5open: %d\n", (int)open_ret);
    fflush(stdout);
    hid_t f = H5Fcreate(fn, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    printf("H5Fcreate: %s\n", f >= 0 ? "ok" : "failed");
    if (f < 0)
        return 1;
    char name[64] = "";
    if (H5VLget_connector_name(f, name, sizeof name) < 0)
        return 1;
    printf("connector: %s\n", name);
    return H5Fclose(f) < 0 ? 1 : 0;
}
