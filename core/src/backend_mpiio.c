/* Backend "mpiio": no aggregation of tagg's own. Independent calls go to the
 * store extent by extent; collective calls set an hindexed file view on the
 * shared file and use MPI_File_{write,read}_at_all, as HDF5's own MPI-IO driver
 * does, so ROMIO's two-phase I/O is the baseline here. With other layouts
 * collective calls become independent ones (see mpiio_open). */
#include "error.h"
#include "io.h"

#include <stdlib.h>

/* MPI counts are int: no single block over 1 GiB. */
#define MAX_BLOCK ((uint64_t)1 << 30)

static MPI_File fh_of(tagg_file_t *f) { return tagg_store_shared_fh(f); }

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
        rc = tagg_io_direct(f, x, dir); /* in order, so later writes win */
    return rc;
}

/* Other layouts have no one MPI file to set a view on: there the collective
 * calls fall back to tagg_io_direct (every rank moves its own extents through
 * the store, independently), which is correct, only not aggregated. */
static int is_shared(const tagg_file_t *f) { return f->store_ops == &tagg_store_shared; }

static int mpiio_open(tagg_file_t *f)
{
    (void)f;
    return 0;
}

static int mpiio_close(tagg_file_t *f)
{
    (void)f;
    return 0;
}

static int mpiio_write(tagg_file_t *f, const tagg_extents_t *x, bool coll)
{
    return coll && is_shared(f) ? collective(f, x, TAGG_WRITE) : tagg_io_direct(f, x, TAGG_WRITE);
}

static int mpiio_read(tagg_file_t *f, const tagg_extents_t *x, bool coll)
{
    return coll && is_shared(f) ? collective(f, x, TAGG_READ) : tagg_io_direct(f, x, TAGG_READ);
}

const tagg_backend_ops_t tagg_backend_mpiio = {
    .name  = "mpiio",
    .open  = mpiio_open,
    .close = mpiio_close,
    .write = mpiio_write,
    .read  = mpiio_read,
};
