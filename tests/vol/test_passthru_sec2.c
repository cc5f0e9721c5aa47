/* Pass-through correctness with a non-MPI driver (sec2), one process.
 *
 * Run with HDF5_VOL_CONNECTOR naming tagg: builds a file with groups,
 * attributes, datasets (contiguous, chunked and extended, written with
 * H5Dwrite_multi too), a committed datatype, hard, soft and external links,
 * copies, moves and deletions; reopens it and checks everything; checks that
 * the file really went through tagg (connector name) and that the driver stayed
 * sec2; finally reads the file with the native connector alone. */
#include "check.h"

#include <H5VLconnector_passthru.h>
#include <hdf5.h>
#include <string.h>

int check_failures = 0;

#define NX 4
#define NY 6

typedef struct {
    int    id;
    double value;
} rec_t;

static hid_t rec_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(rec_t));
    H5Tinsert(t, "id", HOFFSET(rec_t, id), H5T_NATIVE_INT);
    H5Tinsert(t, "value", HOFFSET(rec_t, value), H5T_NATIVE_DOUBLE);
    return t;
}

static void expect_connector(hid_t id, const char *want)
{
    char name[64] = "";
    CHECK(H5VLget_connector_name(id, name, sizeof name) > 0);
    if (strcmp(name, want) != 0) {
        fprintf(stderr, "connector of id %lld is '%s', expected '%s'\n", (long long)id, name, want);
        check_failures++;
    }
}

static void expect_sec2(hid_t file)
{
    hid_t fapl = H5Fget_access_plist(file);
    CHECK(fapl >= 0);
    CHECK(H5Pget_driver(fapl) == H5FD_SEC2);
    H5Pclose(fapl);
}

/* H5Literate callback: counts links and remembers whether "g1" was seen. */
typedef struct {
    int count;
    int saw_g1;
} iter_t;

static herr_t count_links(hid_t g, const char *name, const H5L_info2_t *info, void *data)
{
    (void)g;
    (void)info;
    iter_t *it = data;
    it->count++;
    if (!strcmp(name, "g1"))
        it->saw_g1 = 1;
    return 0;
}

static herr_t count_objects(hid_t o, const char *name, const H5O_info2_t *info, void *data)
{
    (void)o;
    (void)name;
    (void)info;
    (*(int *)data)++;
    return 0;
}

static herr_t count_attrs(hid_t o, const char *name, const H5A_info_t *info, void *data)
{
    (void)o;
    (void)name;
    (void)info;
    (*(int *)data)++;
    return 0;
}

static void write_file(const char *fn, const char *ext_fn, hid_t fapl)
{
    /* The target of the external link. */
    hid_t ef = H5Fcreate(ext_fn, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    REQUIRE(ef >= 0);
    hid_t eg = H5Gcreate2(ef, "target", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(eg >= 0);
    H5Gclose(eg);
    CHECK(H5Fclose(ef) >= 0);

    hid_t f = H5Fcreate(fn, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    REQUIRE(f >= 0);
    expect_connector(f, "tagg");
    expect_sec2(f);

    /* Groups, one made with intermediate groups. */
    hid_t g1 = H5Gcreate2(f, "g1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(g1 >= 0);
    expect_connector(g1, "tagg");
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t deep = H5Gcreate2(f, "a/b/c", lcpl, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(deep >= 0);
    H5Gclose(deep);
    H5Pclose(lcpl);

    /* Attributes on the root group and on g1. */
    hsize_t three = 3;
    hid_t   s3    = H5Screate_simple(1, &three, NULL);
    int     av[3] = {7, 8, 9};
    hid_t   a     = H5Acreate2(f, "ints", H5T_NATIVE_INT, s3, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(a >= 0);
    CHECK(H5Awrite(a, H5T_NATIVE_INT, av) >= 0);
    H5Aclose(a);
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 6);
    hid_t scalar = H5Screate(H5S_SCALAR);
    a            = H5Acreate2(g1, "label", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(a >= 0);
    CHECK(H5Awrite(a, str, "hello") >= 0);
    H5Aclose(a);
    a = H5Acreate2(g1, "doomed", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Aclose(a);
    CHECK(H5Arename(g1, "doomed", "renamed") >= 0);
    CHECK(H5Adelete(g1, "renamed") >= 0);

    /* A contiguous 2-D dataset and a chunked one later extended; both written
     * by one H5Dwrite_multi (two datasets in one call). */
    hsize_t dims[2] = {NX, NY};
    hid_t   s2      = H5Screate_simple(2, dims, NULL);
    hid_t   d       = H5Dcreate2(g1, "data", H5T_NATIVE_INT, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(d >= 0);
    expect_connector(d, "tagg");
    hsize_t ten = 10, unlimited = H5S_UNLIMITED, chunk = 4;
    hid_t   s1  = H5Screate_simple(1, &ten, &unlimited);
    hid_t   dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &chunk);
    hid_t dc = H5Dcreate2(f, "chunked", H5T_NATIVE_DOUBLE, s1, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    REQUIRE(dc >= 0);
    H5Pclose(dcpl);

    int    buf[NX][NY];
    double dbl[10];
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++)
            buf[i][j] = 100 * i + j;
    for (int i = 0; i < 10; i++)
        dbl[i] = 0.5 * i;
    hid_t       dsets[2] = {d, dc}, types[2] = {H5T_NATIVE_INT, H5T_NATIVE_DOUBLE};
    hid_t       alls[2]  = {H5S_ALL, H5S_ALL};
    const void *bufs[2]  = {buf, dbl};
    CHECK(H5Dwrite_multi(2, dsets, types, alls, alls, H5P_DEFAULT, bufs) >= 0);

    /* Extend the chunked dataset and write the new tail with a hyperslab. */
    hsize_t fifteen = 15, start = 10, five = 5;
    CHECK(H5Dset_extent(dc, &fifteen) >= 0);
    hid_t fs = H5Dget_space(dc);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &five, NULL);
    hid_t  ms      = H5Screate_simple(1, &five, NULL);
    double tail[5] = {10, 11, 12, 13, 14};
    CHECK(H5Dwrite(dc, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, tail) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    CHECK(H5Dflush(dc) >= 0);

    /* A committed datatype and a dataset of that type. */
    hid_t rt = rec_type();
    CHECK(H5Tcommit2(f, "rec", rt, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    CHECK(H5Tcommitted(rt) > 0);
    hsize_t two  = 2;
    hid_t   s2r  = H5Screate_simple(1, &two, NULL);
    hid_t   dr   = H5Dcreate2(f, "records", rt, s2r, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    rec_t   r[2];
    memset(r, 0, sizeof r); /* no uninitialised padding written to the file */
    r[0].id    = 1;
    r[0].value = 1.5;
    r[1].id    = 2;
    r[1].value = 2.5;
    CHECK(dr >= 0);
    CHECK(H5Dwrite(dr, rt, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    H5Dclose(dr);
    H5Sclose(s2r);
    H5Tclose(rt);

    /* Links: hard, soft, external, copy, move, delete. */
    CHECK(H5Lcreate_hard(g1, "data", f, "hard", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    CHECK(H5Lcreate_soft("/g1/data", f, "soft", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    CHECK(H5Lcreate_external(ext_fn, "/target", f, "ext", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    CHECK(H5Lcopy(f, "soft", g1, "soft_copy", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    CHECK(H5Lcreate_soft("/nowhere", f, "tmp", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    CHECK(H5Lmove(f, "tmp", f, "a/moved", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    CHECK(H5Ldelete(f, "a/moved", H5P_DEFAULT) >= 0);
    CHECK(H5Lexists(f, "a/moved", H5P_DEFAULT) == 0);

    /* Object copy, and object info through the wrapper. */
    CHECK(H5Ocopy(g1, "data", f, "data_copy", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5O_info2_t oi;
    CHECK(H5Oget_info3(d, &oi, H5O_INFO_BASIC) >= 0);
    CHECK(oi.type == H5O_TYPE_DATASET);
    CHECK(oi.rc == 2); /* /g1/data and /hard */

    /* File-level queries. */
    char name[256];
    CHECK(H5Fget_name(d, name, sizeof name) > 0 && !strcmp(name, fn));
    CHECK(H5Fget_obj_count(f, H5F_OBJ_DATASET) == 2);
    hid_t f2 = H5Freopen(f);
    CHECK(f2 >= 0);
    expect_connector(f2, "tagg");
    H5Fclose(f2);
    CHECK(H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0);

    H5Dclose(dc);
    H5Dclose(d);
    H5Sclose(s1);
    H5Sclose(s2);
    H5Sclose(s3);
    H5Sclose(scalar);
    H5Tclose(str);
    H5Gclose(g1);
    CHECK(H5Fclose(f) >= 0);
}

static void check_file(const char *fn, hid_t fapl, int through_tagg)
{
    hid_t f = H5Fopen(fn, H5F_ACC_RDONLY, fapl);
    REQUIRE(f >= 0);
    expect_connector(f, through_tagg ? "tagg" : "native");
    expect_sec2(f);

    /* Root attribute. */
    int   av[3] = {0, 0, 0};
    hid_t a     = H5Aopen(f, "ints", H5P_DEFAULT);
    CHECK(a >= 0);
    CHECK(H5Aread(a, H5T_NATIVE_INT, av) >= 0);
    CHECK(av[0] == 7 && av[1] == 8 && av[2] == 9);
    H5Aclose(a);

    /* g1's attributes: "label" only. */
    hid_t g1 = H5Gopen2(f, "g1", H5P_DEFAULT);
    CHECK(g1 >= 0);
    CHECK(H5Aexists(g1, "label") > 0);
    CHECK(H5Aexists(g1, "renamed") == 0);
    int nattr = 0;
    CHECK(H5Aiterate2(g1, H5_INDEX_NAME, H5_ITER_INC, NULL, count_attrs, &nattr) >= 0);
    CHECK(nattr == 1);
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 6);
    char label[6] = "";
    a             = H5Aopen_by_name(f, "g1", "label", H5P_DEFAULT, H5P_DEFAULT);
    CHECK(a >= 0);
    CHECK(H5Aread(a, str, label) >= 0);
    CHECK(!strcmp(label, "hello"));
    H5Aclose(a);
    H5Tclose(str);

    /* Group info: data, soft_copy. */
    H5G_info_t gi;
    CHECK(H5Gget_info(g1, &gi) >= 0);
    CHECK(gi.nlinks == 2);
    H5Gclose(g1);
    CHECK(H5Lexists(f, "a/b/c", H5P_DEFAULT) > 0);

    /* The 2-D dataset, through its hard link, its soft link and its copy. */
    const char *paths[] = {"g1/data", "hard", "soft", "g1/soft_copy", "data_copy"};
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        int   buf[NX][NY];
        hid_t d = H5Dopen2(f, paths[p], H5P_DEFAULT);
        CHECK(d >= 0);
        memset(buf, 0, sizeof buf);
        CHECK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
        int bad = 0;
        for (int i = 0; i < NX; i++)
            for (int j = 0; j < NY; j++)
                bad += buf[i][j] != 100 * i + j;
        if (bad)
            fprintf(stderr, "%s: %d wrong values\n", paths[p], bad);
        CHECK(bad == 0);
        H5Dclose(d);
    }

    /* The extended chunked dataset. */
    hid_t d = H5Dopen2(f, "chunked", H5P_DEFAULT);
    CHECK(d >= 0);
    hid_t   s = H5Dget_space(d);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(s, &n, NULL);
    CHECK(n == 15);
    H5Sclose(s);
    double dbl[15];
    CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, dbl) >= 0);
    for (int i = 0; i < 15; i++)
        CHECK(dbl[i] == (i < 10 ? 0.5 * i : (double)i));
    H5Dclose(d);

    /* Committed datatype and its dataset. */
    hid_t t = H5Topen2(f, "rec", H5P_DEFAULT);
    CHECK(t >= 0);
    hid_t rt = rec_type();
    CHECK(H5Tequal(t, rt) > 0);
    d = H5Dopen2(f, "records", H5P_DEFAULT);
    CHECK(d >= 0);
    hid_t dt = H5Dget_type(d);
    CHECK(H5Tcommitted(dt) > 0);
    H5Tclose(dt);
    rec_t r[2];
    memset(r, 0, sizeof r);
    CHECK(H5Dread(d, rt, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    CHECK(r[0].id == 1 && r[0].value == 1.5 && r[1].id == 2 && r[1].value == 2.5);
    H5Dclose(d);
    H5Tclose(rt);
    H5Tclose(t);

    /* Links: kinds, values, the external link resolved (a nested file open). */
    H5L_info2_t li;
    CHECK(H5Lget_info2(f, "soft", &li, H5P_DEFAULT) >= 0);
    CHECK(li.type == H5L_TYPE_SOFT);
    char val[64] = "";
    CHECK(H5Lget_val(f, "soft", val, sizeof val, H5P_DEFAULT) >= 0);
    CHECK(!strcmp(val, "/g1/data"));
    CHECK(H5Lget_info2(f, "ext", &li, H5P_DEFAULT) >= 0);
    CHECK(li.type == H5L_TYPE_EXTERNAL);
    hid_t o = H5Oopen(f, "ext", H5P_DEFAULT);
    CHECK(o >= 0);
    CHECK(H5Iget_type(o) == H5I_GROUP);
    expect_connector(o, through_tagg ? "tagg" : "native");
    H5Oclose(o);

    /* Iteration and visiting. */
    iter_t it = {0, 0};
    CHECK(H5Literate2(f, H5_INDEX_NAME, H5_ITER_INC, NULL, count_links, &it) >= 0);
    /* a, chunked, data_copy, ext, g1, hard, rec, records, soft */
    CHECK(it.count == 9);
    CHECK(it.saw_g1);
    int nobj = 0;
    CHECK(H5Ovisit3(f, H5_INDEX_NAME, H5_ITER_INC, count_objects, &nobj, H5O_INFO_BASIC) >= 0);
    /* root, a, a/b, a/b/c, chunked, data_copy, g1, g1/data, rec, records */
    CHECK(nobj == 10);

    H5O_info2_t oi;
    CHECK(H5Oget_info_by_name3(f, "g1/data", &oi, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    CHECK(oi.type == H5O_TYPE_DATASET && oi.rc == 2);
    CHECK(H5Fclose(f) >= 0);
}

int main(int argc, char **argv)
{
    const char *fn     = argc > 1 ? argv[1] : "vol_passthru_sec2.h5";
    const char *ext_fn = argc > 2 ? argv[2] : "vol_passthru_sec2_ext.h5";
    const char *del_fn = "vol_passthru_sec2_del.h5";

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    REQUIRE(fapl >= 0);
    REQUIRE(H5Pset_fapl_sec2(fapl) >= 0);

    /* The default connector must be tagg, or the test proves nothing. */
    hid_t              vol_id = -1;
    H5VL_class_value_t value  = -1;
    CHECK(H5Pget_vol_id(fapl, &vol_id) >= 0);
    CHECK(H5VLget_value(vol_id, &value) >= 0);
    H5VLclose(vol_id);
    if (value != 510) {
        fprintf(stderr, "default VOL connector has value %d, not tagg's 510: check HDF5_VOL_CONNECTOR and "
                        "HDF5_PLUGIN_PATH\n", (int)value);
        return EXIT_FAILURE;
    }

    write_file(fn, ext_fn, fapl);
    check_file(fn, fapl, 1);

    /* is_accessible and delete go through the file "specific" callback. */
    CHECK(H5Fis_accessible(fn, fapl) > 0);
    hid_t fd = H5Fcreate(del_fn, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(fd >= 0);
    H5Fclose(fd);
    CHECK(H5Fdelete(del_fn, fapl) >= 0);
    H5E_BEGIN_TRY
    {
        CHECK(H5Fis_accessible(del_fn, fapl) <= 0);
    }
    H5E_END_TRY

    /* The file is plain HDF5: the native connector alone reads the same. */
    hid_t native = H5Pcopy(fapl);
    CHECK(H5Pset_vol(native, H5VL_NATIVE, NULL) >= 0);
    check_file(fn, native, 0);
    H5Pclose(native);

    H5Pclose(fapl);
    if (check_failures)
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    else
        printf("vol pass-through (sec2): all checks passed\n");
    return check_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
