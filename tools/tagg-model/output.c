/* output.c - the plan as a readable table, as JSON, and --explain. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tool.h"

void fmt_bytes(char *buf, size_t n, double v) {
  static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (v >= 1024.0 && i < 5) { v /= 1024.0; i++; }
  snprintf(buf, n, i ? "%.2f %s" : "%.0f %s", v, u[i]);
}

static void naggr_note(FILE *o, unsigned f) {
  if (f & TAGG_NAGGR_USER) fprintf(o, " (user override)");
  else fprintf(o, " (rule: share <= Mem, share >= BS, power of two)");
  if (f & TAGG_NAGGR_MEM_RELAXED) fprintf(o, " [share exceeds Mem: several buffer rounds]");
  if (f & TAGG_NAGGR_BLOCK_RELAXED) fprintf(o, " [less than one block in all]");
  if (f & TAGG_NAGGR_CLAMPED) fprintf(o, " [clamped to the rank count]");
}

void out_table(FILE *o, const tool_args_t *a, const tool_run_t *r) {
  char b1[32], b2[32], b3[32];
  const tagg_plan_t *p = &r->plan;
  fprintf(o, "topology  %s: %s, %d nodes, %d ranks, %d I/O node(s)\n", tagg_topology_name(r->topo),
          tagg_topology_ops(r->topo)->name, tagg_topology_nnodes(r->topo), tagg_topology_nranks(r->topo),
          tagg_topology_nio(r->topo));
  fprintf(o, "tiers    ");
  for (int t = 0; t < r->tiers.ntiers; t++)
    fprintf(o, " %s%s", r->tiers.tier[t].name, t == r->tiers.source ? "(source)" : t == r->tiers.target ? "(target)" : "");
  fmt_bytes(b1, sizeof b1, (double)p->d_tot);
  fmt_bytes(b2, sizeof b2, (double)a->opts.n_buff * (double)a->opts.s_buff);
  fmt_bytes(b3, sizeof b3, (double)a->opts.fs_block);
  fprintf(o, "\npattern   %s: D_tot %s; buffers %d x S_buff = %s; BS %s; persistency %s\n", a->pattern, b1,
          a->opts.n_buff, b2, b3, tagg_persist_name(a->opts.persistency));
  fprintf(o, "#Aggr     %d", p->naggr);
  naggr_note(o, p->naggr_flags);
  fprintf(o, "\nstrategy  %s, %s form\n", p->strategy, p->form == TAGG_FORM_SUM ? "sum (Cost_A)" : "max (C1)");
  fprintf(o, "planning took %.3f ms\n\n", r->seconds * 1e3);
  fprintf(o, "%5s %12s %12s %5s %7s %6s %-6s %4s %12s %12s %12s\n", "group", "offset", "length", "prod", "aggr",
          "node", "tier", "dIO", p->form == TAGG_FORM_SUM ? "Cost_A(s)" : "C1(s)", "Cost_T(s)", "total(s)");
  for (int g = 0; g < p->naggr; g++) {
    const tagg_group_plan_t *gp = &p->groups[g];
    fmt_bytes(b1, sizeof b1, (double)gp->offset);
    fmt_bytes(b2, sizeof b2, (double)gp->length);
    fprintf(o, "%5d %12s %12s %5d %7d %6d %-6s %4d %12.6g %12.6g %12.6g\n", g, b1, b2, gp->nprod, gp->aggr_rank,
            gp->aggr_node, r->tiers.tier[gp->tier].name, gp->cost.hops_io, gp->cost.cost_a, gp->cost.cost_t,
            gp->cost.total);
  }
  fprintf(o, "worst group total %.6g s (groups aggregate in parallel)\n", p->worst_total);
}

static void json_num(FILE *o, double v) {
  if (isfinite(v)) fprintf(o, "%.9g", v);
  else fprintf(o, "null");
}

static void json_cost(FILE *o, const tagg_cost_t *c) {
  fprintf(o, "{\"cost_a\": ");
  json_num(o, c->cost_a);
  fprintf(o, ", \"cost_t\": ");
  json_num(o, c->cost_t);
  fprintf(o, ", \"total\": ");
  json_num(o, c->total);
  fprintf(o, ", \"hops_io\": %d, \"group_bytes\": %llu, \"need\": %llu, \"capacity_ok\": %s, \"persistency_ok\": %s}",
          c->hops_io, (unsigned long long)c->group_bytes, (unsigned long long)c->need,
          c->capacity_ok ? "true" : "false", c->persistency_ok ? "true" : "false");
}

/* Names here come from files; escape what JSON requires. */
static void json_str(FILE *o, const char *s) {
  fputc('"', o);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(o, "\\%c", c);
    else if (c < 0x20) fprintf(o, "\\u%04x", c);
    else fputc(c, o);
  }
  fputc('"', o);
}

int out_explain(FILE *o, const tool_args_t *a, const tool_run_t *r, int json) {
  tagg_candidate_t *c;
  size_t n;
  tagg_err_t err = {0};
  if (tagg_plan_candidates(r->topo, &r->tiers, &r->plan, a->explain, &a->opts, &c, &n, &err)) {
    fprintf(stderr, "tagg-model: %s\n", err.msg);
    return -1;
  }
  const tagg_group_plan_t *gp = &r->plan.groups[a->explain];
  if (json) {
    fprintf(o, ",\n  \"explain\": {\"group\": %d, \"candidates\": [", a->explain);
    for (size_t i = 0; i < n; i++) {
      fprintf(o, "%s\n    {\"rank\": %d, \"node\": %d, \"tier\": ", i ? "," : "", c[i].rank, c[i].node);
      json_str(o, r->tiers.tier[c[i].tier].name);
      fprintf(o, ", \"cost\": ");
      json_cost(o, &c[i].cost);
      fprintf(o, "}");
    }
    fprintf(o, "\n  ]}");
  } else {
    fprintf(o, "\ncandidates of group %d (cheapest first; * = chosen, - = fails capacity/persistency):\n", a->explain);
    fprintf(o, "  %7s %6s %-6s %4s %5s %5s %12s %12s %12s\n", "rank", "node", "tier", "dIO", "cap", "pers",
            a->opts.form == TAGG_FORM_SUM ? "Cost_A(s)" : "C1(s)", "Cost_T(s)", "total(s)");
    for (size_t i = 0; i < n; i++) {
      int chosen = c[i].rank == gp->aggr_rank && c[i].tier == gp->tier;
      fprintf(o, "%c %7d %6d %-6s %4d %5s %5s %12.6g %12.6g %12.6g\n", chosen ? '*' : c[i].cost.eligible ? ' ' : '-',
              c[i].rank, c[i].node, r->tiers.tier[c[i].tier].name, c[i].cost.hops_io,
              c[i].cost.capacity_ok ? "ok" : "no", c[i].cost.persistency_ok ? "ok" : "no", c[i].cost.cost_a,
              c[i].cost.cost_t, c[i].cost.cost_a + c[i].cost.cost_t);
    }
  }
  free(c);
  return 0;
}

int out_json(FILE *o, const tool_args_t *a, const tool_run_t *r) {
  const tagg_plan_t *p = &r->plan;
  fprintf(o, "{\n  \"topology\": ");
  json_str(o, tagg_topology_name(r->topo));
  fprintf(o, ", \"kind\": \"%s\", \"nodes\": %d, \"ranks\": %d,\n  \"pattern\": ", tagg_topology_ops(r->topo)->name,
          tagg_topology_nnodes(r->topo), tagg_topology_nranks(r->topo));
  json_str(o, a->pattern);
  fprintf(o, ", \"d_tot\": %llu, \"naggr\": %d, \"naggr_flags\": %u,\n  \"strategy\": \"%s\", \"form\": \"%s\", "
             "\"plan_seconds\": %.9f, \"worst_total\": ",
          (unsigned long long)p->d_tot, p->naggr, p->naggr_flags, p->strategy,
          p->form == TAGG_FORM_SUM ? "sum" : "max", r->seconds);
  json_num(o, p->worst_total);
  fprintf(o, ",\n  \"tiers\": [");
  for (int t = 0; t < r->tiers.ntiers; t++) {
    const tagg_tier_t *x = &r->tiers.tier[t];
    fprintf(o, "%s{\"name\": ", t ? ", " : "");
    json_str(o, x->name);
    fprintf(o, ", \"kind\": \"%s\", \"latency\": %.9g, \"bandwidth\": %.9g, \"capacity\": %llu, \"persistency\": \"%s\"}",
            tagg_tier_kind_name(x->kind), x->latency, x->bandwidth, (unsigned long long)x->capacity,
            tagg_persist_name(x->persistency));
  }
  fprintf(o, "],\n  \"groups\": [");
  for (int g = 0; g < p->naggr; g++) {
    const tagg_group_plan_t *gp = &p->groups[g];
    fprintf(o, "%s\n    {\"group\": %d, \"offset\": %llu, \"length\": %llu, \"producers\": %d, \"aggr_rank\": %d, "
               "\"aggr_node\": %d, \"tier\": ",
            g ? "," : "", g, (unsigned long long)gp->offset, (unsigned long long)gp->length, gp->nprod, gp->aggr_rank,
            gp->aggr_node);
    json_str(o, r->tiers.tier[gp->tier].name);
    fprintf(o, ", \"gateway\": %d, \"cost\": ", tagg_topology_gateway(r->topo, gp->aggr_node));
    json_cost(o, &gp->cost);
    fprintf(o, "}");
  }
  fprintf(o, "\n  ]");
  if (a->explain >= 0 && out_explain(o, a, r, 1)) return -1;
  fprintf(o, "\n}\n");
  return 0;
}
