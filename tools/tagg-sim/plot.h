/* plot.h - a small SVG line plot (log2 x axis of sizes, linear y axis). */
#ifndef TAGG_SIM_PLOT_H
#define TAGG_SIM_PLOT_H
#include <stddef.h>

typedef struct plot_series {
  const char *name;
  int n;
  const double *x, *y;  /* x > 0 (bytes), sorted */
} plot_series_t;

/* Writes the plot; returns 0 or -1 with a message in msg. */
int plot_svg(const char *path, const char *title, const char *xlabel, const char *ylabel, const plot_series_t *s,
             int ns, char *msg, size_t msglen);
#endif
