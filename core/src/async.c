/* Asynchronous mode: the staging pool, the work queue and the worker threads
 * (design and rules in async.h). */
#include "async.h"

#include "error.h"
#include "fault.h"
#include "mpi_wait.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BATCH 8 /* jobs of one file a worker runs in a row before it looks at the others */

typedef struct job {
    struct job    *next;
    tagg_async_t  *af;
    tagg_extents_t x;      /* extents over data */
    char          *data;   /* the staged copy */
    uint64_t       bytes;  /* accounted in the pool */
    tagg_kind_t    kind;
    bool           coll;
    uint64_t       ticket; /* collective jobs: start order */
    char           fail[256]; /* staging failed on this rank: the job fails with this text */
} job_t;

struct tagg_async {
    tagg_file_t bg;      /* shadow of the file for the workers: its own communicator */
    int         busy;    /* a worker runs one of its jobs */
    unsigned    pending; /* queued or running */
    int         failed;  /* a background job failed (sticky) */
    char        msg[1100];
    unsigned    scan;    /* pick(): seen in this scan */
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t  work, done;
    job_t          *head, *tail;
    pthread_t      *threads;
    int             nthreads, stop, files;
    uint64_t        cap, used;
    uint64_t        tickets, next_run;
    unsigned        scan;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

/* ---------------------------------------------------------------- workers */

/* Under P.mu. The oldest job that may start: the first of its file in the
 * queue, its file idle, and, when collective, the next collective ticket.
 * With `only`, jobs of that file alone. */
static job_t *pick(const tagg_async_t *only, job_t **prevp)
{
    unsigned scan = ++P.scan;
    job_t   *prev = NULL;
    for (job_t *j = P.head; j; prev = j, j = j->next) {
        tagg_async_t *a = j->af;
        if (a->scan == scan)
            continue; /* not the oldest job of its file */
        a->scan = scan;
        if (a->busy || (only && a != only) || (j->coll && j->ticket != P.next_run))
            continue;
        *prevp = prev;
        return j;
    }
    return NULL;
}

static void job_free(job_t *j)
{
    tagg_extents_free(&j->x);
    free(j->data);
    free(j);
}

/* Runs one job on the file's shadow; TAGG_ERR text goes to a sink (worker
 * threads never touch HDF5). Returns 0, or -1 with the text in msg. */
static int run(job_t *j, char *msg, size_t len)
{
    tagg_async_t   *af = j->af;
    tagg_err_sink_t sink;
    memset(&sink, 0, sizeof sink);
    tagg_err_capture(&sink);
    int local = 0;
    tagg_fault_sleep("TAGG_FAULT_ASYNC_DELAY_MS"); /* tests: a slow worker, so that a tiny pool fills */
    if (j->fail[0]) {
        TAGG_ERR(TAGG_E_NOMEM, "%s", j->fail);
        local = -1;
    }
    else if (tagg_fault("async_write", af->bg.rank)) {
        TAGG_ERR(TAGG_E_IO, "staged write failed: injected by TAGG_FAULT (async_write)");
        local = -1;
    }
    if (local < 0)
        tagg_extents_reset(&j->x);
    int rc = tagg_io_exec(&af->bg, &j->x, j->kind, j->coll, TAGG_WRITE, local);
    if (local < 0) /* tests: the rank whose own job failed records it after the others */
        tagg_fault_sleep("TAGG_FAULT_ASYNC_LATE_MS");
    tagg_err_capture(NULL);
    if (rc < 0)
        snprintf(msg, len, "%s", sink.count ? sink.msg : "no message");
    return rc;
}

static void *worker(void *arg)
{
    (void)arg;
    const tagg_async_t *last  = NULL;
    int                 batch = 0;
    pthread_mutex_lock(&P.mu);
    for (;;) {
        job_t *prev = NULL, *j = NULL;
        if (last && batch < BATCH)
            j = pick(last, &prev);
        if (!j) {
            batch = 0;
            j     = pick(NULL, &prev);
        }
        if (!j) {
            last = NULL;
            if (P.stop && !P.head)
                break;
            pthread_cond_wait(&P.work, &P.mu);
            continue;
        }
        if (prev)
            prev->next = j->next;
        else
            P.head = j->next;
        if (P.tail == j)
            P.tail = prev;
        tagg_async_t *af = j->af;
        af->busy         = 1;
        if (j->coll) {
            P.next_run++;
            pthread_cond_broadcast(&P.work); /* the next collective may start on another worker */
        }
        pthread_mutex_unlock(&P.mu);

        char msg[1024] = "";
        int  rc        = run(j, msg, sizeof msg);
        if (rc < 0)
            af->bg.stats.bg_failures++;
        uint64_t bytes = j->bytes;
        job_free(j);

        pthread_mutex_lock(&P.mu);
        if (rc < 0 && !af->failed) {
            af->failed = 1;
            snprintf(af->msg, sizeof af->msg, "%s", msg);
        }
        af->busy = 0;
        af->pending--;
        P.used -= bytes;
        last = af, batch++;
        pthread_cond_broadcast(&P.done);
        pthread_cond_broadcast(&P.work);
    }
    pthread_mutex_unlock(&P.mu);
    return NULL;
}

/* Worker threads for this process: cores / ranks on the node, 1..4. */
static int default_workers(void)
{
    long        cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *local = getenv("MPI_LOCALNRANKS"); /* MPICH's launcher */
    if (!local)
        local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); /* Open MPI's */
    long ranks = local ? atol(local) : 1;
    long n     = (cores > 0 ? cores : 1) / (ranks > 0 ? ranks : 1);
    return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

/* Local: the first file starts the pool, with its configuration. */
static int pool_acquire(const tagg_config_t *cfg)
{
    int rc = 0;
    pthread_mutex_lock(&P.mu);
    if (P.files == 0) {
        int n = cfg->workers > 0 ? cfg->workers : default_workers();
        P.cap = (uint64_t)cfg->staging_bytes, P.used = 0, P.stop = 0;
        if (!(P.threads = calloc((size_t)n, sizeof *P.threads))) {
            TAGG_ERR(TAGG_E_NOMEM, "out of memory");
            rc = -1;
        }
        for (P.nthreads = 0; rc == 0 && P.nthreads < n; P.nthreads++)
            if (pthread_create(&P.threads[P.nthreads], NULL, worker, NULL) != 0) {
                TAGG_ERR(TAGG_E_IO, "cannot start worker thread %d of %d of the asynchronous mode", P.nthreads + 1, n);
                rc = -1;
                break;
            }
    }
    P.files++;
    pthread_mutex_unlock(&P.mu);
    return rc;
}

/* Local: the last file stops and joins the pool (the queue is empty then). */
static void pool_release(void)
{
    pthread_mutex_lock(&P.mu);
    if (--P.files > 0) {
        pthread_mutex_unlock(&P.mu);
        return;
    }
    P.stop = 1;
    pthread_cond_broadcast(&P.work);
    pthread_mutex_unlock(&P.mu);
    for (int i = 0; i < P.nthreads; i++)
        pthread_join(P.threads[i], NULL);
    free(P.threads);
    pthread_mutex_lock(&P.mu);
    P.threads = NULL, P.nthreads = 0, P.stop = 0;
    pthread_mutex_unlock(&P.mu);
}

/* ---------------------------------------------------------------- the file's side */

int tagg_async_open(tagg_file_t *f)
{
    static int warned;
    if (!f->cfg.async)
        return 0;
    if (!(f->flags & TAGG_OPEN_RDWR)) { /* read-only: nothing to stage; keeps the shared engine resources */
        f->cfg.async = 0;
        return 0;
    }
    int provided = MPI_THREAD_SINGLE, ok, all = 0;
    MPI_Query_thread(&provided);
    ok       = provided == MPI_THREAD_MULTIPLE;
    int code = tagg_mpi_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (thread level)", code);
        return -1;
    }
    if (!all) {
        if (f->rank == 0 && !warned++) {
            fprintf(stderr, "tagg: async=1 needs MPI_THREAD_MULTIPLE (MPI_Init_thread provided level %d on this "
                            "rank): files run synchronously\n", provided);
            fflush(stderr);
        }
        f->cfg.async = 0, f->async_fallback = 1;
        return 0;
    }
    int           rc = 0;
    MPI_Comm      wcomm = MPI_COMM_NULL;
    tagg_async_t *af    = calloc(1, sizeof *af);
    if ((code = MPI_Comm_dup(f->comm, &wcomm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Comm_dup (asynchronous mode)", code);
        wcomm = MPI_COMM_NULL, rc = -1;
    }
    else
        MPI_Comm_set_errhandler(wcomm, MPI_ERRORS_RETURN);
    if (!af) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        rc = -1;
    }
    int acquired = 0;
    if (rc == 0) {
        acquired = 1;
        rc       = pool_acquire(&f->cfg);
    }
    if (tagg_agree(f->comm, rc, "starting the asynchronous mode") < 0) {
        if (acquired)
            pool_release();
        if (wcomm != MPI_COMM_NULL)
            MPI_Comm_free(&wcomm);
        free(af);
        return -1;
    }
    af->bg       = *f; /* same backend, store and configuration; its own communicator */
    af->bg.comm  = wcomm;
    af->bg.async = NULL;
    memset(&af->bg.stats, 0, sizeof af->bg.stats);
    f->async = af;
    return 0;
}

/* Pushes the recorded failure (mine), or names the rank that had it. */
static void report(tagg_file_t *f, int mine, int first)
{
    if (mine)
        TAGG_ERR(TAGG_E_IO, "a staged (asynchronous) write of %s failed in the background: %s", f->path,
                 f->async->msg);
    else
        TAGG_ERR(TAGG_E_IO, "a staged (asynchronous) write of %s failed in the background on rank %d (see that "
                            "rank's error stack)", f->path, first);
}

/* Collective: every rank learns whether any rank's file has failed (and the
 * lowest such rank) and whether any rank's request is oversize. */
static int agree_state(tagg_file_t *f, int failed, int oversize, int out[3])
{
    int in[3] = {failed, oversize, failed ? f->size - f->rank : 0};
    int code  = tagg_mpi_allreduce(in, out, 3, MPI_INT, MPI_MAX, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (asynchronous mode)", code);
        return -1;
    }
    return 0;
}

/* Local: waits until the file has nothing queued or running. */
static int wait_idle(tagg_file_t *f)
{
    tagg_async_t *af = f->async;
    pthread_mutex_lock(&P.mu);
    if (af->pending)
        f->stats.drains++;
    while (af->pending)
        pthread_cond_wait(&P.done, &P.mu);
    int failed = af->failed;
    pthread_mutex_unlock(&P.mu);
    return failed;
}

int tagg_async_drain(tagg_file_t *f, bool collective)
{
    int failed = wait_idle(f), out[3];
    if (!collective) /* reported by the next collective call: see tagg_async_write */
        return 0;
    if (agree_state(f, failed, 0, out) < 0)
        return -1;
    if (out[0])
        report(f, failed, f->size - out[2]);
    return out[0] ? -1 : 0;
}

/* Copies the request into the pool (waiting for space) and queues job j. */
static int stage(tagg_file_t *f, job_t *j, const tagg_extents_t *x, tagg_kind_t kind, bool coll)
{
    tagg_async_t *af = f->async;
    tagg_extents_init(&j->x);
    j->af = af, j->kind = kind, j->coll = coll, j->bytes = x->bytes;
    pthread_mutex_lock(&P.mu);
    if (P.used + j->bytes > P.cap)
        f->stats.stalls++;
    while (P.used + j->bytes > P.cap)
        pthread_cond_wait(&P.done, &P.mu);
    P.used += j->bytes;
    pthread_mutex_unlock(&P.mu);
    if (x->bytes && !(j->data = malloc(x->bytes)))
        snprintf(j->fail, sizeof j->fail, "out of memory staging %llu bytes", (unsigned long long)x->bytes);
    for (size_t i = 0, o = 0; j->data && i < x->n; o += x->v[i].len, i++) {
        memcpy(j->data + o, x->v[i].mem, x->v[i].len);
        if (tagg_extents_push(&j->x, x->v[i].off, x->v[i].len, j->data + o) < 0) {
            snprintf(j->fail, sizeof j->fail, "out of memory describing a staged write");
            break;
        }
    }
    if (j->fail[0] && !coll) { /* an independent write can fail here and now */
        TAGG_ERR(TAGG_E_NOMEM, "%s", j->fail);
        pthread_mutex_lock(&P.mu);
        P.used -= j->bytes;
        pthread_cond_broadcast(&P.done);
        pthread_mutex_unlock(&P.mu);
        job_free(j);
        return -1;
    }
    f->stats.staged_bytes += x->bytes;
    f->stats.staged_calls++;
    pthread_mutex_lock(&P.mu);
    j->ticket = coll ? P.tickets++ : 0;
    if (P.tail)
        P.tail->next = j;
    else
        P.head = j;
    P.tail = j;
    af->pending++;
    pthread_cond_broadcast(&P.work);
    pthread_mutex_unlock(&P.mu);
    return 0;
}

int tagg_async_write(tagg_file_t *f, tagg_extents_t *x, tagg_kind_t kind, bool collective)
{
    tagg_async_t *af = f->async;
    job_t        *j  = calloc(1, sizeof *j); /* before the agreement: no job, no staging */
    pthread_mutex_lock(&P.mu);
    int failed = af->failed, oversize = x->bytes > P.cap || !j, out[3];
    pthread_mutex_unlock(&P.mu);
    if (collective) {
        if (agree_state(f, failed, oversize, out) < 0) {
            free(j);
            return -1;
        }
    }
    else /* An independent call does not report a background failure: HDF5 makes
          * independent metadata writes on rank 0 alone, and failing them there
          * would send rank 0 down another path than the others (a hang in
          * HDF5's next collective). The next collective call reports it. */
        out[0] = 0, out[1] = oversize, out[2] = 0;
    if (out[0] || out[1])
        free(j);
    if (out[0]) {
        /* A failed collective job fails on every rank, but each rank's worker
         * records it in its own time: the agreement may have seen another
         * rank's record before this rank's. Waiting for this rank's own jobs
         * (every rank's workers go on running the same collective jobs, so this
         * ends) lets it report its own message, which names the rank where
         * the job failed first, instead of whichever rank noticed first. */
        if (!failed)
            failed = wait_idle(f);
        report(f, failed, f->size - out[2]);
        return -1;
    }
    if (out[1]) { /* larger than the pool somewhere: after the file's staged writes, synchronously */
        wait_idle(f);
        f->stats.oversize++;
        return tagg_io_exec(f, x, kind, collective, TAGG_WRITE, 0);
    }
    return stage(f, j, x, kind, collective);
}

void tagg_async_close(tagg_file_t *f)
{
    tagg_async_t *af = f->async;
    if (!af)
        return;
    uint64_t       *to   = (uint64_t *)&f->stats;
    const uint64_t *from = (const uint64_t *)&af->bg.stats;
    for (size_t i = 0; i < sizeof f->stats / sizeof(uint64_t); i++)
        to[i] += from[i];
    MPI_Comm_free(&af->bg.comm);
    free(af);
    f->async = NULL;
    pool_release();
}
