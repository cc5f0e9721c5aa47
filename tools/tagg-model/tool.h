/* tool.h - shared by the tagg-model sources. */
#ifndef TAGG_MODEL_TOOL_H
#define TAGG_MODEL_TOOL_H
#include <stdio.h>
#include "tagg/model.h"
#include "tagg/pattern.h"

typedef struct tool_args {
  const char *topology, *tiers, *pattern, *svg, *tier_name;
  int json, explain, compare, list, help;
  tagg_model_opts_t opts;
} tool_args_t;

typedef struct tool_run {
  tagg_topology_t *topo;
  tagg_tiers_t tiers;
  uint64_t *bytes;
  tagg_plan_t plan;
  double seconds;  /* planning time */
} tool_run_t;

/* output.c */
void out_table(FILE *o, const tool_args_t *a, const tool_run_t *r);
int out_explain(FILE *o, const tool_args_t *a, const tool_run_t *r, int json);
int out_json(FILE *o, const tool_args_t *a, const tool_run_t *r);
void fmt_bytes(char *buf, size_t n, double v);
/* svg.c */
int out_svg(const char *path, const tool_args_t *a, const tool_run_t *r, char *msg, size_t msglen);
#endif
