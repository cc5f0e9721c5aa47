/* test_model.c - #Aggr rule, partition, capacity and persistency rules, the
 * cost forms, each strategy, the MA-TAPIOCA toy example (Tables 1 and 2) and
 * Table 7's capacity cuts. */
#include <stdlib.h>
#include "testutil.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

typedef struct { uint64_t d; int nranks; uint64_t mem, bs; int pow2, user; int want; unsigned flags; } naggr_case_t;
static const naggr_case_t naggr_cases[] = {
    {GiB, 1024, 32 * MiB, 8 * MiB, 1, 0, 32, 0},                 /* share 32 MiB fits, >= BS */
    {1000 * MiB, 1024, 32 * MiB, 8 * MiB, 1, 0, 32, 0},          /* ceil(31.25) = 32 */
    {900 * MiB, 1024, 32 * MiB, 8 * MiB, 1, 0, 32, 0},           /* ceil(28.1) = 29 -> 32 */
    {900 * MiB, 1024, 32 * MiB, 8 * MiB, 0, 0, 29, 0},           /* no power of two */
    {100 * MiB, 1024, 1 * MiB, 8 * MiB, 1, 0, 8, TAGG_NAGGR_MEM_RELAXED}, /* BS caps: 100/8 = 12 -> 8 */
    {100 * MiB, 1024, 1 * MiB, 8 * MiB, 0, 0, 12, TAGG_NAGGR_MEM_RELAXED},
    {4 * MiB, 1024, 32 * MiB, 8 * MiB, 1, 0, 1, TAGG_NAGGR_BLOCK_RELAXED}, /* less than a block */
    {1024 * GiB, 100, 32 * MiB, 8 * MiB, 1, 0, 64, TAGG_NAGGR_CLAMPED | TAGG_NAGGR_MEM_RELAXED},
    {1024 * GiB, 100, 32 * MiB, 8 * MiB, 0, 0, 100, TAGG_NAGGR_CLAMPED | TAGG_NAGGR_MEM_RELAXED},
    {GiB, 1024, 32 * MiB, 8 * MiB, 1, 48, 48, TAGG_NAGGR_USER},
    {GiB, 10, 32 * MiB, 8 * MiB, 1, 48, 10, TAGG_NAGGR_USER | TAGG_NAGGR_CLAMPED},
    {16384ull * 1000000, 16384, 0, 8 * MiB, 1, 0, 512, 0},       /* 16 GB / (2 x 16 MiB) = 466 -> 512 */
};

static void test_naggr_rule(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof naggr_cases / sizeof *naggr_cases; i++) {
    const naggr_case_t *c = &naggr_cases[i];
    tagg_model_opts_t o;
    tagg_model_opts_default(&o);
    o.aggr_mem = c->mem;
    o.fs_block = c->bs;
    o.pow2 = c->pow2;
    o.naggr = c->user;
    unsigned f = 99;
    int n = tagg_naggr(c->d, c->nranks, &o, &f);
    if (n != c->want || f != c->flags) fail_msg("case %zu: got %d flags %u, want %d flags %u", i, n, f, c->want, c->flags);
    if (!(f & (TAGG_NAGGR_MEM_RELAXED | TAGG_NAGGR_USER))) assert_true(c->d / (uint64_t)n <= (c->mem ? c->mem : 32 * MiB));
    if (!(f & (TAGG_NAGGR_BLOCK_RELAXED | TAGG_NAGGR_USER))) assert_true(c->d / (uint64_t)n >= c->bs);
  }
}

/* Stepwise aggregation and throttling: hand-computed cases. */
static void test_stepwise_throttle(void **state) {
  (void)state;
  assert_int_equal(tagg_aggr_per_node(8, 4), 2);
  assert_int_equal(tagg_aggr_per_node(9, 4), 3);
  assert_int_equal(tagg_aggr_per_node(3, 4), 1);
  assert_int_equal(tagg_aggr_per_node(0, 4), 1);
  assert_int_equal(tagg_aggr_per_node(5, 0), 5);

  int rank_node[8] = {0, 0, 1, 1, 2, 2, 3, 3}, io2[2] = {0, 2};
  tagg_topology_t *one = NULL, *two = NULL;
  tagg_err_t err;
  assert_int_equal(tagg_topology_generic_from_ranks(8, rank_node, 0, NULL, 1e-6, 10e9, &one, &err), TAGG_OK);
  assert_int_equal(tagg_topology_generic_from_ranks(8, rank_node, 2, io2, 1e-6, 10e9, &two, &err), TAGG_OK);
  tagg_tiers_t t;
  tagg_tiers_default(&t);
  int dram = tagg_tiers_find(&t, "DRAM");
  t.tier[t.target].bandwidth = 5e9; /* file system slower than one 10 GB/s stream: one at a time */
  assert_int_equal(tagg_throttle(one, &t, dram, 8), 1);
  assert_int_equal(tagg_throttle(two, &t, dram, 8), 2); /* but one per gateway */
  t.tier[t.target].bandwidth = 40e9; /* four 10 GB/s streams fill it */
  assert_int_equal(tagg_throttle(one, &t, dram, 8), 4);
  assert_int_equal(tagg_throttle(one, &t, dram, 2), 2); /* never more than the aggregators */
  t.tier[t.target].bandwidth = 35e9; /* 3.5 streams: round up */
  assert_int_equal(tagg_throttle(one, &t, dram, 8), 4);
  t.tier[dram].bandwidth = 5e9; /* the aggregation tier is the slower part of a stream */
  assert_int_equal(tagg_throttle(one, &t, dram, 16), 7);
  assert_int_equal(tagg_throttle(one, &t, -1, 16), 4); /* tier ignored */
  assert_int_equal(tagg_throttle(one, &t, dram, 0), 1);
  tagg_topology_free(one);
  tagg_topology_free(two);
}

typedef struct {
  uint64_t bytes[6];
  int nranks, naggr;
  uint64_t align;
  int ngroups;
  uint64_t len[4];
  int nprod[4];
} part_case_t;
static const part_case_t part_cases[] = {
    {{10, 10, 10, 10}, 4, 2, 0, 2, {20, 20}, {2, 2}},
    {{15, 10, 15}, 3, 2, 0, 2, {20, 20}, {2, 2}},                 /* rank 1 split in two */
    {{0, 10, 0, 10}, 4, 2, 0, 2, {10, 10}, {1, 1}},               /* empty ranks produce nothing */
    {{3 * MiB, 3 * MiB, 3 * MiB, 3 * MiB}, 4, 2, 4 * MiB, 2, {8 * MiB, 4 * MiB}, {3, 2}}, /* boundary 6 -> 8 MiB */
    {{1, 1}, 2, 5, 0, 2, {1, 1}, {1, 1}},                         /* more aggregators than bytes */
    {{7, 0, 0, 0, 0, 1}, 6, 3, 0, 3, {2, 3, 3}, {1, 1, 2}},
};

static void test_partition(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof part_cases / sizeof *part_cases; i++) {
    const part_case_t *c = &part_cases[i];
    tagg_partition_t p;
    tagg_err_t err = {0};
    if (tagg_partition(c->bytes, c->nranks, c->naggr, c->align, &p, &err)) fail_msg("case %zu: %s", i, err.msg);
    assert_int_equal(p.ngroups, c->ngroups);
    uint64_t off = 0, total = 0;
    for (int g = 0; g < p.ngroups; g++) {
      if (p.length[g] != c->len[g]) fail_msg("case %zu group %d: length %llu", i, g, (unsigned long long)p.length[g]);
      assert_int_equal((int)(p.first[g + 1] - p.first[g]), c->nprod[g]);
      assert_true(p.offset[g] == off); /* contiguous domains */
      off += p.length[g];
      uint64_t s = 0;
      for (size_t k = p.first[g]; k < p.first[g + 1]; k++) { s += p.prod[k].bytes; assert_true(p.prod[k].bytes > 0); }
      assert_true(s == p.length[g]);
      total += s;
    }
    uint64_t d = 0;
    for (int r = 0; r < c->nranks; r++) d += c->bytes[r];
    assert_true(total == d);
    tagg_partition_free(&p);
  }
  tagg_partition_t p;
  tagg_err_t err = {0};
  uint64_t zero[3] = {0, 0, 0};
  assert_int_equal(tagg_partition(zero, 3, 1, 0, &p, &err), TAGG_EINVAL);
  assert_contains(err.msg, "no data");
  assert_int_equal(tagg_partition(zero, 3, 0, 0, &p, &err), TAGG_EINVAL);
  assert_contains(err.msg, "naggr must be >= 1");
}

typedef struct {
  uint64_t cap;
  tagg_persist_t tier_p, need_p;
  int nbuff;
  uint64_t sbuff, group;
  int is_target;
  int cap_ok, pers_ok, eligible;
} rule_case_t;
static const rule_case_t rule_cases[] = {
    /* not persistent: capacity >= N_buff x S_buff (Table 7: 3 x 16 MiB = 48 MiB) */
    {32 * MiB, TAGG_PERSIST_NONE, TAGG_PERSIST_NONE, 3, 16 * MiB, GiB, 0, 0, 1, 0},
    {48 * MiB, TAGG_PERSIST_NONE, TAGG_PERSIST_NONE, 3, 16 * MiB, GiB, 0, 1, 1, 1},
    {16 * GiB, TAGG_PERSIST_NONE, TAGG_PERSIST_NONE, 3, 16 * MiB, 100 * GiB, 0, 1, 1, 1}, /* group size irrelevant */
    /* persistent: capacity >= the group's data, and persistency >= required */
    {16 * GiB, TAGG_PERSIST_NONE, TAGG_PERSIST_JOB, 3, 16 * MiB, GiB, 0, 1, 0, 0},
    {128 * GiB, TAGG_PERSIST_JOB, TAGG_PERSIST_JOB, 3, 16 * MiB, 100 * GiB, 0, 1, 1, 1},
    {128 * GiB, TAGG_PERSIST_JOB, TAGG_PERSIST_JOB, 3, 16 * MiB, 200 * GiB, 0, 0, 1, 0},
    {128 * GiB, TAGG_PERSIST_JOB, TAGG_PERSIST_PERMANENT, 3, 16 * MiB, GiB, 0, 1, 0, 0},
    {128 * GiB, TAGG_PERSIST_PERMANENT, TAGG_PERSIST_JOB, 3, 16 * MiB, GiB, 0, 1, 1, 1},
    {1024 * GiB, TAGG_PERSIST_PERMANENT, TAGG_PERSIST_NONE, 1, MiB, GiB, 1, 1, 1, 0}, /* the target is no aggregator */
};

static void test_capacity_persistency_rules(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rule_cases / sizeof *rule_cases; i++) {
    const rule_case_t *c = &rule_cases[i];
    tagg_tier_t t = {.name = "X", .kind = TAGG_TIER_DRAM, .latency = 0, .bandwidth = 1e9, .capacity = c->cap, .persistency = c->tier_p};
    tagg_model_opts_t o;
    tagg_model_opts_default(&o);
    o.persistency = c->need_p;
    o.n_buff = c->nbuff;
    o.s_buff = c->sbuff;
    tagg_cost_t cost;
    memset(&cost, 0, sizeof cost);
    tagg_tier_check(&t, c->is_target, c->group, &o, &cost);
    if (cost.capacity_ok != c->cap_ok || cost.persistency_ok != c->pers_ok || cost.eligible != c->eligible)
      fail_msg("rule case %zu: cap %d pers %d elig %d", i, cost.capacity_ok, cost.persistency_ok, cost.eligible);
    assert_true(cost.need == (c->need_p ? c->group : (uint64_t)c->nbuff * c->sbuff));
  }
}

/* ---- the toy example of MA-TAPIOCA section 3.2 -------------------------- */

typedef struct { tagg_topology_t *topo; tagg_tiers_t tiers; tagg_model_opts_t opts; uint64_t bytes[4]; } toy_t;

static void toy_load(toy_t *toy) {
  tagg_err_t err = {0};
  if (tagg_topology_load(EX("toy-table1.topo"), &toy->topo, &err)) fail_msg("%s", err.msg);
  if (tagg_tiers_load(EX("toy-table1.tiers"), &toy->tiers, &err)) fail_msg("%s", err.msg);
  tagg_model_opts_default(&toy->opts);
  toy->opts.naggr = 1; /* the four processes form one group */
  static const uint64_t w[4] = {10000000, 50000000, 20000000, 5000000}; /* Table 2, omega in MB */
  memcpy(toy->bytes, w, sizeof w);
}

static void test_toy_example(void **state) {
  (void)state;
  toy_t toy;
  toy_load(&toy);
  tagg_plan_t plan;
  tagg_err_t err = {0};
  if (tagg_plan(toy.topo, &toy.tiers, toy.bytes, &toy.opts, &plan, &err)) fail_msg("%s", err.msg);
  assert_int_equal(plan.naggr, 1);
  int hbm = tagg_tiers_find(&toy.tiers, "HBM"), dram = tagg_tiers_find(&toy.tiers, "DRAM"), nvr = tagg_tiers_find(&toy.tiers, "NVR");
  /* "the most advantageous location for aggregation is the HBM of the node hosting process 1" */
  assert_int_equal(plan.groups[0].aggr_rank, 1);
  assert_int_equal(plan.groups[0].tier, hbm);
  /* Table 2 (seconds): HBM and DRAM columns reproduced to the printed precision */
  static const double table2[4][3] = {{0.593, 0.603, 2.350}, {0.470, 0.480, 2.020}, {0.742, 0.752, 2.710}, {0.503, 0.513, 2.120}};
  tagg_producer_t prod[4];
  for (int i = 0; i < 4; i++) { prod[i].rank = i; prod[i].bytes = toy.bytes[i]; }
  for (int p = 0; p < 4; p++) {
    tagg_cost_t ch, cd, cn;
    assert_int_equal(tagg_candidate_cost(toy.topo, &toy.tiers, prod, 4, p, hbm, &toy.opts, &ch, &err), 0);
    assert_int_equal(tagg_candidate_cost(toy.topo, &toy.tiers, prod, 4, p, dram, &toy.opts, &cd, &err), 0);
    assert_int_equal(tagg_candidate_cost(toy.topo, &toy.tiers, prod, 4, p, nvr, &toy.opts, &cn, &err), 0);
    print_message("process %d: HBM %.4f DRAM %.4f NVR %.4f s (Table 2: %.3f %.3f %.3f), HBM/DRAM differ by %.2f %%\n", p,
                  ch.total, cd.total, cn.total, table2[p][0], table2[p][1], table2[p][2], 100 * (cd.total - ch.total) / ch.total);
    assert_true(fabs(ch.total - table2[p][0]) < 0.0005);
    assert_true(fabs(cd.total - table2[p][1]) < 0.0005);
    /* HBM and DRAM costs differ by less than 3 %; NVR is the most expensive tier */
    assert_true(fabs(cd.total - ch.total) / ch.total < 0.03);
    assert_true(cn.total > ch.total && cn.total > cd.total);
    assert_true(ch.eligible && cd.eligible && cn.eligible);
    /* the plan's choice is the minimum over every candidate */
    assert_true(plan.groups[0].cost.total <= ch.total && plan.groups[0].cost.total <= cd.total);
  }
  tagg_plan_free(&plan);
  tagg_topology_free(toy.topo);
}

/* Table 7 (S3D-IO on 256 XC40 nodes, 3 buffers of 16 MB): HBM cut to 32 MB
 * -> DRAM is chosen; DRAM also cut to 32 MB -> NVR.  Tier values of Table 1. */
static void test_table7_capacity_cuts(void **state) {
  (void)state;
  tagg_topology_t *topo = topo_from("tagg-topology 1\nname xc40-256\nkind dragonfly\ndims 1 4 16 4\nranks_per_node 16\n"
                                    "io_stride 64\nlatency 100ns\nbandwidth 10GB/s\nglobal_bandwidth 4.7GB/s\n");
  tagg_tiers_t tiers;
  tagg_err_t err = {0};
  if (tagg_tiers_load(EX("toy-table1.tiers"), &tiers, &err)) fail_msg("%s", err.msg);
  int nranks = tagg_topology_nranks(topo);
  uint64_t *bytes = malloc((size_t)nranks * sizeof *bytes);
  assert_int_equal(tagg_pattern_fill("s3d:32:32:32:11", nranks, bytes, &err), 0);
  tagg_model_opts_t o;
  tagg_model_opts_default(&o);
  o.naggr = 96; /* as in Tables 6 and 7 */
  o.n_buff = 3;
  o.s_buff = 16000000;
  int hbm = tagg_tiers_find(&tiers, "HBM"), dram = tagg_tiers_find(&tiers, "DRAM"), nvr = tagg_tiers_find(&tiers, "NVR");
  struct { uint64_t hbm_cap, dram_cap; int want; } runs[3] = {
      {16000000000ull, 192000000000ull, hbm}, {32000000, 192000000000ull, dram}, {32000000, 32000000, nvr}};
  for (int r = 0; r < 3; r++) {
    tiers.tier[hbm].capacity = runs[r].hbm_cap;
    tiers.tier[dram].capacity = runs[r].dram_cap;
    tagg_plan_t plan;
    if (tagg_plan(topo, &tiers, bytes, &o, &plan, &err)) fail_msg("run %d: %s", r + 1, err.msg);
    assert_int_equal(plan.naggr, 96);
    for (int g = 0; g < plan.naggr; g++)
      if (plan.groups[g].tier != runs[r].want) fail_msg("run %d group %d: tier %s", r + 1, g, tiers.tier[plan.groups[g].tier].name);
    print_message("Table 7 run %d: HBM %llu B, DRAM %llu B -> %s for all 96 groups (group 0 total %.4g s)\n", r + 1,
                  (unsigned long long)runs[r].hbm_cap, (unsigned long long)runs[r].dram_cap, tiers.tier[runs[r].want].name,
                  plan.groups[0].cost.total);
    tagg_plan_free(&plan);
  }
  /* and with NVR cut too, nothing qualifies */
  tiers.tier[nvr].capacity = 32000000;
  tagg_plan_t plan;
  assert_int_equal(tagg_plan(topo, &tiers, bytes, &o, &plan, &err), TAGG_ENOCAND);
  assert_contains(err.msg, "capacity");
  /* persistency "job" excludes HBM and DRAM whatever their capacity */
  tiers.tier[nvr].capacity = 128000000000ull;
  tiers.tier[hbm].capacity = tiers.tier[dram].capacity = 1ull << 40;
  o.persistency = TAGG_PERSIST_JOB;
  if (tagg_plan(topo, &tiers, bytes, &o, &plan, &err)) fail_msg("%s", err.msg);
  for (int g = 0; g < plan.naggr; g++) assert_int_equal(plan.groups[g].tier, nvr);
  tagg_plan_free(&plan);
  free(bytes);
  tagg_topology_free(topo);
}

/* Hand-computed C1 (max) and Cost_A (sum) on one switch. */
static void test_cost_forms(void **state) {
  (void)state;
  tagg_topology_t *t = topo_from("tagg-topology 1\nkind generic\nnodes 3\nranks_per_node 1\nio_nodes 2\n"
                                 "io_extra_hops 1\nlatency 1ms\nbandwidth 1GB/s\n");
  tagg_tiers_t tiers;
  tagg_err_t err = {0};
  assert_int_equal(tagg_tiers_parse("tagg-tiers 1\ntier D kind=DRAM latency=0.5ms bandwidth=2GB/s capacity=1TB persistency=none\n"
                                    "tier F kind=PFS latency=0 bandwidth=0.5GB/s capacity=1PB persistency=permanent\n",
                                    "t", &tiers, &err), 0);
  tagg_producer_t prod[3] = {{0, 100000000}, {1, 300000000}, {2, 200000000}};
  tagg_model_opts_t o;
  tagg_model_opts_default(&o);
  tagg_cost_t c;
  /* candidate rank 0: producers 1, 2 are 2 hops away at min(1, 2) GB/s */
  assert_int_equal(tagg_candidate_cost(t, &tiers, prod, 3, 0, 0, &o, &c, &err), 0);
  assert_true(fabs(c.cost_a - (2 * 0.002 + 0.5)) < 1e-12);              /* 0.3 s + 0.2 s */
  assert_true(fabs(c.cost_t - (0.0005 + 0.001 * 3 + 0.6 / 0.5)) < 1e-12); /* d(A,IO) = 2 + 1 */
  assert_int_equal(c.hops_io, 3);
  o.form = TAGG_FORM_MAX;
  assert_int_equal(tagg_candidate_cost(t, &tiers, prod, 3, 0, 0, &o, &c, &err), 0);
  assert_true(fabs(c.cost_a - (0.002 + 0.3)) < 1e-12);
  /* candidate rank 2 sits on the gateway: d(A,IO) = 1 */
  assert_int_equal(tagg_candidate_cost(t, &tiers, prod, 3, 2, 0, &o, &c, &err), 0);
  assert_int_equal(c.hops_io, 1);
  assert_true(fabs(c.cost_a - (0.002 + 0.3)) < 1e-12);
  /* a rank outside the group (ROMIO may pick one) pays for every producer */
  tagg_producer_t two[2] = {{1, 300000000}, {2, 200000000}};
  o.form = TAGG_FORM_SUM;
  assert_int_equal(tagg_candidate_cost(t, &tiers, two, 2, 0, 0, &o, &c, &err), 0);
  assert_true(fabs(c.cost_a - (2 * 0.002 + 0.5)) < 1e-12);
  assert_int_equal(tagg_candidate_cost(t, &tiers, prod, 3, 7, 0, &o, &c, &err), TAGG_EINVAL);
  assert_int_equal(tagg_candidate_cost(t, &tiers, prod, 3, 0, 5, &o, &c, &err), TAGG_EINVAL);
  tagg_topology_free(t);
}

/* Each strategy on a mesh line of 8 nodes with the gateway at node 0. */
static void test_strategies(void **state) {
  (void)state;
  tagg_topology_t *t = topo_from("tagg-topology 1\nkind torus\ndims 8\nwrap 0\nranks_per_node 2\nio_nodes 0\n"
                                 "io_extra_hops 1\nlatency 1us\nbandwidth 1GB/s\n");
  tagg_tiers_t tiers;
  tagg_tiers_default(&tiers);
  uint64_t bytes[16];
  for (int r = 0; r < 16; r++) bytes[r] = 1000000;
  tagg_model_opts_t o;
  tagg_model_opts_default(&o);
  tagg_err_t err = {0};
  tagg_plan_t p;
  struct { const char *name; int naggr; int want[2]; } cases[] = {
      {"shortest", 1, {0, -1}},        /* node 0 is the gateway */
      {"longest", 1, {14, -1}},        /* node 7, its first rank */
      {"first-per-node", 2, {0, 2}},   /* first rank of nodes 0 and 1 */
      {"topo-aware", 1, {6, -1}},      /* node 3: the line's median, 1 MB each way, minus the gateway pull */
      {"memory-aware", 1, {6, -1}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    o.strategy = cases[i].name;
    o.naggr = cases[i].naggr;
    if (tagg_plan(t, &tiers, bytes, &o, &p, &err)) fail_msg("%s: %s", cases[i].name, err.msg);
    for (int g = 0; g < cases[i].naggr; g++)
      if (p.groups[g].aggr_rank != cases[i].want[g]) fail_msg("%s group %d: rank %d, want %d", cases[i].name, g, p.groups[g].aggr_rank, cases[i].want[g]);
    assert_string_equal(p.strategy, cases[i].name);
    if (strcmp(cases[i].name, "memory-aware") != 0) assert_int_equal(p.groups[0].tier, tiers.source);
    tagg_plan_free(&p);
  }
  /* topo-aware is min C1 + C2 in the fixed tier: check against every candidate */
  o.strategy = "topo-aware";
  o.naggr = 1;
  for (int form = 0; form < 2; form++) {
    o.form = (tagg_cost_form_t)form;
    assert_int_equal(tagg_plan(t, &tiers, bytes, &o, &p, &err), 0);
    tagg_candidate_t *c;
    size_t n;
    assert_int_equal(tagg_plan_candidates(t, &tiers, &p, 0, &o, &c, &n, &err), 0);
    for (size_t k = 0; k < n; k++)
      if (c[k].tier == tiers.source) assert_true(p.groups[0].cost.total <= c[k].cost.total);
    free(c);
    tagg_plan_free(&p);
  }
  /* random: reproducible for a seed, a producer of its group, varies with the seed */
  o.strategy = "random";
  o.naggr = 4;
  int first[4], differs = 0;
  for (uint64_t seed = 1; seed <= 6; seed++) {
    o.seed = seed;
    tagg_plan_t q;
    assert_int_equal(tagg_plan(t, &tiers, bytes, &o, &p, &err), 0);
    assert_int_equal(tagg_plan(t, &tiers, bytes, &o, &q, &err), 0);
    for (int g = 0; g < p.naggr; g++) {
      assert_int_equal(p.groups[g].aggr_rank, q.groups[g].aggr_rank);
      int in = 0;
      for (size_t k = p.part.first[g]; k < p.part.first[g + 1]; k++) in |= p.part.prod[k].rank == p.groups[g].aggr_rank;
      assert_true(in);
      if (seed == 1) first[g] = p.groups[g].aggr_rank;
      else differs |= first[g] != p.groups[g].aggr_rank;
    }
    tagg_plan_free(&p);
    tagg_plan_free(&q);
  }
  assert_true(differs);
  /* registry and errors */
  int n = 0;
  for (; tagg_strategies[n]; n++) assert_ptr_equal(tagg_strategy_find(tagg_strategies[n]->name), tagg_strategies[n]);
  assert_int_equal(n, 6);
  o.strategy = "closest-to-the-sun";
  assert_int_equal(tagg_plan(t, &tiers, bytes, &o, &p, &err), TAGG_EINVAL);
  assert_contains(err.msg, "unknown strategy 'closest-to-the-sun' (valid: memory-aware, topo-aware");
  /* a fixed tier that cannot hold the buffers is an error, not a silent choice */
  o.strategy = "shortest";
  o.aggr_tier = tagg_tiers_find(&tiers, "HBM");
  o.s_buff = 1ull << 40;
  assert_int_equal(tagg_plan(t, &tiers, bytes, &o, &p, &err), TAGG_ENOCAND);
  assert_contains(err.msg, "tier HBM cannot aggregate");
  tagg_topology_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_naggr_rule),    cmocka_unit_test(test_stepwise_throttle),    cmocka_unit_test(test_partition),
      cmocka_unit_test(test_capacity_persistency_rules), cmocka_unit_test(test_toy_example),
      cmocka_unit_test(test_table7_capacity_cuts), cmocka_unit_test(test_cost_forms),
      cmocka_unit_test(test_strategies),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
