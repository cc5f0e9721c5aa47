/* naggr.c - number of aggregators (poster 000_*.txt, "Number of aggregators").
 *
 * The printed rule  #Aggr = ceil(log2(D_tot / Mem))^2,  D_tot / Mem > BS  is
 * garbled (squaring a logarithm is not a power of two, and D_tot / Mem is a
 * count, not a size to compare with BS).  Its stated intent is implemented:
 *   - enough aggregators that each one's share D_tot / #Aggr fits Mem;
 *   - each aggregator writes at least one file-system block BS;
 *   - #Aggr is a power of two ("current limitation"), optional here.
 * See tagg_naggr() in tagg/model.h for the exact precedence. */
#include "tagg/model.h"

static uint64_t pow2_ceil(uint64_t x) { uint64_t p = 1; while (p < x && p < (1ull << 62)) p <<= 1; return p; }
static uint64_t pow2_floor(uint64_t x) { uint64_t p = 1; while ((p << 1) <= x && p < (1ull << 62)) p <<= 1; return p; }

int tagg_naggr(uint64_t d_tot, int nranks, const tagg_model_opts_t *opts, unsigned *flags) {
  unsigned f = 0;
  uint64_t n;
  if (nranks < 1) nranks = 1;
  if (opts->naggr > 0) {
    f |= TAGG_NAGGR_USER;
    n = (uint64_t)opts->naggr;
    if (n > (uint64_t)nranks) { n = (uint64_t)nranks; f |= TAGG_NAGGR_CLAMPED; }
    if (flags) *flags = f;
    return (int)n;
  }
  uint64_t mem = opts->aggr_mem ? opts->aggr_mem : (uint64_t)(opts->n_buff > 0 ? opts->n_buff : 1) * opts->s_buff;
  uint64_t bs = opts->fs_block ? opts->fs_block : 1;
  if (mem == 0) mem = 1;
  uint64_t n_mem = d_tot / mem + (d_tot % mem != 0); /* share fits Mem */
  uint64_t n_bs = d_tot / bs;                        /* share >= one block */
  if (n_mem < 1) n_mem = 1;
  if (n_bs < 1) { n_bs = 1; if (d_tot < bs) f |= TAGG_NAGGR_BLOCK_RELAXED; }
  if (opts->pow2) { n_mem = pow2_ceil(n_mem); n_bs = pow2_floor(n_bs); }
  n = n_mem;
  if (n > n_bs) { n = n_bs; f |= TAGG_NAGGR_MEM_RELAXED; } /* several rounds of buffers */
  if (n > (uint64_t)nranks) {
    n = opts->pow2 ? pow2_floor((uint64_t)nranks) : (uint64_t)nranks;
    f |= TAGG_NAGGR_CLAMPED | TAGG_NAGGR_MEM_RELAXED;
  }
  if (flags) *flags = f;
  return (int)n;
}

void tagg_model_opts_default(tagg_model_opts_t *o) {
  o->naggr = 0;
  o->pow2 = 1;
  o->fs_block = 8ull << 20;  /* Lustre stripe of the Theta runs, 002 section 4.1 */
  o->aggr_mem = 0;
  o->n_buff = 2;             /* double buffering, MA-TAPIOCA Algorithm 1 */
  o->s_buff = 16ull << 20;
  o->persistency = TAGG_PERSIST_NONE;
  o->form = TAGG_FORM_SUM;
  o->strategy = "memory-aware";
  o->aggr_tier = -1;
  o->seed = 1;
}
