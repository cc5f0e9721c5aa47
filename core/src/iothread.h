/* A helper thread that runs one file access at a time for its owner thread.
 *
 * The round loop (engine_move.c) hands an aggregator's file access of one
 * round to it and issues the next round's transfers meanwhile, so that the
 * two overlap whatever the MPI library's progress does (MPICH's shared-memory
 * transfers are copies made by the calling thread). The job must make no MPI
 * call (the library may run at MPI_THREAD_SERIALIZED) and must not touch HDF5:
 * its TAGG_ERR text is collected (error.h: tagg_err_capture) and handed to the
 * owner, which pushes it. One owner per helper; jobs of one helper never run
 * at once. */
#ifndef TAGG_IOTHREAD_H
#define TAGG_IOTHREAD_H

#include "error.h"

typedef struct tagg_iothread tagg_iothread_t;

/* A started helper, or NULL when no thread could be started (the caller then
 * runs its jobs itself). */
tagg_iothread_t *tagg_iothread_new(void);
/* Starts fn(arg) on the helper; the previous job must have been waited for. */
void tagg_iothread_start(tagg_iothread_t *t, int (*fn)(void *), void *arg);
/* Waits for the job started last and returns what fn returned; the text of
 * its TAGG_ERR calls goes to *sink (count 0: none). */
int tagg_iothread_wait(tagg_iothread_t *t, tagg_err_sink_t *sink);
/* Stops and joins the helper (no job may be under way). NULL is allowed. */
void tagg_iothread_free(tagg_iothread_t *t);

#endif
