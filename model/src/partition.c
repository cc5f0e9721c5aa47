/* partition.c - cut the file range into contiguous file domains, one per
 * aggregator, and list each group's producers with omega(i, A).  A pure
 * function in the manner of ADIOS2's helper/adiosPartitioner. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "tagg/model.h"

void tagg_partition_free(tagg_partition_t *p) {
  if (!p) return;
  free(p->offset);
  free(p->length);
  free(p->first);
  free(p->prod);
  memset(p, 0, sizeof *p);
}

int tagg_partition(const uint64_t *bytes, int nranks, int naggr, uint64_t align, tagg_partition_t *out,
                   tagg_err_t *err) {
  memset(out, 0, sizeof *out);
  if (nranks < 1 || !bytes) return tagg_seterr(err, TAGG_EINVAL, "partition: no ranks");
  if (naggr < 1) return tagg_seterr(err, TAGG_EINVAL, "partition: naggr must be >= 1, got %d", naggr);
  uint64_t d = 0;
  for (int r = 0; r < nranks; r++) {
    if (bytes[r] > UINT64_MAX - d) return tagg_seterr(err, TAGG_EINVAL, "partition: total size overflows");
    d += bytes[r];
  }
  if (d == 0) return tagg_seterr(err, TAGG_EINVAL, "partition: the ranks write no data");
  int n = naggr;
  if ((uint64_t)n > d) n = (int)d;
  uint64_t *b = malloc(((size_t)n + 1) * sizeof *b);
  if (!b) return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  /* Even split b_g = floor(g * D / n), overflow-free; then rounded to align
   * when that keeps every domain non-empty. */
  uint64_t q = d / (uint64_t)n, rm = d % (uint64_t)n;
  for (int g = 0; g <= n; g++) b[g] = q * (uint64_t)g + (rm * (uint64_t)g) / (uint64_t)n;
  if (align > 1 && d / (uint64_t)n >= align) {
    int ok = 1;
    uint64_t prev = 0;
    uint64_t *a = malloc(((size_t)n + 1) * sizeof *a);
    if (!a) { free(b); return tagg_seterr(err, TAGG_ENOMEM, "out of memory"); }
    a[0] = 0;
    a[n] = d;
    for (int g = 1; g < n && ok; g++) {
      a[g] = (b[g] + align / 2) / align * align;
      if (a[g] <= prev || a[g] >= d) ok = 0;
      prev = a[g];
    }
    if (ok && a[n - 1 > 0 ? n - 1 : 0] >= d) ok = 0;
    if (ok) memcpy(b, a, ((size_t)n + 1) * sizeof *b);
    free(a);
  }
  out->ngroups = n;
  out->offset = malloc((size_t)n * sizeof(uint64_t));
  out->length = malloc((size_t)n * sizeof(uint64_t));
  out->first = malloc(((size_t)n + 1) * sizeof(size_t));
  out->prod = malloc(((size_t)nranks + (size_t)n) * sizeof(tagg_producer_t));
  if (!out->offset || !out->length || !out->first || !out->prod) {
    free(b);
    tagg_partition_free(out);
    return tagg_seterr(err, TAGG_ENOMEM, "out of memory");
  }
  /* Sweep ranks (offsets in rank order) against domains. */
  size_t k = 0;
  int r = 0;
  uint64_t roff = 0; /* offset of rank r */
  for (int g = 0; g < n; g++) {
    uint64_t lo = b[g], hi = b[g + 1];
    out->offset[g] = lo;
    out->length[g] = hi - lo;
    out->first[g] = k;
    while (r < nranks && roff + bytes[r] <= lo) { roff += bytes[r]; r++; }
    uint64_t o = roff;
    for (int s = r; s < nranks && o < hi; s++) {
      uint64_t s_lo = o > lo ? o : lo, s_hi = o + bytes[s] < hi ? o + bytes[s] : hi;
      if (s_hi > s_lo) { out->prod[k].rank = s; out->prod[k].bytes = s_hi - s_lo; k++; }
      o += bytes[s];
    }
  }
  out->first[n] = k;
  free(b);
  return TAGG_OK;
}

/* The engine's file domains: the touched range [lo, lo + span) cut into at most
 * naggr equal domains (the last may be shorter) of a multiple of `align` bytes
 * (a stripe or a block). Whole aligns can leave the aggregators unbalanced: an
 * HDF5 dataset of 2 MiB after its header spans 2 MiB + 2 KiB, which two domains
 * of whole MiBs cut into 2 MiB and 2 KiB, so that one aggregator moves all of it
 * (session 50: VPIC AoS 32K's reads with two aggregators as slow as with one,
 * 1.7-1.8x faster balanced). Where the layout allows it (fine > 0: the shared
 * layout; a layout's stripe is never cut), a domain of at least one align is
 * then aligned to the largest power-of-two fraction of align, not below fine,
 * that leaves it at most a sixteenth above an equal share (span / naggr);
 * domains of less than one align (little data for many aggregators) keep a
 * whole align, and so fewer domains than naggr, as before. */
static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

void tagg_partition_range(uint64_t span, int naggr, uint64_t align, uint64_t fine, uint64_t *dsize, int *ndom) {
  if (naggr < 1) naggr = 1;
  if (align < 1) align = 1;
  if (span == 0) { *dsize = align, *ndom = 1; return; }
  uint64_t per = span / (uint64_t)naggr + (span % (uint64_t)naggr != 0), step = align;
  if (fine && per >= align)
    while (round_up(per, step) - per > per / 16 && step % 2 == 0 && (step / 2) % fine == 0) step /= 2;
  *dsize = round_up(per, step);
  *ndom = (int)((span + *dsize - 1) / *dsize);
}
