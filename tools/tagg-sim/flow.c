/* flow.c - fluid flows with max-min fair sharing (see flow.h).
 *
 * Max-min by progressive filling, in O((R + I) log R) per computation for R
 * resources and I (flow, resource) incidences: every used resource sits in a
 * min-heap keyed by its fair share (remaining capacity / unfrozen flows).
 * Freezing flows at the smallest share s only raises the other resources'
 * shares (their remaining capacity drops by s per frozen flow while each of
 * them had a share >= s), so outdated heap entries are simply pushed again
 * with their new key when they come up (a version number tells them apart). */
#include "flow.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  double key;
  int r;
  unsigned ver;
} hent_t;

typedef struct {
  double t;
  int64_t tag;
  long seq;  /* ties: first scheduled, first served (deterministic) */
} timer_t_;

struct flow_net {
  int nres;
  double *cap, *carried;
  /* flows: active ones only; finished ones are swapped out */
  int nact, capf;
  double *rem, *rate, *lat, *size;
  int64_t *tag;
  int *roff, *rlen;         /* route in the pool */
  int *pool;
  size_t npool, cappool;
  int dirty;
  double now;
  long recomputes;
  /* timers: binary heap */
  timer_t_ *tm;
  int ntm, captm;
  long seq;
  /* max-min scratch (sized nres / flows) */
  int *cnt, *start, *inc, *left;
  unsigned *ver;
  double *rres;
  char *frozen;
  hent_t *heap;
  size_t nheap, capheap;
  size_t capinc;
  int capfrozen;
};

flow_net_t *flow_net_new(int nres, const double *cap) {
  flow_net_t *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->nres = nres;
  size_t R = (size_t)(nres > 0 ? nres : 1);
  n->cap = malloc(R * sizeof(double));
  n->carried = calloc(R, sizeof(double));
  n->cnt = malloc(R * sizeof(int));
  n->start = malloc((R + 1) * sizeof(int));
  n->left = malloc(R * sizeof(int));
  n->ver = malloc(R * sizeof(unsigned));
  n->rres = malloc(R * sizeof(double));
  if (!n->cap || !n->carried || !n->cnt || !n->start || !n->left || !n->ver || !n->rres) {
    flow_net_free(n);
    return NULL;
  }
  if (nres > 0) memcpy(n->cap, cap, (size_t)nres * sizeof(double));
  return n;
}

void flow_net_free(flow_net_t *n) {
  if (!n) return;
  free(n->cap); free(n->carried);
  free(n->rem); free(n->rate); free(n->lat); free(n->size); free(n->tag); free(n->roff); free(n->rlen);
  free(n->pool); free(n->tm);
  free(n->cnt); free(n->start); free(n->inc); free(n->left); free(n->ver); free(n->rres); free(n->frozen);
  free(n->heap);
  free(n);
}

double flow_now(const flow_net_t *n) { return n->now; }
double flow_resource_bytes(const flow_net_t *n, int r) { return r >= 0 && r < n->nres ? n->carried[r] : 0; }
long flow_recomputes(const flow_net_t *n) { return n->recomputes; }

static int grow(void **p, size_t elem, size_t *capacity, size_t need) {
  if (need <= *capacity) return 0;
  size_t c = *capacity ? *capacity : 64;
  while (c < need) c *= 2;
  void *q = realloc(*p, c * elem);
  if (!q) return -1;
  *p = q;
  *capacity = c;
  return 0;
}

static int grow_flows(flow_net_t *n) {
  if (n->nact < n->capf) return 0;
  size_t c = n->capf ? (size_t)n->capf * 2 : 256;
  void *v[] = {n->rem, n->rate, n->lat, n->size, n->tag, n->roff, n->rlen};
  size_t sz[] = {sizeof(double), sizeof(double), sizeof(double), sizeof(double), sizeof(int64_t), sizeof(int), sizeof(int)};
  for (int i = 0; i < 7; i++) {
    void *q = realloc(v[i], c * sz[i]);
    if (!q) return -1;
    v[i] = q;
    switch (i) {
      case 0: n->rem = q; break;
      case 1: n->rate = q; break;
      case 2: n->lat = q; break;
      case 3: n->size = q; break;
      case 4: n->tag = q; break;
      case 5: n->roff = q; break;
      default: n->rlen = q; break;
    }
  }
  n->capf = (int)c;
  return 0;
}

/* ---- timers ---- */
static int tm_less(const timer_t_ *a, const timer_t_ *b) { return a->t < b->t || (a->t == b->t && a->seq < b->seq); }

static int tm_push(flow_net_t *n, double t, int64_t tag) {
  size_t c = (size_t)n->captm;
  if (grow((void **)&n->tm, sizeof *n->tm, &c, (size_t)n->ntm + 1)) return -1;
  n->captm = (int)c;
  int i = n->ntm++;
  timer_t_ e = {t, tag, n->seq++};
  while (i > 0 && tm_less(&e, &n->tm[(i - 1) / 2])) { n->tm[i] = n->tm[(i - 1) / 2]; i = (i - 1) / 2; }
  n->tm[i] = e;
  return 0;
}

static timer_t_ tm_pop(flow_net_t *n) {
  timer_t_ top = n->tm[0], last = n->tm[--n->ntm];
  int i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= n->ntm) break;
    if (c + 1 < n->ntm && tm_less(&n->tm[c + 1], &n->tm[c])) c++;
    if (!tm_less(&n->tm[c], &last)) break;
    n->tm[i] = n->tm[c];
    i = c;
  }
  if (n->ntm > 0) n->tm[i] = last;
  return top;
}

int flow_timer(flow_net_t *n, double delay, int64_t tag) { return tm_push(n, n->now + (delay > 0 ? delay : 0), tag); }

int flow_start(flow_net_t *n, const int *res, int nres, double bytes, double latency, int64_t tag) {
  if (grow_flows(n)) return -1;
  if (grow((void **)&n->pool, sizeof(int), &n->cappool, n->npool + (size_t)nres)) return -1;
  int f = n->nact++;
  n->rem[f] = n->size[f] = bytes > 0 ? bytes : 0;
  n->rate[f] = 0;
  n->lat[f] = latency > 0 ? latency : 0;
  n->tag[f] = tag;
  n->roff[f] = (int)n->npool;
  n->rlen[f] = nres;
  for (int i = 0; i < nres; i++) {
    n->pool[n->npool++] = res[i];
    n->carried[res[i]] += n->rem[f];
  }
  n->dirty = 1;
  return 0;
}

/* ---- max-min fair rates ---- */
static void h_push(flow_net_t *n, double key, int r) {
  size_t i = n->nheap++;
  hent_t e = {key, r, n->ver[r]};
  while (i > 0 && e.key < n->heap[(i - 1) / 2].key) { n->heap[i] = n->heap[(i - 1) / 2]; i = (i - 1) / 2; }
  n->heap[i] = e;
}

static hent_t h_pop(flow_net_t *n) {
  hent_t top = n->heap[0], last = n->heap[--n->nheap];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n->nheap) break;
    if (c + 1 < n->nheap && n->heap[c + 1].key < n->heap[c].key) c++;
    if (!(n->heap[c].key < last.key)) break;
    n->heap[i] = n->heap[c];
    i = c;
  }
  if (n->nheap > 0) n->heap[i] = last;
  return top;
}

static int maxmin(flow_net_t *n) {
  n->recomputes++;
  int F = n->nact;
  size_t I = 0;
  memset(n->cnt, 0, (size_t)n->nres * sizeof(int));
  for (int f = 0; f < F; f++) {
    const int *rt = n->pool + n->roff[f];
    for (int k = 0; k < n->rlen[f]; k++) n->cnt[rt[k]]++;
    I += (size_t)n->rlen[f];
  }
  if (grow((void **)&n->inc, sizeof(int), &n->capinc, I + 1)) return -1;
  size_t cf = (size_t)n->capfrozen;
  if (grow((void **)&n->frozen, 1, &cf, (size_t)F + 1)) return -1;
  n->capfrozen = (int)cf;
  if (grow((void **)&n->heap, sizeof(hent_t), &n->capheap, (size_t)n->nres + I + 1)) return -1;
  n->start[0] = 0;
  for (int r = 0; r < n->nres; r++) n->start[r + 1] = n->start[r] + n->cnt[r];
  /* fill (cnt reused as a cursor) */
  for (int r = 0; r < n->nres; r++) n->cnt[r] = n->start[r];
  for (int f = 0; f < F; f++) {
    const int *rt = n->pool + n->roff[f];
    for (int k = 0; k < n->rlen[f]; k++) n->inc[n->cnt[rt[k]]++] = f;
  }
  n->nheap = 0;
  for (int r = 0; r < n->nres; r++) {
    n->left[r] = n->start[r + 1] - n->start[r];
    n->ver[r] = 0;
    if (n->left[r] > 0) {
      n->rres[r] = n->cap[r];
      h_push(n, n->rres[r] / n->left[r], r);
    }
  }
  memset(n->frozen, 0, (size_t)F);
  for (int f = 0; f < F; f++)
    if (n->rlen[f] == 0) { n->rate[f] = INFINITY; n->frozen[f] = 1; }
  while (n->nheap > 0) {
    hent_t e = h_pop(n);
    int r = e.r;
    if (n->left[r] == 0) continue;
    double share = n->rres[r] / n->left[r];
    if (share < 0) share = 0;
    if (e.ver != n->ver[r]) { h_push(n, share, r); continue; }
    for (int k = n->start[r]; k < n->start[r + 1]; k++) {
      int f = n->inc[k];
      if (n->frozen[f]) continue;
      n->frozen[f] = 1;
      n->rate[f] = share;
      const int *rt = n->pool + n->roff[f];
      for (int j = 0; j < n->rlen[f]; j++) {
        int q = rt[j];
        n->rres[q] -= share;
        n->left[q]--;
        n->ver[q]++;
      }
    }
  }
  n->dirty = 0;
  return 0;
}

/* Removes finished flow f (swap with the last active one). */
static void drop(flow_net_t *n, int f) {
  int l = --n->nact;
  if (f != l) {
    n->rem[f] = n->rem[l]; n->rate[f] = n->rate[l]; n->lat[f] = n->lat[l]; n->size[f] = n->size[l];
    n->tag[f] = n->tag[l]; n->roff[f] = n->roff[l]; n->rlen[f] = n->rlen[l];
  }
  if (n->nact == 0) n->npool = 0; /* the route pool restarts when no flow is active */
}

int flow_run(flow_net_t *n, flow_cb_t cb, void *ctx, double resolution) {
  while (n->nact > 0 || n->ntm > 0) {
    if (n->dirty && n->nact > 0 && maxmin(n)) return -1;
    double tn = INFINITY;
    for (int f = 0; f < n->nact; f++) {
      double t = n->rem[f] <= 0 || isinf(n->rate[f]) ? n->now : n->rate[f] > 0 ? n->now + n->rem[f] / n->rate[f] : INFINITY;
      if (t < tn) tn = t;
    }
    if (n->ntm > 0 && n->tm[0].t < tn) tn = n->tm[0].t;
    if (isinf(tn)) return -1; /* flows with no bandwidth and nothing else to wait for */
    if (tn < n->now) tn = n->now;
    double tend = resolution > 0 ? tn + resolution * tn : tn;
    double dt = tend - n->now;
    for (int f = 0; f < n->nact;) {
      double before = n->rem[f];
      if (isinf(n->rate[f])) n->rem[f] = 0;
      else n->rem[f] -= n->rate[f] * dt;
      /* done: nothing left up to rounding (relative to the flow's size) */
      if (n->rem[f] <= 1e-9 * n->size[f] + 1e-9 || (before > 0 && n->rate[f] > 0 && before / n->rate[f] <= dt * (1 + 1e-12))) {
        if (tm_push(n, tend + n->lat[f], n->tag[f])) return -1;
        drop(n, f);
        n->dirty = 1;
      } else {
        f++;
      }
    }
    n->now = tend;
    while (n->ntm > 0 && n->tm[0].t <= n->now) {
      timer_t_ e = tm_pop(n);
      int rc = cb(ctx, n, e.tag, n->now);
      if (rc) return rc;
    }
  }
  return 0;
}
