/* tiers.c - memory/storage tier descriptions: built-in defaults and the tier
 * file (version 1, same line style as topology files; see model/README.md). */
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "tagg/callplan.h"
#include "tagg/pattern.h"
#include "tagg/tiers.h"

#define TIERS_VERSION 1
static const char *const kind_names[] = {"DRAM", "HBM", "NVR", "PFS"};
static const char *const persist_names[] = {"none", "job", "permanent"};

const char *tagg_tier_kind_name(tagg_tier_kind_t k) { return (k >= 0 && k <= TAGG_TIER_PFS) ? kind_names[k] : "?"; }
const char *tagg_persist_name(tagg_persist_t p) { return (p >= 0 && p <= TAGG_PERSIST_PERMANENT) ? persist_names[p] : "?"; }
int tagg_persist_from_name(const char *s, tagg_persist_t *out) {
  for (int i = 0; i < 3; i++)
    if (tagg_strcaseeq(s, persist_names[i])) { *out = (tagg_persist_t)i; return 0; }
  return -1;
}
static int kind_from_name(const char *s, tagg_tier_kind_t *out) {
  for (int i = 0; i < 4; i++)
    if (tagg_strcaseeq(s, kind_names[i])) { *out = (tagg_tier_kind_t)i; return 0; }
  if (tagg_strcaseeq(s, "DDR") || tagg_strcaseeq(s, "MCDRAM") || tagg_strcaseeq(s, "SSD") || tagg_strcaseeq(s, "HDD")) {
    *out = tagg_strcaseeq(s, "DDR") ? TAGG_TIER_DRAM : tagg_strcaseeq(s, "MCDRAM") ? TAGG_TIER_HBM : TAGG_TIER_NVR;
    return 0;
  }
  return -1;
}

static void set_tier(tagg_tier_t *t, const char *name, tagg_tier_kind_t k, double lat, double bw, double cap, tagg_persist_t p) {
  snprintf(t->name, sizeof t->name, "%s", name);
  t->kind = k;
  t->latency = lat;
  t->bandwidth = bw;
  t->capacity = (uint64_t)cap;
  t->persistency = p;
}

/* KNL node of Theta (MA-TAPIOCA section 4.1): 16 GB MCDRAM, 192 GB DDR4,
 * 128 GB SSD cleared between allocations, Lustre.  Bandwidths and capacities
 * are Table 1's vendor values; latencies are device-scale figures in Table 1's
 * order HBM < DRAM < NVR (Table 1's
 * millisecond latencies belong to the toy example, see examples/toy-table1.tiers). */
void tagg_tiers_default(tagg_tiers_t *t) {
  memset(t, 0, sizeof *t);
  set_tier(&t->tier[0], "HBM", TAGG_TIER_HBM, 80e-9, 180e9, 16e9, TAGG_PERSIST_NONE);
  set_tier(&t->tier[1], "DRAM", TAGG_TIER_DRAM, 100e-9, 90e9, 192e9, TAGG_PERSIST_NONE);
  set_tier(&t->tier[2], "NVR", TAGG_TIER_NVR, 80e-6, 1.5e9, 128e9, TAGG_PERSIST_JOB);
  set_tier(&t->tier[3], "PFS", TAGG_TIER_PFS, 1e-3, 5e9, 9.2e15, TAGG_PERSIST_PERMANENT);
  t->ntiers = 4;
  t->source = 1;
  t->target = 3;
}

int tagg_tiers_find(const tagg_tiers_t *t, const char *name) {
  for (int i = 0; i < t->ntiers; i++)
    if (tagg_strcaseeq(t->tier[i].name, name)) return i;
  for (int i = 0; i < t->ntiers; i++)
    if (tagg_strcaseeq(tagg_tier_kind_name(t->tier[i].kind), name)) return i;
  return -1;
}

int tagg_tiers_validate(const tagg_tiers_t *t, tagg_err_t *err) {
  if (t->ntiers < 2 || t->ntiers > TAGG_MAX_TIERS)
    return tagg_seterr(err, TAGG_EINVAL, "tiers: need 2..%d tiers (a source and a target at least), got %d", TAGG_MAX_TIERS, t->ntiers);
  if (t->source < 0 || t->source >= t->ntiers) return tagg_seterr(err, TAGG_EINVAL, "tiers: no source tier");
  if (t->target < 0 || t->target >= t->ntiers) return tagg_seterr(err, TAGG_EINVAL, "tiers: no target tier");
  if (t->source == t->target) return tagg_seterr(err, TAGG_EINVAL, "tiers: source and target are the same tier");
  for (int i = 0; i < t->ntiers; i++) {
    const tagg_tier_t *x = &t->tier[i];
    if (!(x->bandwidth > 0)) return tagg_seterr(err, TAGG_EINVAL, "tier %s: bandwidth must be > 0", x->name);
    if (!(x->latency >= 0)) return tagg_seterr(err, TAGG_EINVAL, "tier %s: latency must be >= 0", x->name);
    for (int j = 0; j < i; j++)
      if (tagg_strcaseeq(x->name, t->tier[j].name)) return tagg_seterr(err, TAGG_EINVAL, "tier %s: name used twice", x->name);
  }
  return TAGG_OK;
}

enum { F_KIND = 1, F_LAT = 2, F_BW = 4, F_CAP = 8, F_PERS = 16, F_ALL = 31 };

static int parse_tier_line(tagg_lines_t *L, int n, tagg_tiers_t *t, int *src_line, int *tgt_line, tagg_err_t *err) {
  const char *file = L->name;
  int ln = L->lineno;
  if (t->ntiers == TAGG_MAX_TIERS) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'tier': more than %d tiers", file, ln, TAGG_MAX_TIERS);
  if (n < 2) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'tier': missing tier name", file, ln);
  tagg_tier_t *x = &t->tier[t->ntiers];
  memset(x, 0, sizeof *x);
  if (strlen(L->tok[1]) >= TAGG_TIER_NAME_MAX || strchr(L->tok[1], '='))
    return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'tier': bad name '%s' (at most %d chars, no '=')", file, ln, L->tok[1], TAGG_TIER_NAME_MAX - 1);
  snprintf(x->name, sizeof x->name, "%s", L->tok[1]);
  for (int j = 0; j < t->ntiers; j++)
    if (tagg_strcaseeq(t->tier[j].name, x->name)) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'tier': name '%s' used twice", file, ln, x->name);
  unsigned seen = 0;
  for (int i = 2; i < n; i++) {
    char *tok = L->tok[i], *eq = strchr(tok, '=');
    if (!eq) {
      if (strcmp(tok, "source") == 0) { if (*src_line) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'source': already set on line %d", file, ln, *src_line); *src_line = ln; t->source = t->ntiers; continue; }
      if (strcmp(tok, "target") == 0) { if (*tgt_line) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'target': already set on line %d", file, ln, *tgt_line); *tgt_line = ln; t->target = t->ntiers; continue; }
      return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': expected key=value or the flag source/target", file, ln, tok);
    }
    *eq = '\0';
    const char *key = tok, *val = eq + 1;
    double v;
    unsigned bit;
    if (strcmp(key, "kind") == 0) {
      bit = F_KIND;
      if (kind_from_name(val, &x->kind)) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'kind': unknown kind '%s' (valid: DRAM HBM NVR PFS)", file, ln, val);
    } else if (strcmp(key, "latency") == 0) {
      bit = F_LAT;
      if (tagg_parse_time(val, &x->latency)) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'latency': expected a time like 10ms, got '%s'", file, ln, val);
    } else if (strcmp(key, "bandwidth") == 0) {
      bit = F_BW;
      if (tagg_parse_size(val, &x->bandwidth) || !(x->bandwidth > 0)) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'bandwidth': expected a rate > 0 like 90GB/s, got '%s'", file, ln, val);
    } else if (strcmp(key, "capacity") == 0) {
      bit = F_CAP;
      if (tagg_parse_size(val, &v) || v >= 1.8e19) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'capacity': expected a size like 16GB, got '%s'", file, ln, val);
      x->capacity = (uint64_t)v;
    } else if (strcmp(key, "persistency") == 0) {
      bit = F_PERS;
      if (tagg_persist_from_name(val, &x->persistency)) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'persistency': expected none, job or permanent, got '%s'", file, ln, val);
    } else {
      return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': unknown (valid: kind latency bandwidth capacity persistency)", file, ln, key);
    }
    if (seen & bit) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': given twice", file, ln, key);
    seen |= bit;
  }
  static const char *const names[] = {"kind", "latency", "bandwidth", "capacity", "persistency"};
  for (int b = 0; b < 5; b++)
    if (!(seen & (1u << b))) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': missing for tier %s", file, ln, names[b], x->name);
  t->ntiers++;
  return TAGG_OK;
}

static int parse_lines(tagg_lines_t *L, void *ctx, tagg_err_t *err) {
  tagg_tiers_t *t = ctx;
  memset(t, 0, sizeof *t);
  t->source = t->target = -1;
  int n = tagg_lines_next(L), src_line = 0, tgt_line = 0;
  long v;
  if (n < 0) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  if (n == 0) return tagg_seterr(err, TAGG_EPARSE, "%s: field 'tagg-tiers': empty file (expected 'tagg-tiers %d')", L->name, TIERS_VERSION);
  if (n != 2 || strcmp(L->tok[0], "tagg-tiers") != 0)
    return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'tagg-tiers': first line must be 'tagg-tiers %d'", L->name, L->lineno, TIERS_VERSION);
  if (tagg_parse_int(L->tok[1], 1, 1000, &v) || v != TIERS_VERSION)
    return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'tagg-tiers': unsupported version '%s' (this library reads %d)", L->name, L->lineno, L->tok[1], TIERS_VERSION);
  while ((n = tagg_lines_next(L)) > 0) {
    if (strcmp(L->tok[0], "request") == 0 || strcmp(L->tok[0], "read_request") == 0 || strcmp(L->tok[0], "read_alone") == 0)
      continue; /* the target's cost by request size: tagg_fs_perf_parse */
    if (strcmp(L->tok[0], "codec") == 0) continue; /* stripe codecs: tagg_codec_perf_parse (tagg/compress.h) */
    if (strcmp(L->tok[0], "tier") != 0)
      return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': unknown (each line is 'tier NAME key=value...', 'request SIZE latency=T bandwidth=R', 'read_request ...' or 'read_alone bandwidth=R')", L->name, L->lineno, L->tok[0]);
    int rc = parse_tier_line(L, n, t, &src_line, &tgt_line, err);
    if (rc) return rc;
  }
  if (n < 0) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  /* Defaults: the source is the first DRAM tier, the target the first PFS tier. */
  for (int i = 0; i < t->ntiers && t->source < 0; i++) if (t->tier[i].kind == TAGG_TIER_DRAM) t->source = i;
  for (int i = 0; i < t->ntiers && t->target < 0; i++) if (t->tier[i].kind == TAGG_TIER_PFS) t->target = i;
  if (t->source < 0) return tagg_seterr(err, TAGG_EPARSE, "%s: field 'source': no tier flagged source and no DRAM tier", L->name);
  if (t->target < 0) return tagg_seterr(err, TAGG_EPARSE, "%s: field 'target': no tier flagged target and no PFS tier", L->name);
  int rc = tagg_tiers_validate(t, err);
  if (rc && err) {
    char tmp[TAGG_ERR_MSG_MAX];
    snprintf(tmp, sizeof tmp, "%s", err->msg);
    tagg_seterr(err, TAGG_EPARSE, "%s: %s", L->name, tmp);
    return TAGG_EPARSE;
  }
  return rc;
}

int tagg_tiers_parse(const char *text, const char *name, tagg_tiers_t *t, tagg_err_t *err) {
  return tagg_lines_parse_text(text, name, parse_lines, t, err);
}

int tagg_tiers_load(const char *path, tagg_tiers_t *t, tagg_err_t *err) {
  return tagg_lines_parse_file(path, parse_lines, t, err);
}

static void print_size(FILE *out, double v, const char *unit) {
  if (v >= 1e9) fprintf(out, "%.10gG%s", v / 1e9, unit);
  else if (v >= 1e6) fprintf(out, "%.10gM%s", v / 1e6, unit);
  else fprintf(out, "%.10g%s", v, unit);
}

void tagg_tiers_print(const tagg_tiers_t *t, FILE *out) {
  fprintf(out, "tagg-tiers %d\n", TIERS_VERSION);
  for (int i = 0; i < t->ntiers; i++) {
    const tagg_tier_t *x = &t->tier[i];
    fprintf(out, "tier %s kind=%s latency=%gs bandwidth=", x->name, tagg_tier_kind_name(x->kind), x->latency);
    print_size(out, x->bandwidth, "B/s");
    fprintf(out, " capacity=");
    print_size(out, (double)x->capacity, "B");
    fprintf(out, " persistency=%s%s%s\n", tagg_persist_name(x->persistency), i == t->source ? " source" : "", i == t->target ? " target" : "");
  }
}

/* ---- the target's cost by request size (tagg/callplan.h) ----------------
 * Lines 'request SIZE latency=T bandwidth=R' of a tier file (tagg-calibrate
 * writes them): one write of SIZE bytes to the target file system took
 * latency T plus SIZE / R; 'read_request' lines the same for reads, and
 * 'read_alone bandwidth=R' the rate of one process reading alone. Other
 * lines are the tiers' (parse_lines). */
typedef struct {
  const char *key; /* "request" or "read_request" */
  tagg_fs_perf_t *fs;
} fs_ctx_t;

static int parse_fs(tagg_lines_t *L, void *ctx, tagg_err_t *err) {
  const char *key = ((fs_ctx_t *)ctx)->key;
  tagg_fs_perf_t *fs = ((fs_ctx_t *)ctx)->fs;
  memset(fs, 0, sizeof *fs);
  int n;
  while ((n = tagg_lines_next(L)) > 0) {
    int ln = L->lineno;
    if (strcmp(key, "read_request") == 0 && strcmp(L->tok[0], "read_alone") == 0) {
      double bw = -1;
      if (n != 2 || strncmp(L->tok[1], "bandwidth=", 10) != 0)
        return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'read_alone': expected 'read_alone bandwidth=R'", L->name, ln);
      if (tagg_parse_size(L->tok[1] + 10, &bw) || !(bw > 0))
        return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'bandwidth': expected a rate > 0 like 1GB/s, got '%s'", L->name, ln, L->tok[1] + 10);
      if (fs->alone > 0) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'read_alone': given twice", L->name, ln);
      fs->alone = bw;
      continue;
    }
    if (strcmp(L->tok[0], key) != 0) continue;
    if (fs->n == TAGG_FS_POINTS) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': more than %d sizes", L->name, ln, key, TAGG_FS_POINTS);
    double size = 0, lat = -1, bw = -1;
    long ranks = 0;
    if ((n != 4 && n != 5) || tagg_parse_size(L->tok[1], &size) || !(size >= 1) || size >= 1.8e19)
      return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': expected '%s SIZE latency=T bandwidth=R [ranks=N]'", L->name, ln, key, key);
    for (int i = 2; i < n; i++) {
      char *eq = strchr(L->tok[i], '=');
      if (!eq) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': expected key=value, got '%s'", L->name, ln, key, L->tok[i]);
      *eq = 0;
      if (!strcmp(L->tok[i], "latency")) {
        if (tagg_parse_time(eq + 1, &lat)) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'latency': expected a time like 1ms, got '%s'", L->name, ln, eq + 1);
      } else if (!strcmp(L->tok[i], "bandwidth")) {
        if (tagg_parse_size(eq + 1, &bw) || !(bw > 0)) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'bandwidth': expected a rate > 0 like 1GB/s, got '%s'", L->name, ln, eq + 1);
      } else if (!strcmp(L->tok[i], "ranks")) {
        if (tagg_parse_int(eq + 1, 1, 1 << 20, &ranks)) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'ranks': expected an integer 1..1048576, got '%s'", L->name, ln, eq + 1);
      } else
        return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': unknown (valid: latency bandwidth ranks)", L->name, ln, L->tok[i]);
    }
    if (ranks && fs->n && fs->ranks != (int)ranks) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'ranks': %ld, but the lines before say %d", L->name, ln, ranks, fs->ranks);
    if (!ranks && fs->ranks) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field 'ranks': missing, the lines before say %d", L->name, ln, fs->ranks);
    fs->ranks = (int)ranks;
    if (lat < 0 || bw <= 0) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': needs latency= and bandwidth=", L->name, ln, key);
    if (fs->n && (uint64_t)size <= fs->size[fs->n - 1]) return tagg_seterr(err, TAGG_EPARSE, "%s:%d: field '%s': sizes must ascend", L->name, ln, key);
    fs->size[fs->n] = (uint64_t)size, fs->latency[fs->n] = lat, fs->bandwidth[fs->n] = bw, fs->n++;
  }
  if (n < 0) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  fs->read = fs->n > 0 && strcmp(key, "read_request") == 0;
  return TAGG_OK;
}

int tagg_fs_perf_parse(const char *text, const char *name, tagg_fs_perf_t *fs, tagg_err_t *err) {
  return tagg_lines_parse_text(text, name, parse_fs, &(fs_ctx_t){"request", fs}, err);
}

int tagg_fs_perf_load(const char *path, tagg_fs_perf_t *fs, tagg_err_t *err) {
  return tagg_lines_parse_file(path, parse_fs, &(fs_ctx_t){"request", fs}, err);
}

int tagg_fs_read_perf_parse(const char *text, const char *name, tagg_fs_perf_t *fs, tagg_err_t *err) {
  return tagg_lines_parse_text(text, name, parse_fs, &(fs_ctx_t){"read_request", fs}, err);
}

int tagg_fs_read_perf_load(const char *path, tagg_fs_perf_t *fs, tagg_err_t *err) {
  return tagg_lines_parse_file(path, parse_fs, &(fs_ctx_t){"read_request", fs}, err);
}
