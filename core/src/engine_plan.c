/* The engine's planning step for one collective call: describe, partition,
 * elect (see engine.h). Only sizes and ranges cross the network here. */
#include "engine.h"
#include "error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_MPI(call, what)                                                                               \
    do {                                                                                                    \
        int code_ = (call);                                                                                 \
        if (code_ != MPI_SUCCESS) {                                                                         \
            TAGG_ERR_MPI(what, code_);                                                                      \
            return -1;                                                                                      \
        }                                                                                                   \
    } while (0)

void tagg_engine_call_free(tagg_call_t *c)
{
    free(c->aggr);
    free(c->pieces);
    free(c->cov);
    memset(c, 0, sizeof *c);
    c->my_dom = -1;
}

static int domain_of(const tagg_call_t *c, uint64_t off) { return (int)((off - c->lo) / c->dsize); }

/* Producers (rank, bytes) of domain d from the gathered matrix M[rank][domain]. */
static size_t producers(const uint64_t *M, int nranks, int ndom, int d, tagg_producer_t *out)
{
    size_t n = 0;
    for (int r = 0; r < nranks; r++)
        if (M[(size_t)r * ndom + d])
            out[n++] = (tagg_producer_t){r, M[(size_t)r * ndom + d]};
    return n;
}

/* Next rank at or after `from` (cyclically) that is not yet an aggregator and
 * whose node has room; -1 when none. Deterministic, so every rank agrees. */
static int next_free(const tagg_engine_t *e, int nranks, const char *taken, const int *node_aggr, int cap,
                     int from)
{
    for (int i = 0; i < nranks; i++) {
        int r = (from + i) % nranks;
        if (!taken[r] && (cap == 0 || node_aggr[tagg_topology_rank_node(e->topo, r)] < cap))
            return r;
    }
    for (int i = 0; i < nranks; i++) /* the node cap cannot be met: relax it */
        if (!taken[(from + i) % nranks])
            return (from + i) % nranks;
    return -1;
}

/* Election by the cost model: every rank computes Cost_A + Cost_T of its own
 * candidacy for each domain; MINLOC picks the cheapest (lowest rank on ties).
 * A rank aggregates one domain at most and a node holds at most aggr_per_node
 * aggregators: winners that break either rule are excluded and the remaining
 * domains elected again; each pass settles at least one domain. */
static int elect_by_cost(tagg_file_t *f, tagg_engine_t *e, tagg_call_t *c, const uint64_t *M)
{
    int              nd = c->ndom, P = f->size, cap = f->cfg.aggr_per_node, rc = 0;
    double          *mine  = malloc((size_t)nd * sizeof *mine);
    tagg_producer_t *prod  = malloc((size_t)P * sizeof *prod);
    char            *taken = calloc((size_t)P, 1), *done = calloc((size_t)nd, 1);
    int             *node_aggr = calloc((size_t)tagg_topology_nnodes(e->topo), sizeof(int));
    struct {
        double v;
        int    r;
    } *in = malloc((size_t)nd * sizeof *in), *out = malloc((size_t)nd * sizeof *out);
    if (!mine || !prod || !taken || !done || !node_aggr || !in || !out) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        rc = -1;
    }
    for (int d = 0; d < nd && rc == 0; d++) {
        tagg_cost_t cost;
        tagg_err_t  err;
        size_t      np = producers(M, P, nd, d, prod);
        if (tagg_candidate_cost(e->topo, &e->tiers, prod, np, f->rank, e->tier, &e->opts, &cost, &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "cost model: %s", err.msg);
            rc = -1;
        }
        else
            mine[d] = cost.eligible ? cost.total : INFINITY;
    }
    /* Every rank computed the same things so far; a failure is local to none. */
    if (tagg_agree(f->comm, rc, "evaluating aggregator candidacy") < 0)
        rc = -1;
    int left = nd;
    while (rc == 0 && left > 0) {
        int my_node = tagg_topology_rank_node(e->topo, f->rank);
        int blocked = taken[f->rank] || (cap && node_aggr[my_node] >= cap);
        for (int d = 0; d < nd; d++) {
            in[d].v = (done[d] || blocked) ? INFINITY : mine[d];
            in[d].r = f->rank;
        }
        int code = MPI_Allreduce(in, out, nd, MPI_DOUBLE_INT, MPI_MINLOC, f->comm);
        if (code != MPI_SUCCESS) {
            TAGG_ERR_MPI("MPI_Allreduce (aggregator election)", code);
            rc = -1;
            break;
        }
        int settled = 0;
        for (int d = 0; d < nd; d++) {
            if (done[d])
                continue;
            int w = out[d].r;
            /* No eligible candidate left (all infinite): the first free rank from the domain's position. */
            if (isinf(out[d].v))
                w = next_free(e, P, taken, node_aggr, cap, (int)((long long)d * P / nd));
            int wn = w >= 0 ? tagg_topology_rank_node(e->topo, w) : 0;
            if (w < 0 || taken[w] || (cap && node_aggr[wn] >= cap && !isinf(out[d].v)))
                continue; /* elected again next pass without w */
            c->aggr[d] = w, taken[w] = 1, node_aggr[wn]++, done[d] = 1, left--, settled++;
        }
        if (!settled) { /* cannot happen with ndom <= nranks; guard against looping */
            TAGG_ERR(TAGG_E_CONFIG, "aggregator election made no progress (%d domains left)", left);
            rc = -1;
        }
    }
    free(mine), free(prod), free(taken), free(done), free(node_aggr), free(in), free(out);
    return rc;
}

/* Election by a strategy of the model's registry that is not cost-based
 * (shortest, longest, first-per-node, random): deterministic from data every
 * rank has, so every rank computes the same answer without communicating. */
static int elect_by_registry(tagg_file_t *f, tagg_engine_t *e, tagg_call_t *c, const uint64_t *M)
{
    int              nd = c->ndom, P = f->size, rc = 0, nfirst = 0;
    tagg_producer_t *prod  = malloc((size_t)P * sizeof *prod);
    char            *taken = calloc((size_t)P, 1);
    int             *node_aggr = calloc((size_t)tagg_topology_nnodes(e->topo), sizeof(int));
    int             *first = malloc((size_t)P * sizeof *first);
    uint64_t         rng   = e->opts.seed;
    if (!prod || !taken || !node_aggr || !first) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        rc = -1;
    }
    for (int r = 0; r < P && rc == 0; r++) { /* lowest rank of each node, in rank order */
        int n = tagg_topology_rank_node(e->topo, r), seen = 0;
        for (int k = 0; k < nfirst && !seen; k++)
            seen = tagg_topology_rank_node(e->topo, first[k]) == n;
        if (!seen)
            first[nfirst++] = r;
    }
    for (int d = 0; d < nd && rc == 0; d++) {
        tagg_group_summary_t sum;
        tagg_err_t           err;
        size_t               np = producers(M, P, nd, d, prod);
        int                  rank = -1, tier = e->tiers.source;
        if (tagg_group_summary_build(e->topo, prod, np, &sum, &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "cost model: %s", err.msg);
            rc = -1;
            break;
        }
        tagg_strategy_ctx_t ctx = {e->topo, &e->tiers, &e->opts, d, prod, np, &sum, &rng, first, nfirst};
        if (e->strategy->choose(&ctx, &rank, &tier, &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "strategy %s: %s", e->strategy->name, err.msg);
            rc = -1;
        }
        tagg_group_summary_free(&sum);
        if (rc == 0) {
            int cap = f->cfg.aggr_per_node;
            if (rank < 0 || rank >= P || taken[rank] ||
                (cap && node_aggr[tagg_topology_rank_node(e->topo, rank)] >= cap))
                rank = next_free(e, P, taken, node_aggr, cap, rank < 0 || rank >= P ? 0 : rank);
            c->aggr[d] = rank, taken[rank] = 1, node_aggr[tagg_topology_rank_node(e->topo, rank)]++;
        }
    }
    free(prod), free(taken), free(node_aggr), free(first);
    return rc;
}

/* Splits the rank's extents into (domain, round) pieces, sorted by round. */
static int make_pieces(tagg_call_t *c, const tagg_extents_t *x, uint64_t B, uint64_t *mine)
{
    size_t cap = x->n + 16, n = 0;
    tagg_piece_t *p = malloc(cap * sizeof *p);
    if (!p)
        return -1;
    for (size_t i = 0; i < x->n; i++) {
        uint64_t off = x->v[i].off, len = x->v[i].len;
        char    *mem = x->v[i].mem;
        while (len) {
            int      d    = domain_of(c, off);
            uint64_t dlo  = c->lo + (uint64_t)d * c->dsize;
            int      k    = (int)((off - dlo) / B);
            uint64_t rend = dlo + (uint64_t)(k + 1) * B, dend = dlo + c->dsize;
            uint64_t end  = rend < dend ? rend : dend;
            uint64_t take = len < end - off ? len : end - off;
            if (n == cap) {
                tagg_piece_t *q = realloc(p, (cap *= 2) * sizeof *p);
                if (!q) {
                    free(p);
                    return -1;
                }
                p = q;
            }
            p[n++] = (tagg_piece_t){off, take, mem, d, k};
            mine[d] += take;
            off += take, len -= take, mem += take;
        }
    }
    /* counting sort by round (stable: the order within a round stays the file order) */
    size_t       *start = calloc((size_t)c->nrounds + 1, sizeof *start);
    tagg_piece_t *s     = malloc((n ? n : 1) * sizeof *s);
    if (!start || !s) {
        free(p), free(start), free(s);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        start[p[i].round + 1]++;
    for (int k = 0; k < c->nrounds; k++)
        start[k + 1] += start[k];
    for (size_t i = 0; i < n; i++)
        s[start[p[i].round]++] = p[i];
    free(p), free(start);
    c->pieces  = s;
    c->npieces = n;
    return 0;
}

static int cmp_u64pair(const void *a, const void *b)
{
    const uint64_t *p = a, *q = b;
    return p[0] < q[0] ? -1 : p[0] > q[0];
}

/* Every aggregator learns which bytes of its domain are written (its coverage),
 * so that it writes only those: (offset, length) pairs, never data. */
static int exchange_coverage(tagg_file_t *f, tagg_call_t *c)
{
    int       P = f->size, rc = 0;
    int      *scount = calloc((size_t)P, sizeof(int)), *rcount = calloc((size_t)P, sizeof(int));
    int      *sdisp = calloc((size_t)P, sizeof(int)), *rdisp = calloc((size_t)P, sizeof(int));
    uint64_t *sbuf = malloc((c->npieces ? c->npieces : 1) * 2 * sizeof *sbuf), *rbuf = NULL;
    int      *fill = calloc((size_t)P, sizeof(int));
    if (!scount || !rcount || !sdisp || !rdisp || !sbuf || !fill)
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
    if (tagg_agree(f->comm, (scount && rcount && sdisp && rdisp && sbuf && fill) ? 0 : -1,
                   "exchanging coverage") < 0) {
        rc = -1;
        goto done;
    }
    for (size_t i = 0; i < c->npieces; i++)
        scount[c->aggr[c->pieces[i].domain]] += 2;
    for (int r = 1; r < P; r++)
        sdisp[r] = sdisp[r - 1] + scount[r - 1];
    for (size_t i = 0; i < c->npieces; i++) {
        int a                        = c->aggr[c->pieces[i].domain];
        sbuf[sdisp[a] + fill[a]]     = c->pieces[i].off;
        sbuf[sdisp[a] + fill[a] + 1] = c->pieces[i].len;
        fill[a] += 2;
    }
    int code = MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Alltoall (coverage counts)", code);
        rc = -1;
        goto done;
    }
    size_t total = 0;
    for (int r = 0; r < P; r++)
        rdisp[r] = (int)total, total += (size_t)rcount[r];
    rbuf = malloc((total ? total : 1) * sizeof *rbuf);
    if (!rbuf)
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
    if (tagg_agree(f->comm, rbuf ? 0 : -1, "exchanging coverage") < 0) {
        rc = -1;
        goto done;
    }
    code = MPI_Alltoallv(sbuf, scount, sdisp, MPI_UINT64_T, rbuf, rcount, rdisp, MPI_UINT64_T, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Alltoallv (coverage)", code);
        rc = -1;
        goto done;
    }
    size_t n = total / 2, m = 0;
    qsort(rbuf, n, 2 * sizeof *rbuf, cmp_u64pair);
    for (size_t i = 0; i < n; i++) { /* merge overlapping and adjacent runs */
        if (m && rbuf[2 * (m - 1)] + rbuf[2 * (m - 1) + 1] >= rbuf[2 * i]) {
            uint64_t end = rbuf[2 * i] + rbuf[2 * i + 1];
            if (end > rbuf[2 * (m - 1)] + rbuf[2 * (m - 1) + 1])
                rbuf[2 * (m - 1) + 1] = end - rbuf[2 * (m - 1)];
        }
        else {
            rbuf[2 * m]     = rbuf[2 * i];
            rbuf[2 * m + 1] = rbuf[2 * i + 1];
            m++;
        }
    }
    c->cov  = rbuf;
    c->ncov = m;
    rbuf    = NULL;
done:
    free(scount), free(rcount), free(sdisp), free(rdisp), free(sbuf), free(rbuf), free(fill);
    return rc;
}

int tagg_engine_plan(tagg_file_t *f, tagg_engine_t *e, const tagg_extents_t *x, tagg_call_t *c)
{
    int       P = f->size, rc = 0;
    uint64_t *M = NULL, *mine = NULL;
    memset(c, 0, sizeof *c);
    c->my_dom = c->my_index = -1;

    /* describe: touched range, bytes, and whether any rank overlaps itself */
    uint64_t lo = x->n ? x->v[0].off : UINT64_MAX, hi = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i].off + x->v[i].len > hi)
            hi = x->v[i].off + x->v[i].len;
    /* Signed: MPICH 4.0.2 (Debian 12) computes MPI_MIN over MPI_UINT64_T as if
     * the values were signed, so UINT64_MAX would win. Offsets are < 2^62. */
    int64_t in[3] = {x->n ? (int64_t)lo : INT64_MAX, -(int64_t)hi, -(int64_t)!tagg_extents_disjoint(x)}, g[3];
    CHECK_MPI(MPI_Allreduce(in, g, 3, MPI_INT64_T, MPI_MIN, f->comm), "MPI_Allreduce (describe)");
    uint64_t total = 0;
    CHECK_MPI(MPI_Allreduce(&x->bytes, &total, 1, MPI_UINT64_T, MPI_SUM, f->comm), "MPI_Allreduce (bytes)");
    if (g[0] == INT64_MAX || total == 0)
        return 1; /* nothing anywhere */
    if (g[2] < 0)
        return 2; /* a rank's own pieces overlap: the caller writes in order, independently */
    lo = (uint64_t)g[0], hi = (uint64_t)-g[1];

    /* partition: domains aligned to the layout's stripe, else the configured block */
    uint64_t unit = f->store_ops->stripe(f);
    if (!unit)
        unit = (uint64_t)f->cfg.block;
    c->lo        = lo / unit * unit;
    int naggr    = f->cfg.aggregators ? f->cfg.aggregators : tagg_naggr(total, P, &e->opts, NULL);
    naggr        = naggr < 1 ? 1 : naggr > P ? P : naggr;
    uint64_t spn = hi - c->lo, per = (spn + (uint64_t)naggr - 1) / (uint64_t)naggr;
    c->dsize     = (per + unit - 1) / unit * unit;
    c->ndom      = (int)((spn + c->dsize - 1) / c->dsize);
    c->nrounds   = (int)((c->dsize + e->bufsize - 1) / e->bufsize);
    c->hi        = hi;

    /* this rank's bytes per domain, gathered: producers of every domain */
    M    = malloc((size_t)P * (size_t)c->ndom * sizeof *M);
    mine = calloc((size_t)c->ndom, sizeof *mine);
    c->aggr = malloc((size_t)c->ndom * sizeof *c->aggr);
    if (!M || !mine || !c->aggr || make_pieces(c, x, e->bufsize, mine) < 0) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory planning a request of %zu extents", x->n);
        rc = -1;
    }
    if (tagg_agree(f->comm, rc, "planning the collective request") < 0) {
        rc = -1;
        goto done;
    }
    CHECK_MPI(MPI_Allgather(mine, c->ndom, MPI_UINT64_T, M, c->ndom, MPI_UINT64_T, f->comm),
              "MPI_Allgather (bytes per domain)");
    rc = e->cost_based ? elect_by_cost(f, e, c, M) : elect_by_registry(f, e, c, M);
    if (rc < 0)
        goto done;
    for (int d = 0; d < c->ndom; d++)
        if (c->aggr[d] == f->rank)
            c->my_dom = d, c->my_index = d;
    rc = exchange_coverage(f, c);
done:
    free(M), free(mine);
    return rc;
}
