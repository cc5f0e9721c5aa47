/* The per-file object: collective open/close/size/sync, error agreement,
 * statistics and the per-file summary. */
#include "async.h"
#include "error.h"
#include "h5ctx.h"
#include "io.h"
#include "subfile_index.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Registries, indexed by the config's enums. */
static const tagg_backend_ops_t *const backends[TAGG_BACKEND_COUNT_] = {
    [TAGG_BACKEND_TAPIOCA] = &tagg_backend_tapioca,
    [TAGG_BACKEND_MPIIO]   = &tagg_backend_mpiio,
};
static const tagg_store_ops_t *const stores[TAGG_LAYOUT_COUNT_] = {
    [TAGG_LAYOUT_SHARED]   = &tagg_store_shared,
    [TAGG_LAYOUT_SUBFILES] = &tagg_store_subfiles,
};

/* Collective: the layout of an existing file is a property of the file, not of
 * the configuration: rank 0 looks for the subfile index's magic at path. Returns
 * the layout to use (the configured one when the file is absent or unreadable;
 * the store's open then says why). */
/* Local: the layout of the existing file at path, -1 when absent or unreadable. */
static int probe_layout(const char *path)
{
    if (access(path, F_OK) != 0)
        return -1;
    int probe = tagg_sf_probe(path, NULL, 0);
    return probe < 0 ? -1 : probe ? TAGG_LAYOUT_SUBFILES : TAGG_LAYOUT_SHARED;
}

/* Local (rank 0): the POSIX errno an open with these flags meets before any
 * layout is involved, 0 when none: ENOENT for an absent file without CREAT,
 * EEXIST for an existing one with CREAT|EXCL. The same for both layouts (the
 * path a user names exists exactly when the file does). */
static int open_precondition(const char *path, unsigned flags)
{
    struct stat sb;
    int         exists = stat(path, &sb) == 0;
    if (!exists && errno != ENOENT)
        return 0; /* another reason: the store's open says it */
    if (!exists && !(flags & TAGG_OPEN_CREAT))
        return ENOENT;
    if (exists && (flags & TAGG_OPEN_CREAT) && (flags & TAGG_OPEN_EXCL))
        return EEXIST;
    return 0;
}

static int detect_layout(const char *path, MPI_Comm comm, int configured)
{
    int rank, found = -1;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0)
        found = probe_layout(path);
    if (MPI_Bcast(&found, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
        found = -1;
    return found < 0 ? configured : found;
}

int tagg_file_delete(const char *path, MPI_Comm comm, MPI_Info info, const tagg_config_t *cfg)
{
    return stores[detect_layout(path, comm, cfg->layout)]->del(path, comm, info, cfg);
}

static void stats_reduce(const tagg_file_t *f, tagg_stats_t *total)
{
    MPI_Reduce(&f->stats, total, (int)(sizeof(tagg_stats_t) / sizeof(uint64_t)), MPI_UINT64_T, MPI_SUM, 0,
               f->comm);
}

int tagg_summary_format(const tagg_file_t *f, const tagg_stats_t *t, char *buf, size_t len)
{
    const char *slash = strrchr(f->path, '/');
    char        extra[160] = "", async[256] = "", nvr[96] = "";
    if (f->size_everywhere) /* node-local subfiles */
        snprintf(nvr, sizeof nvr, " destination=nvr nvr_opens=%llu nvr_refused=%llu",
                 (unsigned long long)t->nvr_opens, (unsigned long long)t->nvr_refused);
    if (f->ops->describe) {
        extra[0] = ' ';
        f->ops->describe(f, extra + 1, sizeof extra - 1);
    }
    char comp[256] = "";
    if (f->cfg.compression != TAGG_COMP_NONE)
        snprintf(comp, sizeof comp,
                 " compression=%s comp_logical_bytes=%llu comp_stored_bytes=%llu comp_ratio=%.4f comp_stripes=%llu "
                 "comp_raw_stripes=%llu",
                 tagg_compression_names[f->cfg.compression], (unsigned long long)t->comp_logical,
                 (unsigned long long)t->comp_stored, t->comp_logical ? (double)t->comp_stored / (double)t->comp_logical : 1.0,
                 (unsigned long long)t->comp_stripes, (unsigned long long)t->comp_raw);
    if (f->async_fallback)
        snprintf(async, sizeof async, " async=0 async_fallback=no-MPI_THREAD_MULTIPLE");
    else if (f->cfg.async)
        snprintf(async, sizeof async,
                 " async=1 staged_bytes=%llu staged_calls=%llu stalls=%llu oversize=%llu drains=%llu bg_failures=%llu",
                 (unsigned long long)t->staged_bytes, (unsigned long long)t->staged_calls,
                 (unsigned long long)t->stalls, (unsigned long long)t->oversize, (unsigned long long)t->drains,
                 (unsigned long long)t->bg_failures);
    return snprintf(buf, len,
                    "tagg: file=%s driver=tagg layout=%s backend=%s ranks=%d "
                    "raw_write_bytes=%llu raw_write_calls=%llu raw_read_bytes=%llu raw_read_calls=%llu "
                    "md_write_bytes=%llu md_read_bytes=%llu coll_write_calls=%llu coll_read_calls=%llu "
                    "write_extents=%llu read_extents=%llu aggr_write_calls=%llu aggr_read_calls=%llu%s%s%s%s",
                    slash ? slash + 1 : f->path, tagg_layout_names[f->cfg.layout], f->ops->name, f->size,
                    (unsigned long long)t->bytes[TAGG_WRITE][TAGG_RAW], (unsigned long long)t->calls[TAGG_WRITE][TAGG_RAW],
                    (unsigned long long)t->bytes[TAGG_READ][TAGG_RAW], (unsigned long long)t->calls[TAGG_READ][TAGG_RAW],
                    (unsigned long long)t->bytes[TAGG_WRITE][TAGG_META], (unsigned long long)t->bytes[TAGG_READ][TAGG_META],
                    (unsigned long long)t->coll_calls[TAGG_WRITE], (unsigned long long)t->coll_calls[TAGG_READ],
                    (unsigned long long)t->extents[TAGG_WRITE], (unsigned long long)t->extents[TAGG_READ],
                    (unsigned long long)t->aggr_calls[TAGG_WRITE], (unsigned long long)t->aggr_calls[TAGG_READ], nvr,
                    comp, extra, async);
}

static void file_free(tagg_file_t *f)
{
    if (!f)
        return;
    if (f->comm != MPI_COMM_NULL)
        MPI_Comm_free(&f->comm);
    if (f->info != MPI_INFO_NULL)
        MPI_Info_free(&f->info);
    tagg_config_clear(&f->cfg);
    free(f->path);
    free(f);
}

/* Local: this rank's knowledge of the file size: rank 0 asks the storage, or,
 * with node-local subfiles (size_everywhere), every rank asks for its node's
 * part; other ranks contribute 0. The file size is the maximum over ranks. */
static int local_size(tagg_file_t *f, uint64_t *size)
{
    *size = 0;
    return f->rank == 0 || f->size_everywhere ? f->store_ops->get_size(f, size) : 0;
}

tagg_file_t *tagg_file_open(const char *path, unsigned flags, MPI_Comm comm, MPI_Info info, const tagg_config_t *cfg)
{
    double       t_open = MPI_Wtime();
    tagg_file_t *f      = calloc(1, sizeof *f);
    int          rc     = 0, code;
    if (!f)
        return NULL; /* cannot agree without memory for the struct; other ranks fail in the agreement below */
    f->comm = MPI_COMM_NULL;
    f->info = MPI_INFO_NULL;
    if ((code = MPI_Comm_dup(comm, &f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Comm_dup", code);
        f->comm = MPI_COMM_NULL;
        file_free(f);
        return NULL;
    }
    MPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(f->comm, &f->rank);
    MPI_Comm_size(f->comm, &f->size);
    if (info != MPI_INFO_NULL && (code = MPI_Info_dup(info, &f->info)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Info_dup", code);
        rc = -1;
    }
    /* HDF5 asks parallel drivers for an info object and rejects MPI_INFO_NULL. */
    if (info == MPI_INFO_NULL && (code = MPI_Info_create(&f->info)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Info_create", code);
        rc = -1;
    }
    if (!(f->path = strdup(path)) || tagg_config_copy(&f->cfg, cfg) < 0) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        rc = -1;
    }
    /* One reduction settles the set-up: whether every rank is ready (max of
     * failing rank + 1), and, without TRUNC, the layout rank 0 found in an
     * existing file (a property of the file, not of the configuration). */
    int64_t in[3] = {rc < 0 ? f->rank + 1 : 0, 0, 0}, out[3];
    if (!(flags & TAGG_OPEN_TRUNC) && f->rank == 0 && rc == 0)
        in[1] = probe_layout(path) + 1; /* 0: absent or unreadable */
    if (f->rank == 0 && rc == 0)
        in[2] = open_precondition(path, flags);
    if ((code = MPI_Allreduce(in, out, 3, MPI_INT64_T, MPI_MAX, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (tagg open)", code);
        out[0] = f->rank + 1;
    }
    if (out[0]) {
        if (rc == 0 && code == MPI_SUCCESS)
            TAGG_ERR(TAGG_E_IO, "tagg open (set-up) failed on rank %d (see that rank's error stack)", (int)out[0] - 1);
        file_free(f);
        return NULL;
    }
    if (out[2]) {
        /* the wording of HDF5's POSIX drivers, which applications parse (h5py
         * raises FileNotFoundError / FileExistsError from "errno = N,") */
        TAGG_ERR(TAGG_E_IO, "unable to open file: name = '%s', errno = %d, error message = '%s'", path,
                 (int)out[2], strerror((int)out[2]));
        file_free(f);
        return NULL;
    }
    if (out[1])
        f->cfg.layout = (int)out[1] - 1;
    f->flags     = flags;
    f->ops       = backends[f->cfg.backend];
    f->store_ops = stores[f->cfg.layout];

    /* The backend's open is local (a topology file, tier files); the store's is
     * collective. One reduction agrees on both and brings rank 0's file size. */
    int brc = f->ops->open(f);
    int src = f->store_ops->open(f, flags);
    rc      = brc < 0 || src < 0 ? -1 : 0;
    uint64_t size = 0;
    if (rc == 0 && local_size(f, &size) < 0)
        rc = -1;
    in[0] = rc < 0 ? f->rank + 1 : 0, in[1] = (int64_t)size;
    if ((code = MPI_Allreduce(in, out, 2, MPI_INT64_T, MPI_MAX, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (tagg open)", code);
        out[0] = f->rank + 1;
    }
    if (out[0]) {
        if (rc == 0 && code == MPI_SUCCESS)
            TAGG_ERR(TAGG_E_IO, "tagg open failed on rank %d (see that rank's error stack)", (int)out[0] - 1);
        if (brc == 0)
            f->ops->close(f);
        if (src == 0)
            f->store_ops->close(f);
        file_free(f);
        return NULL;
    }
    size = (uint64_t)out[1];
    if (size && (flags & TAGG_OPEN_TRUNC)) {
        if (f->store_ops->set_size(f, 0) < 0)
            rc = -1;
        /* the agreement is also the barrier: no rank writes before every rank truncated */
        if (tagg_agree(f->comm, rc, "truncating the file at create") < 0)
            goto fail;
        size = 0;
    }
    f->eof = size;
    if (tagg_async_open(f) < 0) /* agreed */
        goto fail;
    if (f->cfg.verbose >= 2 && f->rank == 0) {
        char cfgtext[1024];
        tagg_config_format(&f->cfg, cfgtext, sizeof cfgtext);
        printf("tagg: open file=%s ranks=%d (%.6f s) config: %s%s\n", path, f->size, MPI_Wtime() - t_open, cfgtext,
               tagg_h5ctx_available() ? "" : " (HDF5 transfer context unavailable: all I/O independent)");
        fflush(stdout);
    }
    return f;
fail:
    f->ops->close(f);
    f->store_ops->close(f);
    file_free(f);
    return NULL;
}

int tagg_file_get_size(tagg_file_t *f, uint64_t *size)
{
    uint64_t in[2] = {0, 0}, msg[2];
    int      rc    = local_size(f, &in[0]);
    in[1]          = rc < 0;
    int code       = MPI_Allreduce(in, msg, 2, MPI_UINT64_T, MPI_MAX, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (file size)", code);
        return -1;
    }
    if (msg[1]) {
        if (rc == 0)
            TAGG_ERR(TAGG_E_IO, "getting the size of %s failed on another rank", f->path);
        return -1;
    }
    *size = msg[0];
    return 0;
}

int tagg_file_set_size(tagg_file_t *f, uint64_t size)
{
    uint64_t cur;
    if (f->async && tagg_async_drain(f, true) < 0)
        return -1;
    /* Every rank's earlier writes are done before rank 0 looks at the size. */
    int code = MPI_Barrier(f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Barrier", code);
        return -1;
    }
    if (tagg_file_get_size(f, &cur) < 0)
        return -1;
    if (cur != size) {
        int rc = f->store_ops->set_size(f, size);
        if (tagg_agree(f->comm, rc, "setting the file size") < 0)
            return -1;
    }
    f->eof = size;
    return 0;
}

int tagg_file_sync(tagg_file_t *f)
{
    if (f->async && tagg_async_drain(f, true) < 0)
        return -1;
    return tagg_agree(f->comm, f->store_ops->sync(f), "syncing the file");
}

int tagg_file_close(tagg_file_t *f)
{
    int          rc = 0;
    tagg_stats_t total;
    double       t_close = MPI_Wtime();
    if (f->async) { /* everything staged lands first; a background failure fails the close on every rank */
        rc = tagg_async_drain(f, true);
        tagg_async_close(f);
    }
    if (rc == 0 && f->cfg.fsync && (f->flags & TAGG_OPEN_RDWR)) /* nothing to sync in a read-only file */
        rc = tagg_file_sync(f);
    memset(&total, 0, sizeof total);
    stats_reduce(f, &total);
    /* HDF5 opens files tentatively (to probe them) and closes them without I/O:
     * those opens print nothing. */
    uint64_t moved = total.bytes[0][0] + total.bytes[0][1] + total.bytes[1][0] + total.bytes[1][1];
    if (f->rank == 0 && moved && (f->cfg.verbose >= 1 || (f->cfg.summary && *f->cfg.summary))) {
        char line[1024];
        tagg_summary_format(f, &total, line, sizeof line);
        if (f->cfg.verbose >= 1) {
            printf("%s\n", line);
            fflush(stdout);
        }
        if (f->cfg.summary && *f->cfg.summary) {
            FILE *out = fopen(f->cfg.summary, "a");
            if (!out) {
                TAGG_ERR(TAGG_E_IO, "cannot append the summary to '%s'", f->cfg.summary);
                rc = -1;
            }
            else {
                fprintf(out, "%s\n", line);
                fclose(out);
            }
        }
    }
    int brc = f->ops->close(f);
    int src = f->store_ops->close(f);
    rc      = tagg_agree(f->comm, (rc < 0 || brc < 0 || src < 0) ? -1 : 0, "closing the file");
    if (f->cfg.verbose >= 2 && f->rank == 0) {
        printf("tagg: close file=%s (%.6f s)\n", f->path, MPI_Wtime() - t_close);
        fflush(stdout);
    }
    file_free(f);
    return rc;
}

void tagg_file_set_atomic(tagg_file_t *f, int flag) { f->atomic = flag != 0; }

int tagg_io_write(tagg_file_t *f, tagg_extents_t *x, tagg_kind_t kind, bool collective)
{
    if (f->async && f->atomic) {
        /* atomic mode: what is staged lands first, this write goes straight through */
        if (tagg_async_drain(f, collective) < 0)
            return -1;
        return tagg_io_exec(f, x, kind, collective, TAGG_WRITE, 0);
    }
    if (f->async)
        return tagg_async_write(f, x, kind, collective);
    return tagg_io_exec(f, x, kind, collective, TAGG_WRITE, 0);
}

int tagg_io_read(tagg_file_t *f, tagg_extents_t *x, tagg_kind_t kind, bool collective)
{
    /* asynchronous mode: the staged writes land first, so the read sees them */
    if (f->async && tagg_async_drain(f, collective) < 0)
        return -1; /* collective: every rank failed the drain alike, nobody enters the read */
    return tagg_io_exec(f, x, kind, collective, TAGG_READ, 0);
}
