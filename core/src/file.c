/* The per-file object: collective open/close/size/sync, error agreement,
 * statistics and the per-file summary. */
#include "async.h"
#include "dio.h"
#include "error.h"
#include "h5ctx.h"
#include "fs_kind.h"
#include "fault.h"
#include "io.h"
#include "md_echo.h"
#include "mpi_wait.h"
#include "sf_stripe_codec.h"
#include "subfile_index.h"
#include "wbehind.h"

/* f->wb_coll: the last collective call, for collective rewrites (io_write). */
enum { WB_COLL_OTHER = 0, WB_COLL_READ, WB_COLL_KEPT };

#include <errno.h>
#include <fcntl.h>
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

/* Local (rank 0), one look at the path before the open: returns the POSIX
 * errno an open with these flags meets before any layout is involved, 0 when
 * none (ENOENT for an absent file without CREAT, EEXIST for an existing one
 * with CREAT|EXCL; the same for both layouts: the path a user names exists
 * exactly when the file does; EISDIR for a directory, EINVAL for anything
 * else that is not a regular file: no FIFO, socket or device), and sets *layout to what is there (-1: absent
 * or unreadable) and *seen as tagg_file_t.seen says (the store's open takes
 * it instead of looking again). One stat, and the index probe only when
 * something exists: on a parallel file system every lookup is a round trip
 * to a server. For a read-only open, *plain_fd (may be NULL) gets the probe's
 * descriptor of a plain file (the shared layout's POSIX access keeps it). */
static int look_at(const char *path, unsigned flags, int *layout, int *seen, char **text, size_t *len, int *plain_fd)
{
    struct stat sb;
    *layout = -1, *seen = 0;
    if (text)
        *text = NULL;
    if (plain_fd)
        *plain_fd = -1;
    if (stat(path, &sb) != 0) {
        *seen = errno == ENOENT ? 1 : 0;
        return errno == ENOENT && !(flags & TAGG_OPEN_CREAT) ? ENOENT : 0; /* another errno: the store's open says it */
    }
    if (!S_ISREG(sb.st_mode)) /* a FIFO would block an open, a directory is none */
        return S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
    /* an index's text comes along (the store parses it); a plain file's
     * descriptor too, opened as the open asks when it can be (the store may
     * keep it; a create over it cuts it through this descriptor) */
    int probe = tagg_sf_probe_open(path, text, len, plain_fd, (flags & TAGG_OPEN_RDWR) != 0, NULL, 0);
    *layout   = probe < 0 ? -1 : probe ? TAGG_LAYOUT_SUBFILES : TAGG_LAYOUT_SHARED;
    *seen     = probe < 0 ? 0 : probe ? 3 : 2; /* unreadable: the store's open looks (and says why) */
    return (flags & TAGG_OPEN_CREAT) && (flags & TAGG_OPEN_EXCL) ? EEXIST : 0;
}

/* Collective: the layout of an existing file is a property of the file, not of
 * the configuration: rank 0 looks for the subfile index's magic at path. Returns
 * the layout to use (the configured one when the file is absent or unreadable;
 * the store's open then says why). */
static int detect_layout(const char *path, MPI_Comm comm, int configured)
{
    int rank, found = -1, seen;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0)
        (void)look_at(path, 0, &found, &seen, NULL, NULL, NULL);
    if (tagg_mpi_bcast(&found, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
        found = -1;
    return found < 0 ? configured : found;
}

int tagg_file_delete(const char *path, MPI_Comm comm, MPI_Info info, const tagg_config_t *cfg)
{
    return stores[detect_layout(path, comm, cfg->layout)]->del(path, comm, info, cfg);
}

/* The close's one reduction: element 0 the lowest failing rank (UINT64_MAX
 * when none failed), the others the statistics, summed. */
#define NSTATS (sizeof(tagg_stats_t) / sizeof(uint64_t))
static void close_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const uint64_t *a = in;
    uint64_t       *b = inout;
    (void)type;
    for (int i = 0; i < *len; i += (int)(1 + NSTATS)) {
        b[i] = a[i] < b[i] ? a[i] : b[i];
        for (size_t k = 1; k <= NSTATS; k++)
            b[i + (int)k] += a[i + (int)k];
    }
}

/* Collective: agrees on local_rc and sums the statistics into total, in one
 * MPI_Allreduce (a user-defined operation made once per process). 0, or -1 on
 * every rank, with the lowest failing rank named on the others' stacks. */
static int close_reduce(tagg_file_t *f, int local_rc, tagg_stats_t *total)
{
    static MPI_Op op = MPI_OP_NULL;
    uint64_t      in[1 + NSTATS], out[1 + NSTATS];
    int           code = MPI_SUCCESS;
    if (op == MPI_OP_NULL && (code = MPI_Op_create(close_op, 1, &op)) != MPI_SUCCESS)
        op = MPI_OP_NULL;
    in[0] = local_rc < 0 ? (uint64_t)f->rank : UINT64_MAX;
    memcpy(in + 1, &f->stats, sizeof f->stats);
    /* an element is one (rank, stats...) record: a contiguous type keeps it whole */
    MPI_Datatype rec = MPI_DATATYPE_NULL;
    if (code == MPI_SUCCESS && (code = MPI_Type_contiguous((int)(1 + NSTATS), MPI_UINT64_T, &rec)) == MPI_SUCCESS &&
        (code = MPI_Type_commit(&rec)) == MPI_SUCCESS)
        code = tagg_mpi_allreduce(in, out, 1, rec, op, f->comm);
    if (rec != MPI_DATATYPE_NULL)
        MPI_Type_free(&rec);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (closing the file)", code);
        memset(total, 0, sizeof *total);
        return -1;
    }
    memcpy(total, out + 1, sizeof *total);
    if (out[0] == UINT64_MAX)
        return 0;
    if (local_rc >= 0)
        TAGG_ERR(TAGG_E_IO, "closing the file failed on rank %d (see that rank's error stack)", (int)out[0]);
    return -1;
}

int tagg_summary_format(const tagg_file_t *f, const tagg_stats_t *t, char *buf, size_t len)
{
    const char *slash = strrchr(f->path, '/');
    char        extra[384] = "", async[256] = "", nvr[96] = "";
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
                 " compression=%s comp_codec=%s comp_logical_bytes=%llu comp_stored_bytes=%llu comp_ratio=%.4f "
                 "comp_stripes=%llu comp_raw_stripes=%llu",
                 tagg_compression_names[f->cfg.compression],
                 tagg_sfz_name(f->comp_codec) ? tagg_sfz_name(f->comp_codec) : "none", (unsigned long long)t->comp_logical,
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
    char sf[128] = "";
    if (f->store_ops == stores[TAGG_LAYOUT_SUBFILES] && (f->flags & TAGG_OPEN_RDWR))
        snprintf(sf, sizeof sf, " sf_composed=%llu sf_reread=%llu sf_pre_read=%llu", (unsigned long long)t->sf_composed,
                 (unsigned long long)t->sf_reread, (unsigned long long)t->sf_pre_read);
    else if (f->store_ops == stores[TAGG_LAYOUT_SUBFILES])
        snprintf(sf, sizeof sf, " sf_verified=%llu sf_blocks=%llu sf_from_copy=%llu sf_shared=%llu",
                 (unsigned long long)t->sf_verified, (unsigned long long)t->sf_blocks, (unsigned long long)t->sf_from_copy,
                 (unsigned long long)t->sf_shared);
    char dio[192] = "";
    if (f->cfg.direct_io != TAGG_DIO_MODE_OFF && f->cfg.backend != TAGG_BACKEND_MPIIO)
        snprintf(dio, sizeof dio, " dio_read_bytes=%llu dio_write_bytes=%llu dio_bounced_bytes=%llu",
                 (unsigned long long)t->dio_bytes[0], (unsigned long long)t->dio_bytes[1],
                 (unsigned long long)(t->dio_bytes[2] + t->dio_bytes[3]));
    if (t->rc_reads[0] || t->rc_reads[1]) {
        size_t at = strlen(dio);
        snprintf(dio + at, sizeof dio - at, " rc_hits=%llu rc_fills=%llu", (unsigned long long)t->rc_reads[0],
                 (unsigned long long)t->rc_reads[1]);
    }
    char fio[64] = "";
    if (f->store_ops == stores[TAGG_LAYOUT_SHARED] && f->cfg.backend != TAGG_BACKEND_MPIIO)
        snprintf(fio, sizeof fio, " posix_handles=%llu mpiio_handles=%llu posix_early=%llu",
                 (unsigned long long)t->handles[0], (unsigned long long)t->handles[1], (unsigned long long)t->handles[2]);
    char ovl[40] = "";
    if (f->cfg.backend != TAGG_BACKEND_MPIIO)
        snprintf(ovl, sizeof ovl, " overlapped_rounds=%llu", (unsigned long long)t->overlapped);
    char wb[256] = "";
    if (f->cfg.write_behind > 0 && (f->flags & TAGG_OPEN_RDWR) && !f->cfg.async)
        snprintf(wb, sizeof wb,
                 " wb_calls=%llu wb_bytes=%llu wb_read_bytes=%llu wb_flushes=%llu wb_coll_kept=%llu wb_coll_read=%llu",
                 (unsigned long long)t->wb_calls, (unsigned long long)t->wb_bytes,
                 (unsigned long long)t->wb_read_bytes, (unsigned long long)t->wb_flushes,
                 (unsigned long long)t->wb_coll_kept, (unsigned long long)t->wb_coll_read);
    char echo[40] = "";
    if (t->md_echoes)
        snprintf(echo, sizeof echo, " md_echoes=%llu", (unsigned long long)t->md_echoes);
    return snprintf(buf, len,
                    "tagg: file=%s driver=tagg layout=%s backend=%s ranks=%d "
                    "raw_write_bytes=%llu raw_write_calls=%llu raw_read_bytes=%llu raw_read_calls=%llu "
                    "md_write_bytes=%llu md_read_bytes=%llu coll_write_calls=%llu coll_read_calls=%llu "
                    "write_extents=%llu read_extents=%llu aggr_write_calls=%llu aggr_read_calls=%llu%s%s%s%s%s%s%s%s%s%s",
                    slash ? slash + 1 : f->path, tagg_layout_names[f->cfg.layout], f->ops->name, f->size,
                    (unsigned long long)t->bytes[TAGG_WRITE][TAGG_RAW], (unsigned long long)t->calls[TAGG_WRITE][TAGG_RAW],
                    (unsigned long long)t->bytes[TAGG_READ][TAGG_RAW], (unsigned long long)t->calls[TAGG_READ][TAGG_RAW],
                    (unsigned long long)t->bytes[TAGG_WRITE][TAGG_META], (unsigned long long)t->bytes[TAGG_READ][TAGG_META],
                    (unsigned long long)t->coll_calls[TAGG_WRITE], (unsigned long long)t->coll_calls[TAGG_READ],
                    (unsigned long long)t->extents[TAGG_WRITE], (unsigned long long)t->extents[TAGG_READ],
                    (unsigned long long)t->aggr_calls[TAGG_WRITE], (unsigned long long)t->aggr_calls[TAGG_READ], nvr,
                    comp, extra, async, wb, sf, dio, fio, ovl, echo);
}

unsigned tagg_file_fs_view(tagg_file_t *f)
{
    if (!f->fs_view_read)
        f->fs_view = tagg_fs_view(f->path), f->fs_view_read = 1;
    return f->fs_view;
}

static void file_free(tagg_file_t *f)
{
    if (!f)
        return;
    if (f->comm != MPI_COMM_NULL)
        MPI_Comm_free(&f->comm);
    if (f->info != MPI_INFO_NULL)
        MPI_Info_free(&f->info);
    tagg_wb_free(f->wb);
    free(f->echo);
    tagg_config_clear(&f->cfg);
    free(f->seen_text);
    if (f->seen_fd >= 0)
        close(f->seen_fd);
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

/* FNV-1a of the configuration strings (NULL and "" differ), in 0..2^62: every
 * rank's hash rides in the open's first reduction, as h and -h under MPI_MAX,
 * so all learn at once whether every rank holds rank 0's strings. */
static int64_t hash_strings(const char *env, const char *str)
{
    uint64_t    h = 1469598103934665603ull;
    const char *s[2] = {env, str};
    for (int i = 0; i < 2; i++) {
        h = (h ^ (s[i] ? 1u : 2u)) * 1099511628211ull;
        for (const char *p = s[i]; p && *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
    }
    return (int64_t)(h >> 2);
}

/* Rank 0's string, on every rank (NULL stays NULL). Collective, agreed: -1 on
 * every rank when any rank could not allocate. */
static int bcast_string(MPI_Comm comm, int rank, const char *s, char **out)
{
    long long len = rank == 0 ? (s ? (long long)strlen(s) : -1) : 0;
    *out          = NULL;
    if (tagg_mpi_bcast(&len, 1, MPI_LONG_LONG, 0, comm) != MPI_SUCCESS)
        return tagg_agree(comm, -1, "broadcasting the configuration");
    if (len < 0)
        return 0;
    char *buf = malloc((size_t)len + 1);
    if (!buf)
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
    if (tagg_agree(comm, buf ? 0 : -1, "allocating the configuration string") < 0) {
        free(buf);
        return -1;
    }
    if (rank == 0)
        memcpy(buf, s, (size_t)len + 1);
    tagg_mpi_bcast(buf, (int)len + 1, MPI_CHAR, 0, comm);
    *out = buf;
    return 0;
}

/* The configuration from rank 0's strings, on every rank (the slow path of an
 * open where the ranks' strings differ, and of a delete). Collective; a failure
 * is every rank's (the strings are the same, allocation failures are agreed). */
int tagg_config_from_rank0(MPI_Comm comm, const char *env, const char *str, tagg_config_t *cfg)
{
    int   rank, rc = -1;
    char *env_all = NULL, *str_all = NULL, err[TAGG_CONFIG_ERRLEN];
    MPI_Comm_rank(comm, &rank);
    if (bcast_string(comm, rank, env, &env_all) == 0 && bcast_string(comm, rank, str, &str_all) == 0) {
        int built = tagg_config_build(cfg, env_all, str_all, err, sizeof err); /* cleared on failure */
        if (built < 0)
            TAGG_ERR(TAGG_E_CONFIG, "%s", err);
        rc = tagg_agree(comm, built, "building the configuration");
        if (rc < 0 && built == 0)
            tagg_config_clear(cfg);
    }
    free(env_all), free(str_all);
    return rc;
}

/* Collective. comm is the file's (taken over: freed with the file, or here on
 * failure). The configuration is cfg when given, else built from env and str
 * (the TAGG_* environment and the driver's configuration string): rank 0's
 * strings count, and when every rank holds the same (the usual case) each rank
 * builds it from its own, so nothing is broadcast. local_rc < 0: this rank
 * failed before (an error pushed); the open fails on every rank.
 *
 * Synchronisation: ONE MPI_Allreduce before the store's open settles whether
 * every rank is ready (set-up, configuration, the backend's local open), whether
 * the strings are the same everywhere, the layout rank 0 finds in an existing
 * file and the POSIX precondition (ENOENT / EEXIST, so HDF5's tentative open of
 * a file that does not exist yet costs that one reduction); the store's open;
 * ONE MPI_Allreduce agreeing on it and bringing the file size. */
static tagg_file_t *file_open(const char *path, unsigned flags, MPI_Comm comm, MPI_Info info, const tagg_config_t *cfg,
                              const char *env, const char *str, int local_rc)
{
    double       t_open = MPI_Wtime();
    tagg_file_t *f      = calloc(1, sizeof *f);
    int          rank, nprocs, rc = local_rc < 0 ? -1 : 0, cfg_rc = 0, code, have_cfg = 0, brc = -1;
    char         err[TAGG_CONFIG_ERRLEN];
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    if (!f) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        rc = -1;
    }
    else {
        f->comm = comm, f->rank = rank, f->size = nprocs, f->info = MPI_INFO_NULL, f->seen_fd = -1;
        if (info != MPI_INFO_NULL && (code = MPI_Info_dup(info, &f->info)) != MPI_SUCCESS) {
            TAGG_ERR_MPI("MPI_Info_dup", code);
            f->info = MPI_INFO_NULL, rc = -1;
        }
        /* HDF5 asks parallel drivers for an info object and rejects MPI_INFO_NULL. */
        if (info == MPI_INFO_NULL && (code = MPI_Info_create(&f->info)) != MPI_SUCCESS) {
            TAGG_ERR_MPI("MPI_Info_create", code);
            f->info = MPI_INFO_NULL, rc = -1;
        }
        if (!(f->path = strdup(path))) {
            TAGG_ERR(TAGG_E_NOMEM, "out of memory");
            rc = -1;
        }
        if (cfg) {
            if (tagg_config_copy(&f->cfg, cfg) < 0) {
                TAGG_ERR(TAGG_E_NOMEM, "out of memory");
                rc = -1;
            }
            else
                have_cfg = 1;
        }
        else if (tagg_config_build(&f->cfg, env, str, err, sizeof err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "%s", err);
            cfg_rc = -1;
        }
        else
            have_cfg = 1;
        if (have_cfg) /* tagg_config_build leaves a failed configuration cleared */
            f->ops = backends[f->cfg.backend];
        /* the backend's open is local (a topology file, tier files) */
        if (have_cfg && rc == 0 && (brc = f->ops->open(f)) < 0)
            rc = -1;
    }
    int64_t h     = cfg ? 0 : hash_strings(env, str);
    int64_t in[6] = {rc < 0 ? rank + 1 : 0, cfg_rc < 0 ? rank + 1 : 0, 0, 0, h, -h}, out[6];
    int     found = -1, seen = 0;
    char   *seen_text = NULL;
    size_t  seen_len  = 0;
    int     seen_fd   = -1;
    if (rank == 0)
        in[3] = look_at(path, flags, &found, &seen, (flags & TAGG_OPEN_TRUNC) ? NULL : &seen_text, &seen_len,
                        f ? &seen_fd : NULL);
    if (f) /* freed after the store's open, or by file_free */
        f->seen_text = seen_text, f->seen_len = seen_len, f->seen_fd = seen_fd;
    else
        free(seen_text);
    if (rank != 0 && f && have_cfg && rc == 0) /* this rank's own descriptor, while rank 0 looks */
        f->seen_fd = tagg_store_shared_early_fd(f, flags);
    if (!(flags & TAGG_OPEN_TRUNC))
        in[2] = found + 1; /* 0: absent or unreadable (and on every other rank) */
    /* A create over an existing plain file: rank 0 truncates it here, so the
     * store's open finds it empty (no collective MPI_File_set_size and its
     * agreement after the open); a failure rides in the reduction. Subfiled
     * files keep the store's own truncation (every subfile goes). */
    if (rank == 0 && !in[3] && rc == 0 && have_cfg && (flags & TAGG_OPEN_TRUNC) &&
        f->cfg.layout == TAGG_LAYOUT_SHARED && found == TAGG_LAYOUT_SHARED &&
        (seen_fd >= 0 && (fcntl(seen_fd, F_GETFL) & O_ACCMODE) == O_RDWR ? ftruncate(seen_fd, 0) : truncate(path, 0)) != 0)
        in[3] = errno ? errno : EIO;
    if ((code = tagg_mpi_allreduce(in, out, 6, MPI_INT64_T, MPI_MAX, comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (tagg open)", code);
        out[0] = rank + 1, rc = -1;
    }
    int same = out[4] == -out[5];
    if (!f || out[0] || (same && out[1]) || (same && out[3])) {
        if (rc == 0 && out[0])
            TAGG_ERR(TAGG_E_IO, "tagg open (set-up) failed on rank %d (see that rank's error stack)", (int)out[0] - 1);
        else if (rc == 0 && cfg_rc == 0 && out[1])
            TAGG_ERR(TAGG_E_CONFIG, "tagg configuration failed on rank %d (see that rank's error stack)",
                     (int)out[1] - 1);
        else if (!out[0] && !out[1] && out[3])
            /* the wording of HDF5's POSIX drivers, which applications parse (h5py
             * raises FileNotFoundError / FileExistsError from "errno = N,") */
            TAGG_ERR(TAGG_E_IO, "unable to open file: name = '%s', errno = %d, error message = '%s'", path,
                     (int)out[3], out[3] == EINVAL ? "not a regular file" : strerror((int)out[3]));
        if (f && brc == 0)
            f->ops->close(f);
        if (f)
            file_free(f);
        else
            MPI_Comm_free(&comm);
        return NULL;
    }
    if (!same) {
        /* The ranks' strings differ: rank 0's count (slow path, agreed). */
        if (brc == 0)
            f->ops->close(f);
        if (have_cfg)
            tagg_config_clear(&f->cfg);
        brc = -1;
        if (tagg_config_from_rank0(f->comm, env, str, &f->cfg) < 0) {
            file_free(f);
            return NULL;
        }
        if (out[3]) {
            TAGG_ERR(TAGG_E_IO, "unable to open file: name = '%s', errno = %d, error message = '%s'", path,
                     (int)out[3], strerror((int)out[3]));
            file_free(f);
            return NULL;
        }
        f->ops = backends[f->cfg.backend];
        brc    = f->ops->open(f); /* its failure rides in the reduction after the store's open */
    }
    /* what one rank reads for all (the tuning model), before the store makes any file */
    if (f->ops->open_shared && f->ops->open_shared(f, brc == 0) < 0) {
        if (brc == 0)
            f->ops->close(f);
        file_free(f);
        return NULL;
    }
    if (out[2])
        f->cfg.layout = (int)out[2] - 1;
    f->flags     = flags;
    f->store_ops = stores[f->cfg.layout];
    f->seen      = rank == 0 ? seen : 0; /* what rank 0 found (the subfile store's open takes it) */

    /* The store's open is collective. One reduction agrees on it (and on the
     * backend's open of the slow path) and brings rank 0's file size. */
    int src = f->store_ops->open(f, flags);
    f->seen = 0;
    free(f->seen_text), f->seen_text = NULL;
    if (f->seen_fd >= 0) /* not kept by the store */
        close(f->seen_fd), f->seen_fd = -1;
    rc      = brc < 0 || src < 0 ? -1 : 0;
    uint64_t size = 0;
    if (rc == 0 && local_size(f, &size) < 0)
        rc = -1;
    in[0] = rc < 0 ? f->rank + 1 : 0, in[1] = (int64_t)size;
    if ((code = tagg_mpi_allreduce(in, out, 2, MPI_INT64_T, MPI_MAX, f->comm)) != MPI_SUCCESS) {
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

tagg_file_t *tagg_file_open(const char *path, unsigned flags, MPI_Comm comm, MPI_Info info, const tagg_config_t *cfg)
{
    MPI_Comm dup = MPI_COMM_NULL;
    int      code = MPI_Comm_dup(comm, &dup);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Comm_dup", code);
        return NULL;
    }
    return file_open(path, flags, dup, info, cfg, NULL, NULL, 0);
}

tagg_file_t *tagg_file_open_config(const char *path, unsigned flags, MPI_Comm comm, MPI_Info info, const char *env,
                                   const char *str, int local_rc)
{
    return file_open(path, flags, comm, info, NULL, env, str, local_rc);
}

int tagg_file_get_size(tagg_file_t *f, uint64_t *size)
{
    uint64_t in[2] = {0, 0}, msg[2];
    int      rc    = local_size(f, &in[0]);
    in[1]          = rc < 0;
    int code       = tagg_mpi_allreduce(in, msg, 2, MPI_UINT64_T, MPI_MAX, f->comm);
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
    f->wb_coll = WB_COLL_OTHER;
    int wrc    = tagg_wb_flush(f); /* what this rank kept lands first; agreed below */
    if (!f->size_everywhere) {
        /* Files that tagg alone writes (a shared file, or subfiles whose
         * index says "open" to every other opener): the logical size is what
         * the open found or the last set_size made, grown by the writes every
         * rank made since. One reduction, which also orders every rank's
         * earlier writes before a change of size (no barrier, no rank asking
         * the storage: on a network file system a stat after writes is a
         * round trip to the server) and carries a failed write-out. */
        int64_t mine[2] = {(int64_t)(f->written_end > f->eof ? f->written_end : f->eof), wrc < 0}, all[2] = {0, 0};
        int     code    = tagg_mpi_allreduce(mine, all, 2, MPI_INT64_T, MPI_MAX, f->comm);
        if (code != MPI_SUCCESS) {
            TAGG_ERR_MPI("MPI_Allreduce (file size)", code);
            return -1;
        }
        if (all[1]) {
            if (wrc == 0)
                TAGG_ERR(TAGG_E_IO, "writing the bytes kept behind failed on another rank");
            return -1;
        }
        cur = (uint64_t)all[0];
    }
    else {
        /* Node-local subfiles: each node's part is known on that node; every
         * rank's earlier writes are done before they are asked (the
         * agreement orders them). */
        if (tagg_agree(f->comm, wrc, "writing the bytes kept behind") < 0)
            return -1;
        if (tagg_file_get_size(f, &cur) < 0)
            return -1;
    }
    if (cur != size) {
        if (f->echo)
            tagg_md_echo_forget(f->echo);
        int rc = f->store_ops->set_size(f, size);
        if (tagg_agree(f->comm, rc, "setting the file size") < 0)
            return -1;
    }
    f->eof = size, f->written_end = 0;
    return 0;
}

static int file_sync(tagg_file_t *f)
{
    if (f->async && tagg_async_drain(f, true) < 0)
        return -1;
    f->wb_coll = WB_COLL_OTHER;
    int wrc    = tagg_wb_flush(f), src = f->store_ops->sync(f);
    tagg_fault_sleep("TAGG_FAULT_SYNC_DELAY_MS"); /* tests: a slow flush */
    if (tagg_agree(f->comm, wrc < 0 || src < 0 ? -1 : 0, "syncing the file") < 0)
        return -1;
    if (f->flags & TAGG_OPEN_RDWR) /* direct_io=auto: this process's later files on this kind of disk */
        tagg_dio_note_sync(tagg_file_fs_view(f));
    return 0;
}

int tagg_file_sync(tagg_file_t *f)
{
    double t0 = MPI_Wtime();
    int    rc = file_sync(f);
    if (f->ops->synced) /* the measured check: what the writes before it left to the sync */
        f->ops->synced(f, MPI_Wtime() - t0, rc);
    return rc;
}

/* Rank 0: the summary line of a file that moved data, printed (verbose >= 1)
 * and appended to summary= (-1 when that failed, error pushed). HDF5 opens
 * files tentatively (to probe them) and closes them without I/O: those opens
 * print nothing. */
static int print_summary(tagg_file_t *f, const tagg_stats_t *total)
{
    uint64_t moved = total->bytes[0][0] + total->bytes[0][1] + total->bytes[1][0] + total->bytes[1][1];
    int      rc    = 0;
    if (!moved || (f->cfg.verbose < 1 && !(f->cfg.summary && *f->cfg.summary)))
        return 0;
    char line[2048];
    tagg_summary_format(f, total, line, sizeof line);
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
    return rc;
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
    int wrc = tagg_wb_flush(f); /* what this rank kept; close_reduce below agrees */
    if (rc == 0 && f->cfg.fsync && (f->flags & TAGG_OPEN_RDWR)) /* nothing to sync in a read-only file */
        rc = file_sync(f);
    if (wrc < 0)
        rc = -1;
    /* The store closes (collectively; a subfiled file's close counts its
     * checksums), then the statistics are summed: with summary= by their own
     * reduction first, so that the summary file's failure fails the close on
     * every rank; then ONE reduction agrees on the close (and sums the
     * statistics for the printed line). The backend's close is local (a
     * private window's collective free is no agreement). */
    int src     = f->store_ops->close(f);
    int to_file = f->cfg.summary && *f->cfg.summary;
    if (to_file) {
        memset(&total, 0, sizeof total);
        tagg_mpi_reduce(&f->stats, &total, (int)NSTATS, MPI_UINT64_T, MPI_SUM, 0, f->comm);
        if (f->rank == 0 && print_summary(f, &total) < 0)
            rc = -1;
    }
    rc = close_reduce(f, (rc < 0 || src < 0) ? -1 : 0, &total);
    if (f->ops->synced) /* as a sync's: the close's part in what the writes cost */
        f->ops->synced(f, MPI_Wtime() - t_close, rc);
    if (!to_file && f->rank == 0)
        print_summary(f, &total);
    if (f->ops->close(f) < 0)
        rc = -1;
    if (f->cfg.verbose >= 2 && f->rank == 0) {
        printf("tagg: close file=%s (%.6f s)\n", f->path, MPI_Wtime() - t_close);
        fflush(stdout);
    }
    file_free(f);
    return rc;
}

void tagg_file_set_atomic(tagg_file_t *f, int flag) { f->atomic = flag != 0; }

/* The end of x's highest extent (before the call: x may be reordered). */
static uint64_t extents_end(const tagg_extents_t *x)
{
    uint64_t end = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i].len && x->v[i].off + x->v[i].len > end)
            end = x->v[i].off + x->v[i].len;
    return end;
}

/* Write-behind is on for this file: the same on every rank (configuration,
 * open flags, asynchronous mode), unlike f->wb, made at first use. */
static bool wb_on(const tagg_file_t *f)
{
    return f->cfg.write_behind > 0 && !f->async && (f->flags & TAGG_OPEN_RDWR);
}

/* The file's write-behind state, made on first use; NULL without memory
 * (then nothing is noted or kept: every write goes through). */
static tagg_wb_t *wb_get(tagg_file_t *f)
{
    if (!f->wb)
        f->wb = tagg_wb_new((uint64_t)f->cfg.write_behind);
    return f->wb;
}

/* Collective rewrites. When HDF5's whole selection fits its type-conversion
 * buffer it makes the background read and the rewrite collective calls (a
 * compound member of up to 1 MiB per rank). The last collective call decides,
 * the same way on every rank, whether one agreement (wb_agree) is worth asking:
 *   after a collective raw read, a collective raw write: did every rank just
 *     read what it writes (and keep it)? Then nothing moves now;
 *   after such a kept write, a collective raw read: does every rank keep all
 *     it reads? Then each serves it from memory.
 * Otherwise the call runs as always, after what is kept is written out. The
 * agreement is the price of a read followed by a write, or a kept write by a
 * read, that turns out not to be a rewrite: one MPI_Allreduce.
 *
 * wb_agree: MIN over ranks of vote; 0 (and *failed) when the reduction fails. */
static int wb_agree(tagg_file_t *f, int vote, int *failed)
{
    int all  = 0;
    int code = tagg_mpi_allreduce(&vote, &all, 1, MPI_INT, MPI_MIN, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (write-behind agreement)", code);
        *failed = 1;
        return 0;
    }
    return all;
}

static int io_write(tagg_file_t *f, tagg_extents_t *x, tagg_kind_t kind, bool collective)
{
    if (wb_on(f) && collective && kind == TAGG_RAW && !f->atomic && f->wb_coll == WB_COLL_READ) {
        int kept = f->wb ? tagg_wb_write(f, x) : 0, failed = kept < 0;
        if (wb_agree(f, kept == 1, &failed)) {
            f->wb_coll = WB_COLL_KEPT;
            f->stats.wb_coll_kept++;
            return 0;
        }
        f->wb_coll = WB_COLL_OTHER;
        /* not everywhere: what this rank kept (this write too) goes out, then the call runs */
        int wrc = tagg_wb_flush(f) < 0 || failed ? -1 : 0;
        return tagg_io_exec(f, x, kind, collective, TAGG_WRITE, wrc);
    }
    if (collective)
        f->wb_coll = WB_COLL_OTHER;
    if (wb_on(f) && !collective && kind == TAGG_RAW && !f->atomic) {
        int kept = wb_get(f) ? tagg_wb_write(f, x) : 0;
        if (kept != 0)
            return kept < 0 ? -1 : 0;
        return tagg_io_exec(f, x, kind, collective, TAGG_WRITE, 0);
    }
    /* Metadata, collective calls, atomic mode: what is kept goes first. A
     * failure fails a collective call on every rank (its agreement). */
    int wrc = tagg_wb_flush(f);
    if (wrc < 0 && !collective)
        return -1;
    if (f->async && f->atomic) {
        /* atomic mode: what is staged lands first, this write goes straight through */
        if (tagg_async_drain(f, collective) < 0)
            return -1;
        return tagg_io_exec(f, x, kind, collective, TAGG_WRITE, 0);
    }
    if (f->async)
        return tagg_async_write(f, x, kind, collective);
    return tagg_io_exec(f, x, kind, collective, TAGG_WRITE, wrc);
}

/* Metadata echoes (md_echo.h): in a file of one process, a metadata write
 * that repeats what it wrote there is left out; every write updates what is
 * remembered, before it is made (the layers below may reorder x), and a
 * failed write forgets everything. Not in atomic or asynchronous mode, and
 * not for files of several ranks: HDF5's default metadata write strategy
 * (distributed) lets any rank write an entry at a sync point, so bytes this
 * rank wrote may have been replaced by another rank's, and an entry changed
 * back to what this rank once wrote would be lost. */
static int echo_skip(tagg_file_t *f, const tagg_extents_t *x, tagg_kind_t kind, bool collective)
{
    if (f->size != 1)
        return 0;
    int independent_md = kind == TAGG_META && !collective && !f->atomic && !f->async;
    if (independent_md && !f->echo && (f->echo = malloc(sizeof *f->echo)) != NULL)
        tagg_md_echo_init(f->echo);
    if (!f->echo)
        return 0;
    if (independent_md && tagg_md_echo_repeats(f->echo, x)) {
        f->stats.md_echoes++;
        return 1;
    }
    if (collective)
        tagg_md_echo_forget(f->echo);
    else
        tagg_md_echo_wrote(f->echo, x, independent_md);
    return 0;
}

int tagg_io_write(tagg_file_t *f, tagg_extents_t *x, tagg_kind_t kind, bool collective)
{
    if (echo_skip(f, x, kind, collective))
        return 0;
    uint64_t end = extents_end(x);
    int      rc  = io_write(f, x, kind, collective);
    if (rc < 0 && f->echo)
        tagg_md_echo_forget(f->echo);
    /* The file's size at the next set_size: only what was written (a failed
     * write may have left the file shorter; a staged write that fails later
     * fails the drain before set_size). */
    if (rc == 0 && end > f->written_end)
        f->written_end = end;
    return rc;
}

int tagg_io_read(tagg_file_t *f, tagg_extents_t *x, tagg_kind_t kind, bool collective)
{
    /* asynchronous mode: the staged writes land first, so the read sees them */
    if (f->async && tagg_async_drain(f, collective) < 0)
        return -1; /* collective: every rank failed the drain alike, nobody enters the read */
    int rewritable = wb_on(f) && kind == TAGG_RAW && !f->atomic; /* a rewrite may follow this read */
    if (rewritable)
        wb_get(f);
    if (collective) {
        int prev   = f->wb_coll, failed = 0;
        f->wb_coll = WB_COLL_OTHER;
        if (rewritable && prev == WB_COLL_KEPT && wb_agree(f, f->wb && tagg_wb_holds(f->wb, x), &failed)) {
            tagg_extents_t rest; /* every rank reads only what it keeps: from memory */
            tagg_extents_init(&rest);
            tagg_wb_read(f->wb, x, &rest); /* nothing to push: rest stays empty */
            tagg_extents_free(&rest);
            f->stats.wb_read_bytes += x->bytes;
            f->stats.wb_coll_read++;
            tagg_wb_note_read(f->wb, x);
            f->wb_coll = WB_COLL_READ;
            return 0;
        }
        /* other ranks' aggregators may read what this rank kept: it goes out first */
        int wrc = tagg_wb_flush(f) < 0 || failed ? -1 : 0;
        if (rewritable && f->wb) /* before the call: the engine may reorder or consume x */
            tagg_wb_note_read(f->wb, x);
        int rc = tagg_io_exec(f, x, kind, collective, TAGG_READ, wrc);
        if (rc < 0)
            tagg_wb_forget_read(f->wb);
        else if (rewritable)
            f->wb_coll = WB_COLL_READ;
        return rc;
    }
    if (rewritable && f->wb)
        tagg_wb_note_read(f->wb, x); /* none noted without memory: the rewrite goes through */
    else
        tagg_wb_forget_read(f->wb); /* a rewrite follows its read directly */
    if (tagg_wb_bytes(f->wb) == 0)
        return tagg_io_exec(f, x, kind, collective, TAGG_READ, 0);
    if (f->atomic) {
        if (tagg_wb_flush(f) < 0)
            return -1;
        return tagg_io_exec(f, x, kind, collective, TAGG_READ, 0);
    }
    /* This rank's own read: the kept bytes from memory, the rest from the store. */
    tagg_extents_t rest;
    tagg_extents_init(&rest);
    int rc = tagg_wb_read(f->wb, x, &rest);
    if (rc < 0)
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
    else if (rest.n)
        rc = tagg_io_exec(f, &rest, kind, false, TAGG_READ, 0);
    if (rc == 0)
        f->stats.wb_read_bytes += x->bytes - rest.bytes;
    tagg_extents_free(&rest);
    return rc;
}
