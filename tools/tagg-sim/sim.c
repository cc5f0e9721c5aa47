/* sim.c - the pipelined two-phase collective I/O of a tagg plan, flow by flow.
 *
 * Resources of the flow model (flow.h):
 *   [0, L)                       the topology's directed links (tagg_topology_route)
 *   L + node x ntiers + tier     a node's memory tier (its bandwidth, shared by
 *                                reads and writes of that tier on that node)
 *   L + nnodes x ntiers + i      the file system behind I/O node i (the target
 *                                tier's bandwidth, per I/O node)
 * Flows (write; a read runs the same paths backwards):
 *   aggregation  producer node's source tier -> route -> aggregator's tier;
 *                one flow per (round, producer node): the node's ranks share
 *                their injection, so their pieces of one round travel as one;
 *                latency l x d(i, A)
 *   flush        aggregator's tier -> route to its gateway -> file system;
 *                latency l_A + l x d(A, IO) + l_T
 * Round k of an aggregator moves bytes [k S_buff, (k+1) S_buff) of its file
 * domain.  Write: aggregation of round k needs a free buffer (flush of round
 * k - N_buff done); flushes go one at a time, in order.  Read: fetch k (one at
 * a time) needs a free buffer (scatter of round k - N_buff done); scatter k
 * starts when fetch k is done.  Aggregators run their pipelines
 * independently (no barrier between rounds). */
#include "sim.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "flow.h"
#include "tagg/topology.h"

enum { K_PIECE = 0, K_IO = 1 };

typedef struct {
  const tagg_topology_t *topo;
  const tagg_tiers_t *tiers;
  const tagg_plan_t *plan;
  const sim_opts_t *o;
  const uint64_t *bytes;
  int nnodes, nlinks, ntiers, rmax, G, nbuff;
  uint64_t sbuff;
  int *io_index;            /* node -> index among the I/O nodes, -1 */
  int *res;                 /* scratch route, rmax + 2 */
  uint64_t *rank_off;       /* file offset of each rank's data */
  int *rounds, *rbase, *round_group;
  int *next_io, *busy, *scattered;
  size_t *cursor;
  int *pend;
  char *phase_done;         /* write: aggregation done; read: scatter done */
  double *t0_piece, *t0_io;
  int *stamp, *slot, stampv; /* per-round merge of pieces by node */
  int *pnode;
  double *pbytes;
  int groups_done;
  long flows;
  double sum_piece, sum_io;
  long n_piece, n_io;
  int oom;
} sim_t;

static int tier_res(const sim_t *S, int node, int tier) { return S->nlinks + node * S->ntiers + tier; }
static int fs_res(const sim_t *S, int gw) { return S->nlinks + S->nnodes * S->ntiers + S->io_index[gw]; }

/* res = first, route from -> to, last (first/last < 0: none; equal: once). */
static int build(sim_t *S, int first, int from, int to, int last) {
  int n = 0;
  if (first >= 0) S->res[n++] = first;
  n += tagg_topology_route(S->topo, from, to, S->res + n, S->rmax);
  if (last >= 0 && last != first) S->res[n++] = last;
  return n;
}

static int start(sim_t *S, flow_net_t *net, int n, double b, double lat, int64_t tag) {
  S->flows++;
  if (flow_start(net, S->res, n, b, lat, tag)) { S->oom = 1; return -1; }
  return 0;
}

/* Pieces of round k of group g, one flow per producer node. */
static int start_pieces(sim_t *S, flow_net_t *net, int g, int k) {
  const tagg_group_plan_t *gp = &S->plan->groups[g];
  const tagg_partition_t *p = &S->plan->part;
  int R = S->rbase[g] + k, np = 0, an = gp->aggr_node, src = S->tiers->source;
  uint64_t c0 = gp->offset + (uint64_t)k * S->sbuff, c1 = c0 + S->sbuff;
  if (c1 > gp->offset + gp->length) c1 = gp->offset + gp->length;
  size_t i = S->cursor[g], end = p->first[g + 1];
  S->stampv++;
  while (i < end) {
    int r = p->prod[i].rank;
    uint64_t a = S->rank_off[r], b = a + S->bytes[r];
    if (b <= c0) { i++; S->cursor[g] = i; continue; }
    if (a >= c1) break;
    uint64_t lo = a > c0 ? a : c0, hi = b < c1 ? b : c1;
    int nd = tagg_topology_rank_node(S->topo, r);
    if (S->stamp[nd] != S->stampv) {
      S->stamp[nd] = S->stampv;
      S->slot[nd] = np;
      S->pnode[np] = nd;
      S->pbytes[np++] = 0;
    }
    S->pbytes[S->slot[nd]] += (double)(hi - lo);
    if (b > c1) break; /* the rank goes on in the next round */
    i++;
  }
  S->pend[R] = np;
  S->t0_piece[R] = flow_now(net);
  for (int j = 0; j < np; j++) {
    int nd = S->pnode[j], n;
    if (S->o->op == SIM_WRITE) n = build(S, tier_res(S, nd, src), nd, an, tier_res(S, an, gp->tier));
    else n = build(S, tier_res(S, an, gp->tier), an, nd, tier_res(S, nd, src));
    double lat = tagg_topology_hops(S->topo, nd, an) * tagg_topology_latency(S->topo, nd, an);
    if (start(S, net, n, S->pbytes[j], lat, ((int64_t)R << 1) | K_PIECE)) return -1;
  }
  if (np == 0) return flow_timer(net, 0, ((int64_t)R << 1) | K_PIECE) ? (S->oom = 1, -1) : 0;
  return 0;
}

static double chunk(const sim_t *S, int g, int k) {
  const tagg_group_plan_t *gp = &S->plan->groups[g];
  uint64_t c0 = (uint64_t)k * S->sbuff, c1 = c0 + S->sbuff;
  if (c1 > gp->length) c1 = gp->length;
  return (double)(c1 - c0);
}

static int start_io(sim_t *S, flow_net_t *net, int g, int k) {
  const tagg_group_plan_t *gp = &S->plan->groups[g];
  int an = gp->aggr_node, gw = tagg_topology_gateway(S->topo, an), n;
  if (S->o->op == SIM_WRITE) n = build(S, tier_res(S, an, gp->tier), an, gw, fs_res(S, gw));
  else n = build(S, fs_res(S, gw), gw, an, tier_res(S, an, gp->tier));
  double lat = S->tiers->tier[gp->tier].latency + S->tiers->tier[S->tiers->target].latency +
               tagg_topology_io_hops(S->topo, an) * tagg_topology_latency(S->topo, an, gw);
  S->busy[g] = 1;
  S->t0_io[S->rbase[g] + k] = flow_now(net);
  return start(S, net, n, chunk(S, g, k), lat, ((int64_t)(S->rbase[g] + k) << 1) | K_IO);
}

static int try_io(sim_t *S, flow_net_t *net, int g) {
  int k = S->next_io[g];
  if (S->busy[g] || k >= S->rounds[g]) return 0;
  if (S->o->op == SIM_WRITE) {
    if (!S->phase_done[S->rbase[g] + k]) return 0;
  } else if (k >= S->nbuff && !S->phase_done[S->rbase[g] + k - S->nbuff]) {
    return 0;
  }
  return start_io(S, net, g, k);
}

static int on_event(void *ctx, flow_net_t *net, int64_t tag, double now) {
  sim_t *S = ctx;
  int R = (int)(tag >> 1), g = S->round_group[R], k = R - S->rbase[g];
  if ((tag & 1) == K_PIECE) {
    if (--S->pend[R] > 0) return 0;
    S->phase_done[R] = 1;
    S->sum_piece += now - S->t0_piece[R];
    S->n_piece++;
    if (S->o->op == SIM_READ && ++S->scattered[g] == S->rounds[g]) S->groups_done++;
    return try_io(S, net, g);
  }
  S->busy[g] = 0;
  S->sum_io += now - S->t0_io[R];
  S->n_io++;
  S->next_io[g] = k + 1;
  if (S->o->op == SIM_WRITE) {
    if (k + 1 == S->rounds[g]) S->groups_done++;
    if (k + S->nbuff < S->rounds[g] && start_pieces(S, net, g, k + S->nbuff)) return -1;
  } else if (start_pieces(S, net, g, k)) {
    return -1;
  }
  return try_io(S, net, g);
}

static void sim_free(sim_t *S) {
  free(S->io_index); free(S->res); free(S->rank_off); free(S->rounds); free(S->rbase); free(S->round_group);
  free(S->next_io); free(S->busy); free(S->scattered); free(S->cursor); free(S->pend); free(S->phase_done);
  free(S->t0_piece); free(S->t0_io); free(S->stamp); free(S->slot); free(S->pnode); free(S->pbytes);
}

int sim_run(const tagg_topology_t *topo, const tagg_tiers_t *tiers, const uint64_t *bytes, const tagg_plan_t *plan,
            const sim_opts_t *o, sim_result_t *res, tagg_err_t *err) {
  memset(res, 0, sizeof *res);
  res->hot_link = -1;
  if (o->n_buff < 1 || o->s_buff < 1) {
    snprintf(err->msg, sizeof err->msg, "simulation needs >= 1 buffer of >= 1 byte");
    return err->code = TAGG_EINVAL;
  }
  if (plan->naggr < 1) {
    snprintf(err->msg, sizeof err->msg, "plan has no aggregator");
    return err->code = TAGG_EINVAL;
  }
  sim_t S;
  memset(&S, 0, sizeof S);
  S.topo = topo; S.tiers = tiers; S.plan = plan; S.o = o; S.bytes = bytes;
  S.nnodes = tagg_topology_nnodes(topo);
  S.nlinks = tagg_topology_nlinks(topo);
  S.ntiers = tiers->ntiers;
  S.rmax = tagg_topology_route_max(topo);
  S.G = plan->naggr;
  S.nbuff = o->n_buff;
  S.sbuff = o->s_buff;
  int nranks = tagg_topology_nranks(topo), nio = tagg_topology_nio(topo), nres = S.nlinks + S.nnodes * S.ntiers + nio;
  long nrounds = 0;
  double *cap = malloc((size_t)nres * sizeof *cap);
  flow_net_t *net = NULL;
  int rc = TAGG_ENOMEM;
  S.io_index = malloc((size_t)S.nnodes * sizeof(int));
  S.res = malloc((size_t)(S.rmax + 2) * sizeof(int));
  S.rank_off = malloc((size_t)nranks * sizeof(uint64_t));
  S.rounds = malloc((size_t)S.G * sizeof(int));
  S.rbase = malloc((size_t)S.G * sizeof(int));
  S.next_io = calloc((size_t)S.G, sizeof(int));
  S.busy = calloc((size_t)S.G, sizeof(int));
  S.scattered = calloc((size_t)S.G, sizeof(int));
  S.cursor = malloc((size_t)S.G * sizeof(size_t));
  S.stamp = calloc((size_t)S.nnodes, sizeof(int));
  S.slot = malloc((size_t)S.nnodes * sizeof(int));
  S.pnode = malloc((size_t)S.nnodes * sizeof(int));
  S.pbytes = malloc((size_t)S.nnodes * sizeof(double));
  if (!cap || !S.io_index || !S.res || !S.rank_off || !S.rounds || !S.rbase || !S.next_io || !S.busy ||
      !S.scattered || !S.cursor || !S.stamp || !S.slot || !S.pnode || !S.pbytes)
    goto done;
  uint64_t off = 0;
  for (int r = 0; r < nranks; r++) { S.rank_off[r] = off; off += bytes[r]; }
  for (int g = 0; g < S.G; g++) {
    uint64_t len = plan->groups[g].length;
    S.rounds[g] = (int)((len + S.sbuff - 1) / S.sbuff);
    S.rbase[g] = (int)nrounds;
    S.cursor[g] = plan->part.first[g];
    nrounds += S.rounds[g];
    if (nrounds > (1L << 28)) {
      snprintf(err->msg, sizeof err->msg, "more than 2^28 rounds: use a larger buffer size");
      rc = err->code = TAGG_EINVAL;
      goto done;
    }
  }
  S.round_group = malloc((size_t)(nrounds + 1) * sizeof(int));
  S.pend = calloc((size_t)nrounds + 1, sizeof(int));
  S.phase_done = calloc((size_t)nrounds + 1, 1);
  S.t0_piece = calloc((size_t)nrounds + 1, sizeof(double));
  S.t0_io = calloc((size_t)nrounds + 1, sizeof(double));
  if (!S.round_group || !S.pend || !S.phase_done || !S.t0_piece || !S.t0_io) goto done;
  for (int g = 0; g < S.G; g++)
    for (int k = 0; k < S.rounds[g]; k++) S.round_group[S.rbase[g] + k] = g;
  for (int n = 0; n < S.nnodes; n++) S.io_index[n] = -1;
  for (int i = 0; i < nio; i++) S.io_index[tagg_topology_io_node(topo, i)] = i;
  for (int l = 0; l < S.nlinks; l++) cap[l] = tagg_topology_link_capacity(topo, l);
  for (int n = 0; n < S.nnodes; n++)
    for (int t = 0; t < S.ntiers; t++) cap[S.nlinks + n * S.ntiers + t] = tiers->tier[t].bandwidth;
  for (int i = 0; i < nio; i++) cap[S.nlinks + S.nnodes * S.ntiers + i] = tiers->tier[tiers->target].bandwidth;
  net = flow_net_new(nres, cap);
  if (!net) goto done;
  for (int g = 0; g < S.G; g++) {
    if (S.rounds[g] == 0) { S.groups_done++; continue; }
    if (o->op == SIM_WRITE) {
      for (int k = 0; k < S.rounds[g] && k < S.nbuff; k++)
        if (start_pieces(&S, net, g, k)) goto failed;
    } else if (try_io(&S, net, g)) {
      goto failed;
    }
  }
  if (flow_run(net, on_event, &S, o->resolution)) goto failed;
  if (S.groups_done != S.G) {
    snprintf(err->msg, sizeof err->msg, "simulation stopped with %d of %d aggregators done", S.groups_done, S.G);
    rc = err->code = TAGG_EINVAL;
    goto done;
  }
  res->time = flow_now(net);
  res->d_tot = (double)off;
  res->bandwidth = res->time > 0 ? res->d_tot / res->time : INFINITY;
  res->naggr = S.G;
  res->flows = S.flows;
  res->recomputes = flow_recomputes(net);
  res->agg_phase = S.n_piece ? S.sum_piece / (double)S.n_piece : 0;
  res->io_phase = S.n_io ? S.sum_io / (double)S.n_io : 0;
  for (int l = 0; l < S.nlinks; l++) {
    double b = flow_resource_bytes(net, l);
    if (b > res->hot_bytes) { res->hot_bytes = b; res->hot_link = l; }
  }
  if (res->hot_link >= 0) {
    res->hot_util = res->time > 0 ? res->hot_bytes / (cap[res->hot_link] * res->time) : 0;
    tagg_topology_link_name(topo, res->hot_link, res->hot_name, sizeof res->hot_name);
  } else {
    snprintf(res->hot_name, sizeof res->hot_name, "none");
  }
  for (int i = 0; i < nio; i++) {
    int r = S.nlinks + S.nnodes * S.ntiers + i;
    double u = res->time > 0 ? flow_resource_bytes(net, r) / (cap[r] * res->time) : 0;
    if (u > res->fs_util) res->fs_util = u;
  }
  rc = TAGG_OK;
  goto done;
failed:
  if (S.oom) rc = TAGG_ENOMEM;
  else rc = TAGG_EINVAL;
  snprintf(err->msg, sizeof err->msg, "%s", rc == TAGG_ENOMEM ? "out of memory" : "flows that can never finish");
  err->code = rc;
done:
  if (rc == TAGG_ENOMEM && !err->msg[0]) { snprintf(err->msg, sizeof err->msg, "out of memory"); err->code = rc; }
  flow_net_free(net);
  free(cap);
  sim_free(&S);
  return rc;
}
