/* The subfile layout's stripe map and index (subfile_index.c), no MPI: the map
 * against a brute-force model, CRC-64 against its check value, the index
 * round-trip through text and through a file, and the rejects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "subfile_index.h"

/* Every byte of a small address space, for several S and N: locate agrees
 * with the definition, subfile_size counts the bytes each subfile gets and
 * logical_end maps each subfile's size back to the logical size. */
static void test_stripe_map(void **state)
{
    (void)state;
    const uint64_t Ss[] = {1, 3, 4096};
    const uint32_t Ns[] = {1, 2, 3, 7};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 4; b++) {
            uint64_t S = Ss[a];
            uint32_t N = Ns[b];
            uint64_t top = S * N * 3 + 5, max_local[8] = {0};
            for (uint64_t off = 0; off < top; off++) {
                uint32_t k;
                uint64_t local;
                tagg_sf_locate(off, S, N, &k, &local);
                assert_int_equal(k, (off / S) % N);
                assert_int_equal(local, (off / S / N) * S + off % S);
                if (local + 1 > max_local[k])
                    max_local[k] = local + 1;
                /* after writing [0, off], each subfile's size is what subfile_size says */
                uint64_t L = off + 1, end = 0;
                for (uint32_t j = 0; j < N; j++) {
                    assert_int_equal(tagg_sf_subfile_size(L, S, N, j), max_local[j]);
                    uint64_t e = tagg_sf_logical_end(max_local[j], S, N, j);
                    end        = e > end ? e : end;
                }
                assert_int_equal(end, L);
            }
            for (uint32_t j = 0; j < N; j++)
                assert_int_equal(tagg_sf_subfile_size(0, S, N, j), 0);
        }
    /* a concrete case: S = 4096, N = 3, logical size 78724 = 19 stripes + 900 bytes */
    assert_int_equal(tagg_sf_subfile_size(78724, 4096, 3, 0), 7 * 4096);
    assert_int_equal(tagg_sf_subfile_size(78724, 4096, 3, 1), 6 * 4096 + 900);
    assert_int_equal(tagg_sf_subfile_size(78724, 4096, 3, 2), 6 * 4096);
    assert_int_equal(tagg_sf_logical_end(6 * 4096 + 900, 4096, 3, 1), 78724);
}

static void test_crc64(void **state)
{
    (void)state;
    assert_true(tagg_crc64(0, "123456789", 9) == UINT64_C(0x995dc9bbdf1939fa)); /* CRC-64/XZ check value */
    assert_true(tagg_crc64(0, NULL, 0) == 0);
    /* incremental equals whole */
    uint64_t c = tagg_crc64(0, "1234", 4);
    assert_true(tagg_crc64(c, "56789", 5) == UINT64_C(0x995dc9bbdf1939fa));
}

static void make_index(tagg_sf_index_t *ix)
{
    assert_int_equal(tagg_sf_index_init(ix, 4096, 3), 0);
    ix->closed       = 1;
    ix->logical_size = 78724;
    for (uint32_t k = 0; k < 3; k++) {
        ix->sub[k].name = tagg_sf_default_name("/some/dir/my file.h5", k, 3);
        ix->sub[k].size = tagg_sf_subfile_size(78724, 4096, 3, k);
        ix->sub[k].crc  = UINT64_C(0xfedcba9876543210) ^ k;
    }
}

static void assert_same(const tagg_sf_index_t *a, const tagg_sf_index_t *b)
{
    assert_int_equal(a->version, b->version);
    assert_int_equal(a->closed, b->closed);
    assert_int_equal(a->stripe, b->stripe);
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->logical_size, b->logical_size);
    for (uint32_t k = 0; k < a->count; k++) {
        assert_string_equal(a->sub[k].name, b->sub[k].name);
        assert_int_equal(a->sub[k].size, b->sub[k].size);
        assert_true(a->sub[k].crc == b->sub[k].crc);
    }
}

static void test_round_trip(void **state)
{
    (void)state;
    tagg_sf_index_t ix, back;
    char           *text, err[512];
    size_t          len;
    make_index(&ix);
    assert_string_equal(ix.sub[1].name, "my file.h5.tagg.1of3");
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    assert_int_equal(strncmp(text, "tagg subfiled HDF5 file, use tagg-fuse", 38), 0);
    assert_true(memcmp(text, "\211HDF", 4) != 0);
    if (tagg_sf_index_parse(text, len, &back, err, sizeof err) < 0)
        fail_msg("parse: %s", err);
    assert_same(&ix, &back);
    tagg_sf_index_free(&back);
    free(text);

    /* through a file, atomically replaced */
    char dir[] = "/tmp/tagg-sfidx-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/x.h5", dir);
    assert_int_equal(tagg_sf_probe(path, err, sizeof err), 0); /* absent */
    if (tagg_sf_index_write(path, &ix, 1, err, sizeof err) < 0)
        fail_msg("write: %s", err);
    ix.closed = 0; /* rewrite: the second write replaces the first */
    assert_int_equal(tagg_sf_index_write(path, &ix, 0, err, sizeof err), 0);
    assert_int_equal(tagg_sf_probe(path, err, sizeof err), 1);
    if (tagg_sf_index_read(path, &back, err, sizeof err) < 0)
        fail_msg("read: %s", err);
    assert_same(&ix, &back);
    char *sp = tagg_sf_subfile_path(path, back.sub[2].name);
    assert_int_equal(strncmp(sp, dir, strlen(dir)), 0);
    assert_non_null(strstr(sp, "/my file.h5.tagg.2of3"));
    free(sp);
    tagg_sf_index_free(&back);
    unlink(path);
    rmdir(dir);
    tagg_sf_index_free(&ix);
}

/* Each damage must be rejected with its own message. */
static void expect_reject(const char *text, const char *want)
{
    tagg_sf_index_t ix;
    char            err[512] = "";
    if (tagg_sf_index_parse(text, strlen(text), &ix, err, sizeof err) == 0)
        fail_msg("accepted a damaged index (wanted '%s')", want);
    if (!strstr(err, want))
        fail_msg("message '%s' lacks '%s'", err, want);
    assert_null(ix.sub);
}

/* Format 2 (node-local subfiles): round trip, and what a reader refuses. */
static void test_format2(void **state)
{
    (void)state;
    tagg_sf_index_t ix, back;
    char           *text, err[256];
    size_t          len;
    assert_int_equal(tagg_sf_index_init(&ix, 4096, 2), 0);
    ix.nvr = 1, ix.closed = 1, ix.logical_size = 9000;
    ix.meta.name = tagg_sf_meta_name("/pfs/run/out.h5");
    ix.meta.size = 9000, ix.meta.crc = 7;
    assert_string_equal(ix.meta.name, "out.h5.tagg.meta");
    for (uint32_t k = 0; k < 2; k++) {
        ix.sub[k].node = strdup(k ? "host.vnode1" : "host.vnode0");
        ix.sub[k].name = tagg_sf_nvr_path("/local/ssd", ix.sub[k].node, "/pfs/run/out.h5", k, 2);
        ix.sub[k].size = 4096, ix.sub[k].crc = 100 + k;
    }
    assert_non_null(strstr(ix.sub[1].name, "/local/ssd/tagg-nvr.host.vnode1/out.h5."));
    assert_non_null(strstr(ix.sub[1].name, ".1of2"));
    char *other = tagg_sf_nvr_path("/local/ssd", "host.vnode1", "/pfs/other/out.h5", 1, 2);
    assert_string_not_equal(other, ix.sub[1].name); /* same base name, other directory: other path */
    free(other);
    char *p = tagg_sf_subfile_path("/pfs/run/out.h5", ix.sub[0].name);
    assert_string_equal(p, ix.sub[0].name); /* absolute names are themselves */
    free(p);
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    assert_non_null(strstr(text, "\nformat 2\nlayout subfiles\ndestination nvr\n"));
    assert_non_null(strstr(text, "\nnode 1 host.vnode1\n"));
    assert_int_equal(tagg_sf_index_parse(text, len, &back, err, sizeof err), 0);
    assert_int_equal(back.nvr, 1);
    assert_int_equal(back.version, 2);
    assert_string_equal(back.meta.name, ix.meta.name);
    assert_true(back.meta.size == 9000 && back.meta.crc == 7);
    for (uint32_t k = 0; k < 2; k++) {
        assert_string_equal(back.sub[k].name, ix.sub[k].name);
        assert_string_equal(back.sub[k].node, ix.sub[k].node);
        assert_true(back.sub[k].crc == 100 + k);
    }
    tagg_sf_index_free(&back);
    free(text);
    /* a relative node-local path: refused (the index checksum is right, only the field is wrong) */
    free(ix.sub[0].name);
    ix.sub[0].name = strdup("relative.0of2");
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    assert_int_equal(tagg_sf_index_parse(text, len, &back, err, sizeof err), -1);
    assert_non_null(strstr(err, "is not absolute"));
    free(text);
    /* format 1 files are still written as format 1 */
    ix.nvr = 0;
    free(ix.sub[0].name);
    ix.sub[0].name = strdup("out.h5.tagg.0of2");
    free(ix.sub[1].name);
    ix.sub[1].name = strdup("out.h5.tagg.1of2");
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    assert_non_null(strstr(text, "\nformat 1\nlayout subfiles\nstate closed\n"));
    assert_null(strstr(text, "node "));
    free(text);
    tagg_sf_index_free(&ix);
}

static void test_rejects(void **state)
{
    (void)state;
    tagg_sf_index_t ix;
    char           *text, *t;
    size_t          len;
    make_index(&ix);
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    t = strdup(text);

    t[0] = 'T';
    expect_reject(t, "bad magic");
    expect_reject("\211HDF\r\n\032\n", "bad magic");
    expect_reject("", "bad magic");

    strcpy(t, text);
    *strstr(t, "format 1") = 'F';
    expect_reject(t, "no 'format' line");
    strcpy(t, text);
    strstr(t, "format 1")[7] = '3';
    expect_reject(t, "unsupported index format version 3");

    strcpy(t, text);
    strstr(t, "stripe_size 4096")[12] = '8'; /* any change of the body */
    expect_reject(t, "index checksum mismatch");
    strcpy(t, text);
    strstr(t, "index_crc64 ")[12] ^= 1;
    expect_reject(t, "index checksum mismatch");
    strcpy(t, text);
    t[len - 1] = '\0'; /* lost the final newline */
    expect_reject(t, "truncated");
    strcpy(t, text);
    *strstr(t, "subfile 2 ") = '\0'; /* cut after subfile 1 */
    expect_reject(t, "truncated");
    free(t);
    free(text);

    /* a well-checksummed index with bad fields */
    ix.count = 2; /* the text then names 2 subfiles: fine */
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    tagg_sf_index_t back;
    char            err[256];
    assert_int_equal(tagg_sf_index_parse(text, len, &back, err, sizeof err), 0);
    assert_int_equal(back.count, 2);
    tagg_sf_index_free(&back);
    free(text);
    free(ix.sub[0].name);
    ix.sub[0].name = strdup("../escape");
    assert_int_equal(tagg_sf_index_format(&ix, &text, &len), 0);
    expect_reject(text, "is not a plain name");
    free(text);
    ix.count = 3;
    tagg_sf_index_free(&ix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stripe_map),
        cmocka_unit_test(test_crc64),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_format2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
