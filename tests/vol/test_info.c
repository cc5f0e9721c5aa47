/* The connector's info string, in process: parse, print, copy, compare, and
 * reject malformed strings with a "tagg VOL:" message on the error stack.
 * Also: a file-access list naming tagg with no info at all (NULL info) works.
 * Needs HDF5_PLUGIN_PATH with the tagg plugin; HDF5_VOL_CONNECTOR unset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <H5VLconnector_passthru.h>
#include <H5VLpassthru.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

static hid_t tagg_id = H5I_INVALID_HID;

/* ---- error stack capture ------------------------------------------------- */

static char stack_text[8192];

static herr_t collect(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    (void)data;
    size_t used = strlen(stack_text);
    snprintf(stack_text + used, sizeof stack_text - used, "%s\n", e->desc ? e->desc : "");
    return 0;
}

/* Copies the current error stack's descriptions into stack_text. */
static void capture_stack(void)
{
    stack_text[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, NULL);
}

/* ---- helpers ------------------------------------------------------------- */

/* str -> info -> str. Returns the printed string (caller frees with H5free_memory). */
static char *round_trip(const char *in)
{
    void *info = NULL;
    char *out  = NULL;
    if (H5VLconnector_str_to_info(in, tagg_id, &info) < 0) {
        capture_stack();
        fail_msg("'%s' was rejected:\n%s", in, stack_text);
    }
    assert_non_null(info);
    assert_true(H5VLconnector_info_to_str(info, tagg_id, &out) >= 0);
    assert_non_null(out);
    assert_true(H5VLfree_connector_info(tagg_id, info) >= 0);
    return out;
}

/* ---- tests --------------------------------------------------------------- */

static void test_registered(void **state)
{
    (void)state;
    assert_true(tagg_id >= 0);
    H5VL_class_value_t v = -1;
    assert_true(H5VLget_value(tagg_id, &v) >= 0);
    assert_int_equal(v, 510);
    assert_true(H5VLis_connector_registered_by_name("tagg") > 0);
}

static void test_good_strings(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"", "under_vol=0;under_info={}"},
        {"under_vol=0;under_info={}", "under_vol=0;under_info={}"},
        {"under_vol=native;under_info={}", "under_vol=0;under_info={}"},
        {"under_vol=0", "under_vol=0;under_info={}"},
        {"  under_vol = 0 ; under_info = { } ; verbose=1 ;", "under_vol=0;under_info={};verbose=1"},
        {"verbose=2;fsync=1", "under_vol=0;under_info={};verbose=2;fsync=1"},
        {"under_vol=0;under_info={};verbose=1;backend=mpiio", "under_vol=0;under_info={};verbose=1;backend=mpiio"},
        /* tagg on HDF5's own pass-through connector (value 1) on native: nested braces */
        {"under_vol=1;under_info={under_vol=0;under_info={}};verbose=1",
         "under_vol=1;under_info={under_vol=0;under_info={}};verbose=1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = round_trip(cases[i].in);
        if (strcmp(out, cases[i].out) != 0)
            fail_msg("'%s' printed as '%s', expected '%s'", cases[i].in, out, cases[i].out);
        /* printing what was printed gives the same again */
        char *again = round_trip(out);
        assert_string_equal(again, out);
        H5free_memory(again);
        H5free_memory(out);
    }
}

static void test_copy_and_compare(void **state)
{
    (void)state;
    void *a = NULL, *b = NULL, *c = NULL, *copy = NULL;
    int   cmp = 99;
    assert_true(H5VLconnector_str_to_info("under_vol=0;under_info={};verbose=1", tagg_id, &a) >= 0);
    assert_true(H5VLconnector_str_to_info("under_vol=native;verbose=1", tagg_id, &b) >= 0);
    assert_true(H5VLconnector_str_to_info("under_vol=0;under_info={};verbose=2", tagg_id, &c) >= 0);
    assert_true(H5VLcmp_connector_info(&cmp, tagg_id, a, b) >= 0);
    assert_int_equal(cmp, 0);
    assert_true(H5VLcmp_connector_info(&cmp, tagg_id, a, c) >= 0);
    assert_int_not_equal(cmp, 0); /* the tagg configuration takes part */
    assert_true(H5VLcopy_connector_info(tagg_id, &copy, c) >= 0);
    assert_true(H5VLcmp_connector_info(&cmp, tagg_id, copy, c) >= 0);
    assert_int_equal(cmp, 0);
    char *s = NULL;
    assert_true(H5VLconnector_info_to_str(copy, tagg_id, &s) >= 0);
    assert_string_equal(s, "under_vol=0;under_info={};verbose=2");
    H5free_memory(s);

    /* Through a file-access list: H5Pset_vol copies, H5Pget_vol_info copies back. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    assert_true(H5Pset_vol(fapl, tagg_id, c) >= 0);
    void *back = NULL;
    assert_true(H5Pget_vol_info(fapl, &back) >= 0);
    assert_non_null(back);
    assert_true(H5VLcmp_connector_info(&cmp, tagg_id, back, c) >= 0);
    assert_int_equal(cmp, 0);
    H5VLfree_connector_info(tagg_id, back);
    H5Pclose(fapl);

    H5VLfree_connector_info(tagg_id, a);
    H5VLfree_connector_info(tagg_id, b);
    H5VLfree_connector_info(tagg_id, c);
    H5VLfree_connector_info(tagg_id, copy);
}

static void test_bad_strings(void **state)
{
    (void)state;
    static const struct {
        const char *in, *why;
    } cases[] = {
        {"under_vol=999999;under_info={}", "unknown under_vol=999999"},
        {"under_vol=nosuchconnector", "unknown under_vol=nosuchconnector"},
        {"under_vol=0;under_info={", "unbalanced braces"},
        {"under_vol=0;under_info={}}", "unbalanced braces"},
        {"under_vol=0;under_info={{}", "unbalanced braces"},
        {"under_vol=0;under_info={};bogus=1", "unknown key 'bogus'"},
        {"under_vol=0;under_info={};verbose=9", "verbose"},
        {"under_vol=0;under_info={};backend=nosuch", "backend"},
        {"under_vol=510;under_info={}", "tagg connector itself"},
        {"under_vol=tagg", "tagg connector itself"},
        {"under_vol=0;under_info=abc", "under_info must be one group in braces"},
        {"under_vol=0;under_info={}x", "under_info must be one group in braces"},
        {"under_vol=0;under_vol=0", "under_vol given twice"},
        {"under_vol=", "under_vol is empty"},
        {"justtext", "not of the form key=value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        void *info = (void *)&info; /* must be reset to NULL */
        /* The H5VL* helper calls do not clear the stack on entry: do it here. */
        H5Eclear2(H5E_DEFAULT);
        herr_t ret = H5VLconnector_str_to_info(cases[i].in, tagg_id, &info);
        capture_stack();
        if (ret >= 0)
            fail_msg("'%s' was accepted", cases[i].in);
        assert_null(info);
        if (!strstr(stack_text, "tagg VOL: ") || !strstr(stack_text, cases[i].why))
            fail_msg("'%s': error stack does not say 'tagg VOL: ...%s...':\n%s", cases[i].in, cases[i].why,
                     stack_text);
    }
}

/* H5Pset_vol(fapl, tagg, NULL): no info at all means native underneath. */
static void test_null_info_file(void **state)
{
    (void)state;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    assert_true(H5Pset_vol(fapl, tagg_id, NULL) >= 0);
    hid_t f = H5Fcreate("vol_info_null.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    assert_true(f >= 0);
    char name[32] = "";
    assert_true(H5VLget_connector_name(f, name, sizeof name) > 0);
    assert_string_equal(name, "tagg");
    hid_t g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(g >= 0);
    H5Gclose(g);
    assert_true(H5Fclose(f) >= 0);
    H5Pclose(fapl);
}

int main(void)
{
    /* Failures are asserted on, not printed. */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    tagg_id = H5VLregister_connector_by_name("tagg", H5P_DEFAULT);
    if (tagg_id < 0) {
        H5Eprint2(H5E_DEFAULT, stderr);
        fprintf(stderr, "cannot load the tagg VOL connector: check HDF5_PLUGIN_PATH\n");
        return 1;
    }
    /* HDF5's own pass-through connector (value 1) registers on first use only. */
    if (H5VL_pass_through_register() < 0) {
        fprintf(stderr, "cannot register HDF5's pass-through connector\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registered),
        cmocka_unit_test(test_good_strings),
        cmocka_unit_test(test_copy_and_compare),
        cmocka_unit_test(test_bad_strings),
        cmocka_unit_test(test_null_info_file),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    H5VLunregister_connector(tagg_id);
    return failed;
}
