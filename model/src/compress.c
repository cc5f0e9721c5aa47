/* compress.c - the cost of stripe compression (tagg/compress.h). */
#include "tagg/compress.h"
#include "internal.h"
#include "tagg/pattern.h"

#include <stdio.h>
#include <string.h>

static int parse(tagg_lines_t *L, void *ctx, tagg_err_t *err) {
  tagg_codec_perf_t *cp = ctx;
  memset(cp, 0, sizeof *cp);
  int n;
  while ((n = tagg_lines_next(L)) > 0) {
    if (strcmp(L->tok[0], "codec") != 0) continue;
    int ln = L->lineno;
    if (cp->n == TAGG_CODEC_PERF_MAX) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'codec': more than %d codecs", L->name, ln, TAGG_CODEC_PERF_MAX);
    if (n != 5 || strlen(L->tok[1]) >= sizeof cp->name[0])
      return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'codec': expected 'codec NAME compress=R decompress=R ratio=X'", L->name, ln);
    double c = -1, d = -1, r = -1;
    for (int i = 2; i < 5; i++) {
      char *eq = strchr(L->tok[i], '=');
      if (!eq) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'codec': expected key=value, got '%s'", L->name, ln, L->tok[i]);
      *eq = 0;
      double *v = !strcmp(L->tok[i], "compress") ? &c : !strcmp(L->tok[i], "decompress") ? &d : !strcmp(L->tok[i], "ratio") ? &r : NULL;
      if (!v) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': unknown (valid: compress decompress ratio)", L->name, ln, L->tok[i]);
      if (v == &r ? sscanf(eq + 1, "%lf", v) != 1 : tagg_parse_size(eq + 1, v) != 0)
        return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': bad value '%s'", L->name, ln, L->tok[i], eq + 1);
    }
    if (!(c > 0) || !(d > 0) || !(r > 0) || r > 1.5)
      return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'codec': needs compress>0, decompress>0 and 0<ratio<=1.5", L->name, ln);
    snprintf(cp->name[cp->n], sizeof cp->name[0], "%s", L->tok[1]);
    cp->compress[cp->n] = c, cp->decompress[cp->n] = d, cp->ratio[cp->n] = r, cp->n++;
  }
  if (n < 0) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  return TAGG_OK;
}

int tagg_codec_perf_parse(const char *text, const char *name, tagg_codec_perf_t *cp, tagg_err_t *err) {
  return tagg_lines_parse_text(text, name, parse, cp, err);
}

int tagg_codec_perf_load(const char *path, tagg_codec_perf_t *cp, tagg_err_t *err) {
  return tagg_lines_parse_file(path, parse, cp, err);
}

int tagg_compress_pays(const tagg_codec_perf_t *cp, int i, const tagg_fs_perf_t *fs, const tagg_tiers_t *tiers,
                       uint64_t S, double *raw, double *comp) {
  double r = tagg_fs_request_time(fs, tiers, S);
  double stored = cp->ratio[i] < 1 ? cp->ratio[i] * (double)S : (double)S;
  double c = (double)S / cp->compress[i] + tagg_fs_request_time(fs, tiers, (uint64_t)(stored > 1 ? stored : 1));
  if (raw) *raw = r;
  if (comp) *comp = c;
  return c < r;
}

int tagg_compress_choose(const tagg_codec_perf_t *cp, const tagg_fs_perf_t *fs, const tagg_tiers_t *tiers, uint64_t S) {
  int best = -1;
  double best_t = 0, raw, t;
  for (int i = 0; cp && i < cp->n; i++)
    if (tagg_compress_pays(cp, i, fs, tiers, S, &raw, &t) && (best < 0 || t < best_t)) best = i, best_t = t;
  return best;
}
