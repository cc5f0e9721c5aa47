/* test_compress.c - the cost of stripe compression (tagg/compress.h): the
 * tier file's codec lines, and compression=auto's rule: a codec is chosen only
 * where its throughput beats the target's bandwidth (slow file system: yes;
 * fast one: no; a codec that does not shrink: never). */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "tagg/compress.h"

#define TIERS "tagg-tiers 1\n" \
  "tier DRAM kind=DRAM latency=100ns bandwidth=10GB/s capacity=16GB persistency=none source\n" \
  "tier FS kind=PFS latency=1ms bandwidth=%s capacity=1TB persistency=permanent target\n" \
  "codec lz4 compress=1GB/s decompress=2GB/s ratio=0.8\n" \
  "codec zstd compress=300MB/s decompress=800MB/s ratio=0.5\n" \
  "codec blosc-lz4 compress=2GB/s decompress=3GB/s ratio=1.0\n"

static void load(const char *fsbw, tagg_tiers_t *t, tagg_fs_perf_t *fs, tagg_codec_perf_t *cp) {
  char text[1024];
  tagg_err_t e;
  snprintf(text, sizeof text, TIERS, fsbw);
  assert_int_equal(tagg_tiers_parse(text, "t", t, &e), TAGG_OK); /* codec lines are not tier lines */
  assert_int_equal(tagg_fs_perf_parse(text, "t", fs, &e), TAGG_OK);
  assert_int_equal(tagg_codec_perf_parse(text, "t", cp, &e), TAGG_OK);
}

static void test_parse(void **state) {
  (void)state;
  tagg_tiers_t t;
  tagg_fs_perf_t fs;
  tagg_codec_perf_t cp;
  load("1GB/s", &t, &fs, &cp);
  assert_int_equal(cp.n, 3);
  assert_string_equal(cp.name[1], "zstd");
  assert_true(cp.compress[1] == 300e6);
  assert_true(cp.decompress[0] == 2e9);
  assert_true(cp.ratio[1] == 0.5);
  static const char *bad[] = {
    "codec lz4 compress=1GB/s decompress=2GB/s\n",                 /* a field missing */
    "codec lz4 compress=1GB/s decompress=2GB/s ratio=0\n",         /* ratio out of range */
    "codec lz4 compress=fast decompress=2GB/s ratio=0.5\n",        /* not a rate */
    "codec lz4 compress=1GB/s decompress=2GB/s speed=3\n",          /* unknown key */
    "codec averyveryverylongname compress=1GB/s decompress=2GB/s ratio=0.5\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tagg_err_t e;
    assert_int_not_equal(tagg_codec_perf_parse(bad[i], "x", &cp, &e), TAGG_OK);
    assert_non_null(strstr(e.msg, "x:1"));
  }
  assert_int_equal(tagg_codec_perf_parse("tagg-tiers 1\n", "x", &cp, NULL), TAGG_OK);
  assert_int_equal(cp.n, 0);
  assert_int_equal(tagg_compress_choose(&cp, &fs, &t, 4 << 20), -1); /* nothing measured: none */
}

static void test_rule(void **state) {
  (void)state;
  tagg_tiers_t t;
  tagg_fs_perf_t fs;
  tagg_codec_perf_t cp;
  double raw, comp;
  uint64_t S = 4 << 20;
  /* a slow file system (100 MB/s): zstd halves the bytes at 300 MB/s: pays, and beats lz4 */
  load("100MB/s", &t, &fs, &cp);
  assert_int_equal(tagg_compress_pays(&cp, 1, &fs, &t, S, &raw, &comp), 1);
  assert_true(comp < raw);
  assert_int_equal(tagg_compress_pays(&cp, 0, &fs, &t, S, NULL, NULL), 1);
  assert_int_equal(tagg_compress_pays(&cp, 2, &fs, &t, S, NULL, NULL), 0); /* ratio 1: never */
  assert_int_equal(tagg_compress_choose(&cp, &fs, &t, S), 1);
  /* a fast one (10 GB/s): no codec beats it */
  load("10GB/s", &t, &fs, &cp);
  assert_int_equal(tagg_compress_pays(&cp, 0, &fs, &t, S, &raw, &comp), 0);
  assert_true(comp >= raw);
  assert_int_equal(tagg_compress_choose(&cp, &fs, &t, S), -1);
  /* in between (1 GB/s): lz4 at 1 GB/s for 20 % less does not pay, zstd neither */
  load("1GB/s", &t, &fs, &cp);
  assert_int_equal(tagg_compress_choose(&cp, &fs, &t, S), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_parse), cmocka_unit_test(test_rule)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
