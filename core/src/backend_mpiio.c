/* Backend "mpiio": each rank's extents go straight to MPI-IO on one shared file.
 * Independent calls use MPI_File_{write,read}_at per extent; collective calls set
 * an hindexed file view and use MPI_File_{write,read}_at_all, as HDF5's own
 * MPI-IO driver does, so ROMIO's two-phase I/O is the baseline here. */
#include "error.h"
#include "io.h"

#include <stdlib.h>

/* MPI counts are int: no single block over 1 GiB. */
#define MAX_BLOCK ((uint64_t)1 << 30)

typedef struct {
    MPI_File fh;
} mpiio_t;

static MPI_File fh_of(tagg_file_t *f) { return ((mpiio_t *)f->backend)->fh; }

static int mpiio_open(tagg_file_t *f, int amode)
{
    mpiio_t *b = calloc(1, sizeof *b);
    if (!b) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        return -1;
    }
    int code = MPI_File_open(f->comm, f->path, amode, f->info, &b->fh);
    if (code != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int  len = 0;
        MPI_Error_string(code, text, &len);
        TAGG_ERR(TAGG_E_IO, "cannot open '%s': %s", f->path, text);
        free(b);
        return -1;
    }
    MPI_File_set_errhandler(b->fh, MPI_ERRORS_RETURN);
    f->backend = b;
    return 0;
}

static int mpiio_close(tagg_file_t *f)
{
    mpiio_t *b = f->backend;
    int      rc = 0;
    if (!b)
        return 0;
    int code = MPI_File_close(&b->fh);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_File_close", code);
        rc = -1;
    }
    free(b);
    f->backend = NULL;
    return rc;
}

static int check_count(MPI_Status *st, uint64_t want, const char *what, uint64_t off)
{
    MPI_Count got = 0;
    MPI_Get_elements_x(st, MPI_BYTE, &got);
    if ((uint64_t)got != want) {
        TAGG_ERR(TAGG_E_IO, "%s at offset %llu moved %lld of %llu bytes", what, (unsigned long long)off,
                 (long long)got, (unsigned long long)want);
        return -1;
    }
    return 0;
}

static int independent(tagg_file_t *f, const tagg_extents_t *x, tagg_dir_t dir)
{
    for (size_t i = 0; i < x->n; i++) {
        const tagg_extent_t *e = &x->v[i];
        for (uint64_t done = 0; done < e->len;) {
            uint64_t   n = e->len - done < MAX_BLOCK ? e->len - done : MAX_BLOCK;
            MPI_Status st;
            int code = dir == TAGG_WRITE
                           ? MPI_File_write_at(fh_of(f), (MPI_Offset)(e->off + done), e->mem + done, (int)n, MPI_BYTE, &st)
                           : MPI_File_read_at(fh_of(f), (MPI_Offset)(e->off + done), e->mem + done, (int)n, MPI_BYTE, &st);
            if (code != MPI_SUCCESS) {
                TAGG_ERR_MPI(dir == TAGG_WRITE ? "MPI_File_write_at" : "MPI_File_read_at", code);
                return -1;
            }
            if (dir == TAGG_WRITE && check_count(&st, n, "write", e->off + done) < 0)
                return -1;
            /* A read past the end of file returns fewer bytes: HDF5 expects zeros. */
            if (dir == TAGG_READ) {
                MPI_Count got = 0;
                MPI_Get_elements_x(&st, MPI_BYTE, &got);
                for (uint64_t k = (uint64_t)(got > 0 ? got : 0); k < n; k++)
                    e->mem[done + k] = 0;
            }
            done += n;
        }
    }
    return 0;
}

/* Collective: one hindexed file view over the sorted extents and a memory type
 * over their addresses; ranks with nothing take part with a zero count. */
static int collective(tagg_file_t *f, const tagg_extents_t *x, tagg_dir_t dir)
{
    int           rc = 0, code, nblocks = 0;
    MPI_Datatype  ftype = MPI_DATATYPE_NULL, mtype = MPI_DATATYPE_NULL;
    MPI_Aint     *fdisp = NULL, *mdisp = NULL;
    int          *lens  = NULL;
    size_t        cap   = 0;
    int           disjoint = tagg_extents_disjoint(x);
    for (size_t i = 0; i < x->n; i++)
        cap += (size_t)((x->v[i].len + MAX_BLOCK - 1) / MAX_BLOCK);
    if (!disjoint)
        cap = 0; /* overlapping pieces: a view cannot hold them; write them independently after */
    if (cap) {
        fdisp = malloc(cap * sizeof *fdisp);
        mdisp = malloc(cap * sizeof *mdisp);
        lens  = malloc(cap * sizeof *lens);
        if (!fdisp || !mdisp || !lens) {
            TAGG_ERR(TAGG_E_NOMEM, "out of memory");
            rc = -1, cap = 0;
        }
        for (size_t i = 0; i < x->n && cap; i++)
            for (uint64_t done = 0; done < x->v[i].len; done += MAX_BLOCK) {
                uint64_t n = x->v[i].len - done < MAX_BLOCK ? x->v[i].len - done : MAX_BLOCK;
                fdisp[nblocks] = (MPI_Aint)(x->v[i].off + done);
                MPI_Get_address(x->v[i].mem + done, &mdisp[nblocks]);
                lens[nblocks++] = (int)n;
            }
    }
    if (nblocks) {
        MPI_Type_create_hindexed(nblocks, lens, fdisp, MPI_BYTE, &ftype);
        MPI_Type_commit(&ftype);
        MPI_Type_create_hindexed(nblocks, lens, mdisp, MPI_BYTE, &mtype);
        MPI_Type_commit(&mtype);
    }
    code = MPI_File_set_view(fh_of(f), 0, MPI_BYTE, nblocks ? ftype : MPI_BYTE, "native", f->info);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_File_set_view", code);
        rc = -1;
    }
    else {
        MPI_Status st;
        void      *buf   = nblocks ? MPI_BOTTOM : NULL;
        int        count = nblocks ? 1 : 0;
        MPI_Datatype t   = nblocks ? mtype : MPI_BYTE;
        code = dir == TAGG_WRITE ? MPI_File_write_at_all(fh_of(f), 0, buf, count, t, &st)
                                 : MPI_File_read_at_all(fh_of(f), 0, buf, count, t, &st);
        if (code != MPI_SUCCESS) {
            TAGG_ERR_MPI(dir == TAGG_WRITE ? "MPI_File_write_at_all" : "MPI_File_read_at_all", code);
            rc = -1;
        }
        else if (nblocks) {
            MPI_Count got = 0;
            MPI_Get_elements_x(&st, MPI_BYTE, &got);
            if (dir == TAGG_WRITE && (uint64_t)got != x->bytes) {
                TAGG_ERR(TAGG_E_IO, "collective write moved %lld of %llu bytes", (long long)got,
                         (unsigned long long)x->bytes);
                rc = -1;
            }
            if (dir == TAGG_READ && (uint64_t)got < x->bytes) {
                /* zero-fill what lies past the end of file, in view order */
                uint64_t skip = (uint64_t)(got > 0 ? got : 0);
                for (size_t i = 0; i < x->n; i++) {
                    uint64_t l = x->v[i].len;
                    if (skip >= l) {
                        skip -= l;
                        continue;
                    }
                    for (uint64_t k = skip; k < l; k++)
                        x->v[i].mem[k] = 0;
                    skip = 0;
                }
            }
        }
        code = MPI_File_set_view(fh_of(f), 0, MPI_BYTE, MPI_BYTE, "native", f->info);
        if (code != MPI_SUCCESS) {
            TAGG_ERR_MPI("MPI_File_set_view (reset)", code);
            rc = -1;
        }
    }
    if (ftype != MPI_DATATYPE_NULL)
        MPI_Type_free(&ftype);
    if (mtype != MPI_DATATYPE_NULL)
        MPI_Type_free(&mtype);
    free(fdisp), free(mdisp), free(lens);
    if (rc == 0 && !disjoint)
        rc = independent(f, x, dir); /* in order, so later writes win */
    return rc;
}

static int mpiio_write(tagg_file_t *f, const tagg_extents_t *x, bool coll)
{
    return coll ? collective(f, x, TAGG_WRITE) : independent(f, x, TAGG_WRITE);
}

static int mpiio_read(tagg_file_t *f, const tagg_extents_t *x, bool coll)
{
    return coll ? collective(f, x, TAGG_READ) : independent(f, x, TAGG_READ);
}

static int mpiio_get_size(tagg_file_t *f, uint64_t *size)
{
    MPI_Offset s;
    int        code = MPI_File_get_size(fh_of(f), &s);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_File_get_size", code);
        return -1;
    }
    *size = (uint64_t)s;
    return 0;
}

static int mpiio_set_size(tagg_file_t *f, uint64_t size)
{
    int code = MPI_File_set_size(fh_of(f), (MPI_Offset)size);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_File_set_size", code);
        return -1;
    }
    return 0;
}

static int mpiio_sync(tagg_file_t *f)
{
    int code = MPI_File_sync(fh_of(f));
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_File_sync", code);
        return -1;
    }
    return 0;
}

const tagg_backend_ops_t tagg_backend_mpiio = {
    .name     = "mpiio",
    .open     = mpiio_open,
    .close    = mpiio_close,
    .write    = mpiio_write,
    .read     = mpiio_read,
    .get_size = mpiio_get_size,
    .set_size = mpiio_set_size,
    .sync     = mpiio_sync,
};
