#include "extents.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

void tagg_extents_init(tagg_extents_t *x) { memset(x, 0, sizeof *x); }
void tagg_extents_reset(tagg_extents_t *x) { x->n = 0, x->bytes = 0; }
void tagg_extents_free(tagg_extents_t *x)
{
    free(x->v);
    tagg_extents_init(x);
}

int tagg_extents_push(tagg_extents_t *x, uint64_t off, uint64_t len, const void *mem)
{
    if (len == 0)
        return 0;
    if (x->n) {
        tagg_extent_t *last = &x->v[x->n - 1];
        if (last->off + last->len == off && last->mem + last->len == (const char *)mem) {
            last->len += len;
            x->bytes += len;
            return 0;
        }
    }
    if (x->n == x->cap) {
        size_t         cap = x->cap ? 2 * x->cap : 16;
        tagg_extent_t *v   = realloc(x->v, cap * sizeof *v);
        if (!v)
            return -1;
        x->v = v, x->cap = cap;
    }
    x->v[x->n++] = (tagg_extent_t){off, len, (char *)mem};
    x->bytes += len;
    return 0;
}

typedef struct {
    tagg_extent_t e;
    size_t        idx;
} keyed_t;

static int cmp_off(const void *a, const void *b)
{
    const keyed_t *p = a, *q = b;
    if (p->e.off != q->e.off)
        return p->e.off < q->e.off ? -1 : 1;
    return p->idx < q->idx ? -1 : p->idx > q->idx; /* stable: later writes stay later */
}

int tagg_extents_sort(tagg_extents_t *x)
{
    int sorted = 1;
    for (size_t i = 1; i < x->n && sorted; i++)
        sorted = x->v[i - 1].off <= x->v[i].off;
    if (sorted)
        return 0;
    keyed_t *k = malloc(x->n * sizeof *k);
    if (!k)
        return -1;
    for (size_t i = 0; i < x->n; i++)
        k[i] = (keyed_t){x->v[i], i};
    qsort(k, x->n, sizeof *k, cmp_off);
    for (size_t i = 0; i < x->n; i++)
        x->v[i] = k[i].e;
    free(k);
    return 0;
}

int tagg_extents_disjoint(const tagg_extents_t *x)
{
    for (size_t i = 1; i < x->n; i++)
        if (x->v[i - 1].off + x->v[i - 1].len > x->v[i].off)
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- selections */

#define SEQ_BATCH 1024

typedef struct {
    hid_t  iter;
    size_t nseq, i;
    hsize_t off[SEQ_BATCH];
    size_t  len[SEQ_BATCH];
    int     done;
} seq_stream_t;

static int stream_next(seq_stream_t *s, hsize_t *off, size_t *len)
{
    if (s->i == s->nseq) {
        size_t nbytes = 0;
        if (s->done)
            return 0;
        if (H5Ssel_iter_get_seq_list(s->iter, SEQ_BATCH, SIZE_MAX, &s->nseq, &nbytes, s->off, s->len) < 0)
            return -1;
        s->i = 0;
        if (s->nseq == 0) {
            s->done = 1;
            return 0;
        }
    }
    *off = s->off[s->i];
    *len = s->len[s->i];
    s->i++;
    return 1;
}

int tagg_extents_from_selection(tagg_extents_t *x, hid_t mem_space, hid_t file_space, uint64_t base,
                                size_t elem_size, const void *buf)
{
    int           ret_value = 0;
    seq_stream_t *m = NULL, *f = NULL;
    hssize_t      nm = H5Sget_select_npoints(mem_space), nf = H5Sget_select_npoints(file_space);
    if (nm < 0 || nf < 0)
        TAGG_GOTO(TAGG_E_ARGS, -1, "cannot count the selected elements");
    if (nm != nf)
        TAGG_GOTO(TAGG_E_ARGS, -1, "memory selection has %lld elements, file selection %lld", (long long)nm,
                  (long long)nf);
    if (nm == 0)
        return 0;
    m = calloc(1, sizeof *m);
    f = calloc(1, sizeof *f);
    if (!m || !f)
        TAGG_GOTO(TAGG_E_NOMEM, -1, "out of memory");
    m->iter = H5Ssel_iter_create(mem_space, elem_size, 0);
    f->iter = H5Ssel_iter_create(file_space, elem_size, 0);
    if (m->iter < 0 || f->iter < 0)
        TAGG_GOTO(TAGG_E_ARGS, -1, "cannot iterate over the selections");
    hsize_t moff = 0, foff = 0;
    size_t  mlen = 0, flen = 0;
    for (;;) {
        int rm = 1, rf = 1;
        if (mlen == 0)
            rm = stream_next(m, &moff, &mlen);
        if (flen == 0)
            rf = stream_next(f, &foff, &flen);
        if (rm < 0 || rf < 0)
            TAGG_GOTO(TAGG_E_ARGS, -1, "selection iteration failed");
        if (rm == 0 || rf == 0) {
            if (rm != rf || mlen || flen)
                TAGG_GOTO(TAGG_E_ARGS, -1, "memory and file selections differ in size");
            break;
        }
        size_t n = mlen < flen ? mlen : flen;
        if (tagg_extents_push(x, base + foff, n, (const char *)buf + moff) < 0)
            TAGG_GOTO(TAGG_E_NOMEM, -1, "out of memory");
        moff += n, foff += n, mlen -= n, flen -= n;
    }
done:
    if (m) {
        if (m->iter > 0)
            H5Ssel_iter_close(m->iter);
        free(m);
    }
    if (f) {
        if (f->iter > 0)
            H5Ssel_iter_close(f->iter);
        free(f);
    }
    return ret_value;
}

/* ---------------------------------------------------------------- MPI datatypes */

/* A flattened datatype: (displacement, length) blocks in type-map order. */
typedef struct {
    MPI_Aint *disp;
    MPI_Aint *len;
    size_t    n, cap;
} blocks_t;

static int blocks_push(blocks_t *b, MPI_Aint d, MPI_Aint l)
{
    if (l <= 0)
        return 0;
    if (b->n && b->disp[b->n - 1] + b->len[b->n - 1] == d) {
        b->len[b->n - 1] += l;
        return 0;
    }
    if (b->n == b->cap) {
        size_t    cap = b->cap ? 2 * b->cap : 16;
        MPI_Aint *nd = realloc(b->disp, cap * sizeof *nd);
        if (!nd)
            return -1;
        b->disp = nd;
        MPI_Aint *nl = realloc(b->len, cap * sizeof *nl);
        if (!nl)
            return -1;
        b->len = nl, b->cap = cap;
    }
    b->disp[b->n] = d, b->len[b->n] = l, b->n++;
    return 0;
}

static int flatten(MPI_Datatype t, MPI_Aint base, MPI_Aint count, blocks_t *out);

/* Appends count copies of t, each extent apart, starting at base. A type that is
 * one dense block (size == extent, lb == 0) becomes a single block. */
static int flatten(MPI_Datatype t, MPI_Aint base, MPI_Aint count, blocks_t *out)
{
    int      ni, na, nd, comb, rc = 0;
    MPI_Aint lb, extent;
    int      size;
    if (count <= 0)
        return 0;
    MPI_Type_get_extent(t, &lb, &extent);
    MPI_Type_size(t, &size);
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    if (comb == MPI_COMBINER_NAMED) {
        if (extent == size)
            return blocks_push(out, base + lb, (MPI_Aint)size * count);
        for (MPI_Aint i = 0; i < count; i++)
            if (blocks_push(out, base + lb + i * extent, size) < 0)
                return -1;
        return 0;
    }
    int          *ints  = malloc((size_t)(ni ? ni : 1) * sizeof *ints);
    MPI_Aint     *addrs = malloc((size_t)(na ? na : 1) * sizeof *addrs);
    MPI_Datatype *types = malloc((size_t)(nd ? nd : 1) * sizeof *types);
    if (!ints || !addrs || !types) {
        rc = -1;
        goto out;
    }
    MPI_Type_get_contents(t, ni, na, nd, ints, addrs, types);

    /* Flatten one copy, then repeat it: first see whether one copy is dense. */
    blocks_t one = {0};
    MPI_Aint sub_lb, sub_ext;
    if (nd > 0)
        MPI_Type_get_extent(types[0], &sub_lb, &sub_ext);
    switch (comb) {
        case MPI_COMBINER_DUP: rc = flatten(types[0], 0, 1, &one); break;
        case MPI_COMBINER_RESIZED: rc = flatten(types[0], 0, 1, &one); break;
        case MPI_COMBINER_CONTIGUOUS: rc = flatten(types[0], 0, ints[0], &one); break;
        case MPI_COMBINER_VECTOR:
            for (int i = 0; i < ints[0] && !rc; i++)
                rc = flatten(types[0], (MPI_Aint)i * ints[2] * sub_ext, ints[1], &one);
            break;
        case MPI_COMBINER_HVECTOR:
            for (int i = 0; i < ints[0] && !rc; i++)
                rc = flatten(types[0], (MPI_Aint)i * addrs[0], ints[1], &one);
            break;
        case MPI_COMBINER_INDEXED:
            for (int i = 0; i < ints[0] && !rc; i++)
                rc = flatten(types[0], (MPI_Aint)ints[1 + ints[0] + i] * sub_ext, ints[1 + i], &one);
            break;
        case MPI_COMBINER_HINDEXED:
            for (int i = 0; i < ints[0] && !rc; i++)
                rc = flatten(types[0], addrs[i], ints[1 + i], &one);
            break;
        case MPI_COMBINER_INDEXED_BLOCK:
            for (int i = 0; i < ints[0] && !rc; i++)
                rc = flatten(types[0], (MPI_Aint)ints[2 + i] * sub_ext, ints[1], &one);
            break;
        case MPI_COMBINER_HINDEXED_BLOCK:
            for (int i = 0; i < ints[0] && !rc; i++)
                rc = flatten(types[0], addrs[i], ints[1], &one);
            break;
        case MPI_COMBINER_STRUCT:
            for (int i = 0; i < ints[0] && !rc; i++)
                rc = flatten(types[i], addrs[i], ints[1 + i], &one);
            break;
        default: rc = -2; break; /* combiner HDF5 does not produce */
    }
    for (int i = 0; i < nd; i++) {
        int tni, tna, tnd, tcomb;
        MPI_Type_get_envelope(types[i], &tni, &tna, &tnd, &tcomb);
        if (tcomb != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
    if (!rc) {
        if (one.n == 1 && one.disp[0] == lb && one.len[0] == extent)
            rc = blocks_push(out, base + lb, extent * count);
        else
            for (MPI_Aint c = 0; c < count && !rc; c++)
                for (size_t i = 0; i < one.n && !rc; i++)
                    rc = blocks_push(out, base + c * extent + one.disp[i], one.len[i]);
    }
    free(one.disp);
    free(one.len);
out:
    free(ints);
    free(addrs);
    free(types);
    return rc;
}

int tagg_extents_from_mpi_types(tagg_extents_t *x, uint64_t disp, MPI_Datatype file_type, const void *buf,
                                int count, MPI_Datatype buf_type)
{
    int      ret_value = 0;
    blocks_t fb = {0}, mb = {0};
    int      fsize = 0, rc;
    if ((rc = flatten(buf_type, 0, count, &mb)) < 0 || (rc = flatten(file_type, 0, 1, &fb)) < 0)
        TAGG_GOTO(rc == -2 ? TAGG_E_ARGS : TAGG_E_NOMEM, -1,
                  rc == -2 ? "unsupported MPI datatype combiner in a collective transfer" : "out of memory");
    MPI_Type_size(file_type, &fsize);
    /* The file type tiles the file: repeat it until the memory side is consumed. */
    MPI_Aint fext, flb;
    MPI_Type_get_extent(file_type, &flb, &fext);
    size_t   fi = 0, mi = 0;
    MPI_Aint fdone = 0, mdone = 0, tile = 0;
    while (mi < mb.n) {
        if (fi == fb.n) {
            if (fb.n == 0 || fext <= 0)
                TAGG_GOTO(TAGG_E_ARGS, -1, "file datatype holds fewer bytes than the memory datatype");
            fi = 0, tile++;
        }
        MPI_Aint n = fb.len[fi] - fdone;
        if (mb.len[mi] - mdone < n)
            n = mb.len[mi] - mdone;
        if (tagg_extents_push(x, disp + (uint64_t)(tile * fext + fb.disp[fi] + fdone), (uint64_t)n,
                              (const char *)buf + mb.disp[mi] + mdone) < 0)
            TAGG_GOTO(TAGG_E_NOMEM, -1, "out of memory");
        fdone += n, mdone += n;
        if (fdone == fb.len[fi])
            fi++, fdone = 0;
        if (mdone == mb.len[mi])
            mi++, mdone = 0;
    }
    (void)fsize;
done:
    free(fb.disp), free(fb.len), free(mb.disp), free(mb.len);
    return ret_value;
}
