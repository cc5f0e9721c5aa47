/* The engine's data movement for one collective call: pipelined two-phase
 * rounds over an RMA window (MA-TAPIOCA Algorithm 1).
 *
 * Synchronisation is passive target: one MPI_Win_lock_all epoch per call and,
 * per round, MPI_Win_flush to each aggregator (this rank's puts or gets are
 * complete at their targets), MPI_Win_sync and one agreement (an
 * MPI_Allreduce that is also the round's barrier: every rank's transfers are
 * complete, and a rank that failed -- even before the rounds, planning -- stops
 * every rank before any file access of the next round); after the last step
 * only the flushes (the caller's error agreement follows, and no buffer is
 * reused before it). When a domain fits the buffers the plan has one round
 * (model: tagg_call_plan), so a call costs the describe gather, this one
 * agreement and the caller's. Measured with MPICH 4.0.2 (ch4:ucx, Debian 12):
 * with MPI_Win_fence, and with MPI_Win_flush_all, a producer's small put was
 * sometimes not yet visible when the aggregator wrote its buffer (the plugin
 * workload failed in 2 to 6 of 16 runs with fence; random-pattern tests failed
 * about 1 run in 4 with flush_all); per-target MPI_Win_flush shows no loss in a
 * reproducer of 576,000 puts (see round_sync). PSCW would need every
 * aggregator to know its producers per round, an extra exchange for little gain.
 * With N_buff >= 2 buffers the transfers of round k+1 (into buffer (k+1) mod
 * N_buff) are issued before the aggregator writes round k (buffer k mod
 * N_buff), so they proceed while it writes; with overlap=1 the aggregator's
 * file access runs on a helper thread (iothread.h) meanwhile, and with
 * N_buff >= 3 and no throttle it runs ahead of the rounds (run_ahead).
 *
 * Throttling (Tsujita, seed 001): with throttle = t, aggregator i waits for
 * aggregator i - t to finish its file access of the round before starting its
 * own, so at most t aggregators touch the file system at once. The waits form
 * chains that never loop back, so they cannot deadlock.
 *
 * Transfers and their completion go through the memory tier's memWrite /
 * memRead / memFlush (tier.h; one-sided operations on the window whatever the
 * tier); the aggregator moves its own buffer to and from the store through the
 * window's local pointer (for NVR, the mapped file).
 *
 * Nothing here assumes the calling thread: the round loop only uses the call
 * plan, the window and the store. */
#include "dio.h"
#include "engine.h"
#include "error.h"
#include "fault.h"
#include "iothread.h"
#include "mpi_wait.h"

#include <time.h>

#define TAG_THROTTLE 0x7a6 /* one tag: messages between two ranks do not overtake */

/* Where round k, which starts at file offset rlo, lies in its aggregator's
 * buffers: slot k mod nbuf, shifted by rlo modulo the direct-I/O alignment, so
 * that every byte's address in the buffers and its offset in the file agree
 * modulo TAGG_DIO_ALIGN. The aggregator's direct accesses (dio.c) then reach
 * their aligned middle in place; without the shift a domain starting at an
 * unaligned offset (HDF5's data after its 2 KiB header) went through dio.c's
 * bounce buffer: allocated per file and copied, 26.6 against 18.9 ms of file
 * access for the 8 MiB column-block read on the GlusterFS testbed.
 * The buffers have TAGG_DIO_ALIGN bytes beyond nbuf x bufsize for the shift
 * (tagg_engine_buffers). The shift is the same for every round of a domain
 * when the round is a multiple of the alignment, so slots never overlap;
 * otherwise only a domain of one round shifts. Producers and the aggregator
 * compute it from the plan alone, so they agree; a buffer whose base is not
 * aligned only loses the gain (dio.c's bounce), never bytes. */
static size_t slot_at(const tagg_engine_t *e, const tagg_call_t *c, int k, uint64_t rlo)
{
    uint64_t shift = c->round % TAGG_DIO_ALIGN == 0 || c->nrounds == 1 ? rlo % TAGG_DIO_ALIGN : 0;
    return (size_t)((uint64_t)(k % e->nbuf) * c->round + shift);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Throttling: an aggregator with t others before it waits for the one t
 * places before to finish its file access of the round ... */
static void throttle_wait(tagg_file_t *f, const tagg_call_t *c)
{
    int t = c->throttle;
    if (t && c->my_index >= t) { /* wait for the aggregator t places before */
        int         token;
        MPI_Request req;
        if (MPI_Irecv(&token, 1, MPI_INT, c->aggr[c->my_index - t], TAG_THROTTLE, f->comm, &req) == MPI_SUCCESS)
            tagg_mpi_wait(&req, MPI_STATUS_IGNORE);
    }
}

/* ... and lets the one t places after go once its own is done. */
static void throttle_pass(tagg_file_t *f, const tagg_call_t *c, int rc)
{
    int t = c->throttle;
    if (t && c->my_index + t < c->ndom) {
        int token = rc;
        MPI_Send(&token, 1, MPI_INT, c->aggr[c->my_index + t], TAG_THROTTLE, f->comm);
    }
}

/* The aggregator's file access of one round: write or read its covered runs
 * that fall in round k, in buffer slot k mod nbuf. Only store calls (no MPI),
 * so that it may run on the helper thread (overlap=1); the seconds spent in
 * them go to *t_fs (record=). */
typedef struct round_io {
    tagg_file_t         *f;
    const tagg_engine_t *e;
    const tagg_call_t   *c;
    int                  k, failed;
    tagg_dir_t           dir;
    size_t              *cov_pos;
    double               t_fs;
} round_io_t;

static int file_access(void *arg)
{
    round_io_t          *r = arg;
    tagg_file_t         *f = r->f;
    const tagg_call_t   *c = r->c;
    tagg_dir_t           dir = r->dir;
    int                  rc  = r->failed ? -1 : 0; /* failed: no file access, the throttle tokens still pass */
    uint64_t dlo = c->lo + (uint64_t)c->my_dom * c->dsize;
    uint64_t rlo = dlo + (uint64_t)r->k * c->round, rhi = rlo + c->round;
    char    *buf = r->e->base + slot_at(r->e, c, r->k, rlo);
    /* covered runs are sorted: resume where the last round stopped */
    size_t i = *r->cov_pos, n = 0;
    while (i < c->ncov && c->cov[2 * i] + c->cov[2 * i + 1] <= rlo)
        i++;
    while (i + n < c->ncov && c->cov[2 * (i + n)] < rhi)
        n++;
    /* The round's data as one run of at least half of the round's part of
     * the call's range (dense data, shorter than the round only at a
     * domain's or the call's ends): the layout judges it by the call's
     * round, so that every aggregator's rounds go the same way
     * (round_access: a balanced domain of 1 MiB - 60 KiB was buffered where
     * its neighbour's 1 MiB + 64 KiB went direct, until session 51). Sparse
     * rounds keep each run judged by itself. */
    uint64_t part_lo = rlo > c->lo ? rlo : c->lo, part_hi = rhi < c->hi ? rhi : c->hi;
    uint64_t dhi = dlo + c->dsize;
    part_hi = part_hi < dhi ? part_hi : dhi;
    for (size_t j = i; j < i + n; j++) {
        uint64_t a = c->cov[2 * j] > rlo ? c->cov[2 * j] : rlo;
        uint64_t b = c->cov[2 * j] + c->cov[2 * j + 1] < rhi ? c->cov[2 * j] + c->cov[2 * j + 1] : rhi;
        int whole = n == 1 && f->store_ops->round_access && part_hi > part_lo && 2 * (b - a) >= part_hi - part_lo &&
                    c->round > b - a;
        if (rc == 0 && b > a && tagg_fault(dir == TAGG_WRITE ? "aggregator_write" : "aggregator_read", f->rank)) {
            TAGG_ERR(TAGG_E_IO, "aggregator %s of %llu bytes at offset %llu failed: Input/output error (injected by TAGG_FAULT)",
                     dir == TAGG_WRITE ? "write" : "read", (unsigned long long)(b - a), (unsigned long long)a);
            rc = -1;
        }
        if (rc == 0 && b > a) {
            double t = now();
            if (whole)
                rc = f->store_ops->round_access(f, dir == TAGG_WRITE, a, b - a, buf + (a - rlo), c->round);
            else
                rc = dir == TAGG_WRITE ? f->store_ops->pwrite(f, a, b - a, buf + (a - rlo))
                                       : f->store_ops->pread(f, a, b - a, buf + (a - rlo));
            r->t_fs += now() - t;
        }
    }
    *r->cov_pos = i;
    return rc;
}

/* File access of the aggregator for round k, throttled, on this thread. */
static int aggregator_round(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c, int k, tagg_dir_t dir,
                            size_t *cov_pos, int failed)
{
    round_io_t r = {.f = f, .e = e, .c = c, .k = k, .failed = failed, .dir = dir, .cov_pos = cov_pos};
    throttle_wait(f, c);
    int rc = file_access(&r);
    e->t_fs += r.t_fs;
    throttle_pass(f, c, rc);
    return rc;
}

/* Issues this rank's transfers of round k (puts or gets); *pos walks the
 * round-sorted pieces. */
static int transfers(tagg_engine_t *e, const tagg_call_t *c, int k, tagg_dir_t dir, size_t *pos)
{
    size_t i = *pos;
    for (; i < c->npieces && c->pieces[i].round == k; i++) {
        const tagg_piece_t *p   = &c->pieces[i];
        uint64_t            rlo = c->lo + (uint64_t)p->domain * c->dsize + (uint64_t)k * c->round;
        size_t              disp = slot_at(e, c, k, rlo) + (size_t)(p->off - rlo);
        /* memWrite / memRead of the tier layer (one-sided, into the aggregator's tier) */
        int rc = dir == TAGG_WRITE ? e->buf.ops->write(&e->buf, p->mem, (size_t)p->len, disp, c->aggr[p->domain])
                                   : e->buf.ops->read(&e->buf, p->mem, (size_t)p->len, disp, c->aggr[p->domain]);
        if (rc < 0) {
            *pos = i;
            return -1;
        }
    }
    *pos = i;
    return 0;
}

/* memFlush towards each aggregator: this rank's transfers are complete at
 * their targets. Every target is flushed even after one fails. */
static int flush_targets(tagg_engine_t *e, const tagg_call_t *c)
{
    int rc = 0;
    for (int d = 0; d < c->ndom; d++)
        if (e->buf.ops->flush(&e->buf, c->aggr[d]) < 0)
            rc = -1;
    return rc;
}

/* Round synchronisation, passive target: completes this rank's transfers at
 * their targets, then one agreement, so that every rank's transfers of the
 * round are complete before any aggregator touches its buffer (and every rank
 * knows whether all are still well), and MPI_Win_sync so the aggregator's own
 * view of its window memory is current.
 * Completion is one MPI_Win_flush per aggregator, not MPI_Win_flush_all: with
 * MPICH 4.0.2 (Debian 12, ch4:ucx) small puts were still not visible at the
 * target after flush_all + barrier (1 in 100 to 1 in 450 of 37-byte puts in a
 * 30-line reproducer; 0 with per-target flush, 0 with MPI_Accumulate).
 * Returns 0, or -1 on every rank. */
static int round_sync(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c, int rc, int locked)
{
    if (locked && flush_targets(e, c) < 0)
        rc = -1;
    int code = locked ? MPI_Win_sync(e->win) : MPI_SUCCESS;
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Win_sync", code);
        rc = -1;
    }
    rc = tagg_agree(f->comm, rc, "a round of the collective request");
    if (locked)
        MPI_Win_sync(e->win);
    return rc;
}


static int epoch(tagg_engine_t *e, int open)
{
    int code = open ? MPI_Win_lock_all(MPI_MODE_NOCHECK, e->win) : MPI_Win_unlock_all(e->win);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI(open ? "MPI_Win_lock_all" : "MPI_Win_unlock_all", code);
        return -1;
    }
    return 0;
}

/* The helper's job under way, if any (overlap=1). */
typedef struct helper_job {
    round_io_t r;
    int        busy;
} helper_job_t;

/* Starts the aggregator's file access of round k on the helper thread. */
static void job_start(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c, helper_job_t *j, int k, tagg_dir_t dir,
                      size_t *cov)
{
    j->r = (round_io_t){.f = f, .e = e, .c = c, .k = k, .dir = dir, .cov_pos = cov};
    tagg_iothread_start(e->io, file_access, &j->r);
    j->busy = 1;
}

/* Waits for the job under way (0 when none): its result, its error text
 * pushed here, its file-system seconds counted. */
static int job_join(tagg_file_t *f, tagg_engine_t *e, helper_job_t *j)
{
    if (!j->busy)
        return 0;
    tagg_err_sink_t sink;
    int             rc = tagg_iothread_wait(e->io, &sink);
    if (sink.count)
        TAGG_ERR(TAGG_E_IO, "%s", sink.msg);
    e->t_fs += j->r.t_fs;
    f->stats.overlapped++;
    j->busy = 0;
    return rc;
}

/* overlap=1, two buffers or a throttled aggregator: within one round, the
 * aggregator's file access of round ag runs on the helper thread while this
 * thread issues its transfers of round tr and completes them at their
 * targets (the flushes that round_sync repeats then find nothing pending), so
 * the copy into or out of the other slot of the buffers and the file-system
 * call proceed together. The throttle's token passes once the access is
 * done, as on one thread. */
static int overlapped(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c, int tr, int ag, tagg_dir_t dir,
                      size_t *pos, size_t *cov)
{
    helper_job_t j = {.busy = 0};
    job_start(f, e, c, &j, ag, dir, cov);
    int rc = transfers(e, c, tr, dir, pos);
    if (rc == 0 && flush_targets(e, c) < 0)
        rc = -1;
    int fr = job_join(f, e, &j);
    throttle_pass(f, c, fr);
    return rc < 0 ? rc : fr;
}

/* overlap=1, three buffers or more, no throttle: the helper runs ahead of the
 * rounds, so that the aggregator's file accesses follow one another without
 * waiting for the rounds' agreements. Writing, the access of round k-1 starts
 * as round k begins and may last through round k's agreement: it is waited
 * for at the start of round k+1, before the access of round k starts (its
 * failure then fails round k+1's agreement); producers meanwhile put round
 * k+1 into slot (k+1) mod nbuf, which neither access uses. Reading, the
 * access of round k+1 starts once that of round k is done, before round k's
 * agreement, which tells the producers that round k is in the buffers; they
 * get round k-1 meanwhile. Three slots keep the access under way, the one
 * just done and the producers' apart. Returns as pipeline() does; no job is
 * left running. */
static int run_ahead(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c, tagg_dir_t dir, int rc)
{
    helper_job_t j = {.busy = 0};
    size_t       pos = 0, cov = 0;
    int          wr  = dir == TAGG_WRITE;
    if (!wr && rc == 0)
        job_start(f, e, c, &j, 0, dir, &cov);
    for (int k = 0; k <= c->nrounds; k++) {
        int r = job_join(f, e, &j); /* writing: round k-2's access; reading: round k's */
        rc    = rc < 0 ? rc : r;
        int next = wr ? k - 1 : k + 1, tr = wr ? k : k - 1;
        if (rc == 0 && next >= 0 && next < c->nrounds)
            job_start(f, e, c, &j, next, dir, &cov);
        if (rc == 0 && tr >= 0 && tr < c->nrounds)
            rc = transfers(e, c, tr, dir, &pos);
        if (k == c->nrounds) {
            r  = job_join(f, e, &j);
            rc = rc < 0 ? rc : r;
            if (flush_targets(e, c) < 0)
                rc = -1;
            break;
        }
        if (round_sync(f, e, c, rc, 1) < 0) { /* every rank stops here */
            job_join(f, e, &j);
            rc = -1;
            break;
        }
    }
    return rc;
}

/* Whether this call's rounds may overlap (overlap=1, an aggregator with
 * rounds to overlap, a layout whose accesses make no MPI call); starts the
 * helper thread at the first such call of the file. A helper that cannot
 * start leaves the file on one thread. */
static int overlap_ready(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c)
{
    if (!f->cfg.overlap || c->nrounds < 2 || c->my_dom < 0 || !f->store_ops->posix_only ||
        !f->store_ops->posix_only(f) || e->io_failed)
        return 0;
    if (!e->io && !(e->io = tagg_iothread_new()))
        e->io_failed = 1;
    return e->io != NULL;
}

/* The round loop of both directions. Writing, producers put round k while the
 * aggregator writes round k-1; reading (Algorithm 1), producers get round k-1
 * while the aggregator reads round k. A rank that fails keeps taking part in
 * every round (with no more transfers or file access), so no rank is left
 * waiting; the caller then agrees. */
static int pipeline(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c, tagg_dir_t dir)
{
    if (!c->aggr) /* this rank could not plan: it fails the first round's agreement, which stops every rank */
        return tagg_agree(f->comm, -1, "a round of the collective request") < 0 ? -1 : -1;
    int    rc  = c->local_rc < 0 ? -1 : epoch(e, 1), locked = c->local_rc == 0 && rc == 0;
    int    ovl = locked && overlap_ready(f, e, c) && !(c->throttle && c->my_index >= c->throttle);
    /* an aggregator's domain, written round by round: its storage in one piece (store.h reserve) */
    if (dir == TAGG_WRITE && locked && c->my_dom >= 0 && c->ncov && c->nrounds > 1 && f->store_ops->reserve)
        f->store_ops->reserve(f, c->cov[0], c->cov[2 * c->ncov - 2] + c->cov[2 * c->ncov - 1] - c->cov[0]);
    if (ovl && e->nbuf >= 3 && c->throttle == 0) {
        rc     = run_ahead(f, e, c, dir, rc);
        int er = epoch(e, 0);
        return rc ? rc : er;
    }
    size_t pos = 0, cov = 0;
    for (int k = 0; k <= c->nrounds; k++) {
        int tr = dir == TAGG_WRITE ? k : k - 1; /* round of this rank's transfers */
        int ag = dir == TAGG_WRITE ? k - 1 : k; /* round of the aggregator's file access */
        int do_tr = rc == 0 && tr >= 0 && tr < c->nrounds, do_ag = ag >= 0 && ag < c->nrounds && c->my_dom >= 0;
        if (ovl && do_tr && do_ag)
            rc = overlapped(f, e, c, tr, ag, dir, &pos, &cov);
        else {
            if (do_tr)
                rc = transfers(e, c, tr, dir, &pos);
            if (do_ag) {
                int r = aggregator_round(f, e, c, ag, dir, &cov, rc < 0);
                rc    = rc < 0 ? rc : r;
            }
        }
        if (k == c->nrounds) {
            if (locked && flush_targets(e, c) < 0)
                rc = -1;
            break;
        }
        if (round_sync(f, e, c, rc, locked) < 0) { /* every rank stops here */
            rc = -1;
            break;
        }
    }
    int er = locked ? epoch(e, 0) : 0;
    return rc ? rc : er;
}

int tagg_engine_write(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c)
{
    return pipeline(f, e, c, TAGG_WRITE);
}

int tagg_engine_read(tagg_file_t *f, tagg_engine_t *e, const tagg_call_t *c)
{
    return pipeline(f, e, c, TAGG_READ);
}
