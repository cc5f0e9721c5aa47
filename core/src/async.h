/* Asynchronous mode (async=1): staging and I/O scheduling between the entry
 * point (tagg_io_*, file.c) and the backends, after the BG/P I/O-forwarding
 * work (seeds/004: a FIFO work queue drained by a bounded pool of worker
 * threads, several requests per thread; asynchronous staging into a bounded
 * buffer pool; errors of staged operations reported on a later operation) and
 * GLEAN (seeds/003).
 *
 *   staging   a write copies its bytes into the process's staging pool
 *             (staging_bytes, DRAM) and returns; when the pool is full it
 *             waits for space; a single write larger than the pool drains the
 *             file and is written synchronously (no copy).
 *   queue     one process-wide FIFO of staged writes (raw data and metadata),
 *             drained by `workers` threads. Jobs of one file run one at a time,
 *             in FIFO order; collective jobs of all files start in the order
 *             they were queued (a ticket), which is the program order every
 *             rank shares, so collectives match across ranks whatever the
 *             number of threads. A worker that finished a job takes the next
 *             one of the same file when it may (up to 8: several requests per
 *             thread, as in the seed).
 *   comms     jobs run on a second duplicate of the file's communicator (a
 *             shadow of the file object): the first one stays with the
 *             application's thread (HDF5's own collectives, agreements).
 *   window    asynchronous files get private engine resources (never the
 *             world cache of backend_tapioca.c): their rounds run on worker
 *             threads while other files may use the cached window.
 *   ordering  reads, flush, set_size (truncate) and close first wait for the
 *             file's staged writes (a drain), so they see the staged data.
 *             Across ranks, as in MPI-IO: overlapping writes of different
 *             ranks are ordered by a sync (flush) and a barrier, not by a
 *             barrier alone, which does not wait for staged writes.
 *   errors    a failed background job is recorded (sticky); the next
 *             collective call on the file (write, read, flush, truncate, close)
 *             fails on every rank (agreed) with its text, close at the latest.
 *             Independent calls never report it: HDF5 writes metadata
 *             independently on rank 0 alone, and a failure there would take
 *             rank 0 down another path than the others (a hang).
 *
 * Needs MPI_THREAD_MULTIPLE; without it the file runs synchronously and rank 0
 * prints one warning line. */
#ifndef TAGG_ASYNC_H
#define TAGG_ASYNC_H

#include "io.h"

/* Collective (from tagg_file_open, after the backend opened). When
 * f->cfg.async: attaches the asynchronous state (starting the worker pool with
 * the first file) or, when MPI lacks MPI_THREAD_MULTIPLE or a thread cannot be
 * started on some rank, leaves f->async NULL, clears f->cfg.async and sets
 * f->async_fallback. Returns 0, or -1 on every rank with an error pushed. */
int tagg_async_open(tagg_file_t *f);

/* Stages the write (or writes it synchronously when it is larger than the
 * pool). Collective when `collective`: every rank returns the same result. */
int tagg_async_write(tagg_file_t *f, tagg_extents_t *x, tagg_kind_t kind, bool collective);

/* Waits until every staged write of f has landed; when `collective`, reports a
 * background failure on every rank (agreed over f->comm). Returns 0 or -1 with
 * an error pushed. */
int tagg_async_drain(tagg_file_t *f, bool collective);

/* Local, after a collective drain: folds the background statistics into
 * f->stats, frees the per-file state, stops and joins the pool with the last
 * file. */
void tagg_async_close(tagg_file_t *f);

#endif
