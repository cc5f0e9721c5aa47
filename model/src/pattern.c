/* pattern.c - access patterns (bytes per rank) for the tool, tests and a
 * simulator: uniform / random / normal (the 1D-array benchmark of 002 section
 * 4.2), HACC-IO and S3D-IO (002 sections 4.3-4.4), explicit lists and files. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "tagg/pattern.h"

#define MAXF 8

/* Splits "kind:a:b:c" (copy in buf) into fields; returns their count. */
static int split(char *buf, char sep, char **f, int max) {
  int n = 0;
  char *p = buf;
  while (n < max) {
    f[n++] = p;
    char *c = strchr(p, sep);
    if (!c) break;
    *c = '\0';
    p = c + 1;
  }
  return n;
}

static int size_field(const char *spec, const char *what, const char *s, double *v, tagg_err_t *err) {
  if (tagg_parse_size(s, v) || *v > 1e18)
    return tagg_seterr(err, TAGG_EPARSE, "pattern '%s': %s: expected a size like 1MB, got '%s'", spec, what, s);
  return 0;
}
static int int_field(const char *spec, const char *what, const char *s, long lo, long hi, long *v, tagg_err_t *err) {
  if (tagg_parse_int(s, lo, hi, v))
    return tagg_seterr(err, TAGG_EPARSE, "pattern '%s': %s: expected an integer in %ld..%ld, got '%s'", spec, what, lo, hi, s);
  return 0;
}

static int fill_file(const char *spec, const char *path, int nranks, uint64_t *bytes, tagg_err_t *err) {
  tagg_lines_t L;
  int rc = tagg_lines_open_file(&L, path, err), n, r = 0;
  if (rc) return rc;
  while (!rc && (n = tagg_lines_next(&L)) > 0) {
    for (int i = 0; i < n && !rc; i++) {
      double v;
      if (tagg_parse_size(L.tok[i], &v) || v > 1e18)
        rc = tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'bytes': expected a size, got '%s'", path, L.lineno, L.tok[i]);
      else if (r < nranks) bytes[r++] = (uint64_t)v;
      else rc = tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'bytes': more sizes than the %d ranks", path, L.lineno, nranks);
    }
  }
  if (!rc && n < 0) rc = tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  if (!rc && r != nranks) rc = tagg_seterr(err, TAGG_EPARSE, "pattern '%s': %d sizes for %d ranks", spec, r, nranks);
  tagg_lines_close(&L);
  return rc;
}

int tagg_pattern_fill(const char *spec, int nranks, uint64_t *bytes, tagg_err_t *err) {
  if (!spec || nranks < 1 || !bytes) return tagg_seterr(err, TAGG_EINVAL, "pattern: bad arguments");
  if (strncmp(spec, "file:", 5) == 0) return fill_file(spec, spec + 5, nranks, bytes, err);
  size_t len = strlen(spec);
  char *buf = malloc(len + 1);
  if (!buf) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  memcpy(buf, spec, len + 1);
  char *f[MAXF];
  int n = split(buf, ':', f, MAXF), rc = 0;
  double a = 0, b = 0;
  long x = 0, y = 0, z = 0, nv = 11, seed = 1;
  if (strcmp(f[0], "uniform") == 0) {
    if (n != 2) rc = tagg_seterr(err, TAGG_EPARSE, "pattern '%s': expected uniform:SIZE", spec);
    else if (!(rc = size_field(spec, "SIZE", f[1], &a, err)))
      for (int r = 0; r < nranks; r++) bytes[r] = (uint64_t)a;
  } else if (strcmp(f[0], "random") == 0 || strcmp(f[0], "normal") == 0) {
    int is_normal = f[0][0] == 'n';
    if (n < 3 || n > 4) rc = tagg_seterr(err, TAGG_EPARSE, "pattern '%s': expected %s", spec, is_normal ? "normal:MEAN:SD[:SEED]" : "random:MIN:MAX[:SEED]");
    else if (!(rc = size_field(spec, is_normal ? "MEAN" : "MIN", f[1], &a, err)) &&
             !(rc = size_field(spec, is_normal ? "SD" : "MAX", f[2], &b, err)) &&
             !(n == 4 && (rc = int_field(spec, "SEED", f[3], 0, 0x7fffffffL, &seed, err)))) {
      if (!is_normal && b < a) rc = tagg_seterr(err, TAGG_EPARSE, "pattern '%s': MAX < MIN", spec);
      uint64_t st = (uint64_t)seed * 0x2545F4914F6CDD1Dull + 7;
      for (int r = 0; r < nranks && !rc; r++) {
        double v;
        if (!is_normal) v = a + floor(tagg_rng_uniform(&st) * (b - a + 1));
        else { /* Box-Muller */
          double u1 = tagg_rng_uniform(&st), u2 = tagg_rng_uniform(&st);
          if (u1 < 1e-300) u1 = 1e-300;
          v = a + b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
          v = v < 0 ? 0 : floor(v + 0.5);
        }
        bytes[r] = (uint64_t)v;
      }
    }
  } else if (strcmp(f[0], "hacc") == 0) {
    if (n != 2) rc = tagg_seterr(err, TAGG_EPARSE, "pattern '%s': expected hacc:PARTICLES", spec);
    else if (!(rc = int_field(spec, "PARTICLES", f[1], 0, 1L << 40, &x, err)))
      for (int r = 0; r < nranks; r++) bytes[r] = (uint64_t)x * TAGG_HACC_BYTES_PER_PARTICLE;
  } else if (strcmp(f[0], "s3d") == 0) {
    if (n < 4 || n > 5) rc = tagg_seterr(err, TAGG_EPARSE, "pattern '%s': expected s3d:NX:NY:NZ[:NVARS]", spec);
    else if (!(rc = int_field(spec, "NX", f[1], 1, 1 << 20, &x, err)) && !(rc = int_field(spec, "NY", f[2], 1, 1 << 20, &y, err)) &&
             !(rc = int_field(spec, "NZ", f[3], 1, 1 << 20, &z, err)) && !(n == 5 && (rc = int_field(spec, "NVARS", f[4], 1, 1000, &nv, err))))
      for (int r = 0; r < nranks; r++) bytes[r] = (uint64_t)x * (uint64_t)y * (uint64_t)z * (uint64_t)nv * 8u;
  } else if (strcmp(f[0], "list") == 0) {
    if (n != 2 || !*f[1]) rc = tagg_seterr(err, TAGG_EPARSE, "pattern '%s': expected list:S0,S1,...", spec);
    else {
      /* count items, then cycle them over the ranks */
      int cnt = 1;
      for (char *p = f[1]; *p; p++) cnt += *p == ',';
      double *vals = malloc((size_t)cnt * sizeof *vals);
      char **items = malloc((size_t)cnt * sizeof *items);
      if (!vals || !items) rc = tagg_seterr(err, TAGG_ENOMEM, "out of memory");
      else {
        split(f[1], ',', items, cnt);
        for (int i = 0; i < cnt && !rc; i++) rc = size_field(spec, "list item", items[i], &vals[i], err);
        for (int r = 0; r < nranks && !rc; r++) bytes[r] = (uint64_t)vals[r % cnt];
      }
      free(vals);
      free(items);
    }
  } else {
    rc = tagg_seterr(err, TAGG_EPARSE, "pattern '%s': unknown kind '%s' (valid: uniform random normal hacc s3d list file)", spec, f[0]);
  }
  free(buf);
  return rc;
}
