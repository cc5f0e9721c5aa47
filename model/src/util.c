/* util.c - error buffer, line tokenizer, number and unit parsing, RNG. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "tagg/pattern.h"

int tagg_seterr(tagg_err_t *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}

const char *tagg_strerror(int code) {
  switch (code) {
    case TAGG_OK: return "TAGG_OK";
    case TAGG_EINVAL: return "TAGG_EINVAL";
    case TAGG_ENOMEM: return "TAGG_ENOMEM";
    case TAGG_EIO: return "TAGG_EIO";
    case TAGG_EPARSE: return "TAGG_EPARSE";
    case TAGG_ENOCAND: return "TAGG_ENOCAND";
    default: return "TAGG_E?";
  }
}

int tagg_strcaseeq(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
  return *a == *b;
}

/* ---- lines ---------------------------------------------------------------- */

int tagg_lines_open_text(tagg_lines_t *L, const char *text, const char *name, tagg_err_t *err) {
  memset(L, 0, sizeof *L);
  size_t n = strlen(text);
  L->buf = malloc(n + 1);
  if (!L->buf) return tagg_seterr(err, TAGG_ENOMEM, "%s: out of memory", name);
  memcpy(L->buf, text, n + 1);
  L->next = L->buf;
  L->name = name;
  return TAGG_OK;
}

int tagg_lines_open_file(tagg_lines_t *L, const char *path, tagg_err_t *err) {
  memset(L, 0, sizeof *L);
  FILE *f = fopen(path, "rb");
  if (!f) return tagg_seterr(err, TAGG_EIO, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
    if (n + 1 >= cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) { free(buf); buf = NULL; break; }
      buf = nb;
      cap *= 2;
    }
  }
  int rerr = ferror(f);
  fclose(f);
  if (!buf) return tagg_seterr(err, TAGG_ENOMEM, "%s: out of memory", path);
  if (rerr) { free(buf); return tagg_seterr(err, TAGG_EIO, "%s: read error", path); }
  buf[n] = '\0';
  if (memchr(buf, '\0', n)) { free(buf); return tagg_seterr(err, TAGG_EPARSE, "%s: binary file (NUL byte)", path); }
  L->buf = buf;
  L->next = buf;
  L->name = path;
  return TAGG_OK;
}

int tagg_lines_next(tagg_lines_t *L) {
  while (L->next && *L->next) {
    char *line = L->next;
    char *nl = strchr(line, '\n');
    if (nl) { *nl = '\0'; L->next = nl + 1; } else L->next = line + strlen(line);
    L->lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    int n = 0;
    char *p = line;
    for (;;) {
      while (*p && isspace((unsigned char)*p)) p++;
      if (!*p) break;
      if (n == L->cap) {
        int nc = L->cap ? L->cap * 2 : 16;
        char **nt = realloc(L->tok, (size_t)nc * sizeof *nt);
        if (!nt) return TAGG_ENOMEM;
        L->tok = nt;
        L->cap = nc;
      }
      L->tok[n++] = p;
      while (*p && !isspace((unsigned char)*p)) p++;
      if (*p) *p++ = '\0';
    }
    if (n > 0) return n;
  }
  return 0;
}

void tagg_lines_close(tagg_lines_t *L) {
  free(L->buf);
  free(L->tok);
  memset(L, 0, sizeof *L);
}

int tagg_lines_parse_text(const char *text, const char *name, tagg_lines_fn fn, void *ctx, tagg_err_t *err) {
  tagg_lines_t L;
  int rc = tagg_lines_open_text(&L, text, name ? name : "<string>", err);
  if (rc) return rc;
  rc = fn(&L, ctx, err);
  tagg_lines_close(&L);
  return rc;
}

int tagg_lines_parse_file(const char *path, tagg_lines_fn fn, void *ctx, tagg_err_t *err) {
  tagg_lines_t L;
  int rc = tagg_lines_open_file(&L, path, err);
  if (rc) return rc;
  rc = fn(&L, ctx, err);
  tagg_lines_close(&L);
  return rc;
}

/* ---- numbers -------------------------------------------------------------- */

int tagg_parse_int(const char *s, long lo, long hi, long *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int parse_scaled(const char *s, const char *const *units, const double *scale, double *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || !isfinite(v) || v < 0) return -1;
  for (int i = 0; units[i]; i++) {
    if (tagg_strcaseeq(end, units[i])) {
      *out = v * scale[i];
      return 0;
    }
  }
  return -1;
}

int tagg_parse_size(const char *s, double *out) {
  /* decimal prefixes are powers of 1000, binary ones (KiB...) of 1024; an
   * optional "B", "/s" or "ps" (GBps) suffix is accepted */
  static const char *const u[] = {"", "K", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "Pi", NULL};
  static const double sc[] = {1, 1e3, 1e6, 1e9, 1e12, 1e15, 1024.0, 1048576.0, 1073741824.0,
                              1099511627776.0, 1125899906842624.0};
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || !isfinite(v) || v < 0) return -1;
  char unit[8];
  size_t n = strlen(end);
  if (n >= sizeof unit) return -1;
  memcpy(unit, end, n + 1);
  if (n >= 2 && (strcmp(unit + n - 2, "/s") == 0 || strcmp(unit + n - 2, "ps") == 0)) unit[n -= 2] = '\0';
  if (n >= 1 && (unit[n - 1] == 'B' || unit[n - 1] == 'b')) unit[--n] = '\0';
  for (int i = 0; u[i]; i++) {
    if (tagg_strcaseeq(unit, u[i])) {
      *out = v * sc[i];
      return 0;
    }
  }
  return -1;
}

int tagg_parse_time(const char *s, double *out) {
  static const char *const u[] = {"", "s", "ms", "us", "ns", NULL};
  static const double sc[] = {1, 1, 1e-3, 1e-6, 1e-9};
  return parse_scaled(s, u, sc, out);
}

/* ---- RNG (splitmix64) ------------------------------------------------------ */

uint64_t tagg_rng_next(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double tagg_rng_uniform(uint64_t *state) {
  return (double)(tagg_rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}
