/* flow.h - a flow-level (fluid) network simulator: resources with a capacity
 * in bytes per second, flows that cross a list of resources, max-min fair
 * sharing recomputed whenever the set of flows changes, latency added when a
 * flow's last byte has left.  No MPI, no topology: tagg-sim maps links, memory
 * tiers and file-system gateways onto resources (sim.c).
 *
 * Sharing rule (max-min fairness by progressive filling): all flows' rates
 * grow together; a resource whose capacity is used up freezes the flows that
 * cross it at the current rate; the others keep growing.  A flow that crosses
 * no resource is never limited (it ends at once, after its latency).
 *
 * Timing: a flow started at t with B bytes consumes bandwidth from t until its
 * B bytes are through; its completion callback runs `latency` seconds later
 * (the bandwidth is free during that tail).  Timers are callbacks at a time. */
#ifndef TAGG_SIM_FLOW_H
#define TAGG_SIM_FLOW_H
#include <stddef.h>
#include <stdint.h>

typedef struct flow_net flow_net_t;

/* Called when a flow has completed (bytes through + latency) or a timer fires.
 * May start flows and timers.  Returns 0, or non-zero to stop the run. */
typedef int (*flow_cb_t)(void *ctx, flow_net_t *net, int64_t tag, double now);

/* nres resources with capacities cap[] (B/s, > 0).  NULL when out of memory. */
flow_net_t *flow_net_new(int nres, const double *cap);
void flow_net_free(flow_net_t *n);

/* Starts a flow now over res[0..nres-1] (each resource at most once).
 * Returns 0, or -1 when out of memory. */
int flow_start(flow_net_t *n, const int *res, int nres, double bytes, double latency, int64_t tag);
/* A callback `delay` seconds from now. */
int flow_timer(flow_net_t *n, double delay, int64_t tag);

/* Runs until no flow or timer is left.  resolution >= 0: events closer than
 * resolution x t to the next one (t = its time) are handled together at the
 * latest of them (0: exact).  Returns 0, the callback's non-zero value, or -1
 * (out of memory, or flows that can never finish). */
int flow_run(flow_net_t *n, flow_cb_t cb, void *ctx, double resolution);

double flow_now(const flow_net_t *n);
/* Bytes that crossed resource r (counted when flows start). */
double flow_resource_bytes(const flow_net_t *n, int r);
/* Number of max-min computations done (a measure of the work). */
long flow_recomputes(const flow_net_t *n);
#endif
