/* tagg/tune.h - self-tuning from recorded runs (seed 003, "Using Regression
 * Models for I/O Tuning": tree-based models predict I/O time from the
 * pattern's parameters best, and are quick to evaluate).
 *
 * `tagg-tune fit` (tools/tagg-tune, Python + scikit-learn) fits tree models
 * that predict the time of a collective call from the call's pattern and the
 * settings used, and exports the chosen one as a small text file.  This
 * module reads that file and evaluates it, with no Python: the engine asks it,
 * once per call shape, which of the settings the model knows gives the
 * smallest predicted time (within the configuration's forced keys).
 *
 * Model file (format 1; text, '\n' ends every line, every number in decimal
 * except thresholds and values, which are C99 hexadecimal floats so that the
 * file holds scikit-learn's doubles exactly):
 *
 *   tagg-tune model 1
 *   kind random_forest            decision_tree | random_forest | gradient_boosting
 *   target log_seconds            the trees predict ln(seconds of the call), or
 *                                 log_seconds_per_byte: ln(seconds / B), B the bytes of
 *                                 the call (tagg_tune_call_bytes), so the seconds are
 *                                 exp(trees) * B (time per byte varies far less with
 *                                 the size than time does; the seed predicted bandwidth)
 *   inputs 3                      how many inputs, then one line each, in order:
 *   input ranks                   a name of the vocabulary below
 *   input bytes_per_rank
 *   input aggregators
 *   candidates aggregators 1 2 4  settings the engine may choose, with the values
 *                                 the model was trained on (0 or more lines)
 *   combos 2                      format 5, optional: the combinations of the candidate
 *   combo 1                       values the records held, one line each, values in the
 *   combo 4                       order of the candidates lines (each one of them); the
 *                                 engine then chooses among these only (a forced setting
 *                                 keeps the call's value), not among every combination
 *                                 of the values, which a model never saw measured
 *   combine mean                  mean: average of the trees;
 *                                 gbdt INIT RATE: INIT + RATE * sum of the trees
 *   margin 0.2                    optional (absent: 0): the engine takes the model's
 *                                 choice only when its prediction is below (1 - margin)
 *                                 x the prediction for the cost model's own choice, so a
 *                                 gain smaller than the model's error does not override
 *                                 the cost model; tagg-tune writes its cross-validated
 *                                 median error here
 *   domain 2                      format 6, optional: the patterns the records held, one
 *   range 1 0 2 1 1 0 0 0x1p+16 0x1p+24 0x1p+0 0x1p+0   line per class: fs_kind is_read
 *   range ...                     ranks nodes contiguous spread multi (the class: exact
 *                                 values; contiguous 1 when contiguity >= 0.999, spread 1
 *                                 when bytes_spread > 0.01, multi 1 when pieces_per_rank
 *                                 > 1), then the least and largest bytes_per_rank and
 *                                 pieces_per_rank recorded in it. A call whose pattern is
 *                                 in no class, or outside its class's two ranges, is one
 *                                 the trees would extrapolate to (they cannot: a size
 *                                 past the sweep's gets the time per byte of whatever
 *                                 trained calls its inputs resemble): the engine keeps the
 *                                 cost model's choice there (tagg_tune_inside)
 *   trees 2
 *   tree 0 5                      tree index, node count; then one line a node:
 *   node 0 1 0x1.8p+1 1 2 0x0p+0  index, input (-1: leaf), threshold, left, right, value
 *   ...
 *   end SUM                       FNV-1a 64-bit hash (16 hex digits) of every byte before
 *                                 this line: catches a truncated or edited file
 *
 * A node sends x to `left` when (double)(float)x[input] <= threshold (scikit-
 * learn compares float32 inputs with double thresholds), else to `right`;
 * children have larger indices than their parent, so evaluation always ends.
 *
 * Every file is hostile input: the parser checks the header, every count
 * against the bytes present, every index, that every tree is a tree (each
 * node reached once from node 0, leaves have no children) and the checksum,
 * and names the line of the first problem. */
#ifndef TAGG_TUNE_H
#define TAGG_TUNE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TAGG_TUNE_MAGIC "tagg-tune model"
#define TAGG_TUNE_VERSION 6 /* 2-6: repeat (4-6: and resident) as the evaluator sees it (tagg_tune_effective);
                               5: the combinations seen (combos); 6: the recorded domain; 1-5 are still read */
#define TAGG_TUNE_MAX_RANGES 4096 /* domain classes a model file may list */
/* Format 3: the shared layout's read cache of read-only opens (core/src/rcache.h:
 * TAGG_RCACHE_MAX, TAGG_RCACHE_SLOTS) as tagg_tune_effective sees it. */
#define TAGG_TUNE_RCACHE_RUN 4194304
#define TAGG_TUNE_RCACHE_SLOTS 4
#define TAGG_TUNE_MAX_BYTES ((size_t)256 << 20) /* a model file is at most this big */
#define TAGG_TUNE_MAX_COMBOS 65536              /* candidate settings tried per choice */
#define TAGG_TUNE_RECORD_VERSION 8              /* "tagg_record" of the lines tagg appends */
#define TAGG_TUNE_RESIDENT_STEPS 8              /* resident is a multiple of 1/8 */
#define TAGG_TUNE_AHEAD_MAX 64                  /* flight_ahead is at most this (tagg_tune_ahead_step) */

/* The vocabulary: every quantity a record carries and a model may use. The
 * first group describes the call (features of the pattern), the second the
 * settings the engine chose.  Names in model and record files are these. */
typedef enum {
  /* pattern */
  TAGG_TV_RANKS = 0,       /* processes of the file's communicator */
  TAGG_TV_NODES,           /* nodes among them */
  TAGG_TV_BYTES_PER_RANK,  /* mean bytes per rank of the call */
  TAGG_TV_BYTES_SPREAD,    /* (max - min) / mean bytes per rank, 0 when even */
  TAGG_TV_PIECES_PER_RANK, /* mean extents per rank */
  TAGG_TV_CONTIGUITY,      /* bytes of the call / bytes of its covered range (1 = no gaps) */
  TAGG_TV_ALIGNED,         /* fraction of extents starting on a stripe / block boundary */
  TAGG_TV_FS_KIND,         /* file system: 0 other, 1 local (ext4/xfs/btrfs), 2 tmpfs, 3 network/FUSE, 4 Lustre/GPFS */
  TAGG_TV_IS_READ,         /* 0 write, 1 read */
  TAGG_TV_PAST_END,        /* fraction of the call's bytes at or past the file's written end (the largest
                              end any rank wrote or the size the ranks agreed on): a read there returns
                              zeros the storage holds no data for, a write there extends the file */
  TAGG_TV_SETUP,           /* what the call makes before moving data: 2 the engine's resources (node
                              split, tier choice) and, when it aggregates, its buffers; 1 only the
                              buffers, when it aggregates; 0 nothing (the process's cache holds them) */
  TAGG_TV_REPEAT,          /* 1: every rank asks for exactly what it asked in the file's previous
                              collective call of the same direction (a re-read, which caches may
                              serve; a rewrite), else 0 */
  TAGG_TV_DIO_MIN,         /* bytes from which the file's accesses bypass the page cache (O_DIRECT:
                              direct_io's direct_io_min when every rank's layout uses it; for reads 0
                              with direct_io=write), 0 never */
  TAGG_TV_RESIDENT,        /* share of the call's bytes the node's page cache held when the call began
                              (what earlier calls and the kernel's readahead brought in, up to date:
                              record format 5 also counted pages still being read), in steps of
                              1/TAGG_TUNE_RESIDENT_STEPS (tagg_tune_resident_step), over the ranks that
                              could tell (the shared layout, through a descriptor the rank has open);
                              0 when none could */
  TAGG_TV_IN_FLIGHT,       /* share of the call's bytes the page cache held but was still reading when the
                              call began (readahead under way: a read of them waits for a read already
                              started, not for one of its own), in the same steps over the same ranks
                              as resident; 0 when none could tell (records before format 7 did not
                              measure it; format 5 counted it in resident) */
  TAGG_TV_FLIGHT_AHEAD,    /* where some of a rank's bytes were in flight: the bytes the page cache held
                              but was still reading in the 8 MiB after the rank's range (the rest of the
                              readahead the call's bytes belong to, which a read of them may wait for:
                              HACC's sixth 1 MiB read, all in flight with 7 MiB more behind it, took
                              4.5 ms, the fourth with 2 MiB behind it 0.6-1.2 ms, session 49), over the
                              same ranks as resident, per byte of the call, in steps of
                              1/TAGG_TUNE_RESIDENT_STEPS up to TAGG_TUNE_AHEAD_MAX
                              (tagg_tune_ahead_step); 0 where none of the call's bytes was in flight or
                              none could tell (records before format 8 did not measure it) */
  /* settings */
  TAGG_TV_DIRECT,          /* 1: every rank accessed its own extents; 0: aggregated */
  TAGG_TV_AGGREGATORS,     /* aggregators used */
  TAGG_TV_BUFFER_SIZE,     /* bytes of one aggregation buffer */
  TAGG_TV_BUFFERS,         /* buffers per aggregator */
  TAGG_TV_LAYOUT,          /* 0 shared, 1 subfiles */
  TAGG_TV_TIER,            /* 0 DRAM, 1 HBM, 2 NVR */
  TAGG_TV_THROTTLE,        /* concurrent file-system streams allowed (0: no limit) */
  TAGG_TV_COUNT_
} tagg_tune_var_t;

#define TAGG_TV_FIRST_SETTING TAGG_TV_DIRECT

/* Name of a variable ("ranks", ...), NULL when out of range. */
const char *tagg_tune_var_name(int v);
/* Variable of a name, -1 when unknown. */
int tagg_tune_var_of(const char *name);

typedef struct tagg_tune_model tagg_tune_model_t;

/* Parses a model file's text (len bytes, need not be NUL-terminated). 0 and
 * *out, or -1 with a message naming the line. */
int tagg_tune_parse(const char *text, size_t len, tagg_tune_model_t **out, char *err, size_t errlen);
/* A model file's bytes (at most TAGG_TUNE_MAX_BYTES, regular files only, no
 * symlink): 0 with *text (malloc'd, not NUL-terminated) and *len, or -1 with a
 * message naming the path. */
int tagg_tune_read(const char *path, char **text, size_t *len, char *err, size_t errlen);
/* tagg_tune_read, then tagg_tune_parse. */
int tagg_tune_load(const char *path, tagg_tune_model_t **out, char *err, size_t errlen);
void tagg_tune_free(tagg_tune_model_t *m);
/* The checksum on a parsed model's 'end' line (identifies its content). */
uint64_t tagg_tune_sum(const tagg_tune_model_t *m);
/* The checksum of the 'end' line: FNV-1a 64 of n bytes. */
uint64_t tagg_tune_checksum(const char *p, size_t n);

/* Node i of tree t as parsed (tests: the parser's two paths agree bit for
 * bit): 0, or -1 when there is no such node. */
int tagg_tune_node(const tagg_tune_model_t *m, int t, int i, int *input, double *threshold, int *left, int *right,
                   double *value);
/* The kind ("random_forest", ...), the number of trees, of inputs. */
const char *tagg_tune_kind(const tagg_tune_model_t *m);
int tagg_tune_trees(const tagg_tune_model_t *m);
int tagg_tune_inputs(const tagg_tune_model_t *m);
/* The model's margin (0..1): see 'margin' above. */
double tagg_tune_margin(const tagg_tune_model_t *m);
/* 1 when the model uses variable v as an input. */
int tagg_tune_uses(const tagg_tune_model_t *m, int v);
/* Classes in the model's domain (0: the file has none, every pattern is inside). */
int tagg_tune_ranges(const tagg_tune_model_t *m);
/* 1 when the pattern of x lies in the model's domain ('domain' above) or the
 * model has none; 0 when the trees would extrapolate to it. */
int tagg_tune_inside(const tagg_tune_model_t *m, const double x[TAGG_TV_COUNT_]);

/* A share in [0, 1] as records and models carry resident: the nearest
 * multiple of 1/TAGG_TUNE_RESIDENT_STEPS (so that repetitions of a call in
 * the same state have the same pattern); outside [0, 1] clamped. */
double tagg_tune_resident_step(double share);

/* flight_ahead's steps: the nearest multiple of 1/TAGG_TUNE_RESIDENT_STEPS,
 * clamped to [0, TAGG_TUNE_AHEAD_MAX]. */
double tagg_tune_ahead_step(double per_byte);

/* Bytes of the call for a per-byte target: max(1, ranks * bytes_per_rank),
 * computed exactly so by tagg-tune. */
double tagg_tune_call_bytes(const double x[TAGG_TV_COUNT_]);

/* What a model of format 2, 3 or 4 (version; format 1: nothing) sees of x: a
 * re-read or rewrite (repeat) is one no cache serves when the call's file
 * accesses are at least dio_min bytes (the direct accesses' mean run,
 * bytes_per_rank / pieces_per_rank; an aggregator's, the call's bytes /
 * aggregators, at most one buffer), so repeat becomes 0 there. Without it a
 * model learns from page-cache hits (a re-read of 512 KiB runs on a FUSE
 * mount, buffered) that every re-read is cheap, and predicts 1 MiB re-reads
 * through O_DIRECT 10x too fast. Format 3 (session 32): a direct re-read
 * keeps repeat when the shared layout's read cache of read-only opens holds
 * it (runs under TAGG_TUNE_RCACHE_RUN, the rank's bytes at most
 * TAGG_TUNE_RCACHE_SLOTS of them): 1 MiB runs re-read through O_DIRECT take
 * 0.12-0.24 ms there, not 4-8 ms. Format 4 (session 35): such a re-read
 * (runs of at least dio_min the read cache holds) is also resident 1: it is a
 * copy from memory, as a buffered re-read the page cache holds is, where the
 * engine's probe (the page cache only) says 0; with 0 a model that had seen
 * buffered re-reads of 512 and 768 KiB runs resident and fast took direct
 * re-reads of 1 MiB runs for reads from the storage, 30x too slow (VPIC AoS
 * on GlusterFS); none of it is then in flight (in_flight and flight_ahead
 * 0: the page cache's state says nothing of such a read). tagg-tune applies the same
 * rule, in the same double arithmetic, before it fits. */
void tagg_tune_effective(double x[TAGG_TV_COUNT_], int version);

/* Predicted seconds for the full vocabulary vector x[TAGG_TV_COUNT_] (the
 * model reads the inputs it names; formats 2 and 3 after tagg_tune_effective).  leaves (may be NULL): per tree, the
 * index of the leaf reached, for comparisons with scikit-learn's apply(). */
double tagg_tune_predict(const tagg_tune_model_t *m, const double x[TAGG_TV_COUNT_], int *leaves);

/* Chooses settings: x holds the pattern and, for every setting, the value the
 * configuration or the cost model gives; forced[v] != 0 keeps setting v as it
 * is.  Every combination the model's file lists (format 5: those its records
 * held, the free settings taken from each), or else every combination of the
 * candidate values of the free settings the model knows, is predicted (at
 * most TAGG_TUNE_MAX_COMBOS, else the first ones in order), and the fastest
 * is written into x.  When aggregators is free, only
 * combinations a call can have are tried: direct with 0 aggregators, aggregated
 * with 1 or more (as records carry them).  Settings the model has no candidates
 * for stay as they are.  Returns the predicted seconds of the choice, or -1
 * when the model knows no free setting or no possible combination (x unchanged). */
double tagg_tune_choose(const tagg_tune_model_t *m, double x[TAGG_TV_COUNT_], const int forced[TAGG_TV_COUNT_]);

/* The same, with limits: a combination in which a free setting v exceeds
 * upper[v] (where upper[v] > 0) is not tried (the engine: a call's round
 * buffer can be smaller than the aggregation buffers the file allocated, not
 * larger).  upper NULL: no limits. */
double tagg_tune_choose_within(const tagg_tune_model_t *m, double x[TAGG_TV_COUNT_], const int forced[TAGG_TV_COUNT_],
                               const double upper[TAGG_TV_COUNT_]);

/* A candidate as the caller would carry it out: rewrites the settings of x to
 * those the call would then run with, or returns < 0 when the call cannot run
 * with it.  Must be pure (the same x, the same answer on every rank). */
typedef int (*tagg_tune_realize_t)(void *ctx, double x[TAGG_TV_COUNT_]);

/* The same, each candidate predicted as realize() says it would run (NULL:
 * as it is); the realized settings are the ones written into x.  The engine
 * passes its plan: records carry the settings a call ran with, and a setting a
 * call of this size cannot have (two aggregators for a span of one file
 * domain: the plan makes one) is predicted from larger calls that had it, not
 * from the calls that asked for it (session 54: HACC SoA 16K's 64 KiB writes,
 * two aggregators predicted 35 % faster than direct, one aggregator ran, 25 %
 * slower than direct). */
double tagg_tune_choose_realized(const tagg_tune_model_t *m, double x[TAGG_TV_COUNT_], const int forced[TAGG_TV_COUNT_],
                                 const double upper[TAGG_TV_COUNT_], tagg_tune_realize_t realize, void *ctx);

/* ---- the measured check (the engine's tuning_check=K) --------------------
 *
 * A prediction is only a prediction: outside the sizes it was fitted on a
 * tree takes the time per byte of whatever trained calls a pattern resembles
 * (session 52-54: held out at the sweep's edges, 42 % off per phase, and the
 * model's own read choices on GlusterFS at 77-85 % of the best, where the
 * cost model's reached 90 %). And the machine a model was fitted on drifts
 * (session 56: direct local reads of HACC SoA 256K at 1045 MiB/s in the sweep,
 * 937-971 two hours later, aggregated ones 1074-1093 throughout). So for a
 * read pattern, and a write pattern (session 63: each write timed with its
 * share of its file's next sync or close, engine_check.c), the engine times
 * two settings, each chosen by the model or the cost model, never by the
 * clock alone:
 *
 * - the choice: what runs without the check (the model's, or the cost
 *   model's where the margin keeps it);
 * - the rival: the other one of the two where they differ; where they agree,
 *   the model's best setting of the other kind (direct where the choice
 *   aggregates, aggregated where it is direct), if the model predicts it at
 *   most TAGG_TUNE_RIVAL_BAND times the choice's time (a near tie; a rival
 *   predicted far slower is not worth its trial calls).
 *
 * The choice runs K times, then the rival K times, each timed on the rank 0
 * of the file, and the one of the smaller median runs from then on (a tie
 * keeps the choice). Unless the call is close: where the two medians differ
 * by less than the file's tuning_check_close (a fraction of the choice's
 * median), each runs K times more, and again, until they part or each has
 * run TAGG_TUNE_CHECK_ROUNDS times K calls (at most TAGG_TUNE_CHECK_MAX);
 * then the medians of all their calls decide. Three calls of each on a noisy
 * file system can pick the slower (session 57: GlusterFS reads of 8 MiB
 * blocks, an aggregated rival 8 % slower won 3 against 3); more calls where
 * the two are close cost little, as either runs about as fast. And an
 * overturn takes every round: where the rival's median is the smaller, by
 * any share, each runs K times more while a round fits, and only the medians
 * of all their calls can make the rival run (session 61: local reads of
 * 8 MiB blocks, direct beat one aggregator 3 against 3 in calls made while
 * direct reads ran at twice their later speed, then two aggregators beat
 * direct 3 against 3, and the reads ran at 75 % of the best where the
 * model's own choice ran at 89 %). A choice that wins its first round by
 * the close share or more is kept at once: the burden of proof is the
 * rival's. The states of a pattern: */
typedef enum {
  TAGG_TUNE_CHECK_NONE      = 0, /* the choice runs and is timed */
  TAGG_TUNE_CHECK_TRY_RIVAL = 1, /* the rival runs and is timed */
  TAGG_TUNE_CHECK_RIVAL     = 2, /* settled: the rival was faster */
  TAGG_TUNE_CHECK_CHOICE    = 3, /* settled: the choice was not slower */
  TAGG_TUNE_CHECK_AGAIN     = 4  /* a close call: the choice runs and is timed again, then the rival */
} tagg_tune_check_t;
#define TAGG_TUNE_CHECK_MAX 16    /* the largest K, and the most calls of each a check times */
#define TAGG_TUNE_CHECK_ROUNDS 3  /* a close call's rounds, at most (K calls of each a round) */
#define TAGG_TUNE_RIVAL_BAND 1.5 /* a rival of the other kind: predicted at most this many times the choice's time */

/* The state a pattern's check moves to after its measurements: choice[nc] and
 * rival[nr] the seconds of the calls that ran the choice and the rival (nc,
 * nr at most TAGG_TUNE_CHECK_MAX), k the calls each runs a round, close the
 * fraction below which two medians are a close call (0: none is). Settled
 * states stay. NONE and AGAIN move to TRY_RIVAL once the choice has run k
 * calls more than the rival (or TAGG_TUNE_CHECK_MAX). TRY_RIVAL waits until
 * the rival has run at least k calls and as many as the choice (or
 * TAGG_TUNE_CHECK_MAX), then, where another round fits (nc + k at most
 * TAGG_TUNE_CHECK_MAX, nc below TAGG_TUNE_CHECK_ROUNDS times k): AGAIN where
 * the medians differ by less than close times the choice's, or where the
 * rival's median is below the choice's (an overturn takes every round).
 * Otherwise RIVAL where the rival's median is below the choice's, CHOICE
 * otherwise (also when no choice call is known). Pure: the same on every
 * process. */
tagg_tune_check_t tagg_tune_check_next(tagg_tune_check_t state, const double *choice, int nc, const double *rival,
                                       int nr, int k, double close);

/* Whether two medians, tc the choice's and tr the rival's, are a close call:
 * they differ by less than close times tc (close 0: never). Pure; what
 * tagg_tune_check_next asks, and the verbose line's wording too. */
int tagg_tune_check_close_call(double tc, double tr, double close);

/* The median of n seconds (n >= 1, at most TAGG_TUNE_CHECK_MAX; the mean of
 * the middle two for an even n), v unchanged. */
double tagg_tune_check_median(const double *v, int n);

/* The challenger: two candidates cover at most two ways of running a read,
 * and the best may be a third (session 57: local 1D random 4 MiB blocks, the
 * model's one aggregator beat its direct rival, both at 75 % of two
 * aggregators with throttle 1, which neither model proposed). So where the
 * model's best setting of another class than both (a class: direct, or
 * aggregated by n aggregators with or without a throttle below n) is
 * predicted at most TAGG_TUNE_RIVAL_BAND times the choice's time, the check
 * has a second stage: once the choice and the rival are settled, their
 * winner is timed again against the challenger, by the same rules and with
 * trials of its own, and the faster of the two runs from then on. The
 * candidates: 0 the choice, 1 the rival, 2 the challenger. */
typedef struct {
    int run;     /* the candidate this call runs */
    int stage;   /* the stage whose trial times it: 0, 1, or -1 (settled: not timed) */
    int arm;     /* 1: it runs as the stage's choice, 2: as its rival; 0 when not timed */
    int pair[2]; /* the stage's choice and rival (candidates), for the verbose lines */
} tagg_tune_check_pick_t;

/* Which candidate a read runs, from the states of stage 0 (s0: choice
 * against rival) and stage 1 (s1: their winner against the challenger; read
 * only where s0 is settled and there is a challenger). Pure. */
tagg_tune_check_pick_t tagg_tune_check_pick(tagg_tune_check_t s0, tagg_tune_check_t s1, int challenger);

/* ---- records (`record=FILE`): one JSON object a line ----------------------
 *
 *   {"tagg_record":8,"op":"write","file":"out.h5","ranks":2,...,"throttle":1,
 *    "cost_direct":0.051,"cost_aggr":0.042,"t_plan":0.0012,"t_move":0.0345,"t_fs":0.0211,"t_total":0.0568}
 *
 * Keys: tagg_record (format, 8; format 7 had no flight_ahead, format 6 no in_flight, format 5 counted
 * in resident the pages the kernel's readahead was still reading, format 4
 * had no resident, format 3 no dio_min, format 2 no cost_direct or cost_aggr either, format 1 neither past_end, setup nor
 * repeat), op ("write" or "read"), file
 * (the base name of the file, JSON-escaped), every vocabulary name above with
 * its value, the cost model's estimates of the call under its settings
 * (cost_direct: every rank accessing its own extents; cost_aggr: through the
 * aggregators, with the aggregator count and round buffer of the call or, for
 * a direct call, the model's own; seconds, 0 where the plan made none: file
 * metadata only, overlapping runs), and the measured seconds: t_plan
 * (describe + plan), t_move (the round loop or the direct accesses), t_fs (of
 * which in file-system calls), t_total (the call, as the slowest rank saw
 * it). Numbers are printed with 17 significant digits, so a reader gets the
 * doubles back exactly. */
typedef struct {
  double v[TAGG_TV_COUNT_];
  double cost_direct, cost_aggr;
  double t_plan, t_move, t_fs, t_total;
} tagg_tune_record_t;

/* Formats one record line (with its '\n') into buf; returns its length, or
 * -1 when it does not fit in len bytes. */
int tagg_tune_record_format(const tagg_tune_record_t *r, const char *op, const char *file, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
