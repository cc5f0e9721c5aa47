/* The bottom of the I/O layer: what every layer above the stores uses and
 * nothing below it calls back (file.c calls the backends and the stores; they
 * call these, never file.c):
 *   tagg_agree      the one error agreement of a collective call (io.h);
 *   tagg_at_finalize a callback in MPI_Finalize, the library mapped until then;
 *   tagg_io_direct  each extent straight to the store, in order (io.h);
 *   tagg_io_exec    one request through the file's backend (its ops table),
 *                   shared by file.c's entry points and the asynchronous
 *                   mode's worker threads (async.c), so neither calls back
 *                   into the other. */
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE */
#include "error.h"
#include "fault.h"
#include "io.h"
#include "mpi_wait.h"

#include <dlfcn.h>

int tagg_io_direct(tagg_file_t *f, const tagg_extents_t *x, tagg_dir_t dir)
{
    for (size_t i = 0; i < x->n; i++) {
        const tagg_extent_t *e = &x->v[i];
        if (tagg_fault(dir == TAGG_WRITE ? "direct_write" : "direct_read", f->rank)) {
            TAGG_ERR(TAGG_E_IO, "direct %s of %llu bytes at offset %llu failed: Input/output error (injected by TAGG_FAULT)",
                     dir == TAGG_WRITE ? "write" : "read", (unsigned long long)e->len, (unsigned long long)e->off);
            return -1;
        }
        int rc = dir == TAGG_WRITE            ? f->store_ops->pwrite(f, e->off, e->len, e->mem)
                 : f->store_ops->pread_extent ? f->store_ops->pread_extent(f, e->off, e->len, e->mem)
                                              : f->store_ops->pread(f, e->off, e->len, e->mem);
        if (rc < 0)
            return -1;
    }
    return 0;
}

int tagg_agree(MPI_Comm comm, int local_rc, const char *what)
{
    int rank, in[2], out[2];
    MPI_Comm_rank(comm, &rank);
    /* MINLOC over (ok, rank): the lowest failing rank if any failed. */
    in[0] = local_rc < 0 ? 0 : 1;
    in[1] = rank;
    int code = tagg_mpi_allreduce(in, out, 1, MPI_2INT, MPI_MINLOC, comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (error agreement)", code);
        return -1;
    }
    if (out[0] == 1)
        return 0;
    if (local_rc >= 0)
        TAGG_ERR(TAGG_E_IO, "%s failed on rank %d (see that rank's error stack)", what, out[1]);
    return -1;
}

int tagg_io_exec(tagg_file_t *f, tagg_extents_t *x, tagg_kind_t kind, bool collective, tagg_dir_t dir,
                 int local_rc)
{
    static const tagg_extents_t none = {0};
    int                         rc = local_rc < 0 ? -1 : 0, brc;
    if (rc == 0 && tagg_extents_sort(x) < 0) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        rc = -1;
    }
    /* A rank that failed locally still takes part (with nothing) in a collective
     * backend call, so that no rank is left waiting. */
    x->meta    = kind == TAGG_META;
    f->io_meta = x->meta; /* the store routes metadata apart for node-local subfiles */
    f->io_failed = rc < 0, f->io_agreed = 0;
    if (rc == 0 || collective) {
        const tagg_extents_t *use = rc == 0 ? x : &none;
        brc = dir == TAGG_WRITE ? f->ops->write(f, use, collective) : f->ops->read(f, use, collective);
        if (brc < 0)
            rc = -1;
    }
    if (collective) {
        if (!f->io_agreed) /* else the backend's own gather carried every rank's outcome */
            rc = tagg_agree(f->comm, rc, dir == TAGG_WRITE ? "collective write" : "collective read");
        f->io_agreed = 0;
        if (f->ops->done) /* the agreement waited for every rank: the call's end */
            f->ops->done(f, dir, rc);
    }
    if (rc == 0) {
        f->stats.bytes[dir][kind] += x->bytes;
        f->stats.calls[dir][kind]++;
        f->stats.extents[dir] += x->n;
        f->stats.coll_calls[dir] += collective;
    }
    return rc;
}

/* HDF5 unloads plugins (dlclose) at H5close, which applications often call
 * before MPI_Finalize; the MPI_COMM_SELF delete callbacks that free cached
 * resources must still be mapped then. Once a callback is registered, the
 * library holding this code is made resident (RTLD_NODELETE). */
static void pin_library(void)
{
    static int pinned;
    Dl_info    info;
    if (pinned || !dladdr((void *)pin_library, &info) || !info.dli_fname)
        return;
    pinned = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != NULL;
}

int tagg_at_finalize(MPI_Comm_delete_attr_function *fn, int *keyval)
{
    if (*keyval != MPI_KEYVAL_INVALID)
        return 0;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, fn, keyval, NULL) != MPI_SUCCESS) {
        *keyval = MPI_KEYVAL_INVALID;
        return -1;
    }
    pin_library();
    if (MPI_Comm_set_attr(MPI_COMM_SELF, *keyval, NULL) != MPI_SUCCESS) {
        MPI_Comm_free_keyval(keyval); /* sets MPI_KEYVAL_INVALID */
        return -1;
    }
    return 0;
}
