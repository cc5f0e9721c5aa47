/* plot.c - bandwidth against data size per rank as an SVG line chart, one
 * line per strategy, like Figure 4 of the poster (000_*.txt). */
#include "plot.h"
#include <math.h>
#include <stdio.h>

static const char *const colours[] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

static void size_label(char *b, size_t n, double v) {
  static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (v >= 1024 && i < 4) { v /= 1024; i++; }
  snprintf(b, n, v == floor(v) ? "%.0f %s" : "%.1f %s", v, u[i]);
}

/* XML-escapes s into the file. */
static void text(FILE *o, const char *s) {
  for (; *s; s++) {
    if (*s == '<') fputs("&lt;", o);
    else if (*s == '>') fputs("&gt;", o);
    else if (*s == '&') fputs("&amp;", o);
    else fputc(*s, o);
  }
}

int plot_svg(const char *path, const char *title, const char *xlabel, const char *ylabel, const plot_series_t *s,
             int ns, char *msg, size_t msglen) {
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
  for (int i = 0; i < ns; i++)
    for (int k = 0; k < s[i].n; k++) {
      if (!(s[i].x[k] > 0)) continue;
      double lx = log2(s[i].x[k]);
      if (lx < xmin) xmin = lx;
      if (lx > xmax) xmax = lx;
      if (isfinite(s[i].y[k]) && s[i].y[k] > ymax) ymax = s[i].y[k];
    }
  if (!isfinite(xmin)) { snprintf(msg, msglen, "--svg %s: nothing to plot", path); return -1; }
  xmin = floor(xmin);
  xmax = ceil(xmax);
  if (xmax <= xmin) xmax = xmin + 1;
  if (ymax <= 0) ymax = 1;
  /* a round y step: 1, 2 or 5 x 10^k, about 6 ticks */
  double step = pow(10, floor(log10(ymax / 6))), ytop;
  if (ymax / step > 30) step *= 5;
  else if (ymax / step > 12) step *= 2;
  ytop = ceil(ymax * 1.05 / step) * step;
  FILE *o = fopen(path, "w");
  if (!o) { snprintf(msg, msglen, "--svg %s: cannot open for writing", path); return -1; }
  const double W = 860, H = 520, L = 80, R = 230, T = 50, B = 70, pw = W - L - R, ph = H - T - B;
#define PX(v) (L + ((v) - xmin) / (xmax - xmin) * pw)
#define PY(v) (T + ph - (v) / ytop * ph)
  fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\">\n", W, H);
  fprintf(o, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%.0f\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">", L + pw / 2);
  text(o, title);
  fprintf(o, "</text>\n");
  for (double y = 0; y <= ytop + step / 2; y += step) {
    fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", L, PY(y), L + pw, PY(y));
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%g</text>\n", L - 6, PY(y) + 4, y);
  }
  for (double x = xmin; x <= xmax + 0.5; x += 1) {
    char b[32];
    size_label(b, sizeof b, exp2(x));
    fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>", PX(x), T, PX(x), T + ph);
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n", PX(x), T + ph + 18, b);
  }
  fprintf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"black\"/>\n", L, T, pw, ph);
  fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\" text-anchor=\"middle\">", L + pw / 2, H - 22);
  text(o, xlabel);
  fprintf(o, "</text>\n<text transform=\"translate(22 %.0f) rotate(-90)\" font-size=\"13\" text-anchor=\"middle\">", T + ph / 2);
  text(o, ylabel);
  fprintf(o, "</text>\n");
  for (int i = 0; i < ns; i++) {
    const char *c = colours[i % 10];
    const char *dash = i >= 10 ? " stroke-dasharray=\"6,3\"" : "";
    fprintf(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", c, dash);
    for (int k = 0; k < s[i].n; k++)
      if (s[i].x[k] > 0 && isfinite(s[i].y[k])) fprintf(o, "%.1f,%.1f ", PX(log2(s[i].x[k])), PY(s[i].y[k]));
    fprintf(o, "\"/>\n");
    for (int k = 0; k < s[i].n; k++)
      if (s[i].x[k] > 0 && isfinite(s[i].y[k]))
        fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>", PX(log2(s[i].x[k])), PY(s[i].y[k]), c);
    double ly = T + 10 + 22 * i;
    fprintf(o, "\n<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"3\"%s/>", L + pw + 15, ly,
            L + pw + 45, ly, c, dash);
    fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">", L + pw + 52, ly + 4);
    text(o, s[i].name);
    fprintf(o, "</text>\n");
  }
  fprintf(o, "</svg>\n");
#undef PX
#undef PY
  int bad = ferror(o);
  if (fclose(o) || bad) { snprintf(msg, msglen, "--svg %s: write error", path); return -1; }
  return 0;
}
