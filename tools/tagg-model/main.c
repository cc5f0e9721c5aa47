/* tagg-model - print the aggregation plan of the tagg cost model for a
 * topology file, a tier file and an access pattern. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tool.h"

static void usage(FILE *o) {
  fprintf(o,
          "usage: tagg-model --topology FILE [options]\n"
          "  --topology FILE     topology file (model/README.md)\n"
          "  --tiers FILE        tier file (default: built-in KNL-like node)\n"
          "  --pattern SPEC      bytes per rank: uniform:SIZE | random:MIN:MAX[:SEED] |\n"
          "                      normal:MEAN:SD[:SEED] | hacc:PARTICLES | s3d:NX:NY:NZ[:NVARS] |\n"
          "                      list:S0,S1,... | file:PATH   (default uniform:1MB)\n"
          "  --strategy NAME     memory-aware (default), topo-aware, shortest, longest,\n"
          "                      first-per-node, random\n"
          "  --naggr N           number of aggregators (default: the #Aggr rule)\n"
          "  --no-pow2           #Aggr rule without rounding to a power of two\n"
          "  --block SIZE        file-system block BS (default 8MiB)\n"
          "  --mem SIZE          memory per aggregator for #Aggr (default nbuff x sbuff)\n"
          "  --nbuff N --sbuff SIZE  aggregation buffers (default 2 x 16MiB)\n"
          "  --persistency P     none (default), job or permanent\n"
          "  --form sum|max      Cost_A as a sum (MA-TAPIOCA, default) or C1 as a max (poster)\n"
          "  --tier NAME         tier used by strategies that do not choose one (default: source)\n"
          "  --seed N            seed of the random strategy (default 1)\n"
          "  --json              print the plan as JSON\n"
          "  --explain G         print every candidate's costs for group G\n"
          "  --svg FILE          draw topology, producers, aggregators, I/O nodes and routes\n"
          "  --compare           plan with every strategy and compare their worst group cost\n"
          "  --list              list topology kinds and strategies\n");
}

static int need(int argc, char **argv, int *i, const char **val) {
  char *eq = strchr(argv[*i], '=');
  if (eq) { *val = eq + 1; return 0; }
  if (*i + 1 >= argc) { fprintf(stderr, "tagg-model: option %s needs a value\n", argv[*i]); return -1; }
  *val = argv[++*i];
  return 0;
}

static int opt_is(const char *arg, const char *name) {
  size_t n = strlen(name);
  return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

static int parse_uint(const char *opt, const char *v, long lo, long hi, long *out) {
  char *end;
  long x = strtol(v, &end, 10);
  if (!*v || *end || x < lo || x > hi) {
    fprintf(stderr, "tagg-model: %s: expected an integer in %ld..%ld, got '%s'\n", opt, lo, hi, v);
    return -1;
  }
  *out = x;
  return 0;
}

static int parse_sz(const char *opt, const char *v, uint64_t *out) {
  double d;
  if (tagg_parse_size(v, &d) || d < 1 || d > 1e18) {
    fprintf(stderr, "tagg-model: %s: expected a size like 16MiB, got '%s'\n", opt, v);
    return -1;
  }
  *out = (uint64_t)d;
  return 0;
}

static int parse_args(int argc, char **argv, tool_args_t *a) {
  memset(a, 0, sizeof *a);
  tagg_model_opts_default(&a->opts);
  a->pattern = "uniform:1MB";
  a->explain = -1;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i], *v = NULL;
    long x;
    if (!strcmp(s, "-h") || !strcmp(s, "--help")) a->help = 1;
    else if (!strcmp(s, "--json")) a->json = 1;
    else if (!strcmp(s, "--compare")) a->compare = 1;
    else if (!strcmp(s, "--list")) a->list = 1;
    else if (!strcmp(s, "--no-pow2")) a->opts.pow2 = 0;
    else if (opt_is(s, "--topology")) { if (need(argc, argv, &i, &a->topology)) return -1; }
    else if (opt_is(s, "--tiers")) { if (need(argc, argv, &i, &a->tiers)) return -1; }
    else if (opt_is(s, "--pattern")) { if (need(argc, argv, &i, &a->pattern)) return -1; }
    else if (opt_is(s, "--svg")) { if (need(argc, argv, &i, &a->svg)) return -1; }
    else if (opt_is(s, "--tier")) { if (need(argc, argv, &i, &a->tier_name)) return -1; }
    else if (opt_is(s, "--strategy")) {
      if (need(argc, argv, &i, &v)) return -1;
      if (!tagg_strategy_find(v)) { fprintf(stderr, "tagg-model: --strategy: unknown '%s' (see --list)\n", v); return -1; }
      a->opts.strategy = v;
    } else if (opt_is(s, "--naggr")) { if (need(argc, argv, &i, &v) || parse_uint(s, v, 1, 1L << 26, &x)) return -1; a->opts.naggr = (int)x; }
    else if (opt_is(s, "--nbuff")) { if (need(argc, argv, &i, &v) || parse_uint(s, v, 1, 1024, &x)) return -1; a->opts.n_buff = (int)x; }
    else if (opt_is(s, "--explain")) { if (need(argc, argv, &i, &v) || parse_uint(s, v, 0, 1L << 26, &x)) return -1; a->explain = (int)x; }
    else if (opt_is(s, "--seed")) { if (need(argc, argv, &i, &v) || parse_uint(s, v, 0, 0x7fffffffL, &x)) return -1; a->opts.seed = (uint64_t)x; }
    else if (opt_is(s, "--sbuff")) { if (need(argc, argv, &i, &v) || parse_sz(s, v, &a->opts.s_buff)) return -1; }
    else if (opt_is(s, "--block")) { if (need(argc, argv, &i, &v) || parse_sz(s, v, &a->opts.fs_block)) return -1; }
    else if (opt_is(s, "--mem")) { if (need(argc, argv, &i, &v) || parse_sz(s, v, &a->opts.aggr_mem)) return -1; }
    else if (opt_is(s, "--persistency")) {
      if (need(argc, argv, &i, &v)) return -1;
      if (tagg_persist_from_name(v, &a->opts.persistency)) { fprintf(stderr, "tagg-model: --persistency: expected none, job or permanent, got '%s'\n", v); return -1; }
    } else if (opt_is(s, "--form")) {
      if (need(argc, argv, &i, &v)) return -1;
      if (!strcmp(v, "sum")) a->opts.form = TAGG_FORM_SUM;
      else if (!strcmp(v, "max")) a->opts.form = TAGG_FORM_MAX;
      else { fprintf(stderr, "tagg-model: --form: expected sum or max, got '%s'\n", v); return -1; }
    } else { fprintf(stderr, "tagg-model: unknown argument '%s' (try --help)\n", s); return -1; }
  }
  return 0;
}

static double now(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void list_all(void) {
  printf("topology kinds:\n");
  for (int i = 0; tagg_topo_kinds[i]; i++) printf("  %-16s %s\n", tagg_topo_kinds[i]->name, tagg_topo_kinds[i]->description);
  printf("strategies:\n");
  for (int i = 0; tagg_strategies[i]; i++) printf("  %-16s %s\n", tagg_strategies[i]->name, tagg_strategies[i]->description);
}

static int compare(const tool_args_t *a, tool_run_t *r) {
  printf("%-16s %6s %14s %14s\n", "strategy", "#Aggr", "worst total(s)", "vs best");
  double best = 0;
  tagg_plan_t plans[16];
  int n = 0, rc = 0;
  for (int i = 0; tagg_strategies[i] && n < 16; i++, n++) {
    tagg_model_opts_t o = a->opts;
    o.strategy = tagg_strategies[i]->name;
    tagg_err_t err = {0};
    if (tagg_plan(r->topo, &r->tiers, r->bytes, &o, &plans[n], &err)) {
      fprintf(stderr, "tagg-model: strategy %s: %s\n", o.strategy, err.msg);
      memset(&plans[n], 0, sizeof plans[n]);
      rc = 1;
      continue;
    }
    if (best == 0 || plans[n].worst_total < best) best = plans[n].worst_total;
  }
  for (int i = 0; i < n; i++) {
    if (!plans[i].groups) continue;
    printf("%-16s %6d %14.6g %13.1f%%\n", plans[i].strategy, plans[i].naggr, plans[i].worst_total,
           best > 0 ? 100.0 * (plans[i].worst_total / best - 1.0) : 0.0);
    tagg_plan_free(&plans[i]);
  }
  return rc;
}

int main(int argc, char **argv) {
  tool_args_t a;
  if (parse_args(argc, argv, &a)) return 2;
  if (a.help) { usage(stdout); return 0; }
  if (a.list) { list_all(); return 0; }
  if (!a.topology) { fprintf(stderr, "tagg-model: --topology FILE is required\n"); usage(stderr); return 2; }
  tool_run_t r;
  memset(&r, 0, sizeof r);
  tagg_err_t err = {0};
  int status = 1;
  if (tagg_topology_load(a.topology, &r.topo, &err)) { fprintf(stderr, "tagg-model: %s\n", err.msg); return 1; }
  if (a.tiers) {
    if (tagg_tiers_load(a.tiers, &r.tiers, &err)) { fprintf(stderr, "tagg-model: %s\n", err.msg); goto done; }
  } else {
    tagg_tiers_default(&r.tiers);
  }
  if (a.tier_name) {
    int t = tagg_tiers_find(&r.tiers, a.tier_name);
    if (t < 0 || t == r.tiers.target) { fprintf(stderr, "tagg-model: --tier: no aggregation tier named '%s'\n", a.tier_name); goto done; }
    a.opts.aggr_tier = t;
  }
  int nranks = tagg_topology_nranks(r.topo);
  r.bytes = malloc((size_t)nranks * sizeof *r.bytes);
  if (!r.bytes) { fprintf(stderr, "tagg-model: out of memory\n"); goto done; }
  if (tagg_pattern_fill(a.pattern, nranks, r.bytes, &err)) { fprintf(stderr, "tagg-model: %s\n", err.msg); goto done; }
  if (a.compare) { status = compare(&a, &r); goto done; }
  double t0 = now();
  int rc = tagg_plan(r.topo, &r.tiers, r.bytes, &a.opts, &r.plan, &err);
  r.seconds = now() - t0;
  if (rc) { fprintf(stderr, "tagg-model: %s\n", err.msg); goto done; }
  if (a.explain >= r.plan.naggr) { fprintf(stderr, "tagg-model: --explain: group %d does not exist (0..%d)\n", a.explain, r.plan.naggr - 1); goto done; }
  if (a.json) {
    if (out_json(stdout, &a, &r)) goto done;
  } else {
    out_table(stdout, &a, &r);
    if (a.explain >= 0 && out_explain(stdout, &a, &r, 0)) goto done;
  }
  if (a.svg) {
    char msg[256];
    if (out_svg(a.svg, &a, &r, msg, sizeof msg)) { fprintf(stderr, "tagg-model: %s\n", msg); goto done; }
    if (!a.json) printf("SVG written to %s\n", a.svg);
  }
  status = 0;
done:
  tagg_plan_free(&r.plan);
  free(r.bytes);
  tagg_topology_free(r.topo);
  return status;
}
