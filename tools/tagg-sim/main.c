/* tagg-sim - flow-level simulation of one collective write (or read) at
 * scale, for every placement strategy of the tagg cost model; prints a table,
 * a summary matrix (bandwidth per strategy against data size per rank), CSV
 * and an SVG plot.  Model, rules and simplifications: README.md here. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "plot.h"
#include "sim.h"
#include "tagg/pattern.h"

#define MAXL 32

typedef struct args {
  const char *topology, *tiers, *csv, *svg, *title;
  const char *pattern[MAXL];
  int npattern;
  const char *strategy[MAXL];
  int nstrategy;
  const char *tier[MAXL];
  int ntier;
  int ops;  /* bit 0 write, bit 1 read */
  int help, list, quiet;
  tagg_model_opts_t opts;
  double resolution;
  char *owned[4 * MAXL];  /* strings built here (sizes, split lists, scenario paths) */
  int nowned;
} args_t;

typedef struct row {
  int op, pat, tier;     /* tier index into args (-1: default), or -2: chosen by the strategy */
  const char *strategy;
  double per_rank;       /* mean bytes per rank */
  int chosen_tier;       /* tier of the first aggregator */
  sim_result_t r;
  double wall;
} row_t;

static void usage(FILE *o) {
  fprintf(o,
          "usage: tagg-sim [--scenario FILE] --topology FILE [options]\n"
          "  --scenario FILE     options read from FILE (one or more per line, # comments); paths\n"
          "                      of --topology/--tiers there are relative to FILE; the command line\n"
          "                      comes after it and can add or override\n"
          "  --topology FILE     topology file (model/README.md)\n"
          "  --tiers FILE        tier file (default: built-in KNL-like node)\n"
          "  --pattern SPEC      bytes per rank (tagg-model's specs: uniform:SIZE, hacc:N, s3d:X:Y:Z,\n"
          "                      random:..., normal:..., list:..., file:PATH); repeatable\n"
          "  --sizes S1,S2,...   shorthand for --pattern uniform:S1 --pattern uniform:S2 ...\n"
          "  --strategies LIST   comma-separated strategy names or 'all' (default all)\n"
          "  --aggr-tiers LIST   comma-separated tiers for strategies that do not choose one\n"
          "                      (default: the source tier); memory-aware runs once\n"
          "  --op write|read|both  (default write)\n"
          "  --nbuff N --sbuff SIZE  aggregation buffers (default 2 x 16MiB)\n"
          "  --block SIZE --mem SIZE --naggr N --no-pow2 --form sum|max --seed N\n"
          "  --persistency none|job|permanent                as tagg-model\n"
          "  --resolution R      merge events closer than R x time (default 1e-3; 0 = exact)\n"
          "  --csv FILE          one row per simulation\n"
          "  --svg FILE          bandwidth against data size per rank, one line per strategy\n"
          "  --title TEXT        title of the plot\n"
          "  --quiet             summary matrix only\n"
          "  --list              list strategies\n");
}

static char *keep(args_t *a, char *s) {
  if (!s || a->nowned >= (int)(sizeof a->owned / sizeof *a->owned)) { free(s); return NULL; }
  return a->owned[a->nowned++] = s;
}

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int need(int argc, char **argv, int *i, const char **val) {
  char *eq = strchr(argv[*i], '=');
  if (eq && strncmp(argv[*i], "--", 2) == 0) { *val = eq + 1; return 0; }
  if (*i + 1 >= argc) { fprintf(stderr, "tagg-sim: option %s needs a value\n", argv[*i]); return -1; }
  *val = argv[++*i];
  return 0;
}

static int opt_is(const char *arg, const char *name) {
  size_t n = strlen(name);
  return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

static int parse_long(const char *opt, const char *v, long lo, long hi, long *out) {
  char *end;
  long x = strtol(v, &end, 10);
  if (!*v || *end || x < lo || x > hi) {
    fprintf(stderr, "tagg-sim: %s: expected an integer in %ld..%ld, got '%s'\n", opt, lo, hi, v);
    return -1;
  }
  *out = x;
  return 0;
}

static int parse_sz(const char *opt, const char *v, uint64_t *out) {
  double d;
  if (tagg_parse_size(v, &d) || d < 1 || d > 1e18) {
    fprintf(stderr, "tagg-sim: %s: expected a size like 16MiB, got '%s'\n", opt, v);
    return -1;
  }
  *out = (uint64_t)d;
  return 0;
}

/* Splits a comma list into list[] (copies owned by a). */
static int split(args_t *a, const char *opt, const char *v, const char **list, int *n, const char *prefix) {
  char *s = keep(a, dupstr(v));
  if (!s) { fprintf(stderr, "tagg-sim: out of memory\n"); return -1; }
  for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
    if (*n >= MAXL) { fprintf(stderr, "tagg-sim: %s: at most %d entries\n", opt, MAXL); return -1; }
    if (prefix) {
      size_t len = strlen(prefix) + strlen(tok) + 1;
      char *p = keep(a, malloc(len));
      if (!p) { fprintf(stderr, "tagg-sim: out of memory\n"); return -1; }
      snprintf(p, len, "%s%s", prefix, tok);
      list[(*n)++] = p;
    } else {
      list[(*n)++] = tok;
    }
  }
  if (*n == 0) { fprintf(stderr, "tagg-sim: %s: empty list\n", opt); return -1; }
  return 0;
}

/* A path from a scenario file, relative to its directory. */
static const char *rel(args_t *a, const char *base, const char *path) {
  if (!base || path[0] == '/') return path;
  const char *slash = strrchr(base, '/');
  if (!slash) return path;
  size_t dl = (size_t)(slash - base) + 1, len = dl + strlen(path) + 1;
  char *p = keep(a, malloc(len));
  if (!p) return path;
  memcpy(p, base, dl);
  memcpy(p + dl, path, strlen(path) + 1);
  return p;
}

static int read_scenario(args_t *a, const char *path);

static int parse_args(int argc, char **argv, args_t *a, const char *scenario) {
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i], *v = NULL;
    long x;
    if (!strcmp(s, "-h") || !strcmp(s, "--help")) a->help = 1;
    else if (!strcmp(s, "--list")) a->list = 1;
    else if (!strcmp(s, "--quiet")) a->quiet = 1;
    else if (!strcmp(s, "--no-pow2")) a->opts.pow2 = 0;
    else if (opt_is(s, "--scenario")) {
      if (need(argc, argv, &i, &v)) return -1;
      if (scenario) { fprintf(stderr, "tagg-sim: %s: --scenario cannot be nested\n", scenario); return -1; }
      if (read_scenario(a, v)) return -1;
    } else if (opt_is(s, "--topology")) { if (need(argc, argv, &i, &v)) return -1; a->topology = rel(a, scenario, v); }
    else if (opt_is(s, "--tiers")) { if (need(argc, argv, &i, &v)) return -1; a->tiers = rel(a, scenario, v); }
    else if (opt_is(s, "--csv")) { if (need(argc, argv, &i, &a->csv)) return -1; }
    else if (opt_is(s, "--svg")) { if (need(argc, argv, &i, &a->svg)) return -1; }
    else if (opt_is(s, "--title")) { if (need(argc, argv, &i, &a->title)) return -1; }
    else if (opt_is(s, "--pattern")) {
      if (need(argc, argv, &i, &v)) return -1;
      if (a->npattern >= MAXL) { fprintf(stderr, "tagg-sim: at most %d patterns\n", MAXL); return -1; }
      a->pattern[a->npattern++] = v;
    } else if (opt_is(s, "--sizes")) {
      if (need(argc, argv, &i, &v) || split(a, s, v, a->pattern, &a->npattern, "uniform:")) return -1;
    } else if (opt_is(s, "--strategies")) {
      if (need(argc, argv, &i, &v)) return -1;
      a->nstrategy = 0;
      if (strcmp(v, "all") != 0) {
        if (split(a, s, v, a->strategy, &a->nstrategy, NULL)) return -1;
        for (int k = 0; k < a->nstrategy; k++)
          if (!tagg_strategy_find(a->strategy[k])) {
            fprintf(stderr, "tagg-sim: --strategies: unknown '%s' (see --list)\n", a->strategy[k]);
            return -1;
          }
      }
    } else if (opt_is(s, "--aggr-tiers")) {
      a->ntier = 0;
      if (need(argc, argv, &i, &v) || split(a, s, v, a->tier, &a->ntier, NULL)) return -1;
    } else if (opt_is(s, "--op")) {
      if (need(argc, argv, &i, &v)) return -1;
      if (!strcmp(v, "write")) a->ops = 1;
      else if (!strcmp(v, "read")) a->ops = 2;
      else if (!strcmp(v, "both")) a->ops = 3;
      else { fprintf(stderr, "tagg-sim: --op: expected write, read or both, got '%s'\n", v); return -1; }
    } else if (opt_is(s, "--naggr")) { if (need(argc, argv, &i, &v) || parse_long(s, v, 1, 1L << 26, &x)) return -1; a->opts.naggr = (int)x; }
    else if (opt_is(s, "--nbuff")) { if (need(argc, argv, &i, &v) || parse_long(s, v, 1, 1024, &x)) return -1; a->opts.n_buff = (int)x; }
    else if (opt_is(s, "--seed")) { if (need(argc, argv, &i, &v) || parse_long(s, v, 0, 0x7fffffffL, &x)) return -1; a->opts.seed = (uint64_t)x; }
    else if (opt_is(s, "--sbuff")) { if (need(argc, argv, &i, &v) || parse_sz(s, v, &a->opts.s_buff)) return -1; }
    else if (opt_is(s, "--block")) { if (need(argc, argv, &i, &v) || parse_sz(s, v, &a->opts.fs_block)) return -1; }
    else if (opt_is(s, "--mem")) { if (need(argc, argv, &i, &v) || parse_sz(s, v, &a->opts.aggr_mem)) return -1; }
    else if (opt_is(s, "--persistency")) {
      if (need(argc, argv, &i, &v)) return -1;
      if (tagg_persist_from_name(v, &a->opts.persistency)) {
        fprintf(stderr, "tagg-sim: --persistency: expected none, job or permanent, got '%s'\n", v);
        return -1;
      }
    } else if (opt_is(s, "--form")) {
      if (need(argc, argv, &i, &v)) return -1;
      if (!strcmp(v, "sum")) a->opts.form = TAGG_FORM_SUM;
      else if (!strcmp(v, "max")) a->opts.form = TAGG_FORM_MAX;
      else { fprintf(stderr, "tagg-sim: --form: expected sum or max, got '%s'\n", v); return -1; }
    } else if (opt_is(s, "--resolution")) {
      char *end;
      if (need(argc, argv, &i, &v)) return -1;
      a->resolution = strtod(v, &end);
      if (!*v || *end || !(a->resolution >= 0 && a->resolution <= 0.1)) {
        fprintf(stderr, "tagg-sim: --resolution: expected a number in [0, 0.1], got '%s'\n", v);
        return -1;
      }
    } else {
      fprintf(stderr, "tagg-sim: %s%sunknown argument '%s' (try --help)\n", scenario ? scenario : "", scenario ? ": " : "", s);
      return -1;
    }
  }
  return 0;
}

/* Scenario file: whitespace-separated options, `#` to the end of a line is a
 * comment, double quotes group words. */
static int read_scenario(args_t *a, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) { fprintf(stderr, "tagg-sim: --scenario %s: cannot open\n", path); return -1; }
  char *text = NULL;
  size_t len = 0, capn = 0;
  int c;
  while ((c = fgetc(f)) != EOF) {
    if (len + 2 > capn) {
      capn = capn ? capn * 2 : 4096;
      if (capn > (1u << 20)) { free(text); fclose(f); fprintf(stderr, "tagg-sim: --scenario %s: larger than 1 MiB\n", path); return -1; }
      char *t = realloc(text, capn);
      if (!t) { free(text); fclose(f); fprintf(stderr, "tagg-sim: out of memory\n"); return -1; }
      text = t;
    }
    text[len++] = (char)c;
  }
  fclose(f);
  if (!text) { fprintf(stderr, "tagg-sim: --scenario %s: empty\n", path); return -1; }
  text[len] = '\0';
  if (!keep(a, text)) { fprintf(stderr, "tagg-sim: out of memory\n"); return -1; }
  char *argv[256];
  int argc = 0;
  for (char *p = text; *p;) {
    if (isspace((unsigned char)*p)) { p++; continue; }
    if (*p == '#') { while (*p && *p != '\n') p++; continue; }
    if (argc >= 256) { fprintf(stderr, "tagg-sim: --scenario %s: more than 256 words\n", path); return -1; }
    if (*p == '"') {
      argv[argc++] = ++p;
      while (*p && *p != '"') p++;
      if (!*p) { fprintf(stderr, "tagg-sim: --scenario %s: unterminated quote\n", path); return -1; }
    } else {
      argv[argc++] = p;
      while (*p && !isspace((unsigned char)*p)) p++;
    }
    if (*p) *p++ = '\0';
  }
  const char *base = keep(a, dupstr(path));
  return parse_args(argc, argv, a, base ? base : path);
}

static double now(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fmt_size(char *b, size_t n, double v) {
  static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (v >= 1024 && i < 5) { v /= 1024; i++; }
  snprintf(b, n, (v == floor(v) || i == 0) ? "%.0f %s" : "%.2f %s", v, u[i]);
}

static const char *tier_label(const args_t *a, const tagg_tiers_t *t, const row_t *w, char *b, size_t n) {
  if (w->tier == -2) snprintf(b, n, "auto:%s", t->tier[w->chosen_tier].name);
  else if (w->tier >= 0) snprintf(b, n, "%s", a->tier[w->tier]);
  else snprintf(b, n, "%s", t->tier[w->chosen_tier].name);
  return b;
}

static int write_csv(const char *path, const args_t *a, const tagg_tiers_t *t, const row_t *w, int n) {
  FILE *o = fopen(path, "w");
  if (!o) { fprintf(stderr, "tagg-sim: --csv %s: cannot open for writing\n", path); return -1; }
  fprintf(o, "op,pattern,bytes_per_rank,d_tot,tier,strategy,naggr,time_s,bandwidth_GiBs,agg_phase_s,io_phase_s,"
             "hot_link,hot_link_bytes,hot_link_util,fs_util,flows,maxmin_runs,sim_wall_s\n");
  for (int i = 0; i < n; i++) {
    char tb[48];
    fprintf(o, "%s,%s,%.0f,%.0f,%s,%s,%d,%.9g,%.6g,%.6g,%.6g,\"%s\",%.0f,%.4f,%.4f,%ld,%ld,%.3f\n",
            w[i].op ? "read" : "write", a->pattern[w[i].pat], w[i].per_rank, w[i].r.d_tot,
            tier_label(a, t, &w[i], tb, sizeof tb), w[i].strategy, w[i].r.naggr, w[i].r.time,
            w[i].r.bandwidth / 1073741824.0, w[i].r.agg_phase, w[i].r.io_phase, w[i].r.hot_name, w[i].r.hot_bytes,
            w[i].r.hot_util, w[i].r.fs_util, w[i].r.flows, w[i].r.recomputes, w[i].wall);
  }
  int bad = ferror(o);
  if (fclose(o) || bad) { fprintf(stderr, "tagg-sim: --csv %s: write error\n", path); return -1; }
  return 0;
}

/* Summary: one line per (op, pattern), one column per (strategy, tier), GiB/s; best marked '*'. */
static void summary(FILE *o, const args_t *a, const tagg_tiers_t *t, const row_t *w, int n) {
  char keys[64][48];
  int nk = 0;
  for (int i = 0; i < n; i++) {
    char tb[48], k[48];
    snprintf(k, sizeof k, "%s%s%s", w[i].strategy, a->ntier > 1 ? "/" : "", a->ntier > 1 ? tier_label(a, t, &w[i], tb, sizeof tb) : "");
    int f = 0;
    for (int j = 0; j < nk && !f; j++) f = !strcmp(keys[j], k);
    if (!f && nk < 64) snprintf(keys[nk++], sizeof keys[0], "%s", k);
  }
  fprintf(o, "\neffective bandwidth (GiB/s), * = best of the line\n%-5s %-22s %10s", "op", "pattern", "per rank");
  for (int j = 0; j < nk; j++) fprintf(o, " %*s", (int)(strlen(keys[j]) > 10 ? strlen(keys[j]) : 10), keys[j]);
  fprintf(o, "\n");
  for (int i = 0; i < n;) {
    int j0 = i;
    while (i < n && w[i].op == w[j0].op && w[i].pat == w[j0].pat) i++;
    double best = 0;
    for (int k = j0; k < i; k++) if (w[k].r.bandwidth > best) best = w[k].r.bandwidth;
    char sz[32];
    fmt_size(sz, sizeof sz, w[j0].per_rank);
    fprintf(o, "%-5s %-22.22s %10s", w[j0].op ? "read" : "write", a->pattern[w[j0].pat], sz);
    for (int j = 0; j < nk; j++) {
      int width = (int)(strlen(keys[j]) > 10 ? strlen(keys[j]) : 10);
      int found = -1;
      for (int k = j0; k < i && found < 0; k++) {
        char tb[48], key[48];
        snprintf(key, sizeof key, "%s%s%s", w[k].strategy, a->ntier > 1 ? "/" : "", a->ntier > 1 ? tier_label(a, t, &w[k], tb, sizeof tb) : "");
        if (!strcmp(key, keys[j])) found = k;
      }
      if (found < 0) fprintf(o, " %*s", width, "-");
      else fprintf(o, " %*.2f%c", width - 1, w[found].r.bandwidth / 1073741824.0, w[found].r.bandwidth >= best * (1 - 1e-9) ? '*' : ' ');
    }
    fprintf(o, "\n");
  }
}

static int plot(const args_t *a, const tagg_tiers_t *t, const tagg_topology_t *topo, const row_t *w, int n) {
  plot_series_t s[64];
  double *xs = malloc((size_t)n * 2 * sizeof(double));
  char names[64][64];
  int ns = 0, rc = 0;
  if (!xs) { fprintf(stderr, "tagg-sim: out of memory\n"); return -1; }
  /* rows are grouped by pattern; a series collects its rows in pattern order */
  for (int pass = 0; pass < n; pass++) {
    char tb[48], name[64];
    snprintf(name, sizeof name, "%s%s%s%s", w[pass].strategy, a->ntier > 1 ? " / " : "",
             a->ntier > 1 ? tier_label(a, t, &w[pass], tb, sizeof tb) : "", w[pass].op ? " (read)" : "");
    int f = -1;
    for (int j = 0; j < ns && f < 0; j++) if (!strcmp(names[j], name)) f = j;
    if (f < 0) {
      if (ns >= 64) continue;
      f = ns++;
      snprintf(names[f], sizeof names[f], "%s", name);
      s[f].name = names[f];
      s[f].n = 0;
    }
    (void)f;
  }
  /* fill: x and y arrays per series, contiguous in xs */
  int off = 0;
  for (int j = 0; j < ns; j++) {
    double *x = xs + off, *y = xs + n + off;
    int k = 0;
    for (int i = 0; i < n; i++) {
      char tb[48], name[64];
      snprintf(name, sizeof name, "%s%s%s%s", w[i].strategy, a->ntier > 1 ? " / " : "",
               a->ntier > 1 ? tier_label(a, t, &w[i], tb, sizeof tb) : "", w[i].op ? " (read)" : "");
      if (strcmp(name, names[j])) continue;
      x[k] = w[i].per_rank;
      y[k++] = w[i].r.bandwidth / 1073741824.0;
    }
    /* sort by x (insertion) */
    for (int p = 1; p < k; p++)
      for (int q = p; q > 0 && x[q - 1] > x[q]; q--) {
        double tx = x[q], ty = y[q];
        x[q] = x[q - 1]; y[q] = y[q - 1]; x[q - 1] = tx; y[q - 1] = ty;
      }
    s[j].x = x;
    s[j].y = y;
    s[j].n = k;
    off += k;
  }
  char title[256], msg[256];
  if (a->title) snprintf(title, sizeof title, "%s", a->title);
  else snprintf(title, sizeof title, "tagg-sim: %s, %d nodes, %d ranks", tagg_topology_name(topo),
                tagg_topology_nnodes(topo), tagg_topology_nranks(topo));
  if (plot_svg(a->svg, title, "data size per rank", "effective bandwidth (GiB/s)", s, ns, msg, sizeof msg)) {
    fprintf(stderr, "tagg-sim: %s\n", msg);
    rc = -1;
  }
  free(xs);
  return rc;
}

int main(int argc, char **argv) {
  args_t a;
  memset(&a, 0, sizeof a);
  tagg_model_opts_default(&a.opts);
  a.resolution = 1e-3;
  int status = 2;
  tagg_topology_t *topo = NULL;
  uint64_t *bytes = NULL;
  row_t *rows = NULL;
  if (parse_args(argc - 1, argv + 1, &a, NULL)) goto out;
  if (a.help) { usage(stdout); status = 0; goto out; }
  if (a.list) {
    for (int i = 0; tagg_strategies[i]; i++) printf("  %-16s %s\n", tagg_strategies[i]->name, tagg_strategies[i]->description);
    status = 0;
    goto out;
  }
  if (!a.topology) { fprintf(stderr, "tagg-sim: --topology FILE is required\n"); usage(stderr); goto out; }
  if (!a.ops) a.ops = 1;
  if (!a.npattern) a.pattern[a.npattern++] = "uniform:1MiB";
  if (!a.nstrategy)
    for (int i = 0; tagg_strategies[i] && a.nstrategy < MAXL; i++) a.strategy[a.nstrategy++] = tagg_strategies[i]->name;
  status = 1;
  tagg_err_t err = {0};
  tagg_tiers_t tiers;
  if (tagg_topology_load(a.topology, &topo, &err)) { fprintf(stderr, "tagg-sim: %s\n", err.msg); goto out; }
  if (a.tiers) {
    if (tagg_tiers_load(a.tiers, &tiers, &err)) { fprintf(stderr, "tagg-sim: %s\n", err.msg); goto out; }
  } else {
    tagg_tiers_default(&tiers);
  }
  int tidx[MAXL];
  for (int i = 0; i < a.ntier; i++) {
    tidx[i] = tagg_tiers_find(&tiers, a.tier[i]);
    if (tidx[i] < 0 || tidx[i] == tiers.target) {
      fprintf(stderr, "tagg-sim: --aggr-tiers: no aggregation tier named '%s'\n", a.tier[i]);
      goto out;
    }
  }
  int nranks = tagg_topology_nranks(topo);
  bytes = malloc((size_t)nranks * sizeof *bytes);
  int maxrows = 2 * a.npattern * (a.ntier ? a.ntier : 1) * a.nstrategy;
  rows = calloc((size_t)maxrows, sizeof *rows);
  if (!bytes || !rows) { fprintf(stderr, "tagg-sim: out of memory\n"); goto out; }
  /* check every pattern before simulating anything */
  for (int p = 0; p < a.npattern; p++)
    if (tagg_pattern_fill(a.pattern[p], nranks, bytes, &err)) { fprintf(stderr, "tagg-sim: %s\n", err.msg); goto out; }
  if (!a.quiet) {
    tagg_topology_print(topo, stdout);
    printf("tiers:");
    for (int t = 0; t < tiers.ntiers; t++)
      printf(" %s %.3g GB/s%s", tiers.tier[t].name, tiers.tier[t].bandwidth / 1e9,
             t == tiers.source ? " (source)" : t == tiers.target ? " (target, per I/O node)" : "");
    printf("\nbuffers %d x %.0f B, event resolution %g\n\n", a.opts.n_buff, (double)a.opts.s_buff, a.resolution);
    printf("%-5s %-18s %10s %-10s %-15s %6s %10s %9s %9s %9s %-28s %6s %6s %7s\n", "op", "pattern", "per rank", "tier",
           "strategy", "#aggr", "time(s)", "GiB/s", "aggr(s)", "io(s)", "most loaded link", "GiB", "util", "wall(s)");
  }
  double t_all = now();
  int nrows = 0;
  for (int op = 0; op < 2; op++) {
    if (!(a.ops & (1 << op))) continue;
    for (int p = 0; p < a.npattern; p++) {
      tagg_pattern_fill(a.pattern[p], nranks, bytes, &err);
      double tot = 0;
      for (int r = 0; r < nranks; r++) tot += (double)bytes[r];
      for (int ti = 0; ti < (a.ntier ? a.ntier : 1); ti++)
        for (int si = 0; si < a.nstrategy; si++) {
          const tagg_strategy_t *st = tagg_strategy_find(a.strategy[si]);
          int chooses = st == &tagg_strategy_memory_aware;
          if (chooses && ti > 0) continue;
          tagg_model_opts_t o = a.opts;
          o.strategy = st->name;
          o.aggr_tier = a.ntier ? tidx[ti] : -1;
          row_t *w = &rows[nrows];
          w->op = op; w->pat = p; w->strategy = st->name; w->per_rank = tot / nranks;
          w->tier = chooses ? -2 : a.ntier ? ti : -1;
          tagg_plan_t plan;
          double t0 = now();
          if (tagg_plan(topo, &tiers, bytes, &o, &plan, &err)) {
            fprintf(stderr, "tagg-sim: %s, strategy %s: %s\n", a.pattern[p], st->name, err.msg);
            goto out;
          }
          w->chosen_tier = plan.groups[0].tier;
          sim_opts_t so = {op ? SIM_READ : SIM_WRITE, o.n_buff, o.s_buff, a.resolution};
          int rc = sim_run(topo, &tiers, bytes, &plan, &so, &w->r, &err);
          tagg_plan_free(&plan);
          if (rc) { fprintf(stderr, "tagg-sim: %s, strategy %s: %s\n", a.pattern[p], st->name, err.msg); goto out; }
          w->wall = now() - t0;
          nrows++;
          if (!a.quiet) {
            char sz[32], tb[48];
            fmt_size(sz, sizeof sz, w->per_rank);
            printf("%-5s %-18.18s %10s %-10s %-15s %6d %10.4g %9.3f %9.4g %9.4g %-28.28s %6.2f %6.2f %7.2f\n",
                   op ? "read" : "write", a.pattern[p], sz, tier_label(&a, &tiers, w, tb, sizeof tb), st->name,
                   w->r.naggr, w->r.time, w->r.bandwidth / 1073741824.0, w->r.agg_phase, w->r.io_phase, w->r.hot_name,
                   w->r.hot_bytes / 1073741824.0, w->r.hot_util, w->wall);
            fflush(stdout);
          }
        }
    }
  }
  summary(stdout, &a, &tiers, rows, nrows);
  printf("\n%d simulations in %.2f s\n", nrows, now() - t_all);
  if (a.csv && write_csv(a.csv, &a, &tiers, rows, nrows)) goto out;
  if (a.svg && plot(&a, &tiers, topo, rows, nrows)) goto out;
  if (a.csv) printf("CSV written to %s\n", a.csv);
  if (a.svg) printf("SVG written to %s\n", a.svg);
  status = 0;
out:
  free(rows);
  free(bytes);
  tagg_topology_free(topo);
  for (int i = 0; i < a.nowned; i++) free(a.owned[i]);
  return status;
}
