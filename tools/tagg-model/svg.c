/* svg.c - draw the plan: every node at its 2D projection (tagg_topology_project2d:
 * nested blocks for tori, groups/chassis/blades for dragonflies, leaf switches
 * for trees), producers, aggregators (with their tier), I/O gateways, and one
 * line per route whose width is proportional to the bytes it carries. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tool.h"

typedef struct { double x, y; } pt_t;

/* Distinct colour per group: hue stepped by the golden angle, HSL(h, 70%, 42%)
 * converted to #rrggbb (some SVG renderers ignore hsl()). */
static void color(int g, char *buf, size_t n) {
  double h = (double)((g * 137) % 360) / 60.0, s = 0.7, l = 0.42;
  double c = (1 - fabs(2 * l - 1)) * s, x = c * (1 - fabs(fmod(h, 2.0) - 1)), m = l - c / 2, r = 0, gr = 0, b = 0;
  switch ((int)h) {
    case 0: r = c; gr = x; break;
    case 1: r = x; gr = c; break;
    case 2: gr = c; b = x; break;
    case 3: gr = x; b = c; break;
    case 4: r = x; b = c; break;
    default: r = c; b = x;
  }
  snprintf(buf, n, "#%02x%02x%02x", (int)((r + m) * 255), (int)((gr + m) * 255), (int)((b + m) * 255));
}

int out_svg(const char *path, const tool_args_t *a, const tool_run_t *r, char *msg, size_t msglen) {
  const tagg_topology_t *t = r->topo;
  const tagg_plan_t *p = &r->plan;
  int nn = tagg_topology_nnodes(t);
  pt_t *pos = malloc((size_t)nn * sizeof *pos);
  unsigned char *role = calloc((size_t)nn, 1); /* 1 producer, 2 has ranks */
  int *aggr_tier = malloc((size_t)nn * sizeof *aggr_tier);
  if (!pos || !role || !aggr_tier) { free(pos); free(role); free(aggr_tier); snprintf(msg, msglen, "out of memory"); return -1; }
  double mx = 0, my = 0;
  for (int n = 0; n < nn; n++) {
    tagg_topology_project2d(t, n, &pos[n].x, &pos[n].y);
    if (pos[n].x > mx) mx = pos[n].x;
    if (pos[n].y > my) my = pos[n].y;
    aggr_tier[n] = -1;
  }
  for (int rk = 0; rk < tagg_topology_nranks(t); rk++) role[tagg_topology_rank_node(t, rk)] |= 2;
  for (size_t i = 0; i < p->part.first[p->naggr]; i++) role[tagg_topology_rank_node(t, p->part.prod[i].rank)] |= 1;
  for (int g = 0; g < p->naggr; g++) aggr_tier[p->groups[g].aggr_node] = p->groups[g].tier;
  double cell = 1100.0 / (mx + 1);
  if (cell > 60) cell = 60;
  if (cell < 4) cell = 4;
  double m = 40, top = 70, w = (mx + 1) * cell + 2 * m, h = (my + 1) * cell + top + 110;
  if (w < 1000) w = 1000;
  FILE *o = fopen(path, "w");
  if (!o) {
    snprintf(msg, msglen, "--svg %s: cannot open: %s", path, strerror(errno));
    free(pos); free(role); free(aggr_tier);
    return -1;
  }
#define X(n) (m + pos[n].x * cell + cell / 2)
#define Y(n) (top + pos[n].y * cell + cell / 2)
  fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
             "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", w, h, w, h);
  char total[32];
  fmt_bytes(total, sizeof total, (double)p->d_tot);
  fprintf(o, "<text x=\"%.0f\" y=\"24\" font-size=\"16\" font-weight=\"bold\">tagg-model: %s (%s, %d nodes, %d ranks)</text>\n",
          m, tagg_topology_name(t), tagg_topology_ops(t)->name, nn, tagg_topology_nranks(t));
  fprintf(o, "<text x=\"%.0f\" y=\"46\" font-size=\"13\">pattern %s, %s in all; strategy %s; %d aggregators; worst group cost %.4g s</text>\n",
          m, a->pattern, total, p->strategy, p->naggr, p->worst_total);
  /* nodes */
  double s = cell * 0.7;
  for (int n = 0; n < nn; n++) {
    const char *fill = (role[n] & 1) ? "#c8c8c8" : (role[n] & 2) ? "#eeeeee" : "white";
    fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#999\" stroke-width=\"0.5\"/>\n",
            X(n) - s / 2, Y(n) - s / 2, s, s, fill);
  }
  /* routes producers -> aggregator, width ~ bytes */
  uint64_t maxb = 1;
  for (size_t i = 0; i < p->part.first[p->naggr]; i++) if (p->part.prod[i].bytes > maxb) maxb = p->part.prod[i].bytes;
  for (int g = 0; g < p->naggr; g++) if (p->groups[g].cost.group_bytes > maxb) maxb = p->groups[g].cost.group_bytes;
  int labels = p->naggr <= 16;
  for (int g = 0; g < p->naggr; g++) {
    const tagg_group_plan_t *gp = &p->groups[g];
    tagg_group_summary_t sum;
    tagg_err_t err = {0};
    if (tagg_group_summary_build(t, p->part.prod + p->part.first[g], p->part.first[g + 1] - p->part.first[g], &sum, &err)) continue;
    char col[32];
    color(g, col, sizeof col);
    int an = gp->aggr_node;
    for (int k = 0; k < sum.nnodes; k++) {
      int n = sum.node[k];
      if (n == an) continue;
      double sw = 0.6 + 5.0 * (double)sum.bytes[k] / (double)maxb;
      fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.2f\" stroke-opacity=\"0.55\"/>\n",
              X(n), Y(n), X(an), Y(an), col, sw);
      if (labels && sum.nnodes <= 8) {
        char b[32];
        fmt_bytes(b, sizeof b, (double)sum.bytes[k]);
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">%s</text>\n", (X(n) + X(an)) / 2 + 3,
                (Y(n) + Y(an)) / 2 - 3, col, b);
      }
    }
    tagg_group_summary_free(&sum);
    /* aggregator -> gateway */
    int gw = tagg_topology_gateway(t, an);
    double sw = 1.0 + 6.0 * (double)gp->cost.group_bytes / (double)maxb;
    if (gw != an)
      fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\" stroke-width=\"%.2f\" stroke-dasharray=\"6,3\" stroke-opacity=\"0.7\"/>\n",
              X(an), Y(an), X(gw), Y(gw), sw);
    if (labels) {
      char b[32];
      fmt_bytes(b, sizeof b, (double)gp->cost.group_bytes);
      fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" font-weight=\"bold\">g%d: %s</text>\n",
              X(an) + s * 0.5 + 3, Y(an) + s * 0.5 + 11, g, b);
    }
  }
  /* I/O gateways and aggregators on top */
  for (int i = 0; i < tagg_topology_nio(t); i++) {
    int n = tagg_topology_io_node(t, i);
    double d = s * 0.85 + 2;
    fprintf(o, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"#1f4fd1\" stroke-width=\"2\"/>\n",
            X(n), Y(n) - d, X(n) + d, Y(n), X(n), Y(n) + d, X(n) - d, Y(n));
  }
  for (int n = 0; n < nn; n++) {
    if (aggr_tier[n] < 0) continue;
    fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"#d62728\" stroke=\"black\" stroke-width=\"0.7\"/>\n",
            X(n), Y(n), s * 0.45 + 1.5);
    if (cell >= 14)
      fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"middle\" fill=\"#d62728\">%s</text>\n",
              X(n), Y(n) - s * 0.55 - 2, cell >= 30 ? 12.0 : 9.0, r->tiers.tier[aggr_tier[n]].name);
  }
  /* legend */
  double ly = top + (my + 1) * cell + 30;
  fprintf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"#c8c8c8\" stroke=\"#999\"/><text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">producer node</text>\n", m, ly, m + 18, ly + 11);
  fprintf(o, "<circle cx=\"%.0f\" cy=\"%.0f\" r=\"6\" fill=\"#d62728\" stroke=\"black\"/><text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">aggregator (label: tier)</text>\n", m + 136, ly + 6, m + 148, ly + 11);
  fprintf(o, "<polygon points=\"%.0f,%.0f %.0f,%.0f %.0f,%.0f %.0f,%.0f\" fill=\"none\" stroke=\"#1f4fd1\" stroke-width=\"2\"/><text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">I/O gateway</text>\n",
          m + 320, ly - 1, m + 327, ly + 6, m + 320, ly + 13, m + 313, ly + 6, m + 334, ly + 11);
  fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">coloured lines: producers -> aggregator (one colour per group), dashed: aggregator -> I/O gateway; width ~ bytes.</text>\n", m, ly + 32);
  fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">Layout is a 2D projection (%s); straight lines stand for routes, not physical links.</text>\n", m, ly + 50,
          tagg_topology_ops(t)->description);
  fprintf(o, "</svg>\n");
#undef X
#undef Y
  int bad = ferror(o);
  if (fclose(o) || bad) { snprintf(msg, msglen, "--svg %s: write error", path); bad = 1; }
  free(pos);
  free(role);
  free(aggr_tier);
  return bad ? -1 : 0;
}
