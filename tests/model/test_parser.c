/* test_parser.c - topology and tier files: accept and reject cases, each
 * reject naming the line and the field (Margo-style table of input ->
 * expected outcome), the shipped example files, and the pattern specs. */
#include <stdlib.h>
#include "testutil.h"

typedef struct {
  const char *text;
  int ok;
  const char *msg; /* substring of the error when !ok */
} parse_case_t;

#define H "tagg-topology 1\n"
#define OK_BODY "kind torus\ndims 4 4\nranks_per_node 2\nio_nodes 0\nlatency 1us\nbandwidth 2GB/s\n"
static const parse_case_t topo_cases[] = {
    {H OK_BODY, 1, NULL},
    {"# comment first\n\n" H "# c\n" OK_BODY "# trailing\n", 1, NULL},
    {H "name x\nkind fattree\nlevels 2 4\nnranks 10\nranks_per_node 2\nio_stride 4\nlatency 1us\nbandwidth 1GB/s\n", 1, NULL},
    {H "kind generic\nnodes 3\ndistance 0 0 1 2\ndistance 1 1 0 1\ndistance 2 2 1 0\nrank_nodes 0 1\nrank_nodes 2\nio_nodes 1\nlatency 1us\nbandwidth 1GB/s\n", 1, NULL},
    {"", 0, "test.topo: field 'tagg-topology': empty file"},
    {"tagg-topo 1\n" OK_BODY, 0, "test.topo:1: field 'tagg-topology': first line"},
    {"tagg-topology 2\n" OK_BODY, 0, "test.topo:1: field 'tagg-topology': unsupported version '2'"},
    {H "kind torus\ncolour blue\n", 0, "test.topo:3: field 'colour': unknown field"},
    {H "kind hypercube\n", 0, "test.topo:2: field 'kind': unknown kind 'hypercube'"},
    {H "kind torus\ndims 4 x\n", 0, "test.topo:3: field 'dims': expected an integer in 1..1048576, got 'x'"},
    {H "kind torus\ndims 4 0\n", 0, "test.topo:3: field 'dims': expected an integer"},
    {H "kind torus\ndims 4 4\nranks_per_node 2\nio_nodes 0\nbandwidth 2GB/s\n", 0, "field 'latency': missing (required)"},
    {H "kind torus\ndims 4 4\nranks_per_node 2\nio_nodes 0\nlatency 1us\nbandwidth fast\n", 0, "test.topo:7: field 'bandwidth': expected one bandwidth"},
    {H "kind torus\ndims 4 4\nranks_per_node 2\nio_nodes 0\nlatency soon\nbandwidth 1GB/s\n", 0, "test.topo:6: field 'latency'"},
    {H "kind dragonfly\ndims 2 2 2\nranks_per_node 1\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:3: field 'dims': kind dragonfly needs 4..4 values, got 3"},
    {H "kind torus\ndims 2 2\nrank_nodes 0 1 9\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:4: field 'rank_nodes': rank 2 on node 9, outside 0..3"},
    {H "kind torus\ndims 2 2\nranks_per_node 1\nio_nodes 0 7\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:5: field 'io_nodes': node 7 outside 0..3"},
    {H "kind torus\ndims 2 2\nranks_per_node 1\nio_nodes 1 1\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:5: field 'io_nodes': node 1 listed twice"},
    {H "kind torus\nkind torus\n", 0, "test.topo:3: field 'kind': given twice (first on line 2)"},
    {H "kind torus\ndims 4 4\nwrap 1\n", 0, "test.topo:4: field 'wrap': expected 2 values"},
    {H "kind torus\nwrap 1\n", 0, "test.topo:3: field 'wrap': must come after 'dims'"},
    {H "kind torus\ndims 4 4\nwrap 1 2\n", 0, "test.topo:4: field 'wrap': expected an integer in 0..1"},
    {H "kind torus\ndims 4 4\nnode 0 1 4\n", 0, "test.topo:4: field 'node': coordinate 1 is 4, outside 0..3"},
    {H "kind torus\ndims 4 4\nnode 0 1 1\nnode 1 1 1\nranks_per_node 1\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:5: field 'node': coordinates of node 1 already used"},
    {H "kind torus\ndims 4 4\nnode 0 1 1\nnode 5 1 2\nranks_per_node 1\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:5: field 'node': id 5 outside 0..1"},
    {H "kind generic\nnodes 2\ndistance 0 0 1\ndistance 1 2 0\nranks_per_node 1\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "not symmetric at [0][1]"},
    {H "kind generic\nnodes 2\ndistance 0 0 1\nranks_per_node 1\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:4: field 'distance': 1 rows given, 2 needed"},
    {H "kind generic\ndistance 0 0 1\n", 0, "test.topo:3: field 'distance': must come after 'nodes'"},
    {H "kind torus\ndims 2\nnodes 2\ndistance 0 0 1\ndistance 1 1 0\nranks_per_node 1\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:5: field 'distance': only allowed with kind generic"},
    {H "kind torus\ndims 2 2\nranks_per_node 1\nrank_nodes 0\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:5: field 'rank_nodes': give either ranks_per_node or rank_nodes"},
    {H "kind torus\ndims 2 2\nranks_per_node 2\nnranks 9\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:5: field 'nranks': 9 ranks do not fit 4 nodes x 2"},
    {H "kind torus\ndims 2 2\nranks_per_node 2\nlatency 1us\nbandwidth 1GB/s\n", 0, "field 'io_nodes': missing (or give io_stride)"},
    {H "kind torus\ndims 2 2\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "field 'ranks_per_node': missing"},
    {H "kind torus\ndims 2 2\nranks_per_node 1\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\nglobal_bandwidth 1GB/s\n", 0, "test.topo:8: field 'global_bandwidth': only allowed with kind dragonfly"},
    {H "kind fattree\nlevels 2 2\nranks_per_node 1\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\nlevel_bandwidth 1GB/s 1GB/s\n", 0, "test.topo:8: field 'level_bandwidth': only with kind generic"},
    {H "kind torus\ndims 2 2\nranks_per_node 1\nio_nodes 0\nio_stride 2\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:6: field 'io_stride': give either io_nodes or io_stride"},
    {H "kind torus\ndims 2 2\nranks_per_node 1 2\n", 0, "test.topo:4: field 'ranks_per_node': expected one value"},
    {H "kind torus\nname\n", 0, "test.topo:3: field 'name': missing value"},
    {H "kind torus\ndims 65536 65536\nranks_per_node 1\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:3: field 'dims': more than 2^24 nodes"},
    {H "kind torus\ndims 2 2\nnodes 3\nranks_per_node 1\nio_nodes 0\nlatency 1us\nbandwidth 1GB/s\n", 0, "test.topo:4: field 'nodes': says 3 but dims give 4 nodes"},
};

static void test_topology_cases(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof topo_cases / sizeof *topo_cases; i++) {
    const parse_case_t *c = &topo_cases[i];
    tagg_topology_t *t = NULL;
    tagg_err_t err = {0};
    int rc = tagg_topology_parse(c->text, "test.topo", &t, &err);
    if (c->ok) {
      if (rc) fail_msg("case %zu should parse: %s", i, err.msg);
      assert_non_null(t);
    } else {
      if (!rc) fail_msg("case %zu should be rejected (%s)", i, c->msg);
      assert_null(t);
      assert_int_equal(err.code, rc);
      if (!strstr(err.msg, c->msg)) fail_msg("case %zu: got '%s', want '%s'", i, err.msg, c->msg);
    }
    tagg_topology_free(t);
  }
}

typedef struct { const char *file; const char *kind; int nodes, ranks, nio; } example_t;
static const example_t examples[] = {
    {EX("bgq-5d-512.topo"), "torus", 512, 8192, 8},
    {EX("bgq-5d-4096.topo"), "torus", 4096, 16384, 64},
    {EX("theta-dragonfly.topo"), "dragonfly", 1536, 24576, 24},
    {EX("fattree-cluster.topo"), "fattree", 128, 1536, 4},
    {EX("localhost-2core.topo"), "generic", 4, 8, 1},
    {EX("toy-table1.topo"), "generic", 5, 4, 1},
};

static void test_example_topologies(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof examples / sizeof *examples; i++) {
    tagg_topology_t *t = NULL;
    tagg_err_t err = {0};
    if (tagg_topology_load(examples[i].file, &t, &err)) fail_msg("%s", err.msg);
    assert_string_equal(tagg_topology_ops(t)->name, examples[i].kind);
    assert_int_equal(tagg_topology_nnodes(t), examples[i].nodes);
    assert_int_equal(tagg_topology_nranks(t), examples[i].ranks);
    assert_int_equal(tagg_topology_nio(t), examples[i].nio);
    tagg_topology_free(t);
  }
  tagg_topology_t *t = NULL;
  tagg_err_t err = {0};
  assert_int_equal(tagg_topology_load("/nonexistent/x.topo", &t, &err), TAGG_EIO);
  assert_contains(err.msg, "/nonexistent/x.topo: cannot open");
}

#define TH "tagg-tiers 1\n"
#define HBM "tier HBM kind=HBM latency=10ms bandwidth=180GB/s capacity=16GB persistency=none\n"
#define DRAM "tier DRAM kind=DRAM latency=20ms bandwidth=90GB/s capacity=192GB persistency=none\n"
#define PFS "tier PFS kind=PFS latency=1ms bandwidth=5GB/s capacity=1PB persistency=permanent\n"
static const parse_case_t tier_cases[] = {
    {TH HBM DRAM PFS, 1, NULL},
    {TH "tier A kind=DDR latency=1us bandwidth=1GiB/s capacity=1GiB persistency=none source\n"
        "tier B kind=SSD latency=1us bandwidth=1GBps capacity=1TB persistency=job target\n", 1, NULL},
    {"", 0, "test.tiers: field 'tagg-tiers': empty file"},
    {"tagg-tiers 7\n" HBM, 0, "test.tiers:1: field 'tagg-tiers': unsupported version '7'"},
    {"tiers 1\n", 0, "test.tiers:1: field 'tagg-tiers': first line"},
    {TH "layer X\n", 0, "test.tiers:2: field 'layer': unknown"},
    {TH "tier\n", 0, "test.tiers:2: field 'tier': missing tier name"},
    {TH "tier X kind=GPU latency=1ms bandwidth=1GB/s capacity=1GB persistency=none\n", 0, "test.tiers:2: field 'kind': unknown kind 'GPU'"},
    {TH "tier X kind=DRAM latency=1ms bandwidth=1GB/s capacity=1GB persistency=forever\n", 0, "test.tiers:2: field 'persistency': expected none, job or permanent"},
    {TH "tier X kind=DRAM latency=1ms bandwidth=0GB/s capacity=1GB persistency=none\n", 0, "test.tiers:2: field 'bandwidth'"},
    {TH "tier X kind=DRAM latency=-1ms bandwidth=1GB/s capacity=1GB persistency=none\n", 0, "test.tiers:2: field 'latency'"},
    {TH "tier X kind=DRAM latency=1ms bandwidth=1GB/s capacity=lots persistency=none\n", 0, "test.tiers:2: field 'capacity'"},
    {TH "tier X kind=DRAM latency=1ms bandwidth=1GB/s persistency=none\n", 0, "test.tiers:2: field 'capacity': missing for tier X"},
    {TH "tier X kind=DRAM latency=1ms latency=2ms\n", 0, "test.tiers:2: field 'latency': given twice"},
    {TH "tier X kind=DRAM colour=red\n", 0, "test.tiers:2: field 'colour': unknown"},
    {TH "tier X kind=DRAM fast\n", 0, "test.tiers:2: field 'fast': expected key=value"},
    {TH HBM DRAM "tier hbm kind=HBM latency=1ms bandwidth=1GB/s capacity=1GB persistency=none\n", 0, "test.tiers:4: field 'tier': name 'hbm' used twice"},
    {TH HBM DRAM, 0, "test.tiers: field 'target': no tier flagged target and no PFS tier"},
    {TH HBM PFS, 0, "test.tiers: field 'source': no tier flagged source and no DRAM tier"},
    {TH "tier A kind=DRAM latency=1ms bandwidth=1GB/s capacity=1GB persistency=none source\n"
        "tier B kind=DRAM latency=1ms bandwidth=1GB/s capacity=1GB persistency=none source\n", 0, "test.tiers:3: field 'source': already set on line 2"},
    {TH "tier A kind=DRAM latency=1ms bandwidth=1GB/s capacity=1GB persistency=none source target\n", 0, "need 2..8 tiers"},
    {TH "tier A kind=DRAM latency=1ms bandwidth=1GB/s capacity=1GB persistency=none source target\n" HBM, 0, "source and target are the same tier"},
    {TH HBM DRAM PFS HBM, 0, "name 'HBM' used twice"},
};

static void test_tier_cases(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof tier_cases / sizeof *tier_cases; i++) {
    const parse_case_t *c = &tier_cases[i];
    tagg_tiers_t t;
    tagg_err_t err = {0};
    int rc = tagg_tiers_parse(c->text, "test.tiers", &t, &err);
    if (c->ok && rc) fail_msg("tier case %zu should parse: %s", i, err.msg);
    if (!c->ok) {
      if (!rc) fail_msg("tier case %zu should be rejected (%s)", i, c->msg);
      if (!strstr(err.msg, c->msg)) fail_msg("tier case %zu: got '%s', want '%s'", i, err.msg, c->msg);
    }
  }
  /* more than TAGG_MAX_TIERS */
  char buf[4096] = TH;
  for (int i = 0; i < TAGG_MAX_TIERS + 1; i++) {
    char line[160];
    snprintf(line, sizeof line, "tier T%d kind=DRAM latency=1ms bandwidth=1GB/s capacity=1GB persistency=none\n", i);
    strncat(buf, line, sizeof buf - strlen(buf) - 1);
  }
  tagg_tiers_t t;
  tagg_err_t err = {0};
  assert_int_equal(tagg_tiers_parse(buf, "many.tiers", &t, &err), TAGG_EPARSE);
  assert_contains(err.msg, "many.tiers:10: field 'tier': more than 8 tiers");
}

static void test_tier_values_and_roundtrip(void **state) {
  (void)state;
  tagg_tiers_t t, u;
  tagg_err_t err = {0};
  if (tagg_tiers_load(EX("toy-table1.tiers"), &t, &err)) fail_msg("%s", err.msg);
  assert_int_equal(t.ntiers, 4);
  int hbm = tagg_tiers_find(&t, "HBM"), nvr = tagg_tiers_find(&t, "nvr");
  assert_true(hbm >= 0 && nvr >= 0);
  assert_true(fabs(t.tier[hbm].latency - 0.010) < 1e-15);
  assert_true(t.tier[hbm].bandwidth == 180e9);
  assert_true(t.tier[hbm].capacity == 16000000000ull);
  assert_int_equal(t.tier[nvr].persistency, TAGG_PERSIST_JOB);
  assert_true(t.tier[nvr].bandwidth == 0.15e9);
  assert_string_equal(t.tier[t.source].name, "DRAM");
  assert_string_equal(t.tier[t.target].name, "PFS");
  /* print -> parse gives the same tiers */
  FILE *f = tmpfile();
  assert_non_null(f);
  tagg_tiers_print(&t, f);
  long n = ftell(f);
  rewind(f);
  char *text = calloc(1, (size_t)n + 1);
  assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  if (tagg_tiers_parse(text, "printed", &u, &err)) fail_msg("%s\n%s", err.msg, text);
  free(text);
  assert_int_equal(u.ntiers, t.ntiers);
  assert_int_equal(u.source, t.source);
  assert_int_equal(u.target, t.target);
  for (int i = 0; i < t.ntiers; i++) {
    assert_string_equal(u.tier[i].name, t.tier[i].name);
    assert_true(fabs(u.tier[i].bandwidth - t.tier[i].bandwidth) <= 1e-9 * t.tier[i].bandwidth);
    assert_true(u.tier[i].capacity == t.tier[i].capacity);
    assert_int_equal(u.tier[i].persistency, t.tier[i].persistency);
  }
  static const char *const files[] = {EX("knl.tiers"), EX("bgq.tiers"), EX("cluster.tiers"), EX("localhost.tiers")};
  for (size_t i = 0; i < 4; i++)
    if (tagg_tiers_load(files[i], &u, &err)) fail_msg("%s", err.msg);
  tagg_tiers_default(&u);
  assert_int_equal(tagg_tiers_validate(&u, &err), TAGG_OK);
}

typedef struct { const char *spec; int ok; uint64_t first, second; const char *msg; } pattern_case_t;
static const pattern_case_t pattern_cases[] = {
    {"uniform:1MB", 1, 1000000, 1000000, NULL},
    {"uniform:2KiB", 1, 2048, 2048, NULL},
    {"hacc:1000", 1, 38000, 38000, NULL},
    {"s3d:10:10:10", 1, 88000, 88000, NULL},
    {"s3d:10:10:10:2", 1, 16000, 16000, NULL},
    {"list:10MB,50MB", 1, 10000000, 50000000, NULL},
    {"uniform", 0, 0, 0, "expected uniform:SIZE"},
    {"uniform:big", 0, 0, 0, "SIZE: expected a size"},
    {"random:5:1", 0, 0, 0, "MAX < MIN"},
    {"normal:1MB", 0, 0, 0, "expected normal:MEAN:SD[:SEED]"},
    {"s3d:0:1:1", 0, 0, 0, "NX: expected an integer"},
    {"list:1MB,,2MB", 0, 0, 0, "list item"},
    {"zipf:1", 0, 0, 0, "unknown kind 'zipf'"},
    {"file:/nonexistent/p", 0, 0, 0, "cannot open"},
};

static void test_patterns(void **state) {
  (void)state;
  uint64_t b[64];
  for (size_t i = 0; i < sizeof pattern_cases / sizeof *pattern_cases; i++) {
    const pattern_case_t *c = &pattern_cases[i];
    tagg_err_t err = {0};
    int rc = tagg_pattern_fill(c->spec, 64, b, &err);
    if (c->ok) {
      if (rc) fail_msg("%s: %s", c->spec, err.msg);
      assert_true(b[0] == c->first && b[1] == c->second);
    } else {
      if (!rc) fail_msg("%s should be rejected", c->spec);
      if (!strstr(err.msg, c->msg)) fail_msg("%s: got '%s', want '%s'", c->spec, err.msg, c->msg);
    }
  }
  /* random and normal: in range, reproducible with a seed, different seeds differ */
  uint64_t c[64];
  tagg_err_t err = {0};
  assert_int_equal(tagg_pattern_fill("random:0:100KB:7", 64, b, &err), 0);
  assert_int_equal(tagg_pattern_fill("random:0:100KB:7", 64, c, &err), 0);
  assert_memory_equal(b, c, sizeof b);
  for (int i = 0; i < 64; i++) assert_true(b[i] <= 100000);
  assert_int_equal(tagg_pattern_fill("random:0:100KB:8", 64, c, &err), 0);
  assert_memory_not_equal(b, c, sizeof b);
  assert_int_equal(tagg_pattern_fill("normal:100KB:10KB:3", 64, b, &err), 0);
  double mean = 0;
  for (int i = 0; i < 64; i++) mean += (double)b[i] / 64;
  assert_true(mean > 90000 && mean < 110000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_topology_cases), cmocka_unit_test(test_example_topologies),
      cmocka_unit_test(test_tier_cases),     cmocka_unit_test(test_tier_values_and_roundtrip),
      cmocka_unit_test(test_patterns),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
