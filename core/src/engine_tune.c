/* Self-tuning in the engine (issue 16): records of collective calls
 * (record=FILE, rank 0 appends, no collective) and the choice of settings by a
 * fitted model (tuning=MODEL, evaluated by every rank on the same gathered
 * rows, so that every rank makes the same choice without an agreement). */
#include "engine.h"
#include "error.h"
#include "fs_kind.h"
#include "mpi_wait.h"
#include "record.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The pattern part of the vocabulary, from the gathered rows (same on every
 * rank): req, the call's requests; e->rows, the written ends the ranks know. */
static void pattern_of(const tagg_file_t *f, const tagg_engine_t *e, const tagg_req_desc_t *req, tagg_dir_t dir,
                       double v[TAGG_TV_COUNT_])
{
    int      P    = f->size, active = 0, aligned = 0;
    uint64_t unit = f->store_ops->stripe(f) ? f->store_ops->stripe(f) : (uint64_t)f->cfg.block;
    double   sum = 0, mn = INFINITY, mx = 0, pieces = 0;
    uint64_t lo = UINT64_MAX, hi = 0, end = 0;
    for (int r = 0; r < P; r++)
        end = e->rows[r].end > end ? e->rows[r].end : end;
    double past = 0; /* bytes at or past the written end; a rank's between its lo and hi in proportion */
    for (int r = 0; r < P; r++) {
        const tagg_req_desc_t *q = &req[r];
        double                 b = (double)q->bytes;
        sum += b, pieces += (double)q->nruns;
        mn = b < mn ? b : mn, mx = b > mx ? b : mx;
        if (q->bytes && q->lo != UINT64_MAX) {
            active++;
            aligned += unit && q->lo % unit == 0;
            lo = q->lo < lo ? q->lo : lo, hi = q->hi > hi ? q->hi : hi;
            if (q->lo >= end)
                past += b;
            else if (q->hi > end)
                past += b * ((double)(q->hi - end) / (double)(q->hi - q->lo));
        }
    }
    double mean               = sum / P;
    v[TAGG_TV_RANKS]          = P;
    v[TAGG_TV_NODES]          = e->topo ? tagg_topology_nnodes(e->topo) : 1;
    v[TAGG_TV_BYTES_PER_RANK] = mean;
    v[TAGG_TV_BYTES_SPREAD]   = mean > 0 ? (mx - mn) / mean : 0;
    v[TAGG_TV_PIECES_PER_RANK] = pieces / P;
    v[TAGG_TV_CONTIGUITY]     = hi > lo ? sum / (double)(hi - lo) : 1;
    v[TAGG_TV_ALIGNED]        = active ? (double)aligned / active : 1;
    v[TAGG_TV_FS_KIND]        = e->fs_kind_agreed;
    v[TAGG_TV_IS_READ]        = dir == TAGG_READ;
    v[TAGG_TV_PAST_END]       = sum > 0 ? past / sum : 0;
    v[TAGG_TV_SETUP]          = e->setup;
    v[TAGG_TV_REPEAT]         = e->repeat;
    /* every rank's layout moves this call's direction directly (writes only:
     * direct_io=write, or auto on a synced local disk; reads buffered then) */
    v[TAGG_TV_DIO_MIN]        = e->dio_block ? (double)f->cfg.direct_io_min : 0;
    double rb = 0, rr = 0, rf = 0, ra = 0; /* the ranks that could tell */
    for (int r = 0; r < P; r++)
        if (e->rows[r].resident != TAGG_RESIDENT_UNKNOWN && req[r].bytes)
            rb += (double)req[r].bytes, rr += (double)e->rows[r].resident, rf += (double)e->rows[r].flight,
                ra += (double)e->rows[r].ahead;
    v[TAGG_TV_RESIDENT]     = rb > 0 ? tagg_tune_resident_step(rr / rb) : 0;
    v[TAGG_TV_IN_FLIGHT]    = rb > 0 ? tagg_tune_resident_step(rf / rb) : 0;
    v[TAGG_TV_FLIGHT_AHEAD] = rb > 0 ? tagg_tune_ahead_step(ra / rb) : 0; /* a row's ahead: 0 unless flight */
}

/* At most this many of a rank's runs are asked one by one; a request of more
 * is asked as its covered range, in proportion (the runs of a column block
 * lie between the other ranks' runs of the same rows, which the same reads
 * brought in or not). */
#define PROBE_RUNS 8

/* flight_ahead's window: how far past a rank's range the probe looks for
 * bytes readahead is still reading (Linux reads ahead up to the device's
 * read_ahead_kb, 8 MiB on this machine's disk; a read of pages in flight
 * waits for the request they came in, session 49). */
#define PROBE_AHEAD ((uint64_t)8 << 20)

/* Records or tuning are on: only they use what the probe and the note find. */
static int tune_observes(const tagg_file_t *f, const tagg_engine_t *e)
{
    return e->tune || (f->cfg.record && *f->cfg.record);
}

void tagg_engine_tune_probe(tagg_file_t *f, tagg_engine_t *e, const tagg_extents_t *x)
{
    e->my_resident = TAGG_RESIDENT_UNKNOWN, e->my_flight = 0, e->my_ahead = 0;
    if (!tune_observes(f, e) || !f->store_ops->resident || !x->n)
        return; /* no system call otherwise */
    uint64_t bytes = 0, lo = UINT64_MAX, hi = 0, got = 0, fl = 0, b = 0, c = 0;
    for (size_t i = 0; i < x->n; i++) {
        uint64_t a = x->v[i].off, z = a + x->v[i].len;
        bytes += x->v[i].len, lo = a < lo ? a : lo, hi = z > hi ? z : hi;
    }
    if (!bytes)
        return;
    if (x->n <= PROBE_RUNS) {
        for (size_t i = 0; i < x->n; i++) {
            if (!x->v[i].len)
                continue;
            if (f->store_ops->resident(f, x->v[i].off, x->v[i].len, &b, &c) < 0)
                return;
            got += b, fl += c;
        }
    }
    else {
        if (f->store_ops->resident(f, lo, hi - lo, &b, &c) < 0)
            return;
        double share = (double)bytes / (double)(hi - lo);
        got = (uint64_t)((double)b * share), fl = (uint64_t)((double)c * share);
    }
    e->my_resident = got < bytes ? got : bytes;
    e->my_flight   = fl < bytes - e->my_resident ? fl : bytes - e->my_resident;
    /* a call's bytes in flight: how much of readahead's read goes on past it
     * (one more question, asked only then) */
    if (e->my_flight && hi <= UINT64_MAX - PROBE_AHEAD && f->store_ops->resident(f, hi, PROBE_AHEAD, &b, &c) == 0)
        e->my_ahead = c;
}

void tagg_engine_tune_note(tagg_file_t *f, tagg_engine_t *e, tagg_dir_t dir)
{
    e->repeat = 0;
    tagg_engine_check_apply(f, e); /* every call's rows: the measured check's messages */
    if (!tune_observes(f, e))
        return; /* no pass over every rank's row otherwise */
    uint64_t h = 0; /* every rank's request (tagg_engine_row_of zeroes a row before filling it) */
    for (int r = 0; r < f->size; r++) {
        tagg_req_desc_t q = e->rows[r].req;
        q.flags &= ~TAGG_REQ_DONE; /* the same request, accessed before its plan or not */
        h = (h ^ tagg_tune_checksum((const char *)&q, sizeof q)) * 0x100000001b3ull;
    }
    h += h == 0;
    int d = dir == TAGG_READ;
    e->repeat = e->last_hash[d] == h, e->last_hash[d] = h;
}

static void settings_of(const tagg_file_t *f, const tagg_engine_t *e, const tagg_call_plan_t *p,
                        double v[TAGG_TV_COUNT_])
{
    v[TAGG_TV_DIRECT]      = p->action == TAGG_CALL_DIRECT;
    v[TAGG_TV_AGGREGATORS] = p->action == TAGG_CALL_AGGREGATE ? p->ndom : 0;
    v[TAGG_TV_BUFFER_SIZE] = (double)(p->bufsize ? p->bufsize : e->bufsize); /* the call's round buffer */
    v[TAGG_TV_BUFFERS]     = e->nbuf;
    v[TAGG_TV_LAYOUT]      = f->cfg.layout;
    v[TAGG_TV_TIER]        = e->tier;
    v[TAGG_TV_THROTTLE]    = p->throttle;
}

/* The last model loaded, kept for the next files of the process: a forest of
 * 100 trees is a few MB of text, tens of milliseconds to parse and check on
 * every rank, which an open per file would pay each time (more than the I/O of
 * a small file). A path is read once per process: later opens naming it take
 * the kept model without looking at the file again (until session 24 every
 * rank's open checked it with lstat, a metadata request per rank and open on
 * a parallel file system, and 2.5-6.9 % of the time of a 5.5 MiB file on local
 * disk after a cache drop: the path's directories read again). A model is
 * kept only when the file did not change while it was read (device, inode,
 * size, modification time before and after); refs counts the open files
 * using it. Every call checks that all ranks hold the same model (its
 * checksum rides in the describe rows). */
static struct {
    pthread_mutex_t    mu;
    char              *path;
    tagg_tune_model_t *m;
    int                refs;
} model_cache = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

__attribute__((destructor)) static void model_cache_free(void) /* exit, or the plugin's dlclose */
{
    tagg_tune_free(model_cache.m);
    free(model_cache.path);
    model_cache.m = NULL, model_cache.path = NULL;
}

int tagg_engine_tune_open(tagg_file_t *f, tagg_engine_t *e)
{
    /* from the mount table, no round trip to a file server (fs_kind.h): the
     * records' kind, and the call plan's serialising client */
    e->fs_kind = (int)tagg_file_fs_view(f);
    if (f->cfg.fs_client != TAGG_FS_CLIENT_AUTO) /* the user's word over the mount table's and the device's */
        e->fs_kind = (int)(((unsigned)e->fs_kind & ~(TAGG_FS_SERIAL | TAGG_FS_ROTATIONAL)) |
                           (f->cfg.fs_client == TAGG_FS_CLIENT_SERIAL ? TAGG_FS_SERIAL : 0u));
    return 0;
}

/* The model's text from rank 0 to every rank (tagg_engine_tune_share): 0 and
 * *text (*len bytes; *keep: rank 0 saw the file unchanged while it read it),
 * or -1 on every rank with rank 0's message in err. */
static int text_from_rank0(tagg_file_t *f, const char *path, char **text, size_t *len, int *keep, char *err,
                           size_t errlen)
{
    uint64_t hdr[3] = {0, 0, 0}; /* failed, bytes that follow (text or message), keep */
    char    *buf = NULL;
    *text = NULL, *len = 0, *keep = 0;
    if (f->rank == 0) {
        struct stat st, after;
        int         have = lstat(path, &st) == 0 && S_ISREG(st.st_mode); /* else the read says why */
        size_t      n    = 0;
        if (tagg_tune_read(path, &buf, &n, err, errlen) < 0) {
            buf = strdup(err), hdr[0] = 1, n = buf ? strlen(buf) : 0;
        }
        else
            hdr[2] = have && lstat(path, &after) == 0 && same_file(&st, &after);
        hdr[1] = n;
    }
    int code = tagg_mpi_bcast(hdr, 3, MPI_UINT64_T, 0, f->comm);
    int room = 1, all = 1; /* every rank has room for the bytes, or none receives them */
    if (code == MPI_SUCCESS && f->rank != 0 && hdr[1])
        room = (buf = malloc((size_t)hdr[1])) != NULL;
    if (code == MPI_SUCCESS)
        code = tagg_mpi_allreduce(&room, &all, 1, MPI_INT, MPI_MIN, f->comm);
    if (code == MPI_SUCCESS && all && hdr[1])
        code = tagg_mpi_bcast_bulk(buf, (int)hdr[1], MPI_BYTE, 0, f->comm);
    if (code != MPI_SUCCESS || !all) {
        if (code != MPI_SUCCESS)
            snprintf(err, errlen, "tuning model %s: MPI error %d while rank 0 sent it", path, code);
        else
            snprintf(err, errlen, "tuning model %s: %s (%llu bytes)", path,
                     room ? "out of memory on another rank" : "out of memory", (unsigned long long)hdr[1]);
        free(buf);
        return -1;
    }
    if (hdr[0]) { /* rank 0's message (rank 0 has it in err already) */
        if (f->rank != 0)
            snprintf(err, errlen, "%.*s (read by rank 0)", (int)hdr[1], buf ? buf : "");
        free(buf);
        return -1;
    }
    *text = buf, *len = (size_t)hdr[1], *keep = (int)hdr[2];
    return 0;
}

int tagg_engine_tune_share(tagg_file_t *f, tagg_engine_t *e)
{
    if (!(f->cfg.tuning && *f->cfg.tuning)) /* the configuration is the same on every rank */
        return 0;
    const char        *path = f->cfg.tuning;
    tagg_tune_model_t *held = NULL;
    uint64_t           sum  = 0;
    pthread_mutex_lock(&model_cache.mu);
    if (e && model_cache.m && !strcmp(model_cache.path, path))
        held = model_cache.m, sum = tagg_tune_sum(held), model_cache.refs++;
    pthread_mutex_unlock(&model_cache.mu);
    /* every rank holds the same model already (no rank reads the file
     * again), or rank 0 reads it for all: one reader per job, however many
     * ranks, and the same bytes parsed everywhere */
    uint64_t in[3] = {e ? 0 : 1, sum, ~sum}, out[3];
    int      code  = tagg_mpi_allreduce(in, out, 3, MPI_UINT64_T, MPI_MAX, f->comm);
    int      reuse = code == MPI_SUCCESS && !out[0] && out[1] && out[1] == ~out[2];
    if (held && !reuse) {
        pthread_mutex_lock(&model_cache.mu);
        model_cache.refs--;
        pthread_mutex_unlock(&model_cache.mu);
    }
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (tuning model)", code);
        return -1;
    }
    if (out[0]) {
        if (e)
            TAGG_ERR(TAGG_E_IO, "tagg open (set-up) failed on another rank (see that rank's error stack)");
        return -1;
    }
    char err[1024];
    int  rc = 0;
    if (reuse)
        e->tune = held, e->tune_cached = 1;
    else {
        char  *text;
        size_t len;
        int    keep;
        char   msg[512];
        if (text_from_rank0(f, path, &text, &len, &keep, err, sizeof err) < 0)
            rc = -1;
        else if (tagg_tune_parse(text, len, &e->tune, msg, sizeof msg) < 0)
            snprintf(err, sizeof err, "%s: %s", path, msg), rc = -1; /* the same bytes: the same message everywhere */
        free(text);
        /* kept when nothing uses the old one and rank 0 saw the file unchanged while reading it */
        char *copy = rc == 0 && keep ? strdup(path) : NULL;
        pthread_mutex_lock(&model_cache.mu);
        if (copy && model_cache.refs == 0) {
            tagg_tune_free(model_cache.m);
            free(model_cache.path);
            model_cache.m = e->tune, model_cache.path = copy, model_cache.refs = 1;
            e->tune_cached = 1, copy = NULL;
        }
        pthread_mutex_unlock(&model_cache.mu);
        free(copy);
    }
    if (rc < 0)
        TAGG_ERR(TAGG_E_CONFIG, "tuning: %s", err);
    /* a rank out of memory alone: every rank fails the open */
    if (tagg_agree(f->comm, rc, "loading the tuning model") < 0)
        return -1; /* the model (if any) goes with the backend's close */
    e->tune_sum = tagg_tune_sum(e->tune);
    if (f->cfg.verbose >= 2 && f->rank == 0) {
        printf("tagg: tuning model %s %s (%s, %d trees)\n", path, reuse ? "reused" : "loaded",
               tagg_tune_kind(e->tune), tagg_tune_trees(e->tune));
        fflush(stdout);
    }
    return 0;
}

void tagg_engine_tune_close(tagg_engine_t *e)
{
    tagg_record_close(&e->rec_fd);
    if (!e->tune)
        return;
    if (e->tune_cached) { /* the cache keeps it for the next file */
        pthread_mutex_lock(&model_cache.mu);
        model_cache.refs--;
        pthread_mutex_unlock(&model_cache.mu);
    } else
        tagg_tune_free(e->tune);
    e->tune = NULL;
}

/* The process's last decisions, by model and call (the full vocabulary vector
 * the engine starts from): a new file of the same pattern (every timestep's
 * file, every repetition of a benchmark) takes its first call's settings from
 * here instead of evaluating the trees and the cost model's plan again (about
 * 0.15-0.25 ms a file with a 100-tree forest on this machine, session 23).
 * A decision is a pure function of the model and the vector, which every rank
 * computes from the same gathered rows, so a hit and a miss decide alike and
 * ranks need not hold the same entries. Asynchronous files plan on worker
 * threads: a mutex. */
/* A call's settings as the memo keeps them: the cost model's (cost = 1: the
 * call's input is left as the configuration gave it, and the other fields say
 * what its plan runs, for the verbose lines), or the ones a model's choice
 * sets. */
struct tune_setting {
    int      cost;
    int      mode, naggr, throttle;
    uint64_t bufsize;
    double   pred; /* the model's predicted seconds for it */
    int      cls;  /* its class as the plan runs it (run_class) */
};

struct tagg_tune_memo {
    uint64_t sum;               /* the model's checksum (0: empty entry) */
    double   x[TAGG_TV_COUNT_]; /* the call: pattern and starting settings */
    unsigned forced;            /* which settings the call could not change (bit per variable): an
                                   aggregate=always file and an auto one start from the same x */
    int      kept;              /* 1: the cost model's choice stands (the margin), 2: the pattern is
                                   outside the model's domain; 0: the model's choice */
    struct tune_setting choice; /* what runs without the measured check */
    int      has_rival;         /* a rival for the measured check (tune.h; engine_check.c) */
    struct tune_setting rival;
    int      has_challenger;    /* and its challenger (tune.h), only with a rival */
    struct tune_setting challenger;
    const char *choice_name, *rival_name; /* for the check's verbose lines */
};
_Static_assert(TAGG_TV_COUNT_ <= 32, "a memo's forced settings: one bit each in an unsigned");
#define TUNE_MEMO 64
static struct {
    pthread_mutex_t       mu;
    int                   next;
    struct tagg_tune_memo e[TUNE_MEMO];
} memos = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int memo_find(struct tagg_tune_memo *m)
{
    int found = 0;
    pthread_mutex_lock(&memos.mu);
    for (int i = 0; i < TUNE_MEMO && !found; i++)
        if (memos.e[i].sum == m->sum && m->sum && memos.e[i].forced == m->forced &&
            !memcmp(memos.e[i].x, m->x, sizeof m->x))
            *m = memos.e[i], found = 1;
    pthread_mutex_unlock(&memos.mu);
    return found;
}

static void memo_keep(const struct tagg_tune_memo *m)
{
    pthread_mutex_lock(&memos.mu);
    memos.e[memos.next] = *m;
    memos.next = (memos.next + 1) % TUNE_MEMO;
    pthread_mutex_unlock(&memos.mu);
}

/* The memo's key as one number, the measured check's name of a pattern. */
static uint64_t check_key_of(const struct tagg_tune_memo *m)
{
    char b[sizeof m->sum + sizeof m->x + sizeof m->forced];
    memcpy(b, &m->sum, sizeof m->sum);
    memcpy(b + sizeof m->sum, m->x, sizeof m->x);
    memcpy(b + sizeof m->sum + sizeof m->x, &m->forced, sizeof m->forced);
    uint64_t h = tagg_tune_checksum(b, sizeof b);
    return h ? h : 1;
}

/* Two realized settings run the call alike: both direct, or aggregated with
 * the same aggregators, throttle and round buffer. */
static int same_run(const double a[TAGG_TV_COUNT_], const double b[TAGG_TV_COUNT_])
{
    if ((a[TAGG_TV_DIRECT] >= 0.5) != (b[TAGG_TV_DIRECT] >= 0.5))
        return 0;
    return a[TAGG_TV_DIRECT] >= 0.5 || (a[TAGG_TV_AGGREGATORS] == b[TAGG_TV_AGGREGATORS] &&
                                        a[TAGG_TV_THROTTLE] == b[TAGG_TV_THROTTLE] &&
                                        a[TAGG_TV_BUFFER_SIZE] == b[TAGG_TV_BUFFER_SIZE]);
}

/* A choice x as the call's input: the settings the call may change (forced
 * ones stay), the round buffer within the file's buffers (limit). */
static void apply_choice(tagg_call_in_t *in, const double x[TAGG_TV_COUNT_], const int forced[TAGG_TV_COUNT_],
                         uint64_t limit)
{
    if (!forced[TAGG_TV_DIRECT])
        in->mode = x[TAGG_TV_DIRECT] >= 0.5 ? TAGG_AGGREGATE_NEVER : TAGG_AGGREGATE_ALWAYS;
    if (!forced[TAGG_TV_AGGREGATORS] && x[TAGG_TV_AGGREGATORS] >= 1)
        in->naggr = (int)x[TAGG_TV_AGGREGATORS];
    if (!forced[TAGG_TV_THROTTLE])
        in->throttle = (int)x[TAGG_TV_THROTTLE];
    if (x[TAGG_TV_BUFFER_SIZE] >= 4096 && x[TAGG_TV_BUFFER_SIZE] <= (double)limit)
        in->bufsize = (uint64_t)x[TAGG_TV_BUFFER_SIZE];
}

struct realize_ctx {
    const tagg_call_in_t *in;
    const int            *forced;
    const tagg_engine_t  *e;
    const tagg_file_t    *f;
    int                   nskip, skip[2]; /* classes (run_class) a candidate must not have: the challenger's search */
};

/* The class of a realized setting x for the check's challenger (tune.h):
 * -1 direct, else 2 x aggregators, plus 1 where a throttle below the
 * aggregator count holds some of them back. */
static int run_class(const double x[TAGG_TV_COUNT_])
{
    if (x[TAGG_TV_DIRECT] >= 0.5)
        return -1;
    int n = (int)x[TAGG_TV_AGGREGATORS], t = (int)x[TAGG_TV_THROTTLE];
    return 2 * n + (t >= 1 && t < n);
}

/* The settings the plan of `in` carries out, as a record of the call would
 * carry them (settings_of), written into x; -1 (x unchanged) when the plan
 * neither accesses directly nor aggregates. The plan is pure and decides its
 * action and domains before it allocates anything, so every rank answers
 * alike, even one whose election ran out of memory. */
static int planned_settings(const tagg_file_t *f, const tagg_engine_t *e, const tagg_call_in_t *in,
                            double x[TAGG_TV_COUNT_])
{
    tagg_call_plan_t p;
    tagg_err_t       err;
    (void)tagg_call_plan(in, &p, &err);
    int ok = p.action == TAGG_CALL_DIRECT || p.action == TAGG_CALL_AGGREGATE;
    if (ok)
        settings_of(f, e, &p, x);
    tagg_call_plan_free(&p);
    return ok ? 0 : -1;
}

/* tagg_tune_realize_t: a candidate as the plan would carry it out. */
static int realize_plan(void *ctx, double x[TAGG_TV_COUNT_])
{
    const struct realize_ctx *c  = ctx;
    tagg_call_in_t            in = *c->in;
    apply_choice(&in, x, c->forced, c->e->bufsize);
    if (planned_settings(c->f, c->e, &in, x) < 0)
        return -1;
    for (int i = 0; i < c->nskip; i++)
        if (run_class(x) == c->skip[i])
            return -1;
    return 0;
}

/* The settings a realized choice x sets in the call's input (apply_choice),
 * as the memo keeps them. */
static struct tune_setting setting_of(const tagg_call_in_t *in, const double x[TAGG_TV_COUNT_],
                                      const int forced[TAGG_TV_COUNT_], uint64_t limit, double pred)
{
    tagg_call_in_t c = *in;
    apply_choice(&c, x, forced, limit);
    return (struct tune_setting){.mode = (int)c.mode, .naggr = c.naggr, .throttle = c.throttle,
                                 .bufsize = c.bufsize, .pred = pred, .cls = run_class(x)};
}

static void setting_apply(tagg_call_in_t *in, const struct tune_setting *s)
{
    if (s->cost)
        return; /* the configuration's input: the cost model decides */
    in->mode = (tagg_aggregate_t)s->mode, in->naggr = s->naggr, in->throttle = s->throttle;
    in->bufsize = s->bufsize;
}

/* The measured check's rival of the other kind (tune.h): the model's best
 * realized setting that is direct where `choice_direct` is not, and the
 * reverse, if its predicted time is at most TAGG_TUNE_RIVAL_BAND times
 * `t_choice`; 0 when there is none (the user forced the kind, the plan cannot
 * run the other kind, or the model predicts it far slower). */
static int rival_other(const tagg_file_t *f, const tagg_engine_t *e, const tagg_call_in_t *in,
                       const double start[TAGG_TV_COUNT_], const int forced[TAGG_TV_COUNT_],
                       const double upper[TAGG_TV_COUNT_], int choice_direct, double t_choice,
                       struct tune_setting *out)
{
    if (forced[TAGG_TV_DIRECT] || !(t_choice > 0))
        return 0;
    double         x[TAGG_TV_COUNT_];
    int            fr[TAGG_TV_COUNT_];
    tagg_call_in_t other = *in;
    memcpy(x, start, sizeof x);
    memcpy(fr, forced, sizeof fr);
    x[TAGG_TV_DIRECT] = !choice_direct, fr[TAGG_TV_DIRECT] = 1; /* the kind stays as set here */
    other.mode        = choice_direct ? TAGG_AGGREGATE_ALWAYS : TAGG_AGGREGATE_NEVER;
    struct realize_ctx rc = {&other, fr, e, f, 0, {0, 0}};
    double             t  = tagg_tune_choose_realized(e->tune, x, fr, upper, realize_plan, &rc);
    if (t < 0 || (x[TAGG_TV_DIRECT] >= 0.5) == (choice_direct != 0) || !(t <= TAGG_TUNE_RIVAL_BAND * t_choice))
        return 0;
    *out = setting_of(&other, x, fr, e->bufsize, t);
    return 1;
}

/* The measured check's challenger (tune.h): the model's best realized setting
 * of another class than both the choice's and the rival's, if its predicted
 * time is at most TAGG_TUNE_RIVAL_BAND times the choice's; 0 when there is none. */
static int challenger_of(const tagg_file_t *f, const tagg_engine_t *e, const tagg_call_in_t *in,
                         const double start[TAGG_TV_COUNT_], const int forced[TAGG_TV_COUNT_],
                         const double upper[TAGG_TV_COUNT_], const struct tune_setting *choice,
                         const struct tune_setting *rival, struct tune_setting *out)
{
    if (!(choice->pred > 0))
        return 0;
    double x[TAGG_TV_COUNT_];
    memcpy(x, start, sizeof x);
    struct realize_ctx rc = {in, forced, e, f, 2, {choice->cls, rival->cls}};
    double             t  = tagg_tune_choose_realized(e->tune, x, forced, upper, realize_plan, &rc);
    if (t < 0 || !(t <= TAGG_TUNE_RIVAL_BAND * choice->pred))
        return 0;
    *out = setting_of(in, x, forced, e->bufsize, t);
    return 1;
}

int tagg_engine_tune(tagg_file_t *f, tagg_engine_t *e, tagg_call_in_t *in, tagg_dir_t dir)
{
    /* every rank checks every row, so a difference fails every rank alike */
    for (int r = 1; r < f->size; r++)
        if (e->rows[r].tune_sum != e->rows[0].tune_sum) {
            TAGG_ERR(TAGG_E_CONFIG, "tuning: rank %d holds another model than rank 0 (tuning= must name the same "
                     "file, with the same content, on every rank)", r);
            return -1;
        }
    if (!e->tune)
        return 0;
    double x[TAGG_TV_COUNT_] = {0};
    int    forced[TAGG_TV_COUNT_] = {0};
    pattern_of(f, e, in->req, dir, x);
    /* today's choices as the starting point; keys the user set stay forced */
    x[TAGG_TV_DIRECT]      = in->mode == TAGG_AGGREGATE_NEVER;
    x[TAGG_TV_AGGREGATORS] = in->naggr;
    x[TAGG_TV_BUFFER_SIZE] = (double)in->bufsize;
    x[TAGG_TV_BUFFERS]     = in->nbuf;
    x[TAGG_TV_LAYOUT]      = f->cfg.layout;
    x[TAGG_TV_TIER]        = e->tier;
    x[TAGG_TV_THROTTLE]    = in->throttle;
    forced[TAGG_TV_DIRECT]      = in->mode != TAGG_AGGREGATE_AUTO || in->owner;
    forced[TAGG_TV_AGGREGATORS] = in->naggr > 0 || in->owner;
    forced[TAGG_TV_THROTTLE]    = in->throttle >= 0;
    /* file-level settings: the call cannot change them; but a call's round
     * buffer may be smaller than the buffers the file allocated (buffer_size),
     * so the model may choose it up to that size */
    forced[TAGG_TV_BUFFERS] = forced[TAGG_TV_LAYOUT] = forced[TAGG_TV_TIER] = 1;
    double upper[TAGG_TV_COUNT_] = {[TAGG_TV_BUFFER_SIZE] = (double)e->bufsize};
    struct tagg_tune_memo m0 = {.sum = e->tune_sum}, *memo = &m0;
    memcpy(m0.x, x, sizeof m0.x);
    for (int v = 0; v < TAGG_TV_COUNT_; v++)
        m0.forced |= forced[v] ? 1u << v : 0u;
    if (!tagg_tune_uses(e->tune, TAGG_TV_RESIDENT)) /* a state the model ignores makes no new pattern */
        m0.x[TAGG_TV_RESIDENT] = 0;
    int fresh = !memo_find(memo); /* else as an earlier call of the same pattern and model decided */
    if (fresh && !tagg_tune_inside(e->tune, x)) {
        /* a pattern the records did not cover: trees do not extrapolate, the
         * cost model decides (tune.h 'domain'), unchecked */
        memo->kept = 2, memo->choice.cost = 1;
        memo_keep(memo);
        if (f->cfg.verbose >= 2 && f->rank == 0) {
            printf("tagg: tuning model kept the cost model's choice: the call's pattern is outside the model's "
                   "recorded domain (fs_kind=%g is_read=%g ranks=%g nodes=%g bytes_per_rank=%.0f pieces_per_rank=%g)\n",
                   x[TAGG_TV_FS_KIND], x[TAGG_TV_IS_READ], x[TAGG_TV_RANKS], x[TAGG_TV_NODES],
                   x[TAGG_TV_BYTES_PER_RANK], x[TAGG_TV_PIECES_PER_RANK]);
            fflush(stdout);
        }
        fresh = 0;
    }
    if (fresh) {
        double start[TAGG_TV_COUNT_], x0[TAGG_TV_COUNT_];
        memcpy(start, x, sizeof start);
        memcpy(x0, x, sizeof x0);
        struct realize_ctx rc = {in, forced, e, f, 0, {0, 0}};
        double t = tagg_tune_choose_realized(e->tune, x, forced, upper, realize_plan, &rc);
        if (t < 0)
            return 0; /* no candidate the plan runs: the cost model, not remembered */
        double margin = tagg_tune_margin(e->tune);
        /* the cost model's own choice for this call (the plan is pure: every
         * rank computes the same), for the margin and, for every call whatever
         * this file's tuning_check (the memo serves files with and without it),
         * for the measured check */
        int    planned = planned_settings(f, e, in, x0) == 0;
        double t0      = planned ? tagg_tune_predict(e->tune, x0, NULL) : 0;
        struct tune_setting model = setting_of(in, x, forced, e->bufsize, t);
        struct tune_setting cost  = {.cost = 1, .mode = x0[TAGG_TV_DIRECT] >= 0.5 ? TAGG_AGGREGATE_NEVER
                                                                                  : TAGG_AGGREGATE_ALWAYS,
                                     .naggr = (int)x0[TAGG_TV_AGGREGATORS], .throttle = (int)x0[TAGG_TV_THROTTLE],
                                     .bufsize = (uint64_t)x0[TAGG_TV_BUFFER_SIZE], .pred = t0,
                                     .cls = run_class(x0)};
        int differs = planned && !same_run(x, x0);
        /* a predicted gain within the model's error does not override the cost model */
        memo->kept   = margin > 0 && (!planned || !(t < (1 - margin) * t0));
        memo->choice = memo->kept ? cost : model;
        memo->choice_name = memo->kept ? "the cost model's choice" : "the model's choice";
        if (planned) { /* the measured check's rival (tune.h) */
            memo->has_rival = 1;
            if (differs)
                memo->rival = memo->kept ? model : cost;
            else
                memo->has_rival = rival_other(f, e, in, start, forced, upper, x0[TAGG_TV_DIRECT] >= 0.5,
                                              memo->choice.pred, &memo->rival);
            if (memo->has_rival)
                memo->rival_name = differs ? (memo->kept ? "the model's choice" : "the cost model's choice")
                                 : memo->rival.mode == TAGG_AGGREGATE_NEVER ? "the model's direct rival"
                                                                            : "the model's aggregated rival";
            memo->has_challenger = memo->has_rival && challenger_of(f, e, in, start, forced, upper, &memo->choice,
                                                                    &memo->rival, &memo->challenger);
        }
        memo_keep(memo);
        if (f->cfg.verbose >= 2 && f->rank == 0) {
            char                       rv[320] = "";
            const struct tune_setting *r = &memo->rival, *c = &memo->challenger;
            if (memo->has_rival && (dir == TAGG_READ ? tagg_engine_check_reads(f) : tagg_engine_check_writes(f))) {
                int n = snprintf(rv, sizeof rv, "; measured against %s, direct=%d aggregators=%d throttle=%d "
                                 "buffer_size=%llu (predicted %.6fs)", memo->rival_name, r->mode == TAGG_AGGREGATE_NEVER,
                                 r->naggr, r->throttle, (unsigned long long)r->bufsize, r->pred);
                if (memo->has_challenger && n > 0 && (size_t)n < sizeof rv)
                    snprintf(rv + n, sizeof rv - (size_t)n, ", then the winner against the model's challenger, "
                             "direct=%d aggregators=%d throttle=%d buffer_size=%llu (predicted %.6fs)",
                             c->mode == TAGG_AGGREGATE_NEVER, c->naggr, c->throttle, (unsigned long long)c->bufsize,
                             c->pred);
            }
            if (memo->kept)
                printf("tagg: tuning model kept the cost model's choice (predicted %.6fs for direct=%d aggregators=%d "
                       "throttle=%d buffer_size=%llu against %.6fs for its own; margin %.2f)%s\n",
                       t0, cost.mode == TAGG_AGGREGATE_NEVER, cost.naggr, cost.throttle,
                       (unsigned long long)cost.bufsize, t, margin, rv);
            else
                printf("tagg: tuning model chose direct=%d aggregators=%d throttle=%d buffer_size=%llu (predicted "
                       "%.6fs)%s\n", model.mode == TAGG_AGGREGATE_NEVER, model.naggr, model.throttle,
                       (unsigned long long)model.bufsize, t, rv);
            fflush(stdout);
        }
    }
    const struct tune_setting *run = &memo->choice;
    if (memo->has_rival) {
        e->check_names[0] = memo->choice_name, e->check_names[1] = memo->rival_name;
        e->check_names[2] = "the model's challenger";
        int c = tagg_engine_check_choose(f, e, check_key_of(memo), memo->has_challenger, dir);
        if (c) /* timed against the choice, or timed faster (counted there) */
            run = c == 2 ? &memo->challenger : &memo->rival;
    }
    setting_apply(in, run);
    if (run == &memo->choice) {
        if (memo->kept)
            e->tune_kept++, e->tune_outside += memo->kept == 2;
        else
            e->tune_calls++;
    }
    return 0;
}

void tagg_engine_record(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c, tagg_dir_t dir, double t_plan,
                        double t_move)
{
    if (f->rank != 0 || !f->cfg.record || !*f->cfg.record || c->plan.action == TAGG_CALL_NOTHING)
        return;
    tagg_tune_record_t *r = &e->rec;
    memset(r, 0, sizeof *r);
    tagg_req_desc_t *req = malloc((size_t)f->size * sizeof *req); /* this call's rows */
    if (!req)
        return;
    for (int i = 0; i < f->size; i++)
        req[i] = e->rows[i].req;
    pattern_of(f, e, req, dir, r->v);
    free(req);
    settings_of(f, e, &c->plan, r->v);
    r->cost_direct = c->plan.cost_direct, r->cost_aggr = c->plan.cost_aggr;
    r->t_plan = t_plan, r->t_move = t_move, r->t_fs = e->t_fs;
    e->rec_pending = 1;
}

void tagg_engine_record_done(tagg_file_t *f, tagg_engine_t *e, tagg_dir_t dir, int rc)
{
    if (!e->rec_pending)
        return;
    e->rec_pending = 0;
    if (rc < 0)
        return;
    tagg_tune_record_t *r = &e->rec;
    r->t_total            = MPI_Wtime() - e->rec_t0;
    char        line[2048], err[512];
    const char *base = strrchr(f->path, '/');
    int         n    = tagg_tune_record_format(r, dir == TAGG_WRITE ? "write" : "read", base ? base + 1 : f->path,
                                               line, sizeof line);
    if (n < 0 || tagg_record_append_fd(&e->rec_fd, f->cfg.record, line, (size_t)n, err, sizeof err) < 0) {
        if (!e->record_warned++)
            fprintf(stderr, "tagg: warning: %s (records of this file are not kept)\n", n < 0 ? "record too long" : err);
    }
}
