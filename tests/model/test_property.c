/* test_property.c - over hundreds of random topologies, tiers, patterns and
 * options, the chosen aggregator's cost is never above any other candidate's
 * under the same model; and the scale check (16,384 ranks, 4,096-node 5D torus). */
#include <stdlib.h>
#include <time.h>
#include "testutil.h"

static uint64_t rng = 12345;
static int rnd(int lo, int hi) { return lo + (int)(tagg_rng_next(&rng) % (uint64_t)(hi - lo + 1)); }

static char *random_topology(char *buf, size_t n) {
  int kind = rnd(0, 4), len = 0;
  len += snprintf(buf + len, n - (size_t)len, "tagg-topology 1\nlatency %dns\nbandwidth %d.5GB/s\n", rnd(10, 5000), rnd(0, 20));
  switch (kind) {
    case 0: { /* torus 1..5 dims */
      int nd = rnd(1, 5);
      len += snprintf(buf + len, n - (size_t)len, "kind torus\ndims");
      for (int d = 0; d < nd; d++) len += snprintf(buf + len, n - (size_t)len, " %d", rnd(1, nd > 3 ? 3 : 5));
      len += snprintf(buf + len, n - (size_t)len, "\nwrap");
      for (int d = 0; d < nd; d++) len += snprintf(buf + len, n - (size_t)len, " %d", rnd(0, 1));
      len += snprintf(buf + len, n - (size_t)len, "\n");
      break;
    }
    case 1:
      len += snprintf(buf + len, n - (size_t)len, "kind dragonfly\ndims %d %d %d %d\nglobal_bandwidth %dGB/s\n", rnd(1, 3), rnd(1, 3), rnd(1, 4), rnd(1, 4), rnd(1, 10));
      break;
    case 2:
      len += snprintf(buf + len, n - (size_t)len, "kind fattree\nlevels %d %d\n", rnd(1, 4), rnd(1, 8));
      break;
    case 3:
      len += snprintf(buf + len, n - (size_t)len, "kind generic\nlevels %d %d\nlevel_bandwidth %dGB/s %dGB/s\n", rnd(1, 4), rnd(1, 6), rnd(1, 9), rnd(1, 9));
      break;
    default:
      len += snprintf(buf + len, n - (size_t)len, "kind generic\nnodes %d\n", rnd(1, 12));
  }
  len += snprintf(buf + len, n - (size_t)len, "ranks_per_node %d\nio_stride %d\nio_extra_hops %d\n", rnd(1, 4), rnd(1, 16), rnd(0, 2));
  return buf;
}

static void random_tiers(tagg_tiers_t *t) {
  static const tagg_tier_kind_t kinds[] = {TAGG_TIER_DRAM, TAGG_TIER_HBM, TAGG_TIER_NVR};
  memset(t, 0, sizeof *t);
  t->ntiers = rnd(2, 5);
  for (int i = 0; i < t->ntiers; i++) {
    tagg_tier_t *x = &t->tier[i];
    snprintf(x->name, sizeof x->name, "T%d", i);
    x->kind = i == t->ntiers - 1 ? TAGG_TIER_PFS : kinds[rnd(0, 2)];
    x->latency = rnd(0, 1000) * 1e-7;
    x->bandwidth = rnd(1, 2000) * 1e8;
    x->capacity = (uint64_t)rnd(1, 64) << rnd(20, 34);
    x->persistency = (tagg_persist_t)rnd(0, 2);
  }
  t->source = 0;
  t->target = t->ntiers - 1;
}

static void check_plan(const tagg_topology_t *topo, const tagg_tiers_t *tiers, const tagg_plan_t *p, const tagg_model_opts_t *o,
                       int restrict_tier) {
  tagg_err_t err = {0};
  for (int g = 0; g < p->naggr; g++) {
    tagg_candidate_t *c;
    size_t n;
    assert_int_equal(tagg_plan_candidates(topo, tiers, p, g, o, &c, &n, &err), 0);
    const tagg_group_plan_t *gp = &p->groups[g];
    assert_true(gp->cost.eligible);
    for (size_t k = 0; k < n; k++) {
      if (restrict_tier >= 0 && c[k].tier != restrict_tier) continue;
      if (gp->cost.total > c[k].cost.total)
        fail_msg("group %d: chosen rank %d tier %d costs %.17g > rank %d tier %d at %.17g", g, gp->aggr_rank, gp->tier,
                 gp->cost.total, c[k].rank, c[k].tier, c[k].cost.total);
    }
    /* the list's head is the chosen cost (same function, same numbers) */
    if (restrict_tier < 0) assert_true(n > 0 && c[0].cost.total == gp->cost.total);
    /* the per-rank entry point agrees with the plan */
    tagg_cost_t one;
    assert_int_equal(tagg_candidate_cost(topo, tiers, p->part.prod + p->part.first[g], p->part.first[g + 1] - p->part.first[g],
                                         gp->aggr_rank, gp->tier, o, &one, &err), 0);
    assert_true(one.total == gp->cost.total && one.cost_a == gp->cost.cost_a);
    free(c);
  }
}

static void test_chosen_is_minimal(void **state) {
  (void)state;
  static const char *const patterns[] = {"uniform:3MB", "random:0:20MB:%d", "normal:8MB:4MB:%d", "hacc:%d000"};
  int planned = 0, nocand = 0;
  for (int it = 0; it < 400; it++) {
    char text[1024], spec[64];
    tagg_topology_t *t = NULL;
    tagg_err_t err = {0};
    if (tagg_topology_parse(random_topology(text, sizeof text), "random.topo", &t, &err)) fail_msg("%s\n%s", err.msg, text);
    tagg_tiers_t tiers;
    random_tiers(&tiers);
    int nr = tagg_topology_nranks(t);
    uint64_t *bytes = malloc((size_t)nr * sizeof *bytes);
    snprintf(spec, sizeof spec, patterns[it % 4], rnd(1, 99));
    assert_int_equal(tagg_pattern_fill(spec, nr, bytes, &err), 0);
    bytes[rnd(0, nr - 1)] += 1; /* never all zero */
    tagg_model_opts_t o;
    tagg_model_opts_default(&o);
    o.form = (tagg_cost_form_t)rnd(0, 1);
    o.persistency = (tagg_persist_t)rnd(0, 2);
    o.naggr = rnd(0, 6);
    o.n_buff = rnd(1, 4);
    o.s_buff = (uint64_t)rnd(1, 64) << 20;
    o.strategy = it % 3 == 2 ? "topo-aware" : "memory-aware";
    tagg_plan_t p;
    int rc = tagg_plan(t, &tiers, bytes, &o, &p, &err);
    if (rc == TAGG_ENOCAND) {
      nocand++; /* then truly no tier of the group qualifies (for topo-aware: the source tier) */
      int tiers_ok = 0;
      tagg_cost_t c;
      for (int k = 0; k < tiers.ntiers; k++) {
        if (k == tiers.target || (it % 3 == 2 && k != tiers.source)) continue;
        tagg_tier_check(&tiers.tier[k], 0, 0, &o, &c);
        tiers_ok |= c.persistency_ok && (o.persistency == TAGG_PERSIST_NONE ? c.capacity_ok : 1);
      }
      if (o.persistency == TAGG_PERSIST_NONE) assert_false(tiers_ok);
    } else {
      if (rc) fail_msg("%s", err.msg);
      check_plan(t, &tiers, &p, &o, it % 3 == 2 ? tiers.source : -1);
      planned++;
      tagg_plan_free(&p);
    }
    free(bytes);
    tagg_topology_free(t);
  }
  print_message("property: %d plans checked, %d without any eligible candidate\n", planned, nocand);
  assert_true(planned > 200);
}

static double now(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_scale_16k_ranks(void **state) {
  (void)state;
  tagg_topology_t *t = NULL;
  tagg_err_t err = {0};
  if (tagg_topology_load(EX("bgq-5d-4096.topo"), &t, &err)) fail_msg("%s", err.msg);
  assert_int_equal(tagg_topology_nnodes(t), 4096);
  assert_int_equal(tagg_topology_nranks(t), 16384);
  tagg_tiers_t tiers;
  tagg_tiers_default(&tiers);
  uint64_t *bytes = malloc(16384 * sizeof *bytes);
  assert_int_equal(tagg_pattern_fill("uniform:1MB", 16384, bytes, &err), 0);
  tagg_model_opts_t o;
  tagg_model_opts_default(&o);
  tagg_plan_t p;
  double t0 = now();
  assert_int_equal(tagg_plan(t, &tiers, bytes, &o, &p, &err), 0);
  double dt = now() - t0;
  print_message("planning 16384 ranks on a 4096-node 5D torus: %d aggregators in %.2f ms\n", p.naggr, dt * 1e3);
#ifdef TAGG_SLOW_BUILD
  assert_true(dt < 10.0); /* sanitizers */
#else
  assert_true(dt < 1.0);
#endif
  assert_int_equal(p.naggr, 512);
  tagg_plan_free(&p);
  free(bytes);
  tagg_topology_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chosen_is_minimal),
      cmocka_unit_test(test_scale_16k_ranks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
