/* Layout "subfiles" (store_subfiles.c), the close of a writer: every rank's
 * stripe notes gathered and merged on rank 0; a stripe of a new file that
 * several writes made, none over another rank's bytes, gets the checksum its
 * writers' changes compose; the stripes left (overlaps, compressed slots,
 * cuts, read-write opens of closed files) are read back by their keepers
 * (compressed slots decoded), a read-write open's re-read stripes checked
 * against their base plus every rank's changes, then rank 0 writes the final
 * index. */
#include "error.h"
#include "mpi_wait.h"
#include "store_subfiles_int.h"
#include "crc_shift.h"
#include "sf_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A gathered note: key, state, crc, delta, spans (lo, hi; 0, 0 unused), then
 * (format 4 writers, notes_t.nb > 0) the block deltas: NOTE_WORDS + nb words. */
enum { NOTE_WORDS = 4 + 2 * NOTE_SPANS };

/* By key; a key's writes before its suspects. */
static int cmp_note(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    int             sx = NOTE_KIND(x[1]) == NOTE_SUSPECT, sy = NOTE_KIND(y[1]) == NOTE_SUSPECT;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : sx - sy;
}

static int cmp_span(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : 0;
}

/* Do the spans (lo, hi pairs) of the writers' notes [i, e) overlap? The
 * spans of one note never do; those of different ranks are sorted by start
 * into sc (grown as needed). 1 overlap, 0 apart, -1 out of memory; *end: the
 * end of the last byte written. */
static int spans_overlap(const uint64_t *notes, size_t nw, uint64_t i, uint64_t e, uint64_t **sc, uint64_t *cap,
                         uint64_t *end)
{
    uint64_t n = 0;
    for (uint64_t x = i; x < e; x++) {
        const uint64_t *w = notes + nw * x;
        for (int k = 0; NOTE_KIND(w[1]) != NOTE_SUSPECT && k < NOTE_SPANS && w[5 + 2 * k]; k++) {
            if (n == *cap) {
                uint64_t  c = *cap ? 2 * *cap : 64;
                uint64_t *t = realloc(*sc, (size_t)c * 2 * sizeof *t);
                if (!t)
                    return -1;
                *sc = t, *cap = c;
            }
            (*sc)[2 * n] = w[4 + 2 * k], (*sc)[2 * n + 1] = w[5 + 2 * k], n++;
        }
    }
    qsort(*sc, (size_t)n, 2 * sizeof **sc, cmp_span);
    *end = 0;
    for (uint64_t k = 0; k < n; k++) {
        if ((*sc)[2 * k] < *end)
            return 1;
        *end = (*sc)[2 * k + 1];
    }
    return 0;
}

/* What close learns from the merged notes (rank 0). */
typedef struct {
    tagg_sf_stripe_t *out[2]; /* records final now (both spaces) */
    uint64_t          nout[2];
    uint64_t         *dirty; /* keys of stripes to read back */
    uint64_t         *expect; /* [nd] the padded form each must have (read-write opens of closed files) */
    uint8_t          *chk;    /* [nd] expect[] applies */
    uint64_t          nd, dcap;
    uint64_t          nsuspect, suspect; /* stripes read unlike their base that nobody wrote; the first key */
    uint64_t          ncomposed;         /* checksums composed from the writers' changes */
    uint64_t         *blk, nblk;         /* format 4: block records final now (data stripes) */
} merged_t;

/* Format 4: the block record of data stripe j (len bytes, CRC crc) from the
 * padded forms of its blocks (B bytes each: bx[b] the form of block b), kept
 * only when the blocks compose to crc (they do when the notes describe the
 * stripe; anything else leaves the stripe to be checked whole). 0 or -1 (out of memory). */
static int add_blocks(merged_t *m, uint64_t j, uint64_t len, uint64_t crc, uint64_t B, const uint64_t *bx)
{
    uint64_t bc[TAGG_SF_BLOCKS];
    unsigned nb = 0;
    for (uint64_t at = 0; at < len; at += B, nb++)
        bc[nb] = tagg_crc_unpad(bx[nb], len - at < B ? len - at : B, B);
    if (tagg_sf_blocks_compose(bc, len, B) != crc)
        return 0;
    return tagg_sf_blocks_append(&m->blk, &m->nblk, j, bc, nb);
}

static int add_dirty(merged_t *m, uint64_t key, int chk, uint64_t expect)
{
    if (m->nd == m->dcap) {
        uint64_t  c  = m->dcap ? 2 * m->dcap : 64;
        uint64_t *t  = realloc(m->dirty, (size_t)c * sizeof *t);
        uint64_t *e  = t ? realloc(m->expect, (size_t)c * sizeof *e) : NULL;
        uint8_t  *ck = e ? realloc(m->chk, (size_t)c) : NULL;
        if (t)
            m->dirty = t;
        if (e)
            m->expect = e;
        if (!ck)
            return -1;
        m->chk = ck, m->dcap = c;
    }
    m->expect[m->nd] = expect, m->chk[m->nd] = (uint8_t)chk;
    m->dirty[m->nd++] = key;
    return 0;
}

/* Is key noted as written (binary search over the sorted notes)? */
static int noted(const uint64_t *notes, size_t nw, uint64_t nn, uint64_t key)
{
    uint64_t lo = 0, hi = nn;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (notes[nw * mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nn && notes[nw * lo] == key && NOTE_KIND(notes[nw * lo + 1]) != NOTE_SUSPECT;
}

static int merge_notes(sub_t *s, uint64_t *notes, uint64_t nn, size_t nw, uint64_t L, merged_t *m)
{
    uint64_t *sc = NULL, scap = 0; /* scratch: one stripe's spans */
    uint64_t S = s->ix.stripe, top = L / S + (L % S != 0), B = nw > NOTE_WORDS ? s->ix.block : 0;
    qsort(notes, (size_t)nn, nw * sizeof *notes, cmp_note);
    for (int sp = 0; sp < 2; sp++) { /* untouched stripes keep their record (wholly below every cut) */
        const tagg_sf_stripe_t *old  = sp ? s->ix.mst : s->ix.st;
        uint64_t                nold = sp ? s->ix.nmst : s->ix.nst;
        for (uint64_t i = 0; i < nold; i++) {
            uint64_t j = old[i].j, key = 2 * j + (uint64_t)sp;
            if (j >= top || (s->cut != UINT64_MAX && (j + 1) * S > s->cut) || noted(notes, nw, nn, key))
                continue;
            /* the old last stripe, partial then, is longer now: its record no longer covers it */
            if (tagg_sf_stripe_len(s->ix.logical_size, S, j) != tagg_sf_stripe_len(L, S, j)) {
                if (add_dirty(m, key, s->base_on, s->base_on ? tagg_sub_base_form(s, sp, j) : 0) < 0)
                    goto oom;
                continue;
            }
            if (tagg_sf_stripe_append_form(&m->out[sp], &m->nout[sp], j, old[i].crc, old[i].form) < 0)
                goto oom;
            const uint64_t *ob = sp ? NULL : tagg_sf_blocks_find(s->ix.blk, s->ix.nblk, j); /* and its blocks */
            if (ob && tagg_sf_blocks_append(&m->blk, &m->nblk, j, ob, TAGG_SF_BLOCKS) < 0)
                goto oom;
        }
    }
    for (uint64_t i = 0; i < nn;) {
        uint64_t key = notes[nw * i], e = i, writers = 0, dx = 0, end = 0, bx[TAGG_SF_BLOCKS] = {0};
        int      dirty_ = 0, hadfull = 0, suspect = 0, compose = s->fresh, ov, blocks = B && key % 2 == 0;
        for (; e < nn && notes[nw * e] == key; e++) {
            const uint64_t *w  = notes + nw * e;
            uint64_t        st = w[1];
            if (NOTE_KIND(st) == NOTE_SUSPECT) {
                suspect = 1;
                continue;
            }
            writers++;
            dirty_ |= NOTE_KIND(st) != NOTE_FULL;
            hadfull |= (st & NOTE_HADFULL) != 0;
            dx ^= w[3];
            if (st & NOTE_UNSURE)
                compose = 0;
            if (st & NOTE_NOBLOCKS)
                blocks = 0;
            for (unsigned b = 0; blocks && b < TAGG_SF_BLOCKS; b++) /* the blocks' changes add as the stripe's do */
                bx[b] ^= w[NOTE_WORDS + b];
        }
        if (compose && (ov = spans_overlap(notes, nw, i, e, &sc, &scap, &end)) != 0) {
            if (ov < 0)
                goto oom;
            compose = 0;
        }
        dirty_ |= writers > 1; /* several ranks wrote it: their order is unknown (unless their bytes are apart) */
        uint64_t j  = key / 2;
        int      sp = (int)(key % 2);
        uint64_t len = j < top ? tagg_sf_stripe_len(L, S, j) : 0;
        if (!writers) { /* read unlike its base, and nobody changed it: damage */
            if (suspect && !m->nsuspect++)
                m->suspect = key;
        }
        else if (j < top) {
            if (dirty_ && compose && !suspect && end <= len) { /* a new file's stripe: zeros plus every change */
                uint64_t crc = tagg_crc_unpad(dx, len, S);
                if (tagg_sf_stripe_append_form(&m->out[sp], &m->nout[sp], j, crc, 0) < 0 ||
                    (blocks && add_blocks(m, j, len, crc, B, bx) < 0))
                    goto oom;
                m->ncomposed++;
            }
            else if (dirty_) {
                int chk = s->base_on && !hadfull;
                if (add_dirty(m, key, chk, chk ? tagg_sub_base_form(s, sp, j) ^ dx : 0) < 0)
                    goto oom;
            }
            else { /* one whole-stripe write (its blocks: when raw and the stripe is whole) */
                uint64_t crc = notes[nw * i + 2], form = notes[nw * i + 1] >> 8;
                if (tagg_sf_stripe_append_form(&m->out[sp], &m->nout[sp], j, crc, form) < 0 ||
                    (blocks && !form && len == S && add_blocks(m, j, len, crc, B, bx) < 0))
                    goto oom;
            }
        }
        i = e;
    }
    free(sc);
    return 0;
oom:
    free(sc);
    return -1;
}

/* The message of a close that found damage (rank 0): stripes changed outside
 * this open, seen by its reads or under its partial writes. */
static void damage_msg(tagg_file_t *f, uint64_t nbad, uint64_t bad, uint64_t nsus, uint64_t sus, char *err)
{
    sub_t   *s   = sub_of(f);
    uint64_t key = nbad ? bad : sus, j = key / 2;
    char     where[600];
    if (key % 2)
        snprintf(where, sizeof where, "the metadata file '%s', stripe %llu", s->meta_path, (unsigned long long)j);
    else
        snprintf(where, sizeof where, "subfile %u '%s', stripe %llu", (unsigned)(j % s->ix.count),
                 s->paths[j % s->ix.count], (unsigned long long)j);
    snprintf(err, ERRLEN,
             "CHECKSUM MISMATCH found at close of '%s': %llu stripe(s) did not hold what the index recorded when this "
             "read-write open began (damaged or changed outside tagg; first: %s). %s The index keeps checksums that "
             "fail every later read of them; see tagg-fuse --check",
             f->path, (unsigned long long)(nbad + nsus), where,
             nsus ? "Reads of them in this open returned those bytes unverified." :
                    "This open's partial writes to them were applied over the damaged bytes.");
}

/* Collective, writers only: the subfile sizes (in a new file without
 * compression, the largest of the sizes the ranks know from their writes and
 * the last size set: no request to the file system; else stat by their
 * keepers), the per-stripe checksums (the ranks' notes, dirty stripes read
 * back by their keepers), then rank 0 writes the final index. Every rank ends with the final
 * index in s->ix when drain needs it. */
int tagg_sub_write_index(tagg_file_t *f, int want_final)
{
    sub_t           *s = sub_of(f);
    uint32_t         N = s->ix.count;
    uint64_t         S = s->ix.stripe, L = 0;
    size_t           n = (size_t)N + 1; /* the last: the metadata file */
    uint64_t        *mine = calloc(n, sizeof *mine), *all = calloc(n, sizeof *all);
    uint64_t        *notes = NULL, *allnotes = NULL, *dirty = NULL, nd = 0, *res = NULL, *allres = NULL;
    uint64_t         nbad = 0, bad = 0;
    merged_t         mg;
    int             *counts = NULL, *displs = NULL, *rfd = NULL;
    char             err[ERRLEN] = "", *text = NULL;
    int              rc = mine && all ? 0 : -1, code;
    size_t           tlen = 0;
    memset(&mg, 0, sizeof mg);
    if (rc < 0)
        snprintf(err, sizeof err, "out of memory");
    int known = s->wend && !s->zmay; /* the same on every rank */
    for (uint32_t k = 0; rc == 0 && k < N; k++)
        if (known)
            mine[k] = s->wend[k];
        else if (tagg_sub_keeper(f, s, k) == f->rank && tagg_sub_subfile_size(f, k, &mine[k]) < 0)
            rc = -1, snprintf(err, sizeof err, "cannot stat subfile %u", (unsigned)k);
    if (rc == 0 && s->ix.nvr && f->rank == 0 && tagg_sub_meta_size(f, &mine[N]) < 0)
        rc = -1, snprintf(err, sizeof err, "cannot stat the metadata file");
    if (tagg_sub_agree_msg(f, rc, err, "sizing the subfiles") < 0)
        goto done;
    if ((code = tagg_mpi_allreduce(mine, all, (int)n, MPI_UINT64_T, MPI_MAX, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (subfile sizes)", code);
        rc = -1;
        goto done;
    }
    for (uint32_t k = 0; k < N; k++) {
        uint64_t e = tagg_sf_logical_end(all[k], S, N, k);
        L          = e > L ? e : L;
    }
    if (s->ix.nvr)
        L = all[N] > L ? all[N] : L;

    /* the notes (writes, and reads that did not match their base), to rank 0 */
    size_t nsus = 0;
    for (size_t i = 0; i < s->checked.cap; i++)
        nsus += s->checked.key[i] && NOTE_KIND(s->checked.state[i]) == NOTE_SUSPECT;
    size_t nw = NOTE_WORDS + s->written.nb; /* the same on every rank */
    int    m  = (int)((s->written.n + nsus) * nw), nn = 0;
    notes = malloc(((size_t)m + 1) * sizeof *notes);
    if (f->rank == 0 && (!(counts = malloc((size_t)f->size * sizeof *counts)) ||
                         !(displs = malloc((size_t)f->size * sizeof *displs))))
        rc = -1;
    size_t w = 0;
    for (size_t i = 0; notes && i < s->written.cap; i++)
        if (s->written.key[i])
            notes[w++] = s->written.key[i] - 1, notes[w++] = s->written.state[i] | s->written.form[i] << 8,
            notes[w++] = s->written.crc[i], notes[w++] = s->written.delta[i], /* state | stored form << 8 */
            memset(notes + w, 0, (nw - 4) * sizeof *notes),
            tagg_notes_spans(&s->written, s->written.key[i] - 1, notes + w), w += 2 * NOTE_SPANS,
            s->written.nb ? memcpy(notes + w, s->written.bd + (size_t)s->written.nb * i, s->written.nb * sizeof *notes)
                          : NULL,
            w += s->written.nb;
    for (size_t i = 0; notes && i < s->checked.cap; i++)
        if (s->checked.key[i] && NOTE_KIND(s->checked.state[i]) == NOTE_SUSPECT)
            notes[w++] = s->checked.key[i] - 1, notes[w++] = NOTE_SUSPECT, notes[w++] = 0, notes[w++] = 0,
            memset(notes + w, 0, (nw - 4) * sizeof *notes), w += nw - 4;
    if (tagg_agree(f->comm, notes && rc == 0 ? 0 : -1, "gathering the stripe notes") < 0) {
        rc = -1;
        goto done;
    }
    tagg_mpi_gather(&m, 1, MPI_INT, counts, 1, MPI_INT, 0, f->comm);
    if (f->rank == 0) {
        for (int r = 0; r < f->size; r++)
            displs[r] = nn, nn += counts[r];
        if (!(allnotes = malloc(((size_t)nn + 1) * sizeof *allnotes)))
            rc = -1;
    }
    if (tagg_agree(f->comm, rc, "gathering the stripe notes") < 0)
        goto done;
    if ((code = tagg_mpi_gatherv(notes, m, MPI_UINT64_T, allnotes, counts, displs, MPI_UINT64_T, 0, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Gatherv (stripe notes)", code);
        rc = -1;
        goto done;
    }
    if (f->rank == 0 && merge_notes(s, allnotes, (uint64_t)nn / nw, nw, L, &mg) < 0)
        rc = -1, snprintf(err, sizeof err, "out of memory");
    dirty = mg.dirty, nd = mg.nd, mg.dirty = NULL;
    if (f->rank == 0)
        f->stats.sf_composed += mg.ncomposed, f->stats.sf_reread += nd;
    if (tagg_sub_agree_msg(f, rc, err, "merging the stripe notes") < 0)
        goto done;

    /* the dirty stripes, read back by their keepers */
    if ((code = tagg_mpi_bcast(&nd, 1, MPI_UINT64_T, 0, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Bcast (dirty stripes)", code);
        rc = -1;
        goto done;
    }
    if (f->rank != 0 && nd && !(dirty = malloc((size_t)nd * sizeof *dirty)))
        rc = -1;
    if (nd && !tagg_sub_vbuf(s))
        rc = -1;
    size_t rw = 3 + s->written.nb; /* a read-back stripe's result: crc, found, form, its blocks' CRCs (format 4) */
    res    = calloc(rw * (size_t)nd + 1, sizeof *res);
    allres = calloc(rw * (size_t)nd + 1, sizeof *allres);
    rfd    = malloc(((size_t)N + 1) * sizeof *rfd);
    if (!res || !allres || !rfd)
        rc = -1;
    if (tagg_agree(f->comm, rc, "reading back the dirty stripes") < 0)
        goto done;
    for (uint32_t k = 0; k <= N; k++)
        rfd[k] = -1;
    if (nd && (code = tagg_mpi_bcast(dirty, (int)nd, MPI_UINT64_T, 0, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Bcast (dirty stripes)", code);
        rc = -1;
        goto done;
    }
    for (uint64_t i = 0; rc == 0 && i < nd; i++) {
        uint64_t j = dirty[i] / 2, len = tagg_sf_stripe_len(L, S, j), local;
        int      sp = (int)(dirty[i] % 2);
        uint32_t k  = (uint32_t)(j % N), slot = sp ? N : k;
        if (sp ? (int)(j % (uint64_t)f->size) != f->rank : tagg_sub_keeper(f, s, k) != f->rank)
            continue;
        const char *path = sp ? s->meta_path : s->paths[k];
        local            = sp ? j * S : (j / N) * S;
        if (rfd[slot] < 0 && (rfd[slot] = tagg_sf_open(path, O_RDONLY, err, sizeof err)) < 0) {
            rc = -1;
            break;
        }
        uint64_t form = 0;
        if (!sp && tagg_sub_zmay(s, j)) { /* the slot says whether it is compressed (sf_stripe_codec.h) */
            char zerr[ERRLEN];
            if (!s->zbuf && !(s->zbuf = malloc(2 * (size_t)S)))
                snprintf(zerr, sizeof zerr, "out of memory"), rc = -1;
            else if (tagg_sfz_slot_load(rfd[slot], local, (size_t)len, UINT64_MAX, s->vbuf, s->zbuf, &form, zerr,
                                        sizeof zerr) < 0)
                rc = -1;
            if (rc < 0) {
                snprintf(err, sizeof err, "reading back stripe %llu of '%.400s': %.500s", (unsigned long long)j, path, zerr);
                break;
            }
        }
        else if (tagg_sf_pread_upto(rfd[slot], s->vbuf, (size_t)len, local, UINT64_MAX) < 0) {
            snprintf(err, sizeof err, "reading back stripe %llu of '%s': %s", (unsigned long long)j, path, strerror(errno));
            rc = -1;
            break;
        }
        uint64_t *r = res + rw * i;
        if (form || !tagg_sf_all_zero(s->vbuf, (size_t)len)) { /* a compressed slot is never a hole */
            r[1] = 1, r[2] = form;
            if (rw > 3 && !sp && !form) { /* format 4: the blocks', and the stripe's from them */
                r[0] = tagg_sf_block_crcs(s->vbuf, len, s->ix.block, r + 3);
            }
            else
                r[0] = tagg_crc64(0, s->vbuf, (size_t)len);
        }
    }
    for (uint32_t k = 0; k <= N; k++)
        if (rfd[k] >= 0)
            close(rfd[k]);
    if (tagg_sub_agree_msg(f, rc, err, "checksumming the written stripes") < 0)
        goto done;
    if (nd && (code = tagg_mpi_reduce(res, allres, (int)(rw * nd), MPI_UINT64_T, MPI_BOR, 0, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Reduce (stripe checksums)", code);
        rc = -1;
        goto done;
    }

    /* rank 0: the final index; a re-read stripe that is not its base plus
     * this open's changes keeps the checksum it should have */
    if (f->rank == 0) {
        tagg_sf_stripe_t **out = mg.out;
        uint64_t          *nout = mg.nout;
        for (uint64_t i = 0; rc == 0 && i < nd; i++) {
            const uint64_t *r = allres + rw * i;
            uint64_t j = dirty[i] / 2, len = tagg_sf_stripe_len(L, S, j), form = r[2];
            uint64_t crc = r[1] ? r[0] : tagg_crc_zeros(len);
            int      sp = (int)(dirty[i] % 2), damaged = mg.chk[i] && tagg_crc_pad(crc, len, S) != mg.expect[i];
            if (damaged && !nbad++)
                bad = dirty[i];
            if (damaged)
                crc = tagg_crc_unpad(mg.expect[i], len, S);
            if ((r[1] || damaged) && tagg_sf_stripe_append_form(&out[sp], &nout[sp], j, crc, form) < 0)
                rc = -1;
            if (rw > 3 && r[1] && !damaged && !sp && !form &&
                tagg_sf_blocks_append(&mg.blk, &mg.nblk, j, r + 3, (unsigned)((len + s->ix.block - 1) / s->ix.block)) < 0)
                rc = -1;
        }
        tagg_sf_stripes_sort(out[0], nout[0]);
        tagg_sf_stripes_sort(out[1], nout[1]);
        tagg_sf_blocks_sort(mg.blk, mg.nblk);
        free(s->ix.st), free(s->ix.mst), free(s->ix.blk);
        s->ix.st = out[0], s->ix.nst = nout[0], s->ix.mst = out[1], s->ix.nmst = nout[1];
        s->ix.blk = mg.blk, s->ix.nblk = mg.nblk;
        out[0] = out[1] = NULL, mg.blk = NULL;
        for (uint32_t k = 0; k < N; k++)
            s->ix.sub[k].size = all[k];
        s->ix.meta.size    = all[N];
        s->ix.logical_size = L;
        s->ix.closed       = 1;
        s->ix.version      = TAGG_SF_VERSION_3;
        if (rc < 0)
            snprintf(err, sizeof err, "out of memory");
        else if ((s->held ? tagg_sf_index_finish(f->path, &s->ix, f->cfg.fsync, (unsigned long long)s->hdev,
                                                 (unsigned long long)s->hino, &s->ixfd, NULL, err, sizeof err)
                          : tagg_sf_index_write(f->path, &s->ix, f->cfg.fsync, err, sizeof err)) < 0)
            rc = -1;
        else if (want_final && tagg_sf_index_format(&s->ix, &text, &tlen) < 0)
            snprintf(err, sizeof err, "out of memory"), rc = -1;
        else if (nbad || mg.nsuspect)
            damage_msg(f, nbad, bad, mg.nsuspect, mg.suspect, err), rc = -1;
    }
    if (tagg_sub_agree_msg(f, rc, err, "writing the subfile index") < 0)
        goto done;
    if (want_final) { /* every rank: the final index (drain checks the stripes with it) */
        uint64_t tl = tlen;
        tagg_mpi_bcast(&tl, 1, MPI_UINT64_T, 0, f->comm);
        if (f->rank != 0 && !(text = malloc(tl + 1)))
            rc = -1;
        if (tagg_agree(f->comm, rc, "sharing the final index") < 0)
            goto done;
        tagg_mpi_bcast(text, (int)tl, MPI_CHAR, 0, f->comm);
        if (f->rank != 0) {
            tagg_sf_index_t nx;
            if (tagg_sf_index_parse(text, (size_t)tl, &nx, err, sizeof err) < 0)
                rc = -1;
            else {
                tagg_sf_index_free(&s->ix);
                s->ix = nx;
            }
        }
        rc = tagg_agree(f->comm, rc, "sharing the final index");
    }
done:
    free(mine), free(all), free(notes), free(allnotes), free(dirty), free(res), free(allres), free(rfd);
    free(counts), free(displs), free(mg.out[0]), free(mg.out[1]), free(mg.expect), free(mg.chk), free(mg.dirty), free(text);
    free(mg.blk);
    return rc;
}
