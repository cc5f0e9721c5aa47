/* Request description: selections and MPI datatypes become the same extents.
 * Runs under mpiexec (MPI datatypes need MPI); every rank checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <mpi.h>
#include <string.h>

#include "extents.h"

static void expect_extent(const tagg_extents_t *x, size_t i, uint64_t off, uint64_t len, const void *mem)
{
    assert_true(i < x->n);
    assert_int_equal(x->v[i].off, off);
    assert_int_equal(x->v[i].len, len);
    assert_ptr_equal(x->v[i].mem, mem);
}

static void test_push_merges_and_sorts(void **state)
{
    (void)state;
    char           buf[64];
    tagg_extents_t x;
    tagg_extents_init(&x);
    assert_int_equal(tagg_extents_push(&x, 100, 8, buf), 0);
    assert_int_equal(tagg_extents_push(&x, 108, 8, buf + 8), 0); /* continues both: merged */
    assert_int_equal(tagg_extents_push(&x, 116, 0, buf + 16), 0); /* empty: skipped */
    assert_int_equal(tagg_extents_push(&x, 50, 4, buf + 16), 0);
    assert_int_equal(tagg_extents_push(&x, 50, 4, buf + 32), 0); /* same offset, later write */
    assert_int_equal(x.n, 3);
    assert_int_equal(x.bytes, 24);
    assert_int_equal(tagg_extents_sort(&x), 0);
    expect_extent(&x, 0, 50, 4, buf + 16);
    expect_extent(&x, 1, 50, 4, buf + 32); /* stable */
    expect_extent(&x, 2, 100, 16, buf);
    assert_false(tagg_extents_disjoint(&x));
    tagg_extents_free(&x);
}

static void test_selection_pairs(void **state)
{
    (void)state;
    /* file: 2D 6x10 of 4-byte elements, rows 1..2, columns 2..5 (2 runs of 16 bytes);
     * memory: 1D of 20 elements, elements 3..10 (one run of 32 bytes). */
    hsize_t fd[2] = {6, 10}, fs0[2] = {1, 2}, fc[2] = {2, 4}, md = 20, ms0 = 3, mc = 8;
    hid_t   f = H5Screate_simple(2, fd, NULL), m = H5Screate_simple(1, &md, NULL);
    H5Sselect_hyperslab(f, H5S_SELECT_SET, fs0, NULL, fc, NULL);
    H5Sselect_hyperslab(m, H5S_SELECT_SET, &ms0, NULL, &mc, NULL);
    char           buf[80];
    tagg_extents_t x;
    tagg_extents_init(&x);
    assert_int_equal(tagg_extents_from_selection(&x, m, f, 1000, 4, buf), 0);
    assert_int_equal(x.n, 2);
    expect_extent(&x, 0, 1000 + (1 * 10 + 2) * 4, 16, buf + 12);
    expect_extent(&x, 1, 1000 + (2 * 10 + 2) * 4, 16, buf + 28);
    /* mismatched counts are refused */
    mc = 7;
    H5Sselect_hyperslab(m, H5S_SELECT_SET, &ms0, NULL, &mc, NULL);
    tagg_extents_reset(&x);
    H5E_BEGIN_TRY { assert_int_equal(tagg_extents_from_selection(&x, m, f, 0, 4, buf), -1); }
    H5E_END_TRY
    /* empty selections give nothing */
    H5Sselect_none(m), H5Sselect_none(f);
    tagg_extents_reset(&x);
    assert_int_equal(tagg_extents_from_selection(&x, m, f, 0, 4, buf), 0);
    assert_int_equal(x.n, 0);
    tagg_extents_free(&x);
    H5Sclose(f), H5Sclose(m);
}

static void test_mpi_types(void **state)
{
    (void)state;
    /* file: 3 blocks of 5 bytes every 12 bytes (vector), resized; memory: 2 x
     * struct of {4 bytes at 0, 4 bytes at 10} extent 16, minus... use 15 bytes
     * contiguous memory to keep it readable. */
    MPI_Datatype ftype, vec;
    MPI_Type_vector(3, 5, 12, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, 40, &ftype);
    MPI_Type_commit(&ftype);
    char           buf[64];
    tagg_extents_t x;
    tagg_extents_init(&x);
    assert_int_equal(tagg_extents_from_mpi_types(&x, 100, ftype, buf, 15, MPI_BYTE), 0);
    assert_int_equal(x.n, 3);
    expect_extent(&x, 0, 100, 5, buf);
    expect_extent(&x, 1, 112, 5, buf + 5);
    expect_extent(&x, 2, 124, 5, buf + 10);
    /* two copies of memory type {2 bytes at 0, 2 bytes at 6}, extent 8, into the same file type */
    MPI_Datatype mtype;
    int          bl[2] = {2, 2};
    MPI_Aint     dp[2] = {0, 6};
    MPI_Datatype ty[2] = {MPI_BYTE, MPI_BYTE}, st;
    MPI_Type_create_struct(2, bl, dp, ty, &st);
    MPI_Type_create_resized(st, 0, 8, &mtype);
    MPI_Type_commit(&mtype);
    tagg_extents_reset(&x);
    assert_int_equal(tagg_extents_from_mpi_types(&x, 0, ftype, buf, 2, mtype), 0);
    /* memory runs: [0,2) [6,8) [8,10) [14,16) -> [0,2) [6,10) [14,16) (merged in memory);
     * file runs: [0,5) [12,17): pieces in order */
    assert_int_equal(x.bytes, 8);
    expect_extent(&x, 0, 0, 2, buf);
    expect_extent(&x, 1, 2, 3, buf + 6);
    expect_extent(&x, 2, 12, 1, buf + 9);
    expect_extent(&x, 3, 13, 2, buf + 14);
    /* more memory than the file type holds tiles the file type: 20 bytes -> 4th block at 40 */
    tagg_extents_reset(&x);
    assert_int_equal(tagg_extents_from_mpi_types(&x, 0, ftype, buf, 20, MPI_BYTE), 0);
    expect_extent(&x, 3, 40, 5, buf + 15);
    MPI_Type_free(&mtype), MPI_Type_free(&st), MPI_Type_free(&ftype), MPI_Type_free(&vec);
    tagg_extents_free(&x);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_merges_and_sorts),
        cmocka_unit_test(test_selection_pairs),
        cmocka_unit_test(test_mpi_types),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL), all;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return all;
}
