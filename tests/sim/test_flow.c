/* test_flow.c - the flow model of tagg-sim on hand-computable cases, with
 * exact expected times: one link shared by two flows, max-min with two
 * bottlenecks, latency, a ring and a 2x2 torus routed by the model, and the
 * two-phase pipeline of one aggregator with and without buffer overlap. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "flow.h"
#include "sim.h"
#include "tagg/pattern.h"

#define GB 1e9
#define MB 1e6

/* completion time of each tag */
typedef struct { double t[16]; int n; } rec_t;
static int record(void *ctx, flow_net_t *net, int64_t tag, double now) {
  (void)net;
  rec_t *r = ctx;
  r->t[tag] = now;
  r->n++;
  return 0;
}

static void near(double got, double want) {
  if (fabs(got - want) > 1e-9 * fabs(want) + 1e-15) fail_msg("time %.15g, expected %.15g", got, want);
}

static void test_one_link_two_flows(void **state) {
  (void)state;
  double cap[] = {1 * GB};
  int l0[] = {0};
  flow_net_t *n = flow_net_new(1, cap);
  rec_t r = {{0}, 0};
  assert_int_equal(flow_start(n, l0, 1, 100 * MB, 0, 0), 0);
  assert_int_equal(flow_start(n, l0, 1, 100 * MB, 0, 1), 0);
  assert_int_equal(flow_run(n, record, &r, 0), 0);
  near(r.t[0], 0.2); /* each at 0.5 GB/s */
  near(r.t[1], 0.2);
  flow_net_free(n);
  /* unequal: both at 0.5 GB/s until the 50 MB one ends (0.1 s), then 1 GB/s */
  n = flow_net_new(1, cap);
  memset(&r, 0, sizeof r);
  flow_start(n, l0, 1, 100 * MB, 0, 0);
  flow_start(n, l0, 1, 50 * MB, 0, 1);
  assert_int_equal(flow_run(n, record, &r, 0), 0);
  near(r.t[1], 0.1);
  near(r.t[0], 0.15);
  near(flow_resource_bytes(n, 0), 150 * MB);
  flow_net_free(n);
}

/* Link A (1 GB/s) carries x and y, link B (2 GB/s) carries x and z: max-min
 * gives x = y = 0.5, z = 1.5; after z ends nothing changes for x (A binds). */
static void test_two_bottlenecks(void **state) {
  (void)state;
  double cap[] = {1 * GB, 2 * GB};
  int ab[] = {0, 1}, a[] = {0}, b[] = {1};
  flow_net_t *n = flow_net_new(2, cap);
  rec_t r = {{0}, 0};
  flow_start(n, ab, 2, 1 * GB, 0, 0);
  flow_start(n, a, 1, 1 * GB, 0, 1);
  flow_start(n, b, 1, 1 * GB, 0, 2);
  assert_int_equal(flow_run(n, record, &r, 0), 0);
  near(r.t[2], 1.0 / 1.5);
  near(r.t[0], 2.0);
  near(r.t[1], 2.0);
  flow_net_free(n);
}

static int chain(void *ctx, flow_net_t *net, int64_t tag, double now) {
  rec_t *r = ctx;
  r->t[tag] = now;
  int l0[] = {0};
  if (tag == 0) return flow_start(net, l0, 1, 1 * GB, 0.5, 1); /* starts when the first has arrived */
  if (tag == 1) return flow_timer(net, 0.25, 2);
  return 0;
}

static void test_latency_and_chaining(void **state) {
  (void)state;
  double cap[] = {1 * GB};
  int l0[] = {0};
  flow_net_t *n = flow_net_new(1, cap);
  rec_t r = {{0}, 0};
  flow_start(n, l0, 1, 1 * GB, 1e-3, 0);  /* 1 s of bandwidth + 1 ms */
  assert_int_equal(flow_run(n, chain, &r, 0), 0);
  near(r.t[0], 1.001);
  near(r.t[1], 1.001 + 1.0 + 0.5);
  near(r.t[2], 2.501 + 0.25);
  flow_net_free(n);
  /* a flow that crosses nothing ends after its latency alone */
  n = flow_net_new(1, cap);
  memset(&r, 0, sizeof r);
  flow_start(n, NULL, 0, 5 * GB, 0.125, 3);
  assert_int_equal(flow_run(n, record, &r, 0), 0);
  near(r.t[3], 0.125);
  flow_net_free(n);
}

static tagg_topology_t *topo(const char *text) {
  tagg_topology_t *t = NULL;
  tagg_err_t err = {0};
  if (tagg_topology_parse(text, "test.topo", &t, &err)) fail_msg("%s", err.msg);
  return t;
}

static flow_net_t *net_of(const tagg_topology_t *t) {
  int nl = tagg_topology_nlinks(t);
  double *cap = malloc((size_t)nl * sizeof *cap);
  for (int l = 0; l < nl; l++) cap[l] = tagg_topology_link_capacity(t, l);
  flow_net_t *n = flow_net_new(nl, cap);
  free(cap);
  return n;
}

static void route_flow(flow_net_t *n, const tagg_topology_t *t, int a, int b, double bytes, int tag) {
  int l[16], len = tagg_topology_route(t, a, b, l, 16);
  assert_int_equal(flow_start(n, l, len, bytes, 0, tag), 0);
}

#define RING "tagg-topology 1\nkind torus\ndims 4\nranks_per_node 1\nio_nodes 0\nlatency 0ns\nbandwidth 1GB/s\n"

/* Ring of 4: to the neighbour, one link each, no sharing: B / cap.  Two
 * steps on: every + link carries two flows: 2 B / cap. */
static void test_ring(void **state) {
  (void)state;
  tagg_topology_t *t = topo(RING);
  flow_net_t *n = net_of(t);
  rec_t r = {{0}, 0};
  for (int i = 0; i < 4; i++) route_flow(n, t, i, (i + 1) % 4, 100 * MB, i);
  assert_int_equal(flow_run(n, record, &r, 0), 0);
  for (int i = 0; i < 4; i++) near(r.t[i], 0.1);
  flow_net_free(n);
  n = net_of(t);
  memset(&r, 0, sizeof r);
  for (int i = 0; i < 4; i++) route_flow(n, t, i, (i + 2) % 4, 100 * MB, i);
  assert_int_equal(flow_run(n, record, &r, 0), 0);
  for (int i = 0; i < 4; i++) near(r.t[i], 0.2);
  flow_net_free(n);
  tagg_topology_free(t);
}

/* 2x2 torus: the four diagonal flows use eight different links (dimension
 * order, + direction): B / cap each.  A fifth flow of B/2 from (0,0) to
 * (1,0) shares the first link of (0,0)'s diagonal: both at cap/2 until it
 * ends at B / cap; the diagonal flow then has B/2 left at full rate: 1.5 B / cap. */
static void test_torus_2x2(void **state) {
  (void)state;
  tagg_topology_t *t = topo("tagg-topology 1\nkind torus\ndims 2 2\nranks_per_node 1\nio_nodes 0\nlatency 0ns\nbandwidth 1GB/s\n");
  flow_net_t *n = net_of(t);
  rec_t r = {{0}, 0};
  route_flow(n, t, 0, 3, 100 * MB, 0);
  route_flow(n, t, 1, 2, 100 * MB, 1);
  route_flow(n, t, 2, 1, 100 * MB, 2);
  route_flow(n, t, 3, 0, 100 * MB, 3);
  route_flow(n, t, 0, 2, 50 * MB, 4);
  assert_int_equal(flow_run(n, record, &r, 0), 0);
  near(r.t[1], 0.1);
  near(r.t[2], 0.1);
  near(r.t[3], 0.1);
  near(r.t[4], 0.1);
  near(r.t[0], 0.15);
  flow_net_free(n);
  tagg_topology_free(t);
}

/* Batched events never make a run shorter and stay within the resolution. */
static void test_resolution(void **state) {
  (void)state;
  double cap[] = {1 * GB};
  int l0[] = {0};
  double exact = 0;
  for (int pass = 0; pass < 2; pass++) {
    flow_net_t *n = flow_net_new(1, cap);
    rec_t r = {{0}, 0};
    for (int i = 0; i < 10; i++) flow_start(n, l0, 1, (100 + i) * MB, 0, i);
    assert_int_equal(flow_run(n, record, &r, pass ? 1e-2 : 0), 0);
    if (!pass) exact = flow_now(n);
    else assert_true(flow_now(n) >= exact * (1 - 1e-12) && flow_now(n) <= exact * 1.1);
    flow_net_free(n);
  }
  near(exact, 1.045); /* all bytes through one link */
}

/* One aggregator (rank 0, node 0 = the gateway) and two ranks of 100 MB on a
 * two-node mesh, buffers of 100 MB: round 0 is rank 0's data (a copy in DRAM
 * at 100 GB/s), round 1 rank 1's over the link (1 GB/s); flushes at the file
 * system's 0.5 GB/s.
 *   1 buffer:  0.001 + 0.2 + 0.1 + 0.2 = 0.501 s (no overlap), read alike
 *   2 buffers: round 1's transfer overlaps round 0's flush; round 0's copy
 *              shares the DRAM with round 1 (1 GB/s of it): 100 MB / 99 GB/s,
 *              then two flushes: 0.4 + 1/990 s */
#define TWO "tagg-topology 1\nkind torus\ndims 2\nwrap 0\nranks_per_node 1\nio_nodes 0\nio_extra_hops 0\nlatency 0ns\nbandwidth 1GB/s\n"
#define TIERS "tagg-tiers 1\ntier DRAM kind=DRAM latency=0ns bandwidth=100GB/s capacity=16GB persistency=none source\n" \
              "tier PFS kind=PFS latency=0ns bandwidth=0.5GB/s capacity=1PB persistency=permanent target\n"
static double run_two(int nbuff, sim_op_t op, sim_result_t *res) {
  tagg_topology_t *t = topo(TWO);
  tagg_tiers_t tiers;
  tagg_err_t err = {0};
  if (tagg_tiers_parse(TIERS, "test.tiers", &tiers, &err)) fail_msg("%s", err.msg);
  uint64_t bytes[2] = {100000000, 100000000};
  tagg_model_opts_t o;
  tagg_model_opts_default(&o);
  o.naggr = 1;
  o.strategy = "first-per-node";
  o.n_buff = nbuff;
  o.s_buff = 100000000;
  tagg_plan_t plan;
  if (tagg_plan(t, &tiers, bytes, &o, &plan, &err)) fail_msg("%s", err.msg);
  assert_int_equal(plan.groups[0].aggr_node, 0);
  sim_opts_t so = {op, nbuff, o.s_buff, 0};
  if (sim_run(t, &tiers, bytes, &plan, &so, res, &err)) fail_msg("%s", err.msg);
  tagg_plan_free(&plan);
  tagg_topology_free(t);
  return res->time;
}

static void test_two_phase_pipeline(void **state) {
  (void)state;
  sim_result_t r;
  near(run_two(1, SIM_WRITE, &r), 0.501);
  near(r.bandwidth, 2e8 / 0.501);
  assert_string_equal(r.hot_name, "(1)->d0-");
  near(r.hot_bytes, 1e8);
  near(r.hot_util, 1e8 / (1e9 * 0.501));
  near(r.fs_util, 2e8 / (0.5e9 * 0.501));
  assert_int_equal(r.naggr, 1);
  near(run_two(2, SIM_WRITE, &r), 0.4 + 1.0 / 990);
  near(run_two(1, SIM_READ, &r), 0.501);
  assert_string_equal(r.hot_name, "(0)->d0+");
  /* read, 2 buffers: fetches back to back (0.2 + 0.2); scatter 0 (local,
   * 1 ms) overlaps fetch 1; scatter 1 (0.1 s over the link) comes last */
  near(run_two(2, SIM_READ, &r), 0.5);
}

static void test_bad_input(void **state) {
  (void)state;
  sim_result_t r;
  tagg_err_t err = {0};
  tagg_topology_t *t = topo(TWO);
  tagg_tiers_t tiers;
  tagg_tiers_parse(TIERS, "test.tiers", &tiers, &err);
  tagg_plan_t plan;
  memset(&plan, 0, sizeof plan);
  uint64_t bytes[2] = {1, 1};
  sim_opts_t so = {SIM_WRITE, 0, 1, 0};
  assert_int_equal(sim_run(t, &tiers, bytes, &plan, &so, &r, &err), TAGG_EINVAL);
  so.n_buff = 1;
  assert_int_equal(sim_run(t, &tiers, bytes, &plan, &so, &r, &err), TAGG_EINVAL);
  assert_non_null(strstr(err.msg, "no aggregator"));
  tagg_topology_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_link_two_flows), cmocka_unit_test(test_two_bottlenecks),
      cmocka_unit_test(test_latency_and_chaining), cmocka_unit_test(test_ring),
      cmocka_unit_test(test_torus_2x2),          cmocka_unit_test(test_resolution),
      cmocka_unit_test(test_two_phase_pipeline), cmocka_unit_test(test_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
