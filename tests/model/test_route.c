/* test_route.c - link-level routes of every topology kind (used by the flow
 * simulator tools/tagg-sim): exact link lists on small cases, capacities,
 * names, and on the shipped examples: ids in range, length <= route_max,
 * torus routes as long as the hop distance. */
#include <stdlib.h>
#include "testutil.h"

#define T_HEAD "tagg-topology 1\nlatency 1us\nbandwidth 1GB/s\nranks_per_node 1\nio_nodes 0\n"

static int route(const tagg_topology_t *t, int a, int b, int *l) {
  int n = tagg_topology_route(t, a, b, l, 64);
  assert_true(n <= tagg_topology_route_max(t));
  return n;
}

static void test_torus_ring(void **state) {
  (void)state;
  tagg_topology_t *t = topo_from(T_HEAD "kind torus\ndims 8\n");
  int l[64];
  assert_int_equal(tagg_topology_nlinks(t), 16);
  assert_int_equal(tagg_topology_route_max(t), 4);
  assert_int_equal(route(t, 0, 0, l), 0);
  /* 0 -> 3: three + links leaving cells 0, 1, 2 */
  assert_int_equal(route(t, 0, 3, l), 3);
  assert_int_equal(l[0], 0);
  assert_int_equal(l[1], 2);
  assert_int_equal(l[2], 4);
  /* 0 -> 7: one - link, wrapping */
  assert_int_equal(route(t, 0, 7, l), 1);
  assert_int_equal(l[0], 1);
  /* half-way: + direction */
  assert_int_equal(route(t, 2, 6, l), 4);
  assert_int_equal(l[0], 4);
  assert_int_equal(l[3], 10);
  char name[64];
  tagg_topology_link_name(t, 1, name, sizeof name);
  assert_string_equal(name, "(0)->d0-");
  assert_true(tagg_topology_link_capacity(t, 5) == 1e9);
  /* a truncated buffer still gives the length */
  assert_int_equal(tagg_topology_route(t, 2, 6, l, 2), 4);
  tagg_topology_free(t);
}

static void test_torus_dimension_order(void **state) {
  (void)state;
  tagg_topology_t *t = topo_from(T_HEAD "kind torus\ndims 4 3\nwrap 1 0\n");
  int l[64], a = node_of(t, (int[]){3, 0}), b = node_of(t, (int[]){0, 2});
  /* d0 first: (3,0) -> (0,0) by the + wrap link of cell (3,0); then d1 on a mesh: (0,0)->(0,1)->(0,2) */
  assert_int_equal(route(t, a, b, l), 3);
  char name[64];
  tagg_topology_link_name(t, l[0], name, sizeof name);
  assert_string_equal(name, "(3,0)->d0+");
  tagg_topology_link_name(t, l[1], name, sizeof name);
  assert_string_equal(name, "(0,0)->d1+");
  tagg_topology_link_name(t, l[2], name, sizeof name);
  assert_string_equal(name, "(0,1)->d1+");
  /* back: mesh dimension goes - without wrapping */
  assert_int_equal(route(t, b, a, l), 3);
  tagg_topology_link_name(t, l[0], name, sizeof name);
  assert_string_equal(name, "(0,2)->d0-");
  tagg_topology_free(t);
}

static void test_dragonfly(void **state) {
  (void)state;
  tagg_topology_t *t = topo_from(T_HEAD "kind dragonfly\ndims 3 2 2 2\nglobal_bandwidth 0.25GB/s\n");
  int n = tagg_topology_nnodes(t), l[64];
  assert_int_equal(n, 24);
  assert_int_equal(tagg_topology_nlinks(t), 2 * 24 + 12 * (2 + 2 + 3));
  int a = node_of(t, (int[]){1, 1, 1, 0}), b = node_of(t, (int[]){1, 1, 1, 1});
  assert_int_equal(route(t, a, b, l), 2); /* same blade: injection, ejection */
  assert_int_equal(l[0], a);
  assert_int_equal(l[1], n + b);
  b = node_of(t, (int[]){2, 0, 0, 1});
  assert_int_equal(route(t, a, b, l), 5); /* green, black, global */
  char name[80];
  tagg_topology_link_name(t, l[1], name, sizeof name);
  assert_string_equal(name, "router (1,1,1) -> blade 0 (green)");
  tagg_topology_link_name(t, l[2], name, sizeof name);
  assert_string_equal(name, "router (1,1,0) -> chassis 0 (black)");
  tagg_topology_link_name(t, l[3], name, sizeof name);
  assert_string_equal(name, "router (1,0,0) -> group 2 (global)");
  assert_true(tagg_topology_link_capacity(t, l[3]) == 0.25e9);
  assert_true(tagg_topology_link_capacity(t, l[2]) == 1e9);
  assert_true(tagg_topology_link_capacity(t, l[4]) == 1e9);
  tagg_topology_link_name(t, l[4], name, sizeof name);
  assert_string_equal(name, "router -> node 17 (ejection)");
  /* same chassis position in another group: injection, global, ejection */
  b = node_of(t, (int[]){0, 1, 1, 1});
  assert_int_equal(route(t, a, b, l), 3);
  tagg_topology_free(t);
}

static void test_fattree(void **state) {
  (void)state;
  tagg_topology_t *t = topo_from(T_HEAD "kind fattree\nlevels 2 2 4\n");
  int l[64];
  /* links: 16 nodes + 4 leaf switches + 2 pods, up and down */
  assert_int_equal(tagg_topology_nlinks(t), 2 * (16 + 4 + 2));
  assert_int_equal(route(t, 0, 3, l), 2);
  assert_int_equal(l[0], 0);     /* node 0 up */
  assert_int_equal(l[1], 2 * 3 + 1); /* node 3 down */
  int a = node_of(t, (int[]){0, 1, 0}), b = node_of(t, (int[]){1, 1, 0});
  assert_int_equal(route(t, a, b, l), 6);
  assert_true(tagg_topology_link_capacity(t, l[0]) == 1e9);
  assert_true(tagg_topology_link_capacity(t, l[1]) == 4e9);  /* leaf switch: 4 nodes */
  assert_true(tagg_topology_link_capacity(t, l[2]) == 8e9);  /* pod: 8 nodes */
  assert_true(tagg_topology_link_capacity(t, l[3]) == 8e9);
  char name[64];
  tagg_topology_link_name(t, l[1], name, sizeof name);
  assert_string_equal(name, "level-1 switch 1 -> level 2");
  tagg_topology_link_name(t, l[5], name, sizeof name);
  assert_string_equal(name, "leaf switch -> node 12");
  tagg_topology_free(t);
}

static void test_generic(void **state) {
  (void)state;
  tagg_topology_t *t = topo_from(T_HEAD "kind generic\nlevels 2 4\nlevel_bandwidth 0.25GB/s 0.5GB/s\n");
  int l[64];
  assert_int_equal(route(t, 0, 7, l), 4);
  assert_true(tagg_topology_link_capacity(t, l[0]) == 0.5e9);     /* node -> leaf: 0.5 GB/s */
  assert_true(tagg_topology_link_capacity(t, l[1]) == 4 * 0.25e9); /* leaf -> top: 4 nodes x 0.25 */
  tagg_topology_free(t);
  t = topo_from(T_HEAD "kind generic\nnodes 3\ndistance 0 0 5 1\ndistance 1 5 0 2\ndistance 2 1 2 0\n");
  assert_int_equal(route(t, 0, 1, l), 2); /* a hop matrix is routed through one switch */
  assert_int_equal(l[0], 0);
  assert_int_equal(l[1], 3);
  tagg_topology_free(t);
}

/* Every shipped example: routes between a sample of node pairs stay in range
 * and within route_max; on tori their length is the hop distance. */
static void test_examples(void **state) {
  (void)state;
  static const char *const files[] = {"bgq-5d-512.topo", "bgq-5d-4096.topo", "theta-dragonfly.topo",
                                      "fattree-cluster.topo", "localhost-2core.topo", "toy-table1.topo"};
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TAGG_EXAMPLES_DIR, files[f]);
    tagg_topology_t *t = NULL;
    tagg_err_t err = {0};
    if (tagg_topology_load(path, &t, &err)) fail_msg("%s", err.msg);
    int n = tagg_topology_nnodes(t), nl = tagg_topology_nlinks(t), rm = tagg_topology_route_max(t);
    int torus = tagg_topology_ops(t) == &tagg_topo_torus;
    int *l = malloc((size_t)rm * sizeof *l);
    for (int i = 0; i < 400; i++) {
      int a = (int)((i * 7919L) % n), b = (int)((i * 104729L + 13) % n);
      int len = tagg_topology_route(t, a, b, l, rm);
      assert_true(len >= 0 && len <= rm);
      if (torus) assert_int_equal(len, tagg_topology_hops(t, a, b));
      if (a == b) assert_int_equal(len, 0);
      else assert_true(len > 0);
      for (int k = 0; k < len; k++) {
        assert_true(l[k] >= 0 && l[k] < nl);
        assert_true(tagg_topology_link_capacity(t, l[k]) > 0);
        for (int j = 0; j < k; j++) assert_true(l[j] != l[k]);
      }
    }
    char name[80];
    tagg_topology_link_name(t, nl, name, sizeof name);
    assert_contains(name, "none");
    free(l);
    tagg_topology_free(t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_torus_ring),   cmocka_unit_test(test_torus_dimension_order),
      cmocka_unit_test(test_dragonfly),    cmocka_unit_test(test_fattree),
      cmocka_unit_test(test_generic),      cmocka_unit_test(test_examples),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
