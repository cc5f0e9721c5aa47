/* test_topology.c - distances of every topology kind: table-driven cases,
 * symmetry, zero to self, torus wrap-around, dragonfly levels, trees,
 * gateways, and the in-memory generic cluster. */
#include <stdlib.h>
#include "testutil.h"

typedef struct {
  const char *what;
  const char *topo;
  int a[5], b[5]; /* coordinates */
  int hops;
} dist_case_t;

#define T_HEAD "tagg-topology 1\nlatency 1us\nbandwidth 1GB/s\nranks_per_node 1\nio_nodes 0\n"
static const dist_case_t dist_cases[] = {
    {"5D self", T_HEAD "kind torus\ndims 4 4 4 4 2\n", {1, 2, 3, 0, 1}, {1, 2, 3, 0, 1}, 0},
    {"5D one step", T_HEAD "kind torus\ndims 4 4 4 4 2\n", {0, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, 1},
    {"5D wrap-around", T_HEAD "kind torus\ndims 4 4 4 4 2\n", {0, 0, 0, 0, 0}, {3, 0, 0, 0, 0}, 1},
    {"5D half ring", T_HEAD "kind torus\ndims 4 4 4 4 2\n", {0, 0, 0, 0, 0}, {2, 0, 0, 0, 0}, 2},
    {"5D far corner", T_HEAD "kind torus\ndims 4 4 4 4 2\n", {0, 0, 0, 0, 0}, {2, 2, 2, 2, 1}, 9},
    {"5D E dim wraps to 1", T_HEAD "kind torus\ndims 4 4 4 4 2\n", {0, 0, 0, 0, 1}, {0, 0, 0, 0, 0}, 1},
    {"3D wrap on all", T_HEAD "kind torus\ndims 8 8 8\n", {0, 0, 0}, {7, 7, 7}, 3},
    {"3D mixed", T_HEAD "kind torus\ndims 8 8 8\n", {1, 2, 3}, {5, 7, 4}, 4 + 3 + 1},
    {"1D ring wraps", T_HEAD "kind torus\ndims 8\n", {0}, {7}, 1},
    {"1D mesh does not wrap", T_HEAD "kind torus\ndims 8\nwrap 0\n", {0}, {7}, 7},
    {"2D half mesh", T_HEAD "kind torus\ndims 6 6\nwrap 1 0\n", {0, 0}, {5, 5}, 1 + 5},
    {"dragonfly same node", T_HEAD "kind dragonfly\ndims 3 2 2 2\n", {1, 1, 1, 1}, {1, 1, 1, 1}, 0},
    {"dragonfly same blade", T_HEAD "kind dragonfly\ndims 3 2 2 2\n", {1, 1, 1, 0}, {1, 1, 1, 1}, 1},
    {"dragonfly same chassis", T_HEAD "kind dragonfly\ndims 3 2 2 2\n", {1, 1, 0, 0}, {1, 1, 1, 1}, 2},
    {"dragonfly same group", T_HEAD "kind dragonfly\ndims 3 2 2 2\n", {1, 0, 1, 1}, {1, 1, 1, 1}, 3},
    {"dragonfly other group", T_HEAD "kind dragonfly\ndims 3 2 2 2\n", {0, 1, 1, 1}, {2, 1, 1, 1}, 6},
    {"fat tree same leaf", T_HEAD "kind fattree\nlevels 2 2 4\n", {0, 0, 0}, {0, 0, 3}, 2},
    {"fat tree same pod", T_HEAD "kind fattree\nlevels 2 2 4\n", {0, 0, 0}, {0, 1, 3}, 4},
    {"fat tree across the top", T_HEAD "kind fattree\nlevels 2 2 4\n", {0, 1, 0}, {1, 1, 0}, 6},
    {"generic one switch", T_HEAD "kind generic\nnodes 8\n", {2}, {5}, 2},
    {"generic hierarchy, same leaf", T_HEAD "kind generic\nlevels 3 4\n", {1, 0}, {1, 3}, 2},
    {"generic hierarchy, across", T_HEAD "kind generic\nlevels 3 4\n", {0, 0}, {2, 3}, 4},
};

static void test_distance_table(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof dist_cases / sizeof *dist_cases; i++) {
    const dist_case_t *c = &dist_cases[i];
    tagg_topology_t *t = topo_from(c->topo);
    int a = node_of(t, c->a), b = node_of(t, c->b);
    int h = tagg_topology_hops(t, a, b);
    if (h != c->hops) fail_msg("%s: hops %d, expected %d", c->what, h, c->hops);
    assert_int_equal(tagg_topology_hops(t, b, a), h);
    tagg_topology_free(t);
  }
}

/* Every kind: symmetric, zero to self only, triangle inequality, positive
 * latency and bandwidth, a 2D position inside the drawing. */
static const char *const all_kinds[] = {
    T_HEAD "kind torus\ndims 4 4 4 4 2\n",
    T_HEAD "kind torus\ndims 5 3 4\nwrap 1 0 1\n",
    T_HEAD "kind dragonfly\ndims 3 2 4 2\nglobal_bandwidth 0.5GB/s\n",
    T_HEAD "kind fattree\nlevels 3 2 4\n",
    T_HEAD "kind generic\nlevels 2 3 4\nlevel_bandwidth 0.25GB/s 0.5GB/s 1GB/s\n",
    T_HEAD "kind generic\nnodes 16\n",
};

static void test_metric_properties(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof all_kinds / sizeof *all_kinds; k++) {
    tagg_topology_t *t = topo_from(all_kinds[k]);
    int n = tagg_topology_nnodes(t);
    for (int a = 0; a < n; a++) {
      double x, y;
      tagg_topology_project2d(t, a, &x, &y);
      assert_true(x >= 0 && y >= 0);
      for (int b = 0; b < n; b++) {
        int h = tagg_topology_hops(t, a, b);
        if (h != tagg_topology_hops(t, b, a)) fail_msg("kind %zu: d(%d,%d) not symmetric", k, a, b);
        if ((h == 0) != (a == b)) fail_msg("kind %zu: d(%d,%d) = %d", k, a, b, h);
        assert_true(tagg_topology_bandwidth(t, a, b) > 0);
        assert_true(tagg_topology_latency(t, a, b) > 0);
        int c = (a * 7 + b * 3) % n;
        assert_true(tagg_topology_hops(t, a, c) <= h + tagg_topology_hops(t, b, c));
      }
    }
    tagg_topology_free(t);
  }
}

static void test_dragonfly_bandwidth_levels(void **state) {
  (void)state;
  tagg_topology_t *t = topo_from(T_HEAD "kind dragonfly\ndims 2 2 2 2\nglobal_bandwidth 0.25GB/s\n");
  int a[4] = {0, 0, 0, 0}, same_group[4] = {0, 1, 1, 1}, other[4] = {1, 0, 0, 0};
  assert_true(tagg_topology_bandwidth(t, node_of(t, a), node_of(t, same_group)) == 1e9);
  assert_true(tagg_topology_bandwidth(t, node_of(t, a), node_of(t, other)) == 0.25e9);
  tagg_topology_free(t);
}

static void test_generic_taper(void **state) {
  (void)state;
  tagg_topology_t *t = topo_from(T_HEAD "kind generic\nlevels 2 4\nlevel_bandwidth 0.5GB/s 2GB/s\n");
  assert_true(tagg_topology_bandwidth(t, 0, 3) == 1e9);   /* leaf: min(1, 2) */
  assert_true(tagg_topology_bandwidth(t, 0, 4) == 0.5e9); /* through the top switch */
  tagg_topology_free(t);
}

static void test_gateways(void **state) {
  (void)state;
  /* ring of 8, gateways 0 and 4, 2 extra hops to storage */
  tagg_topology_t *t = topo_from("tagg-topology 1\nkind torus\ndims 8\nranks_per_node 2\nio_nodes 0 4\n"
                                 "io_extra_hops 2\nlatency 1us\nbandwidth 1GB/s\n");
  static const int gw[8] = {0, 0, 0, 4, 4, 4, 0, 0}; /* nodes 2 and 6 tie: the first listed */
  static const int io[8] = {2, 3, 4, 3, 2, 3, 4, 3};
  for (int n = 0; n < 8; n++) {
    assert_int_equal(tagg_topology_gateway(t, n), gw[n]);
    assert_int_equal(tagg_topology_io_hops(t, n), io[n]);
  }
  assert_int_equal(tagg_topology_nranks(t), 16);
  assert_int_equal(tagg_topology_rank_node(t, 5), 2);
  assert_true(tagg_topology_is_io(t, 4) && !tagg_topology_is_io(t, 3));
  tagg_topology_free(t);
}

static void test_explicit_subset(void **state) {
  (void)state;
  /* a 3-node job inside an 8x8 torus, coordinates given */
  tagg_topology_t *t = topo_from("tagg-topology 1\nkind torus\ndims 8 8\nnode 0 0 0\nnode 1 7 7\nnode 2 4 0\n"
                                 "rank_nodes 0 1 2 2\nio_nodes 2\nlatency 1us\nbandwidth 1GB/s\n");
  assert_int_equal(tagg_topology_nnodes(t), 3);
  assert_int_equal(tagg_topology_hops(t, 0, 1), 2);
  assert_int_equal(tagg_topology_hops(t, 0, 2), 4);
  assert_int_equal(tagg_topology_coords(t, 1)[0], 7);
  assert_int_equal(tagg_topology_rank_node(t, 3), 2);
  tagg_topology_free(t);
}

static void test_generic_from_ranks(void **state) {
  (void)state;
  static const int rn[] = {0, 0, 1, 1, 2, 2, 2};
  tagg_topology_t *t = NULL;
  tagg_err_t err = {0};
  assert_int_equal(tagg_topology_generic_from_ranks(7, rn, 0, NULL, 1e-6, 5e9, &t, &err), TAGG_OK);
  assert_int_equal(tagg_topology_nnodes(t), 3);
  assert_int_equal(tagg_topology_nranks(t), 7);
  assert_int_equal(tagg_topology_hops(t, 0, 2), 2);
  assert_int_equal(tagg_topology_hops(t, 1, 1), 0);
  assert_int_equal(tagg_topology_gateway(t, 2), 0);
  assert_int_equal(tagg_topology_io_hops(t, 2), 3);
  assert_string_equal(tagg_topology_ops(t)->name, "generic");
  tagg_topology_free(t);
  static const int io[] = {2};
  assert_int_equal(tagg_topology_generic_from_ranks(7, rn, 1, io, 1e-6, 5e9, &t, &err), TAGG_OK);
  assert_int_equal(tagg_topology_gateway(t, 0), 2);
  tagg_topology_free(t);
  static const int bad[] = {0, -1};
  assert_int_equal(tagg_topology_generic_from_ranks(2, bad, 0, NULL, 1e-6, 5e9, &t, &err), TAGG_EINVAL);
  assert_null(t);
  assert_contains(err.msg, "rank 1");
  static const int badio[] = {9};
  assert_int_equal(tagg_topology_generic_from_ranks(7, rn, 1, badio, 1e-6, 5e9, &t, &err), TAGG_EINVAL);
  assert_contains(err.msg, "I/O node 9");
  assert_int_equal(tagg_topology_generic_from_ranks(7, rn, 0, NULL, 1e-6, 0, &t, &err), TAGG_EINVAL);
  assert_contains(err.msg, "bandwidth");
}

static void test_registry(void **state) {
  (void)state;
  int n = 0;
  for (; tagg_topo_kinds[n]; n++) {
    assert_ptr_equal(tagg_topo_kind_find(tagg_topo_kinds[n]->name), tagg_topo_kinds[n]);
    assert_non_null(tagg_topo_kinds[n]->hops);
    assert_non_null(tagg_topo_kinds[n]->project2d);
  }
  assert_int_equal(n, 4);
  assert_null(tagg_topo_kind_find("hypercube"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_distance_table),     cmocka_unit_test(test_metric_properties),
      cmocka_unit_test(test_dragonfly_bandwidth_levels), cmocka_unit_test(test_generic_taper),
      cmocka_unit_test(test_gateways),           cmocka_unit_test(test_explicit_subset),
      cmocka_unit_test(test_generic_from_ranks), cmocka_unit_test(test_registry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
