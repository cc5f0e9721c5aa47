/* The aggregation engine (backend "tapioca"): TAPIOCA's two-phase I/O with
 * aggregators placed by the cost model (model/), after Tessier et al. (seeds
 * 000, 002: MA-TAPIOCA Algorithm 1), with Tsujita's I/O throttling and
 * stepwise aggregation (seed 001).
 *
 * One collective request goes through these steps, each in one file, called in
 * this order by backend_tapioca.c and never calling back into it:
 *   engine_plan.c   describe: one fixed-size row per rank (range, bytes, runs,
 *                   regular shape, a local failure), gathered by one
 *                   MPI_Allgather -- the thin MPI layer; the plan itself is the
 *                   model's pure tagg_call_plan (model/src/callplan.c): aggregate
 *                   or not, domains, aggregators, rounds, throttle; then this
 *                   rank's pieces and, for an aggregator, its coverage (from
 *                   the rows, or by an exchange when a rank's runs are irregular);
 *   engine_tier.c   resources, once per communicator (cached across files):
 *                   which node each rank is on, each node's tier (node key
 *                   and tier figures ride in the describe gather of a file's
 *                   first call, the choice computed by every rank alike), and
 *                   the aggregation buffers
 *                   (one MPI_Win_create) when a call first aggregates;
 *   engine_move.c   the round loop (Algorithm 1): producers MPI_Put (write) or
 *                   MPI_Get (read) round k+1 while aggregators write or read
 *                   round k. */
#ifndef TAGG_ENGINE_H
#define TAGG_ENGINE_H

#include "io.h"
#include "tier.h"

#include <tagg/callplan.h>
#include <tagg/model.h>
#include <tagg/tiers.h>
#include <tagg/topology.h>
#include <tagg/tune.h>

typedef struct tagg_engine_res tagg_engine_res_t; /* backend_tapioca.c */

/* A timed call's window (engine_check.c): its seconds and what is charged to
 * it after the call. */
typedef struct tagg_check_win {
    uint64_t    key;     /* its pattern's stage */
    int         arm;     /* as check_arm was for it */
    const char *name[2]; /* its stage's choice's and rival's names (check_names), for the verbose line */
    double      t;       /* its seconds and those charged to it after it */
    int         later;   /* a read's: the re-reads taken in; a write's: the syncs or closes shared */
    uint64_t    bytes;   /* a write's bytes (every rank's), its share of the sync */
} tagg_check_win_t;

/* Per-file engine state: the configuration part at open, the resources (topo,
 * node tiers, window) borrowed from res at the first collective call. */
typedef struct tagg_engine {
    tagg_engine_res_t *res;      /* machine description + window, maybe shared */
    char             *res_key;   /* what the resources depend on (backend_tapioca.c) */
    tagg_topology_t  *topo;      /* ranks -> nodes (loaded at open from topology=, else from res) */
    const int        *node_tier; /* [nnodes] tier index of each node's buffers (res) */
    tagg_tiers_t      tiers;     /* memory tiers of a node (model defaults or tier file) */
    tagg_fs_perf_t    fs;        /* the target's cost of a write by request size (tier file), n = 0: tiers' target */
    tagg_fs_perf_t    fs_read;   /* the same for reads ('read_request' lines), n = 0: the writes' */
    tagg_model_opts_t opts;      /* N_buff, S_buff, BS, strategy ... */
    const tagg_strategy_t *strategy;
    int               cost_based; /* election by Cost_A + Cost_T */
    uint64_t          bufsize;   /* one round */
    int               nbuf;
    MPI_Win           win;       /* nbuf x bufsize bytes on every rank (buf.win), MPI_WIN_NULL until needed */
    char             *base;      /* this rank's part (buf.base) */
    tagg_tier_buf_t   buf;       /* the memory tier holding them (tier.h) */
    int               tier;      /* this rank's node's tier index in `tiers` */
    char              tier_text[96]; /* for the summary: "tier=DRAM ..." */
    /* rows of the describe step (scratch, [size], made at open), this call's
     * requests, and the last aggregated call's requests and plan, reused when
     * a call has the same shape and direction */
    struct tagg_engine_row *rows;
    tagg_req_desc_t  *req;
    tagg_req_desc_t  *prev_rows;
    tagg_call_plan_t  prev_plan;
    tagg_dir_t        prev_dir;
    int               prev_mode, prev_naggr, prev_throttle; /* the settings prev_plan was made with (a tuned */
    uint64_t          prev_bufsize;                          /* call may differ from the last: no reuse then) */
    uint64_t          reused;    /* plans reused (summary) */
    uint64_t          direct_calls, aggr_decisions; /* the model's choice (summary, rank 0) */
    uint64_t          spec_calls;  /* calls every rank accessed before the plan (speculative, summary) */
    uint64_t          spec_early;  /* this rank's requests accessed before their plan (summary: rank 0's) */
    uint64_t          spec_key;    /* which of the process's sets of shapes this file uses (spec_of), 0: not yet */
    tagg_spec_t       spec;        /* the shapes this rank guesses direct (files on other communicators;
                                      files on MPI_COMM_WORLD share the process's, backend_tapioca.c) */
    /* self-tuning (engine_tune.c): the fitted model (tuning=), its checksum,
     * the file system's kind as every rank agrees on it, counters */
    tagg_tune_model_t *tune;
    uint64_t           tune_sum;
    int                fs_kind;       /* this rank's view (fs_kind.h: kind | SERIAL | ROTATIONAL), sent in its row */
    int                fs_kind_agreed; /* the ranks' common view, 0 when they differ */
    int                fs_serial;      /* every rank's client serialises a file's writes, or every rank writes
                                          directly into a rotational local disk (fs_kind.h, engine_plan.c agree_fs) */
    uint64_t           dio_block;      /* every rank's layout moves large accesses with O_DIRECT: its block, else 0 */
    uint64_t           tune_calls;    /* calls whose settings the model chose */
    uint64_t           tune_kept;     /* calls where the model's gain was within its margin: the cost model's choice */
    uint64_t           tune_outside;  /* of those, calls whose pattern lies outside the model's recorded domain */
    int                tune_cached;   /* tune belongs to the process's model cache (engine_tune.c) */
    uint64_t           tune_trials;   /* calls that ran a pattern's rival to time it (tuning_check, tune.h) */
    uint64_t           tune_overruled; /* calls that ran it because it was timed faster than the choice */
    int                check_agreed;  /* this call: every row carried the same check fingerprint */
    int                check_arm;     /* the call under way is timed: 0 no, 1 it runs its stage's choice, 2 its rival */
    const char        *check_names[3]; /* the choice's, the rival's and the challenger's names, for the verbose lines */
    int                check_pair[2]; /* the candidates the call's stage times (tagg_tune_check_pick_t) */
    uint64_t           check_key;     /* its pattern's stage (engine_check.c stage_key) */
    /* rank 0: the open windows of timed calls (engine_check.c): reads' up to
     * the next read of other bytes, a write or the close; writes' up to the
     * file's next sync or its close */
    tagg_check_win_t   check_win[4];
    int                check_nwin;    /* how many are open */
    tagg_check_win_t   check_wwin[16];
    int                check_nwwin;
    uint64_t           check_wbytes;  /* bytes of the file's collective writes since its last sync (every rank's) */
    int                record_warned; /* a record could not be appended (warned once) */
    int                rec_fd;        /* record= file, open from the first record to the file's close (-1: not open) */
    /* record= of the call under way (rank 0): the seconds this rank spent in
     * file-system calls (store pwrite / pread: the aggregator's rounds or the
     * direct accesses), and the record kept until the caller's agreement ends
     * the call (tagg_engine_record_done), so t_total covers the slowest rank */
    double             t_fs;
    double             rec_t0;
    int                setup;         /* what the call under way makes (tune.h TAGG_TV_SETUP), the same on every rank */
    int                repeat;        /* the call asks what the previous one in its direction asked (TAGG_TV_REPEAT) */
    uint64_t           my_resident;   /* this rank's row's resident (tagg_engine_tune_probe) */
    uint64_t           my_flight;     /* and its in_flight */
    uint64_t           my_ahead;      /* and, where some of it was in flight, the bytes in flight after it */
    uint64_t           last_hash[2];  /* [direction] hash of the previous call's rows, 0: none yet */
    int                rec_pending;
    tagg_tune_record_t rec;
    /* overlap=1 (engine_move.c): the helper thread that runs the aggregator's
     * file access of a round while this rank makes the next round's
     * transfers, started at the first call that can use it */
    struct tagg_iothread *io;
    int                   io_failed; /* it could not start: the file stays on one thread */
} tagg_engine_t;

/* One piece of a rank's request: part of one extent inside one round of one domain. */
typedef struct tagg_piece {
    uint64_t off, len;
    char    *mem;
    int      domain, round;
} tagg_piece_t;

/* One collective call: the shared plan (model) and this rank's part of it. */
typedef struct tagg_call {
    tagg_call_plan_t plan;   /* same on every rank */
    uint64_t      lo, hi, dsize, round; /* copies of plan.lo, plan.hi, plan.dsize, plan.round */
    int           ndom, nrounds, throttle, per_node;
    const int    *aggr;      /* plan.aggr */
    int           my_dom;    /* domain this rank aggregates, -1 when none */
    int           my_index;  /* its index among aggregators (throttling order) */
    tagg_piece_t *pieces;    /* this rank's pieces, sorted by round */
    size_t        npieces;
    uint64_t     *cov;       /* aggregator: covered runs of its domain, (off, len) pairs, sorted, merged */
    size_t        ncov;
    int           reused;    /* the plan is the previous call's, shifted */
    int           local_rc;  /* -1: this rank failed after the decision (its part of the rounds is empty) */
} tagg_call_t;

/* What a rank's node offers for the aggregation buffers, and its node (the
 * machine step, engine_tier.c). */
typedef struct tagg_engine_mrow {
    uint64_t key;      /* hash of the host name */
    uint32_t usable;   /* tiers available here (bit per tier index) */
    uint32_t emulated; /* of which emulated */
    uint64_t capacity[TAGG_MAX_TIERS];
    int32_t  failed;   /* rank + 1 when this rank failed (forced tier unusable) */
    int32_t  pad;
} tagg_engine_mrow_t;

/* engine_plan.c. Collective (one MPI_Allgather): this rank's row (req_flags,
 * TAGG_REQ_FAILED when f->io_failed, and the resource key hash riding in it)
 * and every rank's, into e->rows. At a file's first
 * call (e->res NULL: no resources yet, the same on every rank) the rows carry
 * the machine step's row too (filled by tagg_engine_machine_row; known, when
 * not NULL: the row the cached resources this rank offers were made from), so
 * making the resources needs no gather of its own; later calls gather the rows
 * without it. Returns 0, or -1 on every rank with an error pushed. */
struct tagg_engine_row {
    tagg_req_desc_t req;
    uint64_t        res_hash; /* hash of the key of the cached set this rank holds for the file (TAGG_RES_MISS: see there) */
    uint32_t        res_flags; /* TAGG_RES_* */
    uint32_t        fs_kind;   /* the rank's view of the file system (fs_kind.h), TAGG_FS_DIO for the call's direction */
    uint64_t        tune_sum;  /* checksum of the rank's tuning model, 0: none */
    uint64_t        end;       /* the file's written end as this rank knows it (tune.h: past_end) */
    uint64_t        resident;  /* bytes of this rank's request in the page cache at the call's start
                                  (tune.h: resident), TAGG_RESIDENT_UNKNOWN when it cannot tell */
    uint64_t        flight;    /* bytes of it there that readahead was still reading (tune.h: in_flight) */
    uint64_t        ahead;     /* where flight > 0, bytes in flight in the window after the request (flight_ahead) */
    uint64_t        check_fp;  /* tuning_check: fingerprint of the rank's verdicts before this call (engine_check.c) */
    uint64_t        check_key; /* a verdict this rank reached as a file's rank 0, for every rank to take; 0: none */
    uint32_t        check_state; /* its state (tagg_tune_check_t) */
    uint32_t        check_pad;
    tagg_engine_mrow_t machine; /* last: gathered only at a file's first call */
};
typedef struct tagg_engine_row tagg_engine_row_t;
#define TAGG_RESIDENT_UNKNOWN UINT64_MAX
#define TAGG_RES_WORLD 1u /* the file's communicator is congruent to MPI_COMM_WORLD (cache usable) */
#define TAGG_RES_MISS 2u  /* no cached set for the file's key: res_hash names the set a new one would
                             replace (0: a free slot; UINT64_MAX: none, every set is in use) */
int tagg_engine_describe(tagg_file_t *f, tagg_engine_t *e, const tagg_extents_t *x, tagg_dir_t dir,
                         uint32_t req_flags, uint64_t res_hash, uint32_t res_flags, const tagg_engine_mrow_t *known);
/* engine_plan.c. Local: the row that describes x (req_flags and a failure aside). */
void tagg_engine_row_of(const tagg_extents_t *x, tagg_req_desc_t *q);

/* engine_tune.c. Local, after the describe gather: what the call's pattern
 * says beyond its rows for records and tuning (e->repeat; 0 and nothing done
 * without record= or tuning=), the same on every rank. */
void tagg_engine_tune_note(tagg_file_t *f, tagg_engine_t *e, tagg_dir_t dir);
/* engine_check.c. Local, before the describe gather: this rank's part of the
 * measured check in its row (the fingerprint of its verdicts, a verdict it
 * reached to pass on). Nothing without tuning= and tuning_check, or in
 * asynchronous mode. */
void tagg_engine_check_row(const tagg_file_t *f, const tagg_engine_t *e, struct tagg_engine_row *row);
/* engine_tune.c. Local, before the call touches the file: how much of this
 * rank's request x the page cache holds (e->my_resident) and holds but is
 * still reading (e->my_flight), for its describe row; TAGG_RESIDENT_UNKNOWN
 * and 0 without record= or tuning=, or when the layout cannot tell. */
void tagg_engine_tune_probe(tagg_file_t *f, tagg_engine_t *e, const tagg_extents_t *x);

/* engine_plan.c. Local: the model's plan from the gathered rows (the same on
 * every rank: the computation is deterministic), reusing the previous call's
 * when the shape repeats. 0; or -1 when every rank fails (a rank's row says it
 * failed); a failure of this rank alone (out of memory) sets c->local_rc and
 * leaves c->plan.action what every other rank does. */
int tagg_engine_plan(tagg_file_t *f, tagg_engine_t *e, tagg_call_t *c, tagg_dir_t dir);
/* engine_plan.c. This rank's pieces and coverage: local when the plan is
 * exact, else collective (coverage exchange, agreed). Sets c->local_rc. */
void tagg_engine_pieces(tagg_file_t *f, tagg_engine_t *e, const tagg_extents_t *x, tagg_call_t *c);
void tagg_engine_call_free(tagg_call_t *c);

/* engine_tune.c. Local, the same on every rank: lets the tuning model (if any)
 * choose the free settings of a call about to be planned from in->req. -1
 * (every rank, from the same rows) when the ranks hold different models. */
int tagg_engine_tune(tagg_file_t *f, tagg_engine_t *e, tagg_call_in_t *in, tagg_dir_t dir);
/* engine_tune.c. Rank 0 keeps this call's record (record=): pattern,
 * settings, t_plan, t_move and t_fs (e->t_fs). Never collective. */
void tagg_engine_record(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c, tagg_dir_t dir, double t_plan,
                        double t_move);
/* engine_tune.c. After the call's error agreement: rank 0 appends the kept
 * record with t_total = now - e->rec_t0, the call's start (rc < 0: the call
 * failed, nothing appended). */
void tagg_engine_record_done(tagg_file_t *f, tagg_engine_t *e, tagg_dir_t dir, int rc);
/* engine_check.c. Local, after the describe gather, the same on every rank:
 * whether the rows' check fingerprints agree (e->check_agreed), and every
 * row's verdict message taken into the process's table. */
void tagg_engine_check_apply(const tagg_file_t *f, tagg_engine_t *e);
/* engine_check.c. Local, the same on every rank: for a call whose pattern
 * has a rival (key: its pattern, tagg_engine_tune; challenger: it has one
 * too, tune.h), the candidate the call is to run (0 the choice, 1 the rival,
 * 2 the challenger: a timed trial, or a verdict); notes which one the call
 * times. A write only where tagg_engine_check_writes. */
int tagg_engine_check_choose(const tagg_file_t *f, tagg_engine_t *e, uint64_t key, int challenger, tagg_dir_t dir);
/* engine_check.c. After the call's error agreement, on the file's rank 0: a
 * read that asks the bytes the last read asked (e->repeat) adds its seconds
 * to the open read windows; any other call ends them (their times count for
 * the check, with the verdicts they lead to passed on in this process's next
 * describe rows); a write adds its bytes to the file's since its last sync;
 * then a call that ran a checked choice opens its own window. A failed call
 * (rc < 0) drops every window. */
void tagg_engine_check_done(tagg_file_t *f, tagg_engine_t *e, tagg_dir_t dir, int rc);
/* engine_check.c. After a sync of the file, or its close's storage part (the
 * write-behind's flush, the sync, the store's close: seconds, from their
 * start to their agreement on rc), on its rank 0: the open write windows
 * end, each charged its share of the seconds by its bytes among the file's
 * collective writes since its last sync (rc < 0: dropped). Local. */
void tagg_engine_check_synced(tagg_file_t *f, tagg_engine_t *e, double seconds, int rc);
/* engine_check.c. At the file's close, on its rank 0: the open read windows
 * end (their times counted as check_done would). Local. */
void tagg_engine_check_close(tagg_file_t *f, tagg_engine_t *e);
/* engine_check.c. Whether this file's reads, and its writes, take part in
 * the check (its configuration: the same on every rank). */
int tagg_engine_check_reads(const tagg_file_t *f);
int tagg_engine_check_writes(const tagg_file_t *f);
/* engine_tune.c. Local, at open: the file system's kind as the records and
 * the plan see it. */
int tagg_engine_tune_open(tagg_file_t *f, tagg_engine_t *e);
/* engine_tune.c. Collective, at open, once every rank's engine is made (e:
 * NULL where this rank's open failed): tuning= from the process's cache when
 * every rank holds that model already, else read by rank 0 alone and sent to
 * every rank, which parses the same bytes. 0, or -1 on every rank with an
 * error pushed (a bad or unreadable model file: its reason). */
int tagg_engine_tune_share(tagg_file_t *f, tagg_engine_t *e);
/* engine_tune.c. At close: releases the model (the cache keeps its own). */
void tagg_engine_tune_close(tagg_engine_t *e);

/* engine_tier.c: which node each rank is on and
 * each node's tier (forced by aggr_tier, or the model's choice under capacity
 * and persistency). Fills r_topo (when e->topo is NULL) and r_node_tier.
 * Returns 0, or -1 on every rank with an error pushed. */
typedef struct tagg_engine_node {
    tagg_node_tiers_t t;        /* what the node offers (its first rank's measurement) */
    int               leader;   /* its first rank */
    uint32_t          emulated; /* tiers emulated there (bit per tier index) */
    unsigned          excluded; /* tiers that ran out of space there (bit per tier index) */
} tagg_engine_node_t;
/* engine_tier.c. Local, at open: asks each tier whether it is available here,
 * so that what is slow to ask (memkind's first answer) is asked before the
 * first collective call, once per process. */
void tagg_engine_probe_tiers(const tagg_file_t *f, const tagg_engine_t *e);
/* engine_tier.c. Local: this rank's machine row (its node, what the node
 * offers, a forced tier's failure), for the describe gather. */
void tagg_engine_machine_row(tagg_file_t *f, tagg_engine_t *e, tagg_engine_mrow_t *row);
/* engine_tier.c. Local on the rows gathered at the file's first call (each
 * rank's machine row in e->rows[r].machine). */
int tagg_engine_machine(tagg_file_t *f, tagg_engine_t *e, tagg_topology_t **r_topo, tagg_engine_node_t **r_nodes,
                        int **r_node_tier);
/* engine_tier.c. Collective: the aggregation buffers of every rank in its
 * node's tier (one MPI_Win_create when every node uses DRAM; falling back to the
 * next tier when a node runs out of space otherwise). 0, or -1 on every rank. */
int tagg_engine_buffers(tagg_file_t *f, tagg_engine_t *e, tagg_engine_node_t *nodes, int *node_tier,
                        tagg_tier_buf_t *buf, char *tier_text, size_t len);

/* engine_move.c. Collective. Returns 0 or -1 (local; the caller agrees). */
int tagg_engine_write(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c);
int tagg_engine_read(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c);

#endif
