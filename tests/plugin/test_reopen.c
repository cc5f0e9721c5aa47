/* One process, HDF5_DRIVER=tagg: HDF5 opening a file this process already has
 * open (it opens in the driver, then compares with its open files). A read-only
 * and a read-write open of a file being written see its data; a create that
 * would truncate it fails cleanly and leaves it intact; closing in any order
 * works, and the file reads back afterwards (the ctest checks tagg's summary
 * line for it).
 *
 *   test_reopen <file>     prints "reopen: all checks passed" */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

static int failures = 0;
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);                  \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static int read_ok(hid_t f)
{
    int   v[16] = {0}, bad = 0;
    hid_t d = H5Dopen2(f, "v", H5P_DEFAULT);
    if (d < 0 || H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        bad = 1;
    for (int i = 0; i < 16; i++)
        bad += v[i] != i * 3;
    if (d >= 0)
        H5Dclose(d);
    return bad == 0;
}

int main(int argc, char **argv)
{
    const char *fn = argc > 1 ? argv[1] : "reopen.h5";
    hid_t       w  = H5Fcreate(fn, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (w < 0)
        return 1;
    hsize_t n = 16;
    int     v[16];
    for (int i = 0; i < 16; i++)
        v[i] = i * 3;
    hid_t s = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(w, "v", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    CHECK(H5Fflush(w, H5F_SCOPE_GLOBAL) >= 0);

    /* a second, read-only open of the file being written */
    hid_t r = H5Fopen(fn, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(r >= 0);
    if (r >= 0)
        CHECK(read_ok(r));
    /* a second read-write open (what a VDS in a file opened for writing does
     * with its source files) */
    hid_t rw = H5Fopen(fn, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(rw >= 0);
    if (rw >= 0) {
        CHECK(read_ok(rw));
        CHECK(H5Fclose(rw) >= 0);
    }
    /* a create that would truncate the open file: refused, nothing lost */
    hid_t t;
    H5E_BEGIN_TRY { t = H5Fcreate(fn, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT); }
    H5E_END_TRY
    CHECK(t < 0);
    if (t >= 0)
        H5Fclose(t);
    CHECK(read_ok(w));
    /* the writer closes first, the reader last */
    CHECK(H5Fclose(w) >= 0);
    if (r >= 0) {
        CHECK(read_ok(r));
        CHECK(H5Fclose(r) >= 0);
    }
    /* and the file reads back after both are gone */
    r = H5Fopen(fn, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(r >= 0 && read_ok(r));
    if (r >= 0)
        H5Fclose(r);
    if (!failures)
        printf("reopen: all checks passed\n");
    return failures ? 1 : 0;
}
