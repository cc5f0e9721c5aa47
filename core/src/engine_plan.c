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

/* What every rank learns of every other's request, per domain: bytes and the
 * range they span (the gathered matrix M[rank][domain]). */
typedef struct {
    uint64_t bytes, lo, hi;
} span_t;

/* Producers (rank, bytes) of domain d from M. */
static size_t producers(const span_t *M, int nranks, int ndom, int d, tagg_producer_t *out)
{
    size_t n = 0;
    for (int r = 0; r < nranks; r++)
        if (M[(size_t)r * ndom + d].bytes)
            out[n++] = (tagg_producer_t){r, M[(size_t)r * ndom + d].bytes};
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

/* Memory of the election, allocated (and agreed on) with the rest of the
 * plan, so that the election itself cannot fail half-way on one rank. */
typedef struct {
    double v;
    int    r;
} minloc_t;

typedef struct {
    double          *mine;      /* [nd] this rank's cost for each domain */
    tagg_producer_t *prod;      /* [P] producers of one domain */
    char            *taken;     /* [P] rank already aggregates */
    char            *done;      /* [nd] domain settled */
    int             *node_aggr; /* [nnodes] aggregators per node */
    int             *first;     /* [P] lowest rank of each node */
    minloc_t        *in, *out;  /* [nd + 1] election reduction */
} elect_scratch_t;

static void scratch_free(elect_scratch_t *s)
{
    free(s->mine), free(s->prod), free(s->taken), free(s->done), free(s->node_aggr), free(s->first);
    free(s->in), free(s->out);
    memset(s, 0, sizeof *s);
}

static int scratch_alloc(elect_scratch_t *s, int nd, int P, int nnodes)
{
    s->mine      = malloc((size_t)nd * sizeof *s->mine);
    s->prod      = malloc((size_t)P * sizeof *s->prod);
    s->taken     = calloc((size_t)P, 1);
    s->done      = calloc((size_t)nd, 1);
    s->node_aggr = calloc((size_t)(nnodes > 0 ? nnodes : 1), sizeof *s->node_aggr);
    s->first     = malloc((size_t)P * sizeof *s->first);
    s->in        = malloc((size_t)(nd + 1) * sizeof *s->in);
    s->out       = malloc((size_t)(nd + 1) * sizeof *s->out);
    return s->mine && s->prod && s->taken && s->done && s->node_aggr && s->first && s->in && s->out ? 0 : -1;
}

/* Election by the cost model: every rank computes Cost_A + Cost_T of its own
 * candidacy for each domain; MINLOC picks the cheapest (lowest rank on ties).
 * A rank aggregates one domain at most and a node holds at most aggr_per_node
 * aggregators: winners that break either rule are excluded and the remaining
 * domains elected again; each pass settles at least one domain. */
static int elect_by_cost(tagg_file_t *f, tagg_engine_t *e, tagg_call_t *c, const span_t *M, elect_scratch_t *sc)
{
    int              nd = c->ndom, P = f->size, cap = c->per_node, rc = 0;
    double          *mine = sc->mine;
    tagg_producer_t *prod = sc->prod;
    char            *taken = sc->taken, *done = sc->done;
    int             *node_aggr = sc->node_aggr;
    minloc_t        *in = sc->in, *out = sc->out;
    /* a cost-model failure rides on the first election reduction (element
     * nd: -1 on a rank that failed) */
    double failed = 0;
    for (int d = 0; d < nd; d++) {
        tagg_cost_t cost;
        tagg_err_t  err;
        size_t      np = producers(M, P, nd, d, prod);
        if (failed == 0 &&
            tagg_candidate_cost(e->topo, &e->tiers, prod, np, f->rank, e->tier, &e->opts, &cost, &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "cost model: %s", err.msg);
            failed = -1;
        }
        mine[d] = failed == 0 && cost.eligible ? cost.total : INFINITY;
    }
    int left = nd;
    while (rc == 0 && left > 0) {
        int my_node = tagg_topology_rank_node(e->topo, f->rank);
        int blocked = taken[f->rank] || (cap && node_aggr[my_node] >= cap);
        for (int d = 0; d < nd; d++) {
            in[d].v = (done[d] || blocked) ? INFINITY : mine[d];
            in[d].r = f->rank;
        }
        in[nd].v = failed, in[nd].r = f->rank;
        int code = MPI_Allreduce(in, out, nd + 1, MPI_DOUBLE_INT, MPI_MINLOC, f->comm);
        if (code != MPI_SUCCESS) {
            TAGG_ERR_MPI("MPI_Allreduce (aggregator election)", code);
            rc = -1;
            break;
        }
        if (out[nd].v < 0) { /* the cost model failed somewhere */
            if (failed == 0)
                TAGG_ERR(TAGG_E_CONFIG, "the cost model failed on rank %d (see that rank's error stack)", out[nd].r);
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
    return rc;
}

/* Election by a strategy of the model's registry that is not cost-based
 * (shortest, longest, first-per-node, random): deterministic from data every
 * rank has, so every rank computes the same answer without communicating. */
static int elect_by_registry(tagg_file_t *f, tagg_engine_t *e, tagg_call_t *c, const span_t *M,
                             elect_scratch_t *sc)
{
    int              nd = c->ndom, P = f->size, rc = 0, nfirst = 0;
    tagg_producer_t *prod = sc->prod;
    char            *taken = sc->taken;
    int             *node_aggr = sc->node_aggr, *first = sc->first;
    uint64_t         rng = e->opts.seed;
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
            int cap = c->per_node;
            if (rank < 0 || rank >= P || taken[rank] ||
                (cap && node_aggr[tagg_topology_rank_node(e->topo, rank)] >= cap))
                rank = next_free(e, P, taken, node_aggr, cap, rank < 0 || rank >= P ? 0 : rank);
            c->aggr[d] = rank, taken[rank] = 1, node_aggr[tagg_topology_rank_node(e->topo, rank)]++;
        }
    }
    return rc;
}

/* Election when the store restricts who may reach a stripe (node-local
 * subfiles; domains are single stripes): domain d goes to the next allowed rank
 * of its stripe not yet used in this call, in rank order. Deterministic, so
 * every rank computes it alone. The cost model is not consulted: the node is
 * fixed by where the data lives, which is what the model would decide. */
static int elect_owners(tagg_file_t *f, tagg_call_t *c)
{
    int *used = calloc((size_t)f->size, sizeof *used); /* per first allowed rank (one per node group) */
    int  rc   = 0;
    if (!used)
        TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    for (int d = 0; d < c->ndom && rc == 0; d++) {
        uint64_t off  = c->lo + (uint64_t)d * c->dsize;
        int      head = f->store_ops->owner(f, off, 0);
        int      r    = head >= 0 ? f->store_ops->owner(f, off, used[head]++) : -1;
        if (r < 0) {
            TAGG_ERR(TAGG_E_IO, "no rank left on the node holding address %llu to aggregate it (%d domains)",
                     (unsigned long long)off, c->ndom);
            rc = -1;
        }
        c->aggr[d] = r;
    }
    free(used);
    return tagg_agree(f->comm, rc, "electing aggregators on the nodes holding the data");
}

/* Splits the rank's extents into (domain, round) pieces, sorted by round. */
static int make_pieces(tagg_call_t *c, const tagg_extents_t *x, uint64_t B, span_t *mine)
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
            if (!mine[d].bytes || off < mine[d].lo)
                mine[d].lo = off;
            if (off + take > mine[d].hi)
                mine[d].hi = off + take;
            mine[d].bytes += take;
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

static int cmp_u64pair_span(const void *a, const void *b)
{
    const span_t *p = a, *q = b;
    return p->lo < q->lo ? -1 : p->lo > q->lo;
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

/* The describe step's reduction: one MPI_Allreduce over six int64 per rank,
 * min of the lowest offset, max of the end, sum of bytes, max of the
 * self-overlap flag, max of "has raw data", max of "has a request smaller than
 * a block or in several pieces" (an MPI user op, made once, freed at
 * MPI_Finalize). */
enum { D_LO, D_HI, D_BYTES, D_OVERLAP, D_RAW, D_SMALL, D_N };

static void describe_combine(void *invec, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const int64_t *a = invec;
    int64_t       *b = inout;
    for (int i = 0; i < *len; i++, a += D_N, b += D_N) {
        b[D_LO]      = a[D_LO] < b[D_LO] ? a[D_LO] : b[D_LO];
        b[D_HI]      = a[D_HI] > b[D_HI] ? a[D_HI] : b[D_HI];
        b[D_BYTES]  += a[D_BYTES];
        b[D_OVERLAP] = a[D_OVERLAP] > b[D_OVERLAP] ? a[D_OVERLAP] : b[D_OVERLAP];
        b[D_RAW]     = a[D_RAW] > b[D_RAW] ? a[D_RAW] : b[D_RAW];
        b[D_SMALL]   = a[D_SMALL] > b[D_SMALL] ? a[D_SMALL] : b[D_SMALL];
    }
}

static MPI_Op       describe_op   = MPI_OP_NULL;
static MPI_Datatype describe_type = MPI_DATATYPE_NULL;

static int describe_free(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    if (describe_op != MPI_OP_NULL)
        MPI_Op_free(&describe_op);
    if (describe_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&describe_type);
    return MPI_SUCCESS;
}

int tagg_engine_plan_init(void)
{
    if (describe_op != MPI_OP_NULL)
        return 0;
    int keyval;
    if (MPI_Type_contiguous(D_N, MPI_INT64_T, &describe_type) != MPI_SUCCESS ||
        MPI_Type_commit(&describe_type) != MPI_SUCCESS ||
        MPI_Op_create(describe_combine, 1, &describe_op) != MPI_SUCCESS ||
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, describe_free, &keyval, NULL) != MPI_SUCCESS ||
        (tagg_engine_pin_library(), MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL)) != MPI_SUCCESS) {
        TAGG_ERR(TAGG_E_MPI, "cannot create the describe reduction");
        return -1;
    }
    return 0;
}

/* Coverage without an exchange: when, in every domain, each producer's pieces
 * form one run and the runs of different producers do not overlap, the
 * aggregator's coverage is the union of the runs M already holds. Every rank
 * decides the same from M, with buffers allocated (and agreed) beforehand.
 * Returns 1 (and the aggregator's coverage in cov) when so. */
static int coverage_from_spans(tagg_call_t *c, const span_t *M, int P, span_t *runs, uint64_t *cov)
{
    for (int d = 0; d < c->ndom; d++) {
        size_t n = 0;
        for (int r = 0; r < P; r++) {
            const span_t *m = &M[(size_t)r * c->ndom + d];
            if (m->bytes && m->bytes != m->hi - m->lo)
                return 0; /* a producer with holes in this domain */
            if (m->bytes)
                runs[n++] = *m;
        }
        qsort(runs, n, sizeof *runs, cmp_u64pair_span);
        for (size_t i = 1; i < n; i++)
            if (runs[i].lo < runs[i - 1].hi)
                return 0; /* producers overlap */
        if (d != c->my_dom)
            continue;
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (m && cov[2 * (m - 1)] + cov[2 * (m - 1) + 1] == runs[i].lo)
                cov[2 * (m - 1) + 1] += runs[i].hi - runs[i].lo;
            else
                cov[2 * m] = runs[i].lo, cov[2 * m + 1] = runs[i].hi - runs[i].lo, m++;
        }
        c->ncov = m;
    }
    return 1;
}

int tagg_engine_plan(tagg_file_t *f, tagg_engine_t *e, const tagg_extents_t *x, tagg_call_t *c)
{
    int     P = f->size, rc = 0;
    span_t *M = NULL, *mine = NULL, *runs = NULL;
    elect_scratch_t sc = {0};
    memset(c, 0, sizeof *c);
    c->my_dom = c->my_index = -1;

    /* describe: touched range, bytes, and whether any rank overlaps itself */
    uint64_t lo = x->n ? x->v[0].off : UINT64_MAX, hi = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i].off + x->v[i].len > hi)
            hi = x->v[i].off + x->v[i].len;
    /* int64: offsets are < 2^62 (and MPICH 4.0.2 reduces MPI_UINT64_T as signed) */
    int     large   = x->n && hi - lo == x->bytes && x->bytes >= (uint64_t)f->cfg.block; /* one run, >= a block */
    int64_t in[D_N] = {x->n ? (int64_t)lo : INT64_MAX, (int64_t)hi, (int64_t)x->bytes, !tagg_extents_disjoint(x),
                       x->n && !x->meta, x->n && !large};
    int64_t g[D_N];
    CHECK_MPI(MPI_Allreduce(in, g, 1, describe_type, describe_op, f->comm), "MPI_Allreduce (describe)");
    if (g[D_LO] == INT64_MAX || g[D_BYTES] == 0)
        return 1; /* nothing anywhere */
    if (g[D_OVERLAP])
        return 2; /* a rank's own pieces overlap: the caller writes in order, independently */
    if (!g[D_RAW])
        return 2; /* file metadata only (a few entries per rank): aggregating costs more than it saves */
    /* Aggregation by message size (GLEAN, seed 003): when every rank with data
     * asks for one contiguous run of at least a file-system block, its
     * requests are already as large as aggregation would make them; moving
     * the data through aggregators would only add a copy and the rounds'
     * synchronisation. Every rank then accesses its own run (aggregators=P).
     * Not with node-local subfiles, where only a stripe's node may touch it. */
    int local_stripes = f->store_ops->owner && f->store_ops->owner(f, 0, 0) >= 0; /* node-local subfiles */
    if (!g[D_SMALL] && f->cfg.aggregators == 0 && !local_stripes)
        return 2;
    lo = (uint64_t)g[D_LO], hi = (uint64_t)g[D_HI];
    uint64_t total = (uint64_t)g[D_BYTES];
    if (tagg_engine_ready(f, e) < 0)
        return -1;

    /* partition: domains aligned to the layout's stripe, else the configured block */
    uint64_t unit = f->store_ops->stripe(f);
    if (!unit)
        unit = (uint64_t)f->cfg.block;
    c->lo        = lo / unit * unit;
    /* stripes only some ranks may reach (node-local subfiles): one domain per stripe */
    int owned    = f->store_ops->owner && f->store_ops->owner(f, c->lo, 0) >= 0;
    int naggr    = f->cfg.aggregators ? f->cfg.aggregators : tagg_naggr(total, P, &e->opts, NULL);
    naggr        = naggr < 1 ? 1 : naggr > P ? P : naggr;
    if (owned)
        naggr = (int)((hi - c->lo + unit - 1) / unit); /* the caller keeps it within owner_window */
    uint64_t spn = hi - c->lo, per = (spn + (uint64_t)naggr - 1) / (uint64_t)naggr;
    c->dsize     = (per + unit - 1) / unit * unit;
    c->ndom      = (int)((spn + c->dsize - 1) / c->dsize);
    c->nrounds   = (int)((c->dsize + e->bufsize - 1) / e->bufsize);
    c->hi        = hi;
    /* stepwise aggregation and throttling: configured, or the model's rules */
    c->per_node = f->cfg.aggr_per_node >= 0 ? f->cfg.aggr_per_node
                                            : tagg_aggr_per_node(c->ndom, tagg_topology_nnodes(e->topo));
    c->throttle = f->cfg.throttle >= 0 ? f->cfg.throttle : tagg_throttle(e->topo, &e->tiers, e->tier, c->ndom);
    if (c->throttle >= c->ndom)
        c->throttle = 0; /* no aggregator would ever wait */

    /* this rank's bytes and span per domain, gathered: producers of every domain */
    M       = malloc((size_t)P * (size_t)c->ndom * sizeof *M);
    mine    = calloc((size_t)c->ndom, sizeof *mine);
    c->aggr = malloc((size_t)c->ndom * sizeof *c->aggr);
    runs    = malloc((size_t)P * sizeof *runs);
    c->cov  = malloc((size_t)P * 2 * sizeof *c->cov); /* at most one run per producer on the fast path */
    if (!M || !mine || !c->aggr || !runs || !c->cov || make_pieces(c, x, e->bufsize, mine) < 0 ||
        scratch_alloc(&sc, c->ndom, P, tagg_topology_nnodes(e->topo)) < 0) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory planning a request of %zu extents", x->n);
        rc = -1;
    }
    if (tagg_agree(f->comm, rc, "planning the collective request") < 0) {
        rc = -1;
        goto done;
    }
    int code = MPI_Allgather(mine, 3 * c->ndom, MPI_UINT64_T, M, 3 * c->ndom, MPI_UINT64_T, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allgather (bytes per domain)", code);
        rc = -1;
        goto done;
    }
    if (owned) /* destination=nvr: a rank of the node that holds each stripe (agreed) */
        rc = elect_owners(f, c);
    else if (e->cost_based) /* agreed through its own reductions */
        rc = elect_by_cost(f, e, c, M, &sc);
    else /* local and deterministic, but a model call may run out of memory on one rank */
        rc = tagg_agree(f->comm, elect_by_registry(f, e, c, M, &sc), "electing aggregators");
    if (rc < 0)
        goto done;
    for (int d = 0; d < c->ndom; d++)
        if (c->aggr[d] == f->rank)
            c->my_dom = d, c->my_index = d;
    if (!coverage_from_spans(c, M, P, runs, c->cov)) {
        free(c->cov);
        c->cov = NULL, c->ncov = 0;
        rc     = exchange_coverage(f, c);
    }
done:
    free(M), free(mine), free(runs);
    scratch_free(&sc);
    return rc;
}
