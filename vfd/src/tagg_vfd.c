/* The tagg virtual file driver (HDF5 plugin: HDF5_DRIVER=tagg).
 *
 * For a file whose communicator has several processes, or that the application
 * opened with a communicator of its own (MPI-IO redirected by the VOL connector,
 * H5Pset_mpi_params), a parallel driver (H5FD_FEAT_HAS_MPI), so HDF5 takes its
 * parallel paths: collective metadata, selection I/O for collective raw data,
 * early space allocation, and a one-rank MPI job's collective transfers work as
 * they do with MPI-IO. For a file of one process opened without a communicator
 * (serial h5py, netCDF's nc_open, a program without mpiexec) it reports the
 * feature flags of a serial driver, so HDF5 stays in its serial mode
 * (variable-length writes, SWMR, page buffering, H5Oflush, VDS reads) while the
 * data still goes through tagg. The driver only adapts: every read and write
 * becomes a list of extents handed to the aggregation layer's entry point
 * (core/src/io.h), together with whether HDF5 made the call collectively. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "tagg_vfd.h"

#include "config.h"
#include "error.h"
#include "extents.h"
#include "h5ctx.h"
#include "io.h"

#include <H5FDdevelop.h>
#include <H5PLextern.h>
#include <hdf5.h>
#include <mpi.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    H5FD_t pub; /* must be first: HDF5 owns it */
    /* Must come second. H5Fset_mpi_atomicity / H5Fget_mpi_atomicity on a file
     * with H5FD_FEAT_HAS_MPI reach HDF5's MPI-IO driver code, which reads the
     * MPI file handle right after `pub` (H5FD_mpio_t in HDF5 1.14). For a
     * multi-process file this is a real handle, opened on /dev/null with the
     * file's communicator: it holds the atomicity flag HDF5 sets and reads, and
     * the driver hands the flag to tagg before every transfer (atomic_sync).
     * MPI_FILE_NULL for a one-process file (HDF5 then refuses atomicity, as
     * with sec2, before touching it). */
    MPI_File     atomic_fh;
    int          atomic_seen; /* the flag last read from atomic_fh */
    tagg_file_t *tf;
    haddr_t      eoa;      /* end of address space HDF5 allocated */
    haddr_t      last_eoa; /* eoa at the last truncate */
    /* Identity for cmp (HDF5 opening a file that is already open: VDS sources,
     * external links, h5py reopening): the canonical path. Not the inode: a
     * subfiled file's index is replaced by rename while the file is open.
     * Several processes: resolved at the first cmp from the absolute name
     * (abs; HDF5 compares only while other files are open), not at every open
     * -- on a distributed file system each component is a lookup at a server,
     * a name that does not exist yet (every create, twice: HDF5's tentative
     * open first) at every server: 4-6 ms on the GlusterFS testbed. */
    char *canon;
    char *abs;
    int   canon_tried;
    int   parallel; /* reports H5FD_FEAT_HAS_MPI (several processes, or a communicator given: see the top) */
    struct held_file *held; /* one-process files: the tagg file this H5FD_t shares (see held_find) */
} tagg_vfd_t;

/* The one-process files this process has open, by canonical path. HDF5 opens
 * a file that may already be open (VDS sources, external links, h5py reopening
 * a file it writes) by opening it in the driver and then comparing (cmp) with
 * the files it has; only then does it close the new one again. A second open
 * of the same file here would open the store twice, which the subfiles layout
 * refuses for a file being written. So a second open of a held file shares its
 * tagg file instead (no store open, no I/O); the tagg file closes with the last
 * H5FD_t that shares it. Files of several processes are not shared this way. */
typedef struct held_file {
    char             *canon;
    tagg_file_t      *tf;
    int               refs;
    struct held_file *next;
} held_file_t;
static held_file_t *held_files = NULL;

/* name made absolute against the working directory of the open (no lookup:
 * the kernel knows its own working directory), or NULL (no memory; a
 * working directory too long falls back to the name). */
static char *absolute_name(const char *name)
{
    char cwd[PATH_MAX];
    if (name[0] == '/' || !getcwd(cwd, sizeof cwd))
        return strdup(name);
    size_t n = strlen(cwd) + strlen(name) + 2;
    char  *a = malloc(n);
    if (a)
        snprintf(a, n, "%s/%s", cwd, name);
    return a;
}

static held_file_t *held_find(const char *canon)
{
    for (held_file_t *h = held_files; h; h = h->next)
        if (!strcmp(h->canon, canon))
            return h;
    return NULL;
}

static int mpi_self_initialized = 0;

/* ---------------------------------------------------------------- helpers */

/* Makes sure MPI is running: serial programs (h5py without a launcher) get a
 * one-process MPI started here and finalized at driver termination. */
static int ensure_mpi(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (fin) {
        TAGG_ERR(TAGG_E_MPI, "MPI is already finalized: the tagg driver cannot open files after MPI_Finalize");
        return -1;
    }
    if (!init) {
        int provided;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
            TAGG_ERR(TAGG_E_MPI, "MPI_Init_thread failed (serial use of the tagg driver needs MPI)");
            return -1;
        }
        mpi_self_initialized = 1;
    }
    return 0;
}

/* Communicator and info from the FAPL, MPI_COMM_WORLD when it has none;
 * *given (may be NULL): the FAPL named one (the application asked for MPI). The caller
 * frees both. */
static int fapl_mpi(hid_t fapl, MPI_Comm *comm, MPI_Info *info, int *given)
{
    *comm = MPI_COMM_NULL;
    *info = MPI_INFO_NULL;
    if (H5Pget_mpi_params(fapl, comm, info) < 0) {
        TAGG_ERR(TAGG_E_ARGS, "cannot read the MPI communicator from the file access property list");
        return -1;
    }
    if (given)
        *given = *comm != MPI_COMM_NULL;
    if (*comm == MPI_COMM_NULL && MPI_Comm_dup(MPI_COMM_WORLD, comm) != MPI_SUCCESS) {
        TAGG_ERR(TAGG_E_MPI, "MPI_Comm_dup(MPI_COMM_WORLD) failed");
        return -1;
    }
    return 0;
}

/* This process's configuration strings: the TAGG_* environment and the FAPL's
 * driver config string (HDF5_DRIVER_CONFIG or H5Pset_driver_by_name). Rank 0's
 * count; the core compares them across ranks (file.c). -1 when out of memory. */
static int config_strings(hid_t fapl, char **env, char **str)
{
    *str    = NULL;
    *env    = tagg_config_env_string();
    ssize_t n = H5Pget_driver_config_str(fapl, NULL, 0);
    if (n > 0 && (!(*str = malloc((size_t)n + 1)) || H5Pget_driver_config_str(fapl, *str, (size_t)n + 1) < 0)) {
        free(*str);
        *str = NULL;
    }
    if (!*env || (n > 0 && !*str)) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        return -1;
    }
    return 0;
}

/* The stand-in handle of a multi-process file (see atomic_fh): /dev/null,
 * opened by each process alone (MPI_COMM_SELF), so it costs no collective;
 * MPI_File_set_atomicity on it is then local too, and every rank still sees
 * the flag HDF5 set (H5Fset_mpi_atomicity is collective: HDF5 calls it on
 * every rank). Local: a failure rides in the open's first reduction.
 *
 * Opening one costs ROMIO a statfs, an open and its hints (~20 us, a tenth of
 * a small file's whole create and close), and HDF5 opens a file twice when it
 * creates one (cmp: a tentative open first). So a closed file's handle, its flag
 * reset, waits in a few spares for the next open; the spares are closed at
 * MPI_Finalize (a delete callback on MPI_COMM_SELF). */
#define SPARE_MAX 4
static MPI_File spare_fh[SPARE_MAX];
static int      spare_n, spare_keyval = MPI_KEYVAL_INVALID, spare_done;

static int spare_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    while (spare_n > 0)
        MPI_File_close(&spare_fh[--spare_n]);
    spare_done = 1; /* files HDF5 closes after this point close their handle */
    return MPI_SUCCESS;
}

static int atomic_open(tagg_vfd_t *file)
{
    file->atomic_fh = MPI_FILE_NULL;
    if (!file->parallel)
        return 0;
    if (spare_n > 0) {
        file->atomic_fh = spare_fh[--spare_n];
        return 0;
    }
    int code = MPI_File_open(MPI_COMM_SELF, "/dev/null", MPI_MODE_RDONLY, MPI_INFO_NULL, &file->atomic_fh);
    if (code != MPI_SUCCESS) {
        file->atomic_fh = MPI_FILE_NULL;
        TAGG_ERR_MPI("MPI_File_open of the MPI atomicity stand-in handle on /dev/null", code);
        return -1;
    }
    return 0;
}

static void atomic_close(tagg_vfd_t *file)
{
    if (file->atomic_fh == MPI_FILE_NULL)
        return;
    if (!spare_done && tagg_at_finalize(spare_finalize, &spare_keyval) < 0)
        spare_done = 1; /* no callback to close the spares: none is kept */
    int flag = 1;
    if (!spare_done && spare_n < SPARE_MAX &&
        MPI_File_get_atomicity(file->atomic_fh, &flag) == MPI_SUCCESS &&
        (!flag || MPI_File_set_atomicity(file->atomic_fh, 0) == MPI_SUCCESS))
        spare_fh[spare_n++] = file->atomic_fh;
    else
        MPI_File_close(&file->atomic_fh);
    file->atomic_fh = MPI_FILE_NULL;
}

/* Hands a change of the atomicity flag HDF5 set on the stand-in handle to tagg
 * (a local call: MPI_File_set_atomicity is collective, so every rank sees the
 * same flag at its next transfer). */
static void atomic_sync(tagg_vfd_t *file)
{
    int flag = 0;
    if (file->atomic_fh == MPI_FILE_NULL || MPI_File_get_atomicity(file->atomic_fh, &flag) != MPI_SUCCESS)
        return;
    if (flag != file->atomic_seen) {
        file->atomic_seen = flag;
        tagg_file_set_atomic(file->tf, flag);
    }
}

static tagg_kind_t kind_of(H5FD_mem_t type) { return type == H5FD_MEM_DRAW ? TAGG_RAW : TAGG_META; }

/* ---------------------------------------------------------------- open / close */

static H5FD_t *tagg_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    tagg_vfd_t *file = NULL;
    MPI_Comm    comm = MPI_COMM_NULL;
    MPI_Info    info = MPI_INFO_NULL;
    char       *canon = NULL, *env = NULL, *str = NULL, *absname = NULL;
    (void)maxaddr;

    if (!name || !*name) {
        TAGG_ERR(TAGG_E_ARGS, "no file name");
        return NULL;
    }
    int given = 0;
    if (ensure_mpi() < 0 || fapl_mpi(fapl, &comm, &info, &given) < 0)
        goto fail;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int nprocs = 0;
    MPI_Comm_size(comm, &nprocs);
    if (nprocs == 1) /* one process: its held files are found by canonical path */
        canon = realpath(name, NULL); /* NULL (no such file yet): cmp falls back to the name as given */
    else if (!(absname = absolute_name(name))) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        goto fail;
    }
    held_file_t *h = nprocs == 1 && canon ? held_find(canon) : NULL;
    if (h) {
        if (!(file = calloc(1, sizeof *file))) {
            TAGG_ERR(TAGG_E_NOMEM, "out of memory");
            goto fail;
        }
        file->tf = h->tf, file->held = h, file->parallel = given;
        if (atomic_open(file) < 0) {
            free(file);
            file = NULL;
            goto fail;
        }
        file->canon = canon;
        h->refs++;
        MPI_Comm_free(&comm);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        return &file->pub;
    }
    unsigned tflags = 0;
    if (flags & H5F_ACC_RDWR)
        tflags |= TAGG_OPEN_RDWR;
    if (flags & H5F_ACC_CREAT)
        tflags |= TAGG_OPEN_CREAT;
    if (flags & H5F_ACC_EXCL)
        tflags |= TAGG_OPEN_EXCL;
    if (flags & H5F_ACC_TRUNC)
        tflags |= TAGG_OPEN_TRUNC;
    if (flags & H5F_ACC_SWMR_READ)
        tflags |= TAGG_OPEN_SWMR_READ;
    /* Local failures before the collective open ride in its first reduction. */
    int local_rc = config_strings(fapl, &env, &str);
    if (!(file = calloc(1, sizeof *file))) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        local_rc = -1;
    }
    else {
        file->parallel = nprocs > 1 || given;
        if (atomic_open(file) < 0)
            local_rc = -1;
    }
    if (file)
        file->abs = absname, absname = NULL;
    tagg_file_t *tf = tagg_file_open_config(name, tflags, comm, info, env, str, local_rc);
    comm            = MPI_COMM_NULL; /* the open took it over */
    free(env), free(str);
    env = str = NULL;
    if (!tf) {
        if (file)
            atomic_close(file), free(file->abs);
        free(file);
        file = NULL;
        goto fail;
    }
    file->tf = tf;
    if (!canon && nprocs == 1 && (tflags & TAGG_OPEN_CREAT))
        canon = realpath(name, NULL); /* created just now */
    file->canon = canon;
    if (nprocs == 1 && canon && (h = calloc(1, sizeof *h)) && (h->canon = strdup(canon))) {
        h->tf = tf, h->refs = 1, h->next = held_files;
        held_files = file->held = h;
    }
    else if (h)
        free(h); /* out of memory: the file is simply not shared */
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return &file->pub;
fail:
    free(canon);
    free(absname);
    free(env), free(str);
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return NULL;
}

static herr_t tagg_close(H5FD_t *_file)
{
    tagg_vfd_t *file = (tagg_vfd_t *)_file;
    atomic_close(file);
    int          rc = 0;
    held_file_t *h  = file->held;
    if (h && --h->refs > 0) {
        /* another H5FD_t still shares the tagg file */
    }
    else {
        if (h) {
            held_file_t **pp = &held_files;
            while (*pp != h)
                pp = &(*pp)->next;
            *pp = h->next;
            free(h->canon);
            free(h);
        }
        rc = tagg_file_close(file->tf);
    }
    free(file->canon);
    free(file->abs);
    free(file);
    return rc < 0 ? -1 : 0;
}

/* The name a file is compared by: its canonical path (resolved now, once,
 * when it was deferred), else the name it was opened with. */
static const char *cmp_name(const tagg_vfd_t *cf)
{
    tagg_vfd_t *f = (tagg_vfd_t *)cf; /* the cache of a const handle (HDF5 holds its lock) */
    if (!f->canon && f->abs && !f->canon_tried) {
        f->canon       = realpath(f->abs, NULL);
        f->canon_tried = 1;
    }
    return f->canon ? f->canon : f->abs ? f->abs : f->tf->path;
}

static int tagg_cmp(const H5FD_t *a, const H5FD_t *b)
{
    return strcmp(cmp_name((const tagg_vfd_t *)a), cmp_name((const tagg_vfd_t *)b));
}

/* Feature flags. HDF5 asks once per open file (file != NULL) and decides its
 * mode from that answer; the class-level question (file == NULL, asked before a
 * file exists: H5FD_open's file-image check, H5Fopen's collective sanity
 * barrier) gets the parallel answer, which is a superset of what those checks
 * look at.
 * - several processes, or one whose application gave a communicator (a one-rank
 *   MPI job through the VOL connector): a parallel driver, as MPI-IO reports it,
 *   so that its collective transfers work as they do with MPI-IO;
 * - one process opened without one: what sec2 reports, without H5FD_FEAT_POSIX_COMPAT_HANDLE (our
 *   handle is tagg's file, not a POSIX descriptor). SWMR is honest here: tagg
 *   keeps no client-side cache, a write reaches the file before the call
 *   returns unless async=1 staging is on, and flush drains the staging. */
static herr_t tagg_query(const H5FD_t *_file, unsigned long *flags)
{
    const tagg_vfd_t *file = (const tagg_vfd_t *)_file;
    if (!flags)
        return 0;
    if (file && !file->parallel)
        *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
                 H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_SUPPORTS_SWMR_IO | H5FD_FEAT_DEFAULT_VFD_COMPATIBLE;
    else
        *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_HAS_MPI |
                 H5FD_FEAT_DEFAULT_VFD_COMPATIBLE;
    return 0;
}

static haddr_t tagg_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const tagg_vfd_t *)file)->eoa;
}

static herr_t tagg_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    (void)type;
    ((tagg_vfd_t *)file)->eoa = addr;
    return 0;
}

static haddr_t tagg_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return (haddr_t)((const tagg_vfd_t *)file)->tf->eof;
}

static herr_t tagg_get_handle(H5FD_t *_file, hid_t fapl, void **handle)
{
    tagg_vfd_t *file = (tagg_vfd_t *)_file;
    (void)fapl;
    if (!handle) {
        TAGG_ERR(TAGG_E_ARGS, "file handle pointer is NULL");
        return -1;
    }
    *handle = file->tf;
    return 0;
}

/* ---------------------------------------------------------------- data */

static herr_t finish(tagg_vfd_t *file, tagg_extents_t *x, tagg_kind_t kind, bool coll, tagg_dir_t dir, int rc)
{
    tagg_file_t *tf = file->tf;
    atomic_sync(file);
    /* A rank whose request could not be described still joins a collective call
     * with nothing, so no rank waits; the agreement then fails every rank. */
    if (rc < 0) {
        if (!coll) {
            tagg_extents_free(x);
            return -1;
        }
        tagg_extents_reset(x);
    }
    int io = dir == TAGG_WRITE ? tagg_io_write(tf, x, kind, coll) : tagg_io_read(tf, x, kind, coll);
    tagg_extents_free(x);
    return (rc < 0 || io < 0) ? -1 : 0;
}

/* Plain read/write: metadata, and raw data when HDF5 does not use selection I/O.
 * A collective call then carries MPI datatypes in HDF5's context (h5ctx.h). */
static herr_t plain_io(H5FD_t *_file, H5FD_mem_t type, haddr_t addr, size_t size, void *buf, tagg_dir_t dir)
{
    tagg_vfd_t    *file = (tagg_vfd_t *)_file;
    tagg_extents_t x;
    int            rc   = 0;
    bool           coll = tagg_h5ctx_collective();
    tagg_extents_init(&x);
    MPI_Datatype btype = MPI_BYTE, ftype = MPI_BYTE;
    if (coll && !tagg_h5ctx_coll_types(&btype, &ftype))
        btype = ftype = MPI_BYTE;
    if (coll && (btype != MPI_BYTE || ftype != MPI_BYTE)) {
        if (size > (size_t)INT32_MAX) {
            TAGG_ERR(TAGG_E_ARGS, "collective transfer count %zu too large", size);
            rc = -1;
        }
        else
            rc = tagg_extents_from_mpi_types(&x, addr, ftype, buf, (int)size, btype);
    }
    else if (tagg_extents_push(&x, addr, size, buf) < 0) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        rc = -1;
    }
    return finish(file, &x, kind_of(type), coll, dir, rc);
}

static herr_t tagg_read(H5FD_t *f, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    (void)dxpl;
    return plain_io(f, type, addr, size, buf, TAGG_READ);
}

static herr_t tagg_write(H5FD_t *f, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    (void)dxpl;
    return plain_io(f, type, addr, size, (void *)buf, TAGG_WRITE);
}

/* Vector I/O: HDF5's convention is that a zero size, or an H5FD_MEM_NOLIST
 * type, repeats the previous one for the rest of the list, and the array may
 * end there (HDF5 passes two-element size and type arrays): read no further. */
static herr_t vector_io(H5FD_t *_file, uint32_t count, H5FD_mem_t types[], haddr_t addrs[], size_t sizes[],
                        void *bufs[], tagg_dir_t dir)
{
    tagg_vfd_t    *file = (tagg_vfd_t *)_file;
    tagg_extents_t x;
    int            rc   = 0;
    bool           coll = tagg_h5ctx_collective();
    size_t         size = 0;
    H5FD_mem_t     type = H5FD_MEM_DEFAULT, kind_type = H5FD_MEM_DRAW;
    bool           size_fixed = false, type_fixed = false;
    tagg_extents_init(&x);
    for (uint32_t i = 0; i < count && rc == 0; i++) {
        if (!size_fixed) {
            if (i > 0 && sizes[i] == 0)
                size_fixed = true;
            else
                size = sizes[i];
        }
        if (!type_fixed) {
            if (i > 0 && types[i] == H5FD_MEM_NOLIST)
                type_fixed = true;
            else
                type = types[i];
        }
        if (type != H5FD_MEM_DRAW)
            kind_type = type;
        if (tagg_extents_push(&x, addrs[i], size, bufs[i]) < 0) {
            TAGG_ERR(TAGG_E_NOMEM, "out of memory");
            rc = -1;
        }
    }
    return finish(file, &x, kind_of(kind_type), coll, dir, rc);
}

static herr_t tagg_read_vector(H5FD_t *f, hid_t dxpl, uint32_t count, H5FD_mem_t types[], haddr_t addrs[],
                               size_t sizes[], void *bufs[])
{
    (void)dxpl;
    return vector_io(f, count, types, addrs, sizes, bufs, TAGG_READ);
}

static herr_t tagg_write_vector(H5FD_t *f, hid_t dxpl, uint32_t count, H5FD_mem_t types[], haddr_t addrs[],
                                size_t sizes[], const void *bufs[])
{
    (void)dxpl;
    return vector_io(f, count, types, addrs, sizes, (void **)bufs, TAGG_WRITE);
}

/* Selection I/O: pairs of dataspace selections; a zero element size or NULL
 * buffer repeats the previous one for the rest (and the array may end there). */
static herr_t selection_io(H5FD_t *_file, H5FD_mem_t type, size_t count, hid_t mem_spaces[], hid_t file_spaces[],
                           haddr_t offsets[], size_t element_sizes[], void *bufs[], tagg_dir_t dir)
{
    tagg_vfd_t    *file = (tagg_vfd_t *)_file;
    tagg_extents_t x;
    int            rc   = 0;
    bool           coll = tagg_h5ctx_collective();
    size_t         esize = 0;
    void          *buf   = NULL;
    bool           esize_fixed = false, buf_fixed = false;
    tagg_extents_init(&x);
    for (size_t i = 0; i < count && rc == 0; i++) {
        if (!esize_fixed) {
            if (i > 0 && element_sizes[i] == 0)
                esize_fixed = true;
            else
                esize = element_sizes[i];
        }
        if (!buf_fixed) {
            if (i > 0 && bufs[i] == NULL)
                buf_fixed = true;
            else
                buf = bufs[i];
        }
        rc = tagg_extents_from_selection(&x, mem_spaces[i], file_spaces[i], offsets[i], esize, buf);
    }
    return finish(file, &x, kind_of(type), coll, dir, rc);
}

static herr_t tagg_read_selection(H5FD_t *f, H5FD_mem_t type, hid_t dxpl, size_t count, hid_t mem_spaces[],
                                  hid_t file_spaces[], haddr_t offsets[], size_t element_sizes[], void *bufs[])
{
    (void)dxpl;
    return selection_io(f, type, count, mem_spaces, file_spaces, offsets, element_sizes, bufs, TAGG_READ);
}

static herr_t tagg_write_selection(H5FD_t *f, H5FD_mem_t type, hid_t dxpl, size_t count, hid_t mem_spaces[],
                                   hid_t file_spaces[], haddr_t offsets[], size_t element_sizes[],
                                   const void *bufs[])
{
    (void)dxpl;
    return selection_io(f, type, count, mem_spaces, file_spaces, offsets, element_sizes, (void **)bufs,
                        TAGG_WRITE);
}

/* ---------------------------------------------------------------- collective file operations */

static herr_t tagg_flush(H5FD_t *_file, hid_t dxpl, hbool_t closing)
{
    tagg_vfd_t *file = (tagg_vfd_t *)_file;
    (void)dxpl;
    /* At close, tagg_file_close syncs when configured to (fsync=1). A file
     * open read-only has nothing to sync (SWMR readers flush on refresh). */
    if (closing || !(file->tf->flags & TAGG_OPEN_RDWR))
        return 0;
    return tagg_file_sync(file->tf) < 0 ? -1 : 0;
}

static herr_t tagg_truncate(H5FD_t *_file, hid_t dxpl, hbool_t closing)
{
    tagg_vfd_t *file = (tagg_vfd_t *)_file;
    (void)dxpl, (void)closing;
    if (file->eoa == file->last_eoa)
        return 0;
    if (tagg_file_set_size(file->tf, (uint64_t)file->eoa) < 0)
        return -1;
    file->last_eoa = file->eoa;
    return 0;
}

/* Collective: removes the file in the layout the configuration names. */
static herr_t tagg_delete(const char *name, hid_t fapl)
{
    MPI_Comm      comm = MPI_COMM_NULL;
    MPI_Info      info = MPI_INFO_NULL;
    tagg_config_t cfg;
    int           rc = -1;
    if (ensure_mpi() < 0 || fapl_mpi(fapl, &comm, &info, NULL) < 0)
        goto done;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    char *env = NULL, *str = NULL;
    int   rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0 && config_strings(fapl, &env, &str) < 0)
        free(env), free(str), env = str = NULL; /* defaults; the error is on rank 0's stack */
    int built = tagg_config_from_rank0(comm, env, str, &cfg);
    free(env), free(str);
    if (built < 0)
        goto done;
    rc = tagg_file_delete(name, comm, info, &cfg);
    tagg_config_clear(&cfg);
done:
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return rc < 0 ? -1 : 0;
}

static herr_t tagg_ctl(H5FD_t *_file, uint64_t op, uint64_t flags, const void *input, void **output)
{
    tagg_vfd_t *file = (tagg_vfd_t *)_file;
    (void)input;
    if (op != H5FD_CTL_TEST_OPCODE && (!output || !*output)) {
        TAGG_ERR(TAGG_E_ARGS, "ctl opcode %llu needs an output pointer", (unsigned long long)op);
        return -1;
    }
    switch (op) {
        case H5FD_CTL_GET_MPI_COMMUNICATOR_OPCODE: **(MPI_Comm **)output = file->tf->comm; return 0;
        case H5FD_CTL_GET_MPI_INFO_OPCODE: **(MPI_Info **)output = file->tf->info; return 0;
        case H5FD_CTL_GET_MPI_RANK_OPCODE: **(int **)output = file->tf->rank; return 0;
        case H5FD_CTL_GET_MPI_SIZE_OPCODE: **(int **)output = file->tf->size; return 0;
        case H5FD_CTL_GET_MPI_FILE_SYNC_OPCODE: **(bool **)output = false; return 0;
        case TAGG_VFD_CTL_GET_FILE: *(tagg_file_t **)output = file->tf; return 0;
        default:
            if (flags & H5FD_CTL_FAIL_IF_UNKNOWN_FLAG) {
                TAGG_ERR(TAGG_E_ARGS, "unknown ctl opcode %llu", (unsigned long long)op);
                return -1;
            }
            return 0;
    }
}

static herr_t tagg_term(void)
{
    int fin = 0;
    tagg_err_term();
    if (mpi_self_initialized) {
        MPI_Finalized(&fin);
        if (!fin)
            MPI_Finalize();
        mpi_self_initialized = 0;
    }
    return 0;
}

/* ---------------------------------------------------------------- the class */

static const H5FD_class_t tagg_class = {
    .version         = H5FD_CLASS_VERSION,
    .value           = TAGG_VFD_VALUE,
    .name            = TAGG_VFD_NAME,
    .maxaddr         = ((haddr_t)1 << 62) - 1, /* fits MPI_Offset */
    /* Weak, as sec2: closing a file with objects still open closes it when the
     * last one goes (h5py relies on it; VDS source files need it). Files the
     * VOL connector redirects from MPI-IO get MPI-IO's semi on their access
     * list (vol_file.c), so those programs see no change. */
    .fc_degree       = H5F_CLOSE_WEAK,
    .terminate       = tagg_term,
    .sb_size         = NULL, /* no driver info in the superblock: plain HDF5 files */
    .sb_encode       = NULL,
    .sb_decode       = NULL,
    .fapl_size       = 0, /* configuration comes as the driver config string */
    .fapl_get        = NULL,
    .fapl_copy       = NULL,
    .fapl_free       = NULL,
    .dxpl_size       = 0,
    .dxpl_copy       = NULL,
    .dxpl_free       = NULL,
    .open            = tagg_open,
    .close           = tagg_close,
    .cmp             = tagg_cmp,
    .query           = tagg_query,
    .get_type_map    = NULL,
    .alloc           = NULL,
    .free            = NULL,
    .get_eoa         = tagg_get_eoa,
    .set_eoa         = tagg_set_eoa,
    .get_eof         = tagg_get_eof,
    .get_handle      = tagg_get_handle,
    .read            = tagg_read,
    .write           = tagg_write,
    .read_vector     = tagg_read_vector,
    .write_vector    = tagg_write_vector,
    .read_selection  = tagg_read_selection,
    .write_selection = tagg_write_selection,
    .flush           = tagg_flush,
    .truncate        = tagg_truncate,
    .lock            = NULL,
    .unlock          = NULL,
    .del             = tagg_delete,
    .ctl             = tagg_ctl,
    .fl_map          = H5FD_FLMAP_DICHOTOMY,
};

H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_VFD; }
const void *H5PLget_plugin_info(void) { return &tagg_class; }
