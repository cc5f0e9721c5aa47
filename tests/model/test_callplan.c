/* test_callplan.c - the plan of one collective call as a pure computation
 * (tagg/callplan.h), without MPI: the decision (nothing, failed, direct,
 * aggregate, by the model's cost with the target's cost by request size, and
 * forced), the partition, the election (one domain per rank, aggregators per
 * node, the layout's placement constraint), plan reuse (same shape), coverage
 * from the rows, the tier file's request lines, the memory of a plan at
 * 64K ranks, speculative direct access (rows done before the plan, the
 * shapes a rank guesses direct), and reads of layouts that read whole units. Expected values are worked out by hand in the comments. */
#include <stdlib.h>
#include "testutil.h"
#include "tagg/callplan.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

typedef struct {
  tagg_topology_t *topo;
  tagg_tiers_t tiers;
  tagg_model_opts_t opts;
  tagg_req_desc_t *req;
  tagg_call_in_t in;
} fx_t;

/* nranks ranks, rank r on node r / per_node. */
static void fx_init(fx_t *fx, int nranks, int per_node) {
  memset(fx, 0, sizeof *fx);
  int *rn = malloc((size_t)nranks * sizeof *rn);
  for (int r = 0; r < nranks; r++) rn[r] = r / per_node;
  tagg_err_t err;
  if (tagg_topology_generic_from_ranks(nranks, rn, 0, NULL, 1e-6, 10e9, &fx->topo, &err)) fail_msg("%s", err.msg);
  free(rn);
  tagg_tiers_default(&fx->tiers);
  tagg_model_opts_default(&fx->opts);
  fx->opts.n_buff = 2, fx->opts.s_buff = 4 * MiB, fx->opts.fs_block = 1 * MiB;
  fx->req = calloc((size_t)nranks, sizeof *fx->req);
  for (int r = 0; r < nranks; r++) fx->req[r].lo = UINT64_MAX;
  tagg_call_in_t *in = &fx->in;
  in->nranks = nranks, in->req = fx->req, in->topo = fx->topo, in->tiers = &fx->tiers, in->opts = &fx->opts;
  in->cost_based = 1, in->unit = 1 * MiB, in->bufsize = 4 * MiB, in->nbuf = 2;
  in->per_node = -1, in->throttle = -1, in->mode = TAGG_AGGREGATE_AUTO;
}

static void fx_free(fx_t *fx) {
  tagg_topology_free(fx->topo);
  free(fx->req);
}

/* Rank r: count runs of len at stride from lo. */
static void row(fx_t *fx, int r, uint64_t lo, uint64_t count, uint64_t len, uint64_t stride) {
  tagg_req_desc_t *q = &fx->req[r];
  q->lo = lo, q->count = count, q->len = len, q->stride = count > 1 ? stride : len, q->count2 = 1, q->stride2 = 0;
  q->hi = lo + (count - 1) * q->stride + len, q->bytes = count * len, q->nruns = count, q->flags = TAGG_REQ_RAW;
}

/* The demo's column blocks: P ranks, rows of 8 KiB, rank r owns 8 KiB / P of each row. */
static void column_blocks(fx_t *fx, int P, uint64_t rows) {
  uint64_t w = 8 * KiB / (uint64_t)P;
  for (int r = 0; r < P; r++) row(fx, r, 2048 + (uint64_t)r * w, rows, w, 8 * KiB);
}

static tagg_call_plan_t plan_ok(fx_t *fx) {
  tagg_call_plan_t p;
  tagg_err_t err = {0};
  if (tagg_call_plan(&fx->in, &p, &err)) fail_msg("plan failed: %s", err.msg);
  return p;
}

/* A target where requests of any size cost nothing (the tier file's request
 * lines), the whole-target limit out of the way: fx's plans read fs. */
static void cheap_target(fx_t *fx, tagg_fs_perf_t *fs) {
  tagg_err_t err = {0};
  if (tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=1ns bandwidth=1000GB/s\nrequest 4M latency=1ns bandwidth=1000GB/s\n",
                         "t", fs, &err))
    fail_msg("%s", err.msg);
  fx->tiers.tier[fx->tiers.target].bandwidth = 1e15;
  fx->in.fs = fs;
}

static void test_decision_basics(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 4, 4);
  tagg_call_plan_t p = plan_ok(&fx); /* every row empty */
  assert_int_equal(p.action, TAGG_CALL_NOTHING);
  column_blocks(&fx, 4, 64);
  fx.req[2].flags |= TAGG_REQ_FAILED; /* a local failure rides in the row */
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_FAILED);
  assert_int_equal(p.failed_rank, 2);
  fx.req[2].flags = TAGG_REQ_RAW | TAGG_REQ_OVERLAP;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  assert_string_equal(p.why, "a rank's own runs overlap");
  for (int r = 0; r < 4; r++) fx.req[r].flags = 0; /* file metadata only */
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  assert_string_equal(p.why, "file metadata only");
  fx_free(&fx);
}

static void test_decision_by_cost(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 4, 4);
  /* One 8 MiB run per rank: direct is one request each; aggregation adds the copy. */
  for (int r = 0; r < 4; r++) row(&fx, r, (uint64_t)r * 8 * MiB, 1, 8 * MiB, 0);
  tagg_call_plan_t p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  assert_true(p.cost_direct <= p.cost_aggr);
  fx.in.mode = TAGG_AGGREGATE_ALWAYS;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_AGGREGATE);
  tagg_call_plan_free(&p);
  fx.in.mode = TAGG_AGGREGATE_AUTO;
  fx.in.naggr = 2; /* a set aggregator count aggregates */
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_AGGREGATE);
  assert_int_equal(p.ndom, 2);
  tagg_call_plan_free(&p);
  fx.in.naggr = 0;
  /* Column blocks: 256 runs of 2 KiB per rank; with the default target (1 ms per
   * request) direct costs 256 ms, aggregated one 2 MiB request. */
  for (int r = 0; r < 4; r++) fx.req[r].lo = UINT64_MAX, fx.req[r].bytes = 0;
  column_blocks(&fx, 4, 256);
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_AGGREGATE);
  assert_true(p.cost_aggr < p.cost_direct);
  tagg_call_plan_free(&p);
  fx.in.mode = TAGG_AGGREGATE_NEVER;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  fx.in.mode = TAGG_AGGREGATE_AUTO;
  /* A target where small requests cost nothing (the tier file's request lines): direct. */
  tagg_fs_perf_t fs;
  tagg_err_t err = {0};
  cheap_target(&fx, &fs);
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  /* A tie goes to direct access: over request latencies from where direct
   * access wins to where aggregation wins clearly, the call aggregates exactly
   * when aggregation is predicted at least TAGG_AGGR_MIN_GAIN cheaper; some
   * latencies fall in the tie band (aggregation cheaper, by less) */
  int tie = 0, aggregated = 0;
  for (double lat = 1e-6; lat < 1e-3; lat *= 1.05) {
    char text[256];
    snprintf(text, sizeof text, "tagg-tiers 1\nrequest 2K latency=%.9fs bandwidth=1GB/s\nrequest 4M latency=%.9fs bandwidth=1GB/s\n",
             lat, lat);
    if (tagg_fs_perf_parse(text, "t", &fs, &err)) fail_msg("%s", err.msg);
    p = plan_ok(&fx);
    double ratio = p.cost_aggr / p.cost_direct;
    if (ratio < 1 - TAGG_AGGR_MIN_GAIN) {
      if (p.action != TAGG_CALL_AGGREGATE) fail_msg("latency %g s: aggregated %.4f of direct, not aggregated", lat, ratio);
      aggregated++;
    } else {
      if (p.action != TAGG_CALL_DIRECT) fail_msg("latency %g s: aggregated %.4f of direct, aggregated", lat, ratio);
      tie += ratio < 1;
    }
    tagg_call_plan_free(&p);
  }
  if (!tie || !aggregated) fail_msg("latencies in the tie band: %d, aggregated: %d", tie, aggregated);
  fx_free(&fx);
}

static void test_fs_request_time(void **state) {
  (void)state;
  tagg_fs_perf_t fs;
  tagg_err_t err = {0};
  assert_int_equal(tagg_fs_perf_parse("tagg-tiers 1\ntier X kind=DRAM latency=1ns bandwidth=1GB/s capacity=1GB persistency=none\n"
                                      "request 4KiB latency=1ms bandwidth=4MB/s\nrequest 4MiB latency=2ms bandwidth=1GB/s\n",
                                      "t", &fs, &err), TAGG_OK);
  assert_int_equal(fs.n, 2);
  /* 4 KiB: 1 ms + 4096 / 4e6 s; 4 MiB: 2 ms + 4194304 / 1e9 s; beyond the ends: the end points */
  assert_true(fabs(tagg_fs_request_time(&fs, NULL, 4096) - (1e-3 + 4096 / 4e6)) < 1e-12);
  assert_true(fabs(tagg_fs_request_time(&fs, NULL, 4 * MiB) - (2e-3 + 4194304 / 1e9)) < 1e-12);
  assert_true(fabs(tagg_fs_request_time(&fs, NULL, 512) - (1e-3 + 512 / 4e6)) < 1e-12);
  /* 64 KiB: halfway in log(size) between 4 KiB and 4 MiB is 128 KiB; 64 KiB is 0.4 of the way */
  double w = log(64.0 * 1024 / 4096) / log(1024.0), lat = 1e-3 + w * 1e-3, bw = 4e6 + w * (1e9 - 4e6);
  assert_true(fabs(tagg_fs_request_time(&fs, NULL, 64 * KiB) - (lat + 65536 / bw)) < 1e-9);
  assert_int_not_equal(tagg_fs_perf_parse("tagg-tiers 1\nrequest 4M latency=1ms bandwidth=1GB/s\nrequest 4K latency=1ms bandwidth=1GB/s\n",
                                          "bad.tiers", &fs, &err), TAGG_OK);
  assert_contains(err.msg, "sizes must ascend");
  assert_int_not_equal(tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=1ms\n", "bad.tiers", &fs, &err), TAGG_OK);
  assert_contains(err.msg, "bad.tiers:2");
  /* ranks=N: how many ranks issued the requests together; the same on every line */
  assert_int_equal(tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=1ms bandwidth=1GB/s ranks=2\n"
                                      "request 4M latency=1ms bandwidth=1GB/s ranks=2\n", "t", &fs, &err), TAGG_OK);
  assert_int_equal(fs.ranks, 2);
  assert_int_equal(tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=1ms bandwidth=1GB/s\n", "t", &fs, &err), TAGG_OK);
  assert_int_equal(fs.ranks, 0);
  assert_int_not_equal(tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=1ms bandwidth=1GB/s ranks=2\n"
                                          "request 4M latency=1ms bandwidth=1GB/s ranks=3\n", "bad.tiers", &fs, &err), TAGG_OK);
  assert_contains(err.msg, "bad.tiers:3: field 'ranks': 3, but the lines before say 2");
  assert_int_not_equal(tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=1ms bandwidth=1GB/s ranks=0\n", "bad.tiers", &fs, &err), TAGG_OK);
  assert_contains(err.msg, "field 'ranks'");
  assert_int_not_equal(tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=1ms bandwidth=1GB/s ranks=2\n"
                                          "request 4M latency=1ms bandwidth=1GB/s\n", "bad.tiers", &fs, &err), TAGG_OK);
  assert_contains(err.msg, "missing");
  /* reads have their own lines; each parser takes only its own */
  assert_int_equal(tagg_fs_read_perf_parse("tagg-tiers 1\nrequest 4K latency=1ms bandwidth=4MB/s\n"
                                           "read_request 4KiB latency=2ms bandwidth=8MB/s\nread_request 1MiB latency=3ms bandwidth=9MB/s\n",
                                           "t", &fs, &err), TAGG_OK);
  assert_int_equal(fs.n, 2);
  assert_true(fabs(tagg_fs_request_time(&fs, NULL, 4096) - (2e-3 + 4096 / 8e6)) < 1e-12);
  assert_int_equal(tagg_fs_perf_parse("tagg-tiers 1\nread_request 4K latency=2ms bandwidth=8MB/s\n", "t", &fs, &err), TAGG_OK);
  assert_int_equal(fs.n, 0);
  assert_int_not_equal(tagg_fs_read_perf_parse("tagg-tiers 1\nread_request 4K bandwidth=8MB/s\n", "bad.tiers", &fs, &err), TAGG_OK);
  assert_contains(err.msg, "bad.tiers:2: field 'read_request'");
  /* the tier parser accepts the request lines */
  tagg_tiers_t t;
  assert_int_equal(tagg_tiers_parse("tagg-tiers 1\ntier D kind=DRAM latency=1ns bandwidth=1GB/s capacity=1GB persistency=none\n"
                                    "tier F kind=PFS latency=1ms bandwidth=1GB/s capacity=1TB persistency=permanent\n"
                                    "request 4K latency=1ms bandwidth=4MB/s\nread_request 4K latency=1ms bandwidth=4MB/s\n",
                                    "t", &t, &err), TAGG_OK);
}

/* One aggregator per node for writes when a node's ranks writing one file
 * together get no more than one process alone (the tier file's ranks=). */
static void test_writers_per_node(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 4, 2); /* 2 nodes of 2 ranks */
  for (int r = 0; r < 4; r++) row(&fx, r, 2048 + (uint64_t)r * 16 * KiB, 512, 16 * KiB, 64 * KiB); /* 32 MiB of column blocks */
  fx.in.one_file = 1;
  fx.in.mode = TAGG_AGGREGATE_ALWAYS;
  fx.in.naggr = 0;
  tagg_call_plan_t p = plan_ok(&fx);
  int base = p.ndom;
  assert_true(base > 2); /* the model's count without the rule: more than one per node */
  tagg_call_plan_free(&p);
  tagg_fs_perf_t fs;
  tagg_err_t err = {0};
  /* 2 ranks together: 2 x 110 MB/s = 220 < 1.05 x 260 (one alone): one per node */
  fx.tiers.tier[fx.tiers.target].bandwidth = 260e6;
  if (tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=0.4ms bandwidth=110MB/s ranks=2\n"
                         "request 4M latency=1ns bandwidth=110MB/s ranks=2\n", "t", &fs, &err))
    fail_msg("%s", err.msg);
  fx.in.fs = &fs;
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, 2);
  assert_true(p.aggr[0] / 2 != p.aggr[1] / 2); /* on the two nodes */
  tagg_call_plan_free(&p);
  /* ... and the lone aggregator is costed at what the node's writers got
   * together (2 x 110 MB/s), neither at one's share (110) nor at one process's
   * rate measured alone (260). One node of 4 ranks, 32 MiB: one aggregator, 8
   * rounds of 4 MiB: 8 x 19.1 ms = 152.5 ms plus the move, against direct
   * 512 x (latency of a 16 KiB request, interpolated between 0.4 ms at 4 KiB
   * and none at 4 MiB: 0.32 ms, + 16 KiB / 110 MB/s) = 240 ms; at the shared
   * rate 8 x 38 ms = 305 ms would send it direct, at the lone rate it would
   * cost 129 ms plus the move. */
  {
    fx_t one;
    fx_init(&one, 4, 4);
    for (int r = 0; r < 4; r++) row(&one, r, 2048 + (uint64_t)r * 16 * KiB, 512, 16 * KiB, 64 * KiB);
    one.tiers.tier[one.tiers.target].bandwidth = 260e6;
    one.in.one_file = 1;
    tagg_fs_perf_t fs2;
    if (tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=0.4ms bandwidth=110MB/s ranks=2\n"
                           "request 4M latency=1ns bandwidth=110MB/s ranks=2\n", "t", &fs2, &err))
      fail_msg("%s", err.msg);
    one.in.fs = &fs2;
    p = plan_ok(&one);
    if (p.action != TAGG_CALL_AGGREGATE) fail_msg("action %d: direct %g s, aggregated %g s", p.action, p.cost_direct, p.cost_aggr);
    assert_int_equal(p.ndom, 1);
    if (!(p.cost_aggr > 0.1525 && p.cost_aggr < 0.16 && p.cost_direct > 0.235 && p.cost_direct < 0.245))
      fail_msg("direct %g s, aggregated %g s", p.cost_direct, p.cost_aggr);
    tagg_call_plan_free(&p);
    fx_free(&one);
  }
  /* reads, a set count or a set per-node limit: as before */
  fx.in.read = 1;
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, base);
  tagg_call_plan_free(&p);
  fx.in.read = 0, fx.in.naggr = 3;
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, 3);
  tagg_call_plan_free(&p);
  fx.in.naggr = 0, fx.in.per_node = 2;
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, base);
  tagg_call_plan_free(&p);
  fx.in.per_node = -1, fx.in.one_file = 0; /* several files (subfiles): no verdict on them */
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, base);
  tagg_call_plan_free(&p);
  fx.in.one_file = 1;
  /* 2 x 150 MB/s = 300 > 1.05 x 260: writers add bandwidth, the model's count */
  if (tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=0.4ms bandwidth=150MB/s ranks=2\n"
                         "request 4M latency=1ns bandwidth=150MB/s ranks=2\n", "t", &fs, &err))
    fail_msg("%s", err.msg);
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, base);
  tagg_call_plan_free(&p);
  /* no ranks= (one process measured): no verdict */
  if (tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=0.4ms bandwidth=110MB/s\n", "t", &fs, &err)) fail_msg("%s", err.msg);
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, base);
  tagg_call_plan_free(&p);
  fx_free(&fx);
}

/* Reads: one aggregator per node when the calibration measured one process
 * reading alone (read_alone) faster than 1/1.05 of the node's ranks reading
 * together (read_request ... ranks=N), and costed at the rate alone. Worked
 * out: one node of 2 ranks, 8 MiB each from 2048 (the held-out 1d kernel):
 * direct, each rank's 8 MiB at its share of 350 MB/s = 24.0 ms; one
 * aggregator at 900 MB/s, 4 rounds of 4 MiB = 18.6 ms plus the move. The
 * target tier's (write) bandwidth, 200 MB/s, bounds writes, not measured reads
 * (84 ms for both choices would make them a tie, sent direct). */
static void test_readers_per_node(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 2, 2);
  fx.tiers.tier[fx.tiers.target].bandwidth = 200e6;
  for (int r = 0; r < 2; r++) row(&fx, r, 2048 + (uint64_t)r * 8 * MiB, 1, 8 * MiB, 0);
  fx.in.one_file = 1, fx.in.read = 1;
  tagg_fs_perf_t fs;
  tagg_err_t err = {0};
  const char *together = "tagg-tiers 1\nread_request 4K latency=0.1ms bandwidth=350MB/s ranks=2\n"
                         "read_request 4M latency=1ns bandwidth=350MB/s ranks=2\n";
  char text[512];
  snprintf(text, sizeof text, "%sread_alone bandwidth=900MB/s\n", together);
  if (tagg_fs_read_perf_parse(text, "t", &fs, &err)) fail_msg("%s", err.msg);
  assert_true(fs.alone == 900e6 && fs.n == 2 && fs.ranks == 2);
  fx.in.fs = &fs;
  tagg_call_plan_t p = plan_ok(&fx);
  if (p.action != TAGG_CALL_AGGREGATE) fail_msg("action %d: direct %g s, aggregated %g s", p.action, p.cost_direct, p.cost_aggr);
  assert_int_equal(p.ndom, 1);
  if (!(p.cost_direct > 0.0239 && p.cost_direct < 0.0241 && p.cost_aggr > 0.0186 && p.cost_aggr < 0.0200))
    fail_msg("direct %g s, aggregated %g s", p.cost_direct, p.cost_aggr);
  tagg_call_plan_free(&p);
  /* the same rows written: the write side knows nothing of read_alone (its own lines are absent: no verdict) */
  fx.in.read = 0;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  tagg_call_plan_free(&p);
  fx.in.read = 1;
  /* one reader alone no faster than 1/1.05 of the two together (700 > 1.05 x 600): direct */
  snprintf(text, sizeof text, "%sread_alone bandwidth=600MB/s\n", together);
  if (tagg_fs_read_perf_parse(text, "t", &fs, &err)) fail_msg("%s", err.msg);
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  tagg_call_plan_free(&p);
  /* no read_alone line: no verdict, direct as before */
  if (tagg_fs_read_perf_parse(together, "t", &fs, &err)) fail_msg("%s", err.msg);
  assert_true(fs.alone == 0);
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  tagg_call_plan_free(&p);
  /* forced counts and several files: as configured, no verdict */
  snprintf(text, sizeof text, "%sread_alone bandwidth=900MB/s\n", together);
  if (tagg_fs_read_perf_parse(text, "t", &fs, &err)) fail_msg("%s", err.msg);
  fx.in.one_file = 0;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  tagg_call_plan_free(&p);
  fx.in.one_file = 1, fx.in.naggr = 2, fx.in.mode = TAGG_AGGREGATE_ALWAYS;
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, 2);
  tagg_call_plan_free(&p);
  /* bad lines: named by file, line and field; the tier parser accepts the line */
  snprintf(text, sizeof text, "%sread_alone 900MB/s\n", together);
  assert_int_not_equal(tagg_fs_read_perf_parse(text, "bad.tiers", &fs, &err), TAGG_OK);
  assert_contains(err.msg, "bad.tiers:4: field 'read_alone': expected 'read_alone bandwidth=R'");
  snprintf(text, sizeof text, "%sread_alone bandwidth=0\n", together);
  assert_int_not_equal(tagg_fs_read_perf_parse(text, "bad.tiers", &fs, &err), TAGG_OK);
  assert_contains(err.msg, "bad.tiers:4: field 'bandwidth': expected a rate > 0");
  snprintf(text, sizeof text, "%sread_alone bandwidth=1GB/s\nread_alone bandwidth=1GB/s\n", together);
  assert_int_not_equal(tagg_fs_read_perf_parse(text, "bad.tiers", &fs, &err), TAGG_OK);
  assert_contains(err.msg, "bad.tiers:5: field 'read_alone': given twice");
  tagg_tiers_t t;
  assert_int_equal(tagg_tiers_parse("tagg-tiers 1\ntier D kind=DRAM latency=1ns bandwidth=1GB/s capacity=1GB persistency=none\n"
                                    "tier F kind=PFS latency=1ms bandwidth=1GB/s capacity=1TB persistency=permanent\n"
                                    "read_alone bandwidth=1GB/s\n", "t", &t, &err), TAGG_OK);
  fx_free(&fx);
}

/* A client known to serialise a file's writes (serial_writes: FUSE), no
 * calibration of writers together: one aggregator per node for writes into
 * one file, and a node's direct writes cost the sum of its ranks'. */
/* A single domain's rounds and requests cover the data, not the unit it is
 * rounded up to. tagg-bench's random 1D write (2 ranks, 137,422 bytes from
 * 2048 to 139,470): in a subfiled file (4 MiB stripes) it was priced as one
 * 4 MiB request, in a shared file (1 MiB blocks) as one 1 MiB request, so
 * the two layouts chose differently on the GlusterFS testbed (FUSE: serial
 * writes); now both price one request of 137,422 bytes and agree. With 2 x 1
 * MiB buffers the 4 MiB domain took 4 rounds (3 past the data), now 1. */
static void test_rounds_cover_data(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 2, 2);
  fx.in.one_file = 1, fx.in.serial_writes = 1;
  row(&fx, 0, 2048, 1, 51172, 0);
  row(&fx, 1, 2048 + 51172, 1, 86250, 0);
  tagg_call_plan_t blocks = plan_ok(&fx); /* shared: 1 MiB unit */
  fx.in.unit = 4 * MiB;                   /* subfiles: 4 MiB stripes */
  tagg_call_plan_t stripes = plan_ok(&fx);
  assert_int_equal(blocks.action, TAGG_CALL_AGGREGATE);
  assert_int_equal(stripes.action, blocks.action);
  assert_true(stripes.cost_aggr == blocks.cost_aggr);
  assert_int_equal(stripes.lo, 2048);
  assert_int_equal(stripes.dsize, 4 * MiB);
  assert_int_equal(stripes.nrounds, 1);
  tagg_call_plan_free(&blocks);
  tagg_call_plan_free(&stripes);
  fx.in.bufsize = 1 * MiB; /* the domain (4 MiB) no longer fits 2 x 1 MiB; the data does */
  tagg_call_plan_t small = plan_ok(&fx);
  assert_int_equal(small.action, TAGG_CALL_AGGREGATE);
  assert_int_equal(small.nrounds, 1);
  assert_int_equal(small.round, 137422);
  tagg_call_plan_free(&small);
  /* 3 MiB of data from 2048, 2 x 1 MiB buffers: 3 rounds of 1 MiB (the 4 MiB domain took 4) */
  row(&fx, 0, 2048, 1, 1536 * KiB, 0);
  row(&fx, 1, 2048 + 1536 * KiB, 1, 1536 * KiB, 0);
  fx.in.naggr = 1;
  small = plan_ok(&fx);
  assert_int_equal(small.round, 1 * MiB);
  assert_int_equal(small.nrounds, 3);
  tagg_call_plan_free(&small);
  fx_free(&fx);
}

/* dio_block: a single domain of data after HDF5's 2 KiB header starts at the
 * data's first whole block (rounds are whole blocks in the file and the
 * buffers), unless that costs the one round the data alone fits. Worked out:
 * 256 MiB of column blocks from 2048 with 4 MiB buffers: without, [2048, ...)
 * in 64 rounds; with 4 KiB blocks, [0, ...) in 65 (the last holds 2 KiB). 8
 * MiB from 2048 fits the 2 x 4 MiB buffers in one round; from 0 it would need
 * 9 MiB (the 1 MiB unit): it stays at 2048; 7 MiB fits from 0 as well.
 * Several domains start at the unit anyway. */
static void test_dio_block(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 2, 2);
  fx.in.one_file = 1, fx.in.naggr = 1;
  for (int r = 0; r < 2; r++) row(&fx, r, 2048 + (uint64_t)r * 64 * KiB, 2048, 64 * KiB, 128 * KiB);
  tagg_call_plan_t p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_AGGREGATE);
  assert_int_equal(p.lo, 2048);
  assert_int_equal(p.nrounds, 64);
  tagg_call_plan_free(&p);
  fx.in.dio_block = 4 * KiB;
  p = plan_ok(&fx);
  assert_int_equal(p.lo, 0);
  assert_int_equal(p.round, 4 * MiB);
  assert_int_equal(p.nrounds, 65);
  tagg_call_plan_free(&p);
  for (int r = 0; r < 2; r++) row(&fx, r, 2048 + (uint64_t)r * 4 * KiB, 1024, 4 * KiB, 8 * KiB); /* 8 MiB */
  p = plan_ok(&fx);
  assert_int_equal(p.lo, 2048);
  assert_int_equal(p.nrounds, 1);
  tagg_call_plan_free(&p);
  for (int r = 0; r < 2; r++) row(&fx, r, 2048 + (uint64_t)r * 4 * KiB, 896, 4 * KiB, 8 * KiB); /* 7 MiB: 1 round from 0 too */
  p = plan_ok(&fx);
  assert_int_equal(p.lo, 0);
  assert_int_equal(p.nrounds, 1);
  tagg_call_plan_free(&p);
  fx.in.naggr = 2;
  for (int r = 0; r < 2; r++) row(&fx, r, 2048 + (uint64_t)r * 64 * KiB, 2048, 64 * KiB, 128 * KiB);
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, 2);
  assert_int_equal(p.lo, 0);
  assert_int_equal(p.dsize % MiB, 0);
  tagg_call_plan_free(&p);
  fx_free(&fx);
}

static void test_serial_writes(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 4, 2); /* 2 nodes of 2 ranks */
  for (int r = 0; r < 4; r++) row(&fx, r, 2048 + (uint64_t)r * 16 * KiB, 512, 16 * KiB, 64 * KiB); /* 32 MiB of column blocks */
  fx.in.one_file = 1;
  tagg_call_plan_t p = plan_ok(&fx);
  int base = p.ndom;
  double direct = p.cost_direct;
  assert_int_equal(p.action, TAGG_CALL_AGGREGATE);
  assert_true(base > 2);
  tagg_call_plan_free(&p);
  fx.in.serial_writes = 1;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_AGGREGATE);
  assert_int_equal(p.ndom, 2);
  assert_true(p.aggr[0] / 2 != p.aggr[1] / 2); /* one on each node */
  /* direct: 2 ranks of equal shares take turns on each node: twice one rank's time */
  if (fabs(p.cost_direct - 2 * direct) > 1e-9 * direct) fail_msg("direct %g s, one rank %g s", p.cost_direct, direct);
  tagg_call_plan_free(&p);
  /* reads, several files, a set count: as without */
  fx.in.read = 1;
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, base);
  assert_true(fabs(p.cost_direct - direct) <= 1e-12 * direct);
  tagg_call_plan_free(&p);
  fx.in.read = 0, fx.in.one_file = 0;
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, base);
  tagg_call_plan_free(&p);
  fx.in.one_file = 1, fx.in.naggr = 3;
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, 3);
  tagg_call_plan_free(&p);
  fx.in.naggr = 0;
  /* a calibration that measured writers together decides instead: they add */
  tagg_fs_perf_t fs;
  tagg_err_t err = {0};
  fx.tiers.tier[fx.tiers.target].bandwidth = 260e6;
  if (tagg_fs_perf_parse("tagg-tiers 1\nrequest 4K latency=0.4ms bandwidth=150MB/s ranks=2\n"
                         "request 4M latency=1ns bandwidth=150MB/s ranks=2\n", "t", &fs, &err))
    fail_msg("%s", err.msg);
  fx.in.fs = &fs;
  fx.in.mode = TAGG_AGGREGATE_ALWAYS;
  p = plan_ok(&fx);
  assert_int_equal(p.ndom, base);
  tagg_call_plan_free(&p);
  fx_free(&fx);
  /* One node, 2 ranks, 128 MiB each in one run (contiguous blocks): serialised
   * or not, direct (one aggregator would write the same bytes in 4 MiB
   * requests after copying them); serialised, direct costs both ranks' time. */
  fx_init(&fx, 2, 2);
  for (int r = 0; r < 2; r++) row(&fx, r, 2048 + (uint64_t)r * 128 * MiB, 1, 128 * MiB, 128 * MiB);
  fx.in.one_file = 1;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  tagg_call_plan_free(&p);
  fx.in.serial_writes = 1;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  direct = tagg_fs_request_time(NULL, &fx.tiers, 128 * MiB); /* one rank's run; the two take turns */
  if (fabs(p.cost_direct - 2 * direct) > 1e-9 * direct) fail_msg("direct %g s, one rank %g s", p.cost_direct, direct);
  tagg_call_plan_free(&p);
  fx_free(&fx);
}

static void test_partition(void **state) {
  (void)state;
  uint64_t dsize;
  int ndom;
  tagg_partition_range(10 * MiB, 4, MiB, 0, &dsize, &ndom); /* 2.5 MiB -> 3 MiB domains: 4 of them (3,3,3,1) */
  assert_int_equal(dsize, 3 * MiB);
  assert_int_equal(ndom, 4);
  tagg_partition_range(10 * MiB, 3, MiB, 0, &dsize, &ndom); /* 3.33 -> 4 MiB: 3 domains (4,4,2) */
  assert_int_equal(dsize, 4 * MiB);
  assert_int_equal(ndom, 3);
  tagg_partition_range(100, 8, MiB, 0, &dsize, &ndom); /* less than a unit: one domain */
  assert_int_equal(dsize, MiB);
  assert_int_equal(ndom, 1);
  /* finer alignment where the layout allows it (fine > 0): HDF5's 2 MiB after its
   * header, [0, 2 MiB + 2 KiB), two domains: whole MiBs give 2 MiB and 2 KiB, one
   * aggregator moving all; 64 KiB steps give 1 MiB + 64 KiB and 1 MiB - 62 KiB */
  tagg_partition_range(2 * MiB + 2048, 2, MiB, 0, &dsize, &ndom);
  assert_int_equal(dsize, 2 * MiB);
  tagg_partition_range(2 * MiB + 2048, 2, MiB, 4096, &dsize, &ndom);
  assert_int_equal(dsize, MiB + 64 * KiB);
  assert_int_equal(ndom, 2);
  /* the same at other sizes and counts: never more than naggr domains covering
   * the span, each a multiple of fine, at least an equal share and at most whole
   * aligns' size, a sixteenth above an equal share unless fine is reached; under
   * one align each, a whole align as without fine */
  static const uint64_t spans[] = {MiB + 1, 2 * MiB + 4096, 3 * MiB + 777, 8 * MiB + 2048, 10 * MiB, 64 * MiB + 5};
  for (size_t i = 0; i < sizeof spans / sizeof *spans; i++)
    for (int n = 1; n <= 8; n++) {
      uint64_t per = (spans[i] + (uint64_t)n - 1) / (uint64_t)n, whole = (per + MiB - 1) / MiB * MiB;
      tagg_partition_range(spans[i], n, MiB, 4096, &dsize, &ndom);
      assert_true(ndom >= 1 && ndom <= n);
      assert_true((uint64_t)ndom * dsize >= spans[i]);
      assert_int_equal(dsize % 4096, 0);
      if (per < MiB) { /* less than one align each: whole aligns, as without fine */
        assert_int_equal(dsize, MiB);
        continue;
      }
      assert_true(dsize >= per && dsize <= whole);
      assert_true(dsize - per <= per / 16 || dsize - per < 4096);
    }
  tagg_partition_range(3 * MiB + 4096, 2, 3 * 4096, 4096, &dsize, &ndom); /* 12 KiB does not halve into 4 KiB steps */
  assert_int_equal(dsize % (3 * 4096), 0);
  /* in a plan: the domains cover [lo aligned down, hi), one round when a domain fits 2 x 4 MiB */
  fx_t fx;
  fx_init(&fx, 4, 4);
  column_blocks(&fx, 4, 1024); /* [2048, 2048 + 8 MiB) */
  fx.in.naggr = 2;
  tagg_call_plan_t p = plan_ok(&fx);
  assert_int_equal(p.lo, 0);
  assert_int_equal(p.hi, 2048 + 8 * MiB);
  assert_int_equal(p.ndom, 2);
  assert_int_equal(p.dsize, 5 * MiB); /* ceil((8 MiB + 2048) / 2) rounded up to 1 MiB */
  assert_int_equal(p.nrounds, 1);
  assert_int_equal(p.round, 5 * MiB);
  assert_true((uint64_t)p.ndom * p.dsize >= p.hi - p.lo);
  tagg_call_plan_free(&p);
  fx.in.unit_fine = 4096; /* the shared layout's: 4.25 MiB and 3.75 MiB + 2 KiB, one round each */
  p = plan_ok(&fx);
  assert_int_equal(p.lo, 0);
  assert_int_equal(p.ndom, 2);
  assert_int_equal(p.dsize, 4 * MiB + 256 * KiB);
  assert_int_equal(p.nrounds, 1);
  assert_int_equal(p.round, p.dsize);
  tagg_call_plan_free(&p);
  fx.in.unit_fine = 0;
  fx.in.naggr = 1; /* one domain starts where the data does: 8 MiB, one round of 2 x 4 MiB buffers */
  p = plan_ok(&fx);
  assert_int_equal(p.lo, 2048);
  assert_int_equal(p.dsize, 8 * MiB);
  assert_int_equal(p.nrounds, 1);
  tagg_call_plan_free(&p);
  column_blocks(&fx, 4, 1100); /* 8.6 MiB: 9 MiB domain > 8 MiB of buffers: rounds of 4 MiB */
  p = plan_ok(&fx);
  assert_int_equal(p.dsize, 9 * MiB);
  assert_int_equal(p.round, 4 * MiB);
  assert_int_equal(p.nrounds, 3);
  tagg_call_plan_free(&p);
  fx_free(&fx);
}

static void test_election(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 8, 4); /* 2 nodes of 4 ranks */
  for (int r = 0; r < 8; r++) row(&fx, r, (uint64_t)r * MiB, 16, 16 * KiB, 64 * KiB);
  fx.in.naggr = 4, fx.in.mode = TAGG_AGGREGATE_ALWAYS;
  tagg_call_plan_t p = plan_ok(&fx), q = plan_ok(&fx);
  assert_int_equal(p.ndom, 4);
  assert_int_equal(p.per_node, 2); /* ceil(4 / 2 nodes) */
  int per_node[2] = {0, 0};
  for (int d = 0; d < p.ndom; d++) {
    assert_int_equal(p.aggr[d], q.aggr[d]); /* deterministic: every rank computes the same */
    for (int e = 0; e < d; e++) assert_int_not_equal(p.aggr[d], p.aggr[e]); /* one domain per rank */
    per_node[p.aggr[d] / 4]++;
    /* a producer of its domain: domain d = [2d, 2d + 2) MiB holds ranks 2d and 2d + 1 */
    assert_true(p.aggr[d] == 2 * d || p.aggr[d] == 2 * d + 1);
  }
  assert_int_equal(per_node[0], 2);
  assert_int_equal(per_node[1], 2);
  /* writes: the throttle rule (default tiers, one gateway: fewer streams than
   * the 4 aggregators); reads: not throttled; a configured throttle: both */
  int rule = tagg_throttle(fx.topo, &fx.tiers, fx.tiers.source, 4);
  assert_true(rule >= 1 && rule < 4);
  assert_int_equal(p.throttle, rule);
  tagg_call_plan_free(&p), tagg_call_plan_free(&q);
  fx.in.read = 1;
  p = plan_ok(&fx);
  assert_int_equal(p.throttle, 0);
  tagg_call_plan_free(&p);
  fx.in.throttle = 2;
  p = plan_ok(&fx);
  assert_int_equal(p.throttle, 2);
  tagg_call_plan_free(&p);
  fx.in.read = 0;
  p = plan_ok(&fx);
  assert_int_equal(p.throttle, 2);
  tagg_call_plan_free(&p);
  fx.in.throttle = -1;
  /* aggr_per_node=1 with 4 domains on 2 nodes cannot hold: relaxed, still distinct ranks */
  fx.in.per_node = 1;
  p = plan_ok(&fx);
  for (int d = 0; d < p.ndom; d++)
    for (int e = 0; e < d; e++) assert_int_not_equal(p.aggr[d], p.aggr[e]);
  tagg_call_plan_free(&p);
  /* a registry strategy (first-per-node) is one strategy of the same election */
  fx.in.per_node = -1, fx.in.cost_based = 0, fx.in.strategy = tagg_strategy_find("first-per-node");
  assert_non_null(fx.in.strategy);
  p = plan_ok(&fx);
  for (int d = 0; d < p.ndom; d++)
    for (int e = 0; e < d; e++) assert_int_not_equal(p.aggr[d], p.aggr[e]);
  tagg_call_plan_free(&p);
  fx_free(&fx);
}

/* Stripe k (64 KiB) may only be aggregated on node k mod 2; ranks 0-3 node 0, 4-7 node 1. */
static int owner(const void *ctx, uint64_t off, int i) {
  (void)ctx;
  int node = (int)((off / (64 * KiB)) % 2);
  return i >= 0 && i < 4 ? node * 4 + i : -1;
}

static void test_owner_constraint(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 8, 4);
  for (int r = 0; r < 8; r++) row(&fx, r, (uint64_t)r * 32 * KiB, 1, 32 * KiB, 0); /* [0, 256 KiB): 4 stripes */
  fx.in.unit = 64 * KiB, fx.in.owner = owner, fx.in.mode = TAGG_AGGREGATE_NEVER; /* the constraint wins */
  tagg_call_plan_t p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_AGGREGATE);
  assert_int_equal(p.ndom, 4);
  assert_int_equal(p.dsize, 64 * KiB);
  for (int d = 0; d < 4; d++) assert_int_equal(p.aggr[d] / 4, d % 2); /* on the stripe's node */
  assert_int_equal(p.aggr[0], 0);
  assert_int_equal(p.aggr[2], 1); /* the next rank of node 0: one domain per rank */
  tagg_call_plan_free(&p);
  fx_free(&fx);
}

static void test_same_shape(void **state) {
  (void)state;
  fx_t a, b;
  fx_init(&a, 4, 4), fx_init(&b, 4, 4);
  column_blocks(&a, 4, 64);
  column_blocks(&b, 4, 64);
  for (int r = 0; r < 4; r++) b.req[r].lo += 3 * MiB, b.req[r].hi += 3 * MiB;
  int64_t delta = 0;
  assert_true(tagg_req_same_shape(a.req, b.req, 4, &delta));
  assert_int_equal(delta, 3 * MiB);
  b.req[3].lo += 8, b.req[3].hi += 8; /* one rank shifted differently */
  assert_false(tagg_req_same_shape(a.req, b.req, 4, &delta));
  b.req[3].lo -= 8, b.req[3].hi -= 8, b.req[1].len = 1000; /* one rank's runs differ */
  assert_false(tagg_req_same_shape(a.req, b.req, 4, &delta));
  fx_free(&a), fx_free(&b);
}

static void test_coverage(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 4, 4);
  column_blocks(&fx, 4, 256); /* [2048, 2048 + 2 MiB), every byte written */
  fx.in.naggr = 2, fx.in.mode = TAGG_AGGREGATE_ALWAYS;
  tagg_call_plan_t p = plan_ok(&fx);
  assert_true(p.exact);
  uint64_t *cov;
  size_t n;
  tagg_err_t err;
  assert_int_equal(tagg_call_coverage(&fx.in, &p, 0, &cov, &n, &err), TAGG_OK);
  assert_int_equal(p.dsize, 2 * MiB); /* ceil((2 MiB + 2048) / 2) rounded up to 1 MiB */
  assert_int_equal(n, 1);             /* merged: [2048, 2 MiB) of domain 0 */
  assert_int_equal(cov[0], 2048);
  assert_int_equal(cov[1], 2 * MiB - 2048);
  free(cov);
  tagg_call_plan_free(&p);
  fx.req[1].lo = UINT64_MAX, fx.req[1].bytes = 0; /* rank 1 writes nothing: a 2 KiB hole in every row */
  p = plan_ok(&fx);
  assert_int_equal(tagg_call_coverage(&fx.in, &p, 0, &cov, &n, &err), TAGG_OK);
  assert_int_equal(cov[0], 2048);
  assert_int_equal(cov[1], 2048);         /* rank 0's run */
  assert_int_equal(cov[2], 2048 + 4096);  /* ranks 2 and 3 */
  assert_int_equal(cov[3], 6144);         /* and the next row's rank 0: runs merge across rows */
  free(cov);
  tagg_call_plan_free(&p);
  fx.req[2].count = 0; /* irregular: only the rank knows its runs; the engine exchanges them */
  p = plan_ok(&fx);
  assert_false(p.exact);
  assert_int_not_equal(tagg_call_coverage(&fx.in, &p, 0, &cov, &n, &err), TAGG_OK);
  tagg_call_plan_free(&p);
  fx_free(&fx);
}

static void count_run(void *ctx, uint64_t off, uint64_t len) {
  (void)off, (void)len;
  (*(int *)ctx)++;
}

/* Two levels (a 2D block of a 3D array, S3D): 4 runs of 32 bytes at stride 128,
 * 3 times at stride 1024. */
static void test_two_level(void **state) {
  (void)state;
  tagg_req_desc_t q = {0};
  q.lo = 0, q.count = 4, q.len = 32, q.stride = 128, q.count2 = 3, q.stride2 = 1024;
  q.hi = 2048 + 3 * 128 + 32, q.bytes = 12 * 32, q.nruns = 12, q.flags = TAGG_REQ_RAW;
  int n = 0;
  assert_int_equal(tagg_req_runs(&q, 0, 4096, count_run, &n), 12);
  assert_int_equal(n, 12);
  /* [1088, 2088): block 1's runs at 1152, 1280, 1408 and block 2's first, clipped to [2048, 2080) */
  n = 0;
  assert_int_equal(tagg_req_runs(&q, 1088, 2088, count_run, &n), 4);
  /* plans with it: exact coverage, the same bytes as the runs */
  fx_t fx;
  fx_init(&fx, 2, 2);
  fx.req[0] = q;
  fx.req[1] = q;
  fx.req[1].lo += 32, fx.req[1].hi += 32; /* the neighbour's columns: runs of 64 bytes in total */
  fx.in.mode = TAGG_AGGREGATE_ALWAYS, fx.in.unit = 4096;
  tagg_call_plan_t p = plan_ok(&fx);
  assert_true(p.exact);
  uint64_t *cov;
  size_t nc;
  tagg_err_t err;
  assert_int_equal(tagg_call_coverage(&fx.in, &p, 0, &cov, &nc, &err), TAGG_OK);
  assert_int_equal(nc, 12);
  for (size_t i = 0; i < nc; i++) {
    assert_int_equal(cov[2 * i], (i / 4) * 1024 + (i % 4) * 128);
    assert_int_equal(cov[2 * i + 1], 64);
  }
  free(cov);
  tagg_call_plan_free(&p);
  fx_free(&fx);
}

/* 64K ranks, 16 per node, one 1 MiB run each (a 64 GiB file), 1024 aggregators:
 * the plan is computed and its memory is a few MiB, where a ranks x aggregators
 * matrix of (bytes, lo, hi) would take 65536 x 1024 x 24 B = 1.5 GiB per rank. */
static void test_memory_64k(void **state) {
  (void)state;
  int P = 65536;
  fx_t fx;
  fx_init(&fx, P, 16);
  for (int r = 0; r < P; r++) row(&fx, r, (uint64_t)r * MiB + 512, 1, MiB, 0);
  fx.in.naggr = 1024, fx.in.mode = TAGG_AGGREGATE_ALWAYS;
  tagg_call_plan_t p = plan_ok(&fx);
  /* (64 GiB + 512) / 1024 rounded up to 1 MiB: 65 MiB domains, 1009 of them */
  assert_int_equal(p.dsize, 65 * MiB);
  assert_int_equal(p.ndom, 1009);
  for (int d = 1; d < p.ndom; d++) assert_int_not_equal(p.aggr[d], p.aggr[d - 1]);
  size_t bytes = tagg_call_plan_scratch_bytes(P, p.ndom, 2); /* a rank's run meets at most 2 domains */
  size_t matrix = (size_t)P * (size_t)p.ndom * 24;
  print_message("plan memory per rank at %d ranks, %d aggregators: %.1f MiB (ranks x aggregators matrix: %.1f MiB)\n",
                P, p.ndom, bytes / 1048576.0, matrix / 1048576.0);
  assert_true(bytes < 16 * MiB);
  assert_true(bytes * 50 < matrix);
  tagg_call_plan_free(&p);
  fx_free(&fx);
}

/* Rows accessed before the plan (TAGG_REQ_DONE, speculative direct access):
 * left out of the decision, the partition and the coverage; all done is a
 * direct call with nothing left; a failure still fails the call. */
/* A layout that reads whole units (the subfile layout checks each stripe a
 * rank reads, read whole the first time): direct reads are priced as the
 * units each rank's range touches, so that ranks sharing a unit read it once
 * each. 8 ranks of one node each read 512 KiB of one 4 MiB stripe: asked,
 * 4 MiB in all, direct is 8 concurrent 512 KiB requests; read whole, 8 x 4
 * MiB, where one aggregator reads the stripe once. Ranks reading whole
 * stripes of their own cost the same either way, and writes are not
 * concerned. */
static void test_read_unit(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 8, 8);
  fx.in.unit = 4 * MiB, fx.in.read = 1;
  for (int r = 0; r < 8; r++) row(&fx, r, (uint64_t)r * 512 * KiB, 1, 512 * KiB, 0);
  tagg_call_plan_t asked = plan_ok(&fx);
  assert_int_equal(asked.action, TAGG_CALL_DIRECT);
  fx.in.read_unit = 4 * MiB;
  tagg_call_plan_t whole = plan_ok(&fx);
  assert_int_equal(whole.action, TAGG_CALL_AGGREGATE);
  assert_int_equal(whole.ndom, 1);
  /* each rank's own time is one 4 MiB request; the file system serves 32 MiB */
  double one = tagg_fs_request_time(NULL, &fx.tiers, 4 * MiB);
  double all = (double)(32 * MiB) / fx.tiers.tier[fx.tiers.target].bandwidth;
  assert_true(whole.cost_direct >= one && whole.cost_direct >= all * (1 - 1e-12));
  assert_true(whole.cost_direct > asked.cost_direct);
  assert_true(whole.cost_aggr == asked.cost_aggr); /* an aggregator reads whole stripes anyway */
  tagg_call_plan_free(&whole);
  /* rank r reads stripe r whole: one unit each, asked or read whole */
  for (int r = 0; r < 8; r++) row(&fx, r, (uint64_t)r * 4 * MiB, 1, 4 * MiB, 0);
  tagg_call_plan_t own = plan_ok(&fx);
  fx.in.read_unit = 0;
  tagg_call_plan_t own0 = plan_ok(&fx);
  assert_int_equal(own.action, own0.action);
  assert_true(own.cost_direct == own0.cost_direct);
  tagg_call_plan_free(&own), tagg_call_plan_free(&own0);
  /* a write of the shared stripe: read_unit does not apply */
  for (int r = 0; r < 8; r++) row(&fx, r, (uint64_t)r * 512 * KiB, 1, 512 * KiB, 0);
  fx.in.read = 0;
  tagg_call_plan_t w0 = plan_ok(&fx);
  fx.in.read_unit = 4 * MiB;
  tagg_call_plan_t w1 = plan_ok(&fx);
  assert_int_equal(w0.action, w1.action);
  assert_true(w0.cost_direct == w1.cost_direct && w0.cost_aggr == w1.cost_aggr);
  tagg_call_plan_free(&w0), tagg_call_plan_free(&w1);
  /* read in blocks of the stripe (format 4: read_unit 256 KiB, read_group the
   * 4 MiB stripe): the 8 ranks' 512 KiB of one stripe are two blocks each,
   * direct as asked; a rank's 4 MiB across two stripes is 17 blocks in two
   * requests, one per stripe, not 17 */
  fx.in.read = 1, fx.in.read_unit = 256 * KiB, fx.in.read_group = 4 * MiB;
  tagg_call_plan_t blk = plan_ok(&fx);
  assert_int_equal(blk.action, TAGG_CALL_DIRECT);
  assert_true(blk.cost_direct == asked.cost_direct);
  tagg_call_plan_free(&blk);
  for (int r = 0; r < 8; r++) row(&fx, r, (uint64_t)r * 4 * MiB + 100 * KiB, 1, 4 * MiB, 0);
  tagg_call_plan_t two = plan_ok(&fx);
  double want = 2 * tagg_fs_request_time(NULL, &fx.tiers, 17 * 256 * KiB / 2);
  assert_true(two.cost_direct >= want * (1 - 1e-12));
  fx.in.read_group = 0; /* each block its own request: dearer */
  tagg_call_plan_t each = plan_ok(&fx);
  assert_true(each.cost_direct > two.cost_direct);
  tagg_call_plan_free(&two), tagg_call_plan_free(&each);
  fx_free(&fx);
}

static void test_done_rows(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 4, 4);
  for (int r = 0; r < 4; r++) row(&fx, r, (uint64_t)r * 8 * MiB, 1, 8 * MiB, 0);
  tagg_call_plan_t p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  assert_true(p.by_cost);
  assert_false(p.all_done);
  for (int r = 0; r < 4; r++) fx.req[r].flags |= TAGG_REQ_DONE;
  fx.req[3] = (tagg_req_desc_t){.lo = UINT64_MAX}; /* an empty rank does not hold the call up */
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  assert_true(p.all_done);
  assert_false(p.by_cost);
  assert_int_equal(p.done, 3);
  fx.req[1].flags |= TAGG_REQ_FAILED; /* a speculative access that failed */
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_FAILED);
  assert_int_equal(p.failed_rank, 1);
  /* Mixed: rank 0's block (done) inside the range of ranks 1-3's column
   * blocks, which aggregate: the plan covers only their runs. */
  column_blocks(&fx, 4, 64);
  row(&fx, 0, 2048, 1, 2 * KiB, 0);
  fx.req[0].flags |= TAGG_REQ_DONE;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_AGGREGATE);
  assert_int_equal(p.done, 1);
  assert_false(p.all_done);
  assert_int_equal(p.lo, 4096); /* one domain starts at the data: rank 1's first run, rank 0's block left out */
  assert_int_equal(p.hi, 2048 + 63 * 8 * KiB + 8 * KiB);
  uint64_t *cov = NULL;
  size_t ncov = 0;
  tagg_err_t err = {0};
  uint64_t total = 0;
  for (int d = 0; d < p.ndom; d++) {
    if (tagg_call_coverage(&fx.in, &p, d, &cov, &ncov, &err)) fail_msg("%s", err.msg);
    for (size_t i = 0; i < ncov; i++) {
      total += cov[2 * i + 1];
      /* rank 0's block [2048, 4096) is never covered */
      assert_true(cov[2 * i] >= 4096 || cov[2 * i] + cov[2 * i + 1] <= 2048);
    }
    free(cov);
  }
  /* ranks 1-3: 64 rows of 6 KiB (adjacent, merged), rank 0's 2 KiB left out */
  assert_int_equal(total, 64 * 6 * KiB);
  tagg_call_plan_free(&p);
  fx_free(&fx);
}

/* The shapes a rank guesses direct (tagg_spec_*): learnt from a plan direct by
 * cost (all done: one that would have been), per direction, wherever the
 * request lies; forgotten when a plan aggregates it or would have; never
 * learnt from aggregate=never; at most TAGG_SPEC_SHAPES, the oldest given up. */
static void test_spec_shapes(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 2, 2);
  tagg_spec_t s;
  memset(&s, 0, sizeof s);
  row(&fx, 0, 0, 1, 8 * MiB, 0);
  row(&fx, 1, 8 * MiB, 1, 8 * MiB, 0);
  tagg_req_desc_t mine = fx.req[0];
  assert_false(tagg_spec_guess(&s, 0, &mine)); /* nothing learnt yet */
  tagg_call_plan_t p = plan_ok(&fx);
  assert_true(p.by_cost);
  tagg_spec_learn(&s, 0, &mine, &p);
  assert_true(tagg_spec_guess(&s, 0, &mine));
  assert_false(tagg_spec_guess(&s, 1, &mine)); /* reads apart */
  tagg_req_desc_t moved = mine;
  moved.lo += 100 * MiB, moved.hi += 100 * MiB; /* the next timestep */
  assert_true(tagg_spec_guess(&s, 0, &moved));
  tagg_req_desc_t other = mine;
  other.bytes /= 2, other.hi = other.lo + other.bytes, other.len = other.bytes;
  assert_false(tagg_spec_guess(&s, 0, &other));
  tagg_req_desc_t meta = mine;
  meta.flags = 0; /* file metadata: never guessed */
  assert_false(tagg_spec_guess(&s, 0, &meta));
  /* a forced direct plan (aggregate=never) teaches nothing */
  fx.in.mode = TAGG_AGGREGATE_NEVER;
  p = plan_ok(&fx);
  assert_false(p.by_cost);
  tagg_spec_learn(&s, 1, &mine, &p);
  assert_false(tagg_spec_guess(&s, 1, &mine));
  fx.in.mode = TAGG_AGGREGATE_ALWAYS; /* aggregated: forgotten */
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_AGGREGATE);
  tagg_spec_learn(&s, 0, &moved, &p);
  tagg_call_plan_free(&p);
  assert_false(tagg_spec_guess(&s, 0, &mine));
  assert_int_equal(s.n[0], 0);
  /* TAGG_SPEC_SHAPES + 1 shapes: the first is given up, the last ones kept */
  fx.in.mode = TAGG_AGGREGATE_AUTO;
  p = plan_ok(&fx);
  for (int i = 0; i <= TAGG_SPEC_SHAPES; i++) {
    tagg_req_desc_t q = mine;
    q.bytes = q.len = (uint64_t)(i + 1) * MiB, q.hi = q.lo + q.bytes;
    tagg_spec_learn(&s, 0, &q, &p);
    tagg_spec_learn(&s, 0, &q, &p); /* again: kept once */
  }
  assert_int_equal(s.n[0], TAGG_SPEC_SHAPES);
  for (int i = 0; i <= TAGG_SPEC_SHAPES; i++) {
    tagg_req_desc_t q = mine;
    q.bytes = q.len = (uint64_t)(i + 1) * MiB, q.hi = q.lo + q.bytes;
    assert_int_equal(tagg_spec_guess(&s, 0, &q), i > 0);
  }
  /* Every row done: the guess is judged as the call would have been planned.
   * Aggregate=never accesses every call first, and teaches nothing (until
   * session 31 such calls were learnt, and a later file with aggregate=auto
   * of the same process wrote its column blocks direct at 12 MiB/s where
   * aggregated they went at 230, never to be corrected). */
  memset(&s, 0, sizeof s);
  column_blocks(&fx, 2, 256);
  mine = fx.req[0];
  for (int r = 0; r < 2; r++) fx.req[r].flags |= TAGG_REQ_DONE;
  fx.in.mode = TAGG_AGGREGATE_NEVER;
  p = plan_ok(&fx);
  assert_true(p.all_done);
  assert_int_equal(p.spec_verdict, 0);
  tagg_spec_learn(&s, 0, &mine, &p);
  assert_false(tagg_spec_guess(&s, 0, &mine));
  /* learnt where small requests cost nothing (a tier file's request lines),
   * kept while they do ... */
  fx.in.mode = TAGG_AGGREGATE_AUTO;
  tagg_fs_perf_t cheap;
  double target_bw = fx.tiers.tier[fx.tiers.target].bandwidth;
  cheap_target(&fx, &cheap);
  for (int r = 0; r < 2; r++) fx.req[r].flags &= ~(uint32_t)TAGG_REQ_DONE;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  assert_true(p.by_cost);
  tagg_spec_learn(&s, 0, &mine, &p);
  assert_true(tagg_spec_guess(&s, 0, &mine));
  for (int r = 0; r < 2; r++) fx.req[r].flags |= TAGG_REQ_DONE;
  p = plan_ok(&fx);
  assert_true(p.all_done);
  assert_int_equal(p.spec_verdict, TAGG_SPEC_DIRECT);
  assert_false(p.by_cost); /* the summary's direct_by_model counts planned calls only */
  tagg_spec_learn(&s, 0, &mine, &p);
  assert_true(tagg_spec_guess(&s, 0, &mine));
  /* ... and forgotten at the first call, every row done, on a target where
   * each request costs (the default 1 ms): that call would have aggregated */
  fx.in.fs = NULL;
  fx.tiers.tier[fx.tiers.target].bandwidth = target_bw;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  assert_true(p.all_done);
  assert_int_equal(p.spec_verdict, TAGG_SPEC_AGGREGATE);
  assert_true(p.cost_aggr < p.cost_direct);
  tagg_spec_learn(&s, 0, &mine, &p);
  assert_false(tagg_spec_guess(&s, 0, &mine));
  assert_int_equal(s.n[0], 0);
  fx_free(&fx);
}

/* A guess judged where direct writes take turns (serial_writes: a FUSE
 * client, or direct writes of interleaved runs into a rotational local
 * disk). Two ranks of one node, one 2.75 MiB block each: direct by cost while
 * the node's writes run side by side (one request each, at once), aggregated
 * once they take turns (both requests one after the other, against one
 * aggregator's one round). A shape learnt where writes ran side by side (a
 * process's first file on a local disk is written buffered, its later synced
 * ones direct) must be forgotten at the first call where they take turns,
 * every row done: until session 41 the judgement left the done rows out of
 * the turns, priced the call as if they still ran side by side, and kept the
 * shape, so every later file wrote direct. */
static void test_spec_serial(void **state) {
  (void)state;
  fx_t fx;
  fx_init(&fx, 2, 2);
  for (int r = 0; r < 2; r++) row(&fx, r, 2048 + (uint64_t)r * 2816 * KiB, 1, 2816 * KiB, 2816 * KiB);
  fx.in.one_file = 1;
  tagg_spec_t s;
  memset(&s, 0, sizeof s);
  tagg_req_desc_t mine = fx.req[0];
  tagg_call_plan_t p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_DIRECT);
  assert_true(p.by_cost);
  double side_by_side = p.cost_direct;
  tagg_spec_learn(&s, 0, &mine, &p);
  assert_true(tagg_spec_guess(&s, 0, &mine));
  fx.in.serial_writes = 1;
  p = plan_ok(&fx);
  assert_int_equal(p.action, TAGG_CALL_AGGREGATE);
  double turns = p.cost_direct;
  if (fabs(turns - 2 * side_by_side) > 1e-9 * turns) fail_msg("in turns %g s, side by side %g s", turns, side_by_side);
  tagg_call_plan_free(&p);
  for (int r = 0; r < 2; r++) fx.req[r].flags |= TAGG_REQ_DONE;
  p = plan_ok(&fx);
  assert_true(p.all_done);
  assert_int_equal(p.spec_verdict, TAGG_SPEC_AGGREGATE);
  if (fabs(p.cost_direct - turns) > 1e-9 * turns) fail_msg("judged at %g s, planned at %g s", p.cost_direct, turns);
  tagg_spec_learn(&s, 0, &mine, &p);
  assert_false(tagg_spec_guess(&s, 0, &mine));
  /* side by side again, every row done: judged direct, as planned */
  fx.in.serial_writes = 0;
  p = plan_ok(&fx);
  assert_int_equal(p.spec_verdict, TAGG_SPEC_DIRECT);
  fx_free(&fx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_decision_basics), cmocka_unit_test(test_decision_by_cost),
      cmocka_unit_test(test_fs_request_time), cmocka_unit_test(test_writers_per_node),
      cmocka_unit_test(test_readers_per_node), cmocka_unit_test(test_serial_writes), cmocka_unit_test(test_spec_serial), cmocka_unit_test(test_dio_block),
      cmocka_unit_test(test_rounds_cover_data),
      cmocka_unit_test(test_partition),
      cmocka_unit_test(test_election),        cmocka_unit_test(test_owner_constraint),
      cmocka_unit_test(test_same_shape),      cmocka_unit_test(test_coverage),
      cmocka_unit_test(test_two_level),       cmocka_unit_test(test_memory_64k),
      cmocka_unit_test(test_done_rows),       cmocka_unit_test(test_spec_shapes),
      cmocka_unit_test(test_read_unit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
