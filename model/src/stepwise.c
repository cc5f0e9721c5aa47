/* Stepwise aggregation and I/O throttling (Tsujita et al., seed 001): how many
 * aggregators may share a node, and how many may access the file system at
 * the same time. Formulas and their reading of the seed: model/README.md. */
#include "tagg/model.h"

int tagg_aggr_per_node(int naggr, int nnodes)
{
  if (naggr < 1) return 1;
  if (nnodes < 1) return naggr;
  return (naggr + nnodes - 1) / nnodes; /* spread evenly: ceil(#Aggr / nodes) */
}

int tagg_throttle(const tagg_topology_t *topo, const tagg_tiers_t *tiers, int aggr_tier, int naggr)
{
  if (naggr < 1) return 1;
  if (!topo || !tiers || tiers->target < 0 || tiers->target >= tiers->ntiers) return naggr;
  int nio = tagg_topology_nio(topo);
  if (nio < 1) nio = 1;
  /* What one aggregator can push towards the file system: the slower of its
   * buffer's tier and its node's path to the gateway (first gateway's path as
   * the representative one). */
  double b_one = tiers->tier[tiers->target].bandwidth;
  if (aggr_tier >= 0 && aggr_tier < tiers->ntiers && tiers->tier[aggr_tier].bandwidth < b_one)
    b_one = tiers->tier[aggr_tier].bandwidth;
  int gw = tagg_topology_io_node(topo, 0), other = gw == 0 && tagg_topology_nnodes(topo) > 1 ? 1 : 0;
  double b_net = tagg_topology_bandwidth(topo, other, gw);
  if (b_net > 0 && b_net < b_one) b_one = b_net;
  if (!(b_one > 0)) return naggr;
  /* Enough concurrent streams to fill the file system, and one per gateway at least. */
  double need = tiers->tier[tiers->target].bandwidth / b_one;
  int t = need >= (double)naggr ? naggr : (int)need + (need > (int)need);
  if (t < nio) t = nio;
  if (t > naggr) t = naggr;
  return t < 1 ? 1 : t;
}
