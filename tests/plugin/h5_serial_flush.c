/* One process, HDF5's default file access (HDF5_DRIVER=tagg selects tagg):
 * creates FILE with a dataset of N ints (i), flushes, closes; with "change",
 * after the flush it writes the values again as 2 * i + 1 before closing;
 * with "attr", after the flush it adds the attribute "a" = 42 to the dataset
 * (metadata that changes after the flush).
 * Exit 0, or 1 with a message. The caller reads the file back (h5dump). */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: h5_serial_flush FILE [change]\n");
        return 1;
    }
    int   change = argc > 2 && strcmp(argv[2], "change") == 0, attr = argc > 2 && strcmp(argv[2], "attr") == 0, v[N];
    hid_t f      = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return fprintf(stderr, "h5_serial_flush: cannot create %s\n", argv[1]), 1;
    hsize_t dims[1] = {N};
    hid_t   s = H5Screate_simple(1, dims, NULL), d = H5Dcreate2(f, "data", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    for (int i = 0; i < N; i++)
        v[i] = i;
    int rc = d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0;
    if (!rc && change) {
        for (int i = 0; i < N; i++)
            v[i] = 2 * i + 1;
        rc = H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0;
    }
    if (!rc && attr) {
        int   a42 = 42;
        hid_t as = H5Screate(H5S_SCALAR), a = H5Acreate2(d, "a", H5T_NATIVE_INT, as, H5P_DEFAULT, H5P_DEFAULT);
        rc = a < 0 || H5Awrite(a, H5T_NATIVE_INT, &a42) < 0;
        if (a >= 0)
            H5Aclose(a);
        H5Sclose(as);
    }
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(s);
    if (H5Fclose(f) < 0 || rc)
        return fprintf(stderr, "h5_serial_flush: writing %s failed\n", argv[1]), 1;
    return 0;
}
