/* Layout "subfiles" (store_subfiles.c), the I/O path: each piece within one
 * stripe goes to its subfile's descriptor. Reads of read-only opens are
 * verified against the index (formats 1 and 2: whole files); reads and
 * partial writes of read-write opens of closed files are checked against the
 * base (the old records); the compression hooks zwrite() and zread() put and
 * take compressed stripes (sf_stripe_codec.h). Every write is noted in
 * s->written for the close (store_subfiles_close.c). */
#define _GNU_SOURCE /* O_DIRECT */
#include "bufpool.h"
#include "error.h"
#include "store_subfiles_int.h"
#include "crc_shift.h"
#include "sf_path.h"
#include "fault.h"
#include "mpi_wait.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The descriptor of subfile k, opened on first use. */
int tagg_sub_fd_of(tagg_file_t *f, uint32_t k, uint64_t off)
{
    sub_t *s = sub_of(f);
    if (s->ix.nvr && !s->mine[k]) { /* the node-ownership rule */
        f->stats.nvr_refused++;
        TAGG_ERR(TAGG_E_IO,
                 "destination=nvr: rank %d may not access address %llu of '%s': it is in node-local subfile %u on "
                 "node %s, another node. Raw data of node-local subfiles moves only in collective transfers "
                 "(H5FD_MPIO_COLLECTIVE), aggregated on the node that holds it",
                 f->rank, (unsigned long long)off, f->path, (unsigned)k, s->ix.sub[k].node);
        return -1;
    }
    if (s->fd[k] < 0) {
        char err[ERRLEN];
        if ((s->fd[k] = tagg_sf_open(s->paths[k], s->writable ? O_RDWR : O_RDONLY, err, sizeof err)) < 0)
            TAGG_ERR(TAGG_E_IO, "%ssubfile %u: %s", s->ix.nvr ? "node-local " : "", (unsigned)k, err);
        else if (s->ix.nvr)
            f->stats.nvr_opens++;
    }
    return s->fd[k];
}

/* The metadata file (node-local subfiles only), opened on first use. */
static int meta_fd_of(tagg_file_t *f)
{
    sub_t *s = sub_of(f);
    char   err[ERRLEN];
    if (s->meta_fd < 0 && (s->meta_fd = tagg_sf_open(s->meta_path, s->writable ? O_RDWR : O_RDONLY, err, sizeof err)) < 0)
        TAGG_ERR(TAGG_E_IO, "the metadata file: %s", err);
    return s->meta_fd;
}

/* One stripe of memory for checks and read-backs, taken on first use (bufpool.h);
 * block-aligned, so that direct_io reads whole stripes into it. */
char *tagg_sub_vbuf(sub_t *s)
{
    if (!s->vbuf && !(s->vbuf = tagg_buf_get((size_t)s->ix.stripe)))
        TAGG_ERR(TAGG_E_NOMEM, "out of memory (a stripe of %llu bytes for checksums)", (unsigned long long)s->ix.stripe);
    return s->vbuf;
}

/* ---- direct_io (dio.h) of the data subfiles */

/* Subfile k's descriptor opened again with O_DIRECT: the file tagg opened,
 * whatever its path names now. */
static int dio_open(void *ctx)
{
    const struct sub_dctx *c = ctx;
    return tagg_dio_reopen(c->s->fd[c->k], c->s->writable);
}

/* Buffered, on the subfile's own descriptor: -1 with errno; reads past the
 * end of the file fill zeros. */
static int dio_buffered(void *ctx, int write, uint64_t off, uint64_t len, void *buf)
{
    const struct sub_dctx *c  = ctx;
    int                    fd = c->s->fd[c->k];
    return write ? tagg_sf_pwrite_all(fd, buf, (size_t)len, off) : tagg_sf_pread_upto(fd, buf, (size_t)len, off, UINT64_MAX);
}

static const tagg_dio_ops_t sub_dio = {.open = dio_open, .buffered = dio_buffered};

/* direct_io (dio.h), a TAGG_DIO_WANT_*: subfiles beside the index are on
 * its file system; node-local subfiles only when on or write. */
static int dio_wanted(tagg_file_t *f, const sub_t *s, int *reserve)
{
    int want = tagg_dio_file_rule(f->cfg.direct_io, f->cfg.fsync, tagg_file_fs_view(f),
                                  (f->flags & TAGG_OPEN_RDWR) != 0, reserve);
    if (s->ix.count == 0)
        return TAGG_DIO_WANT_NONE;
    if (s->ix.nvr && f->cfg.direct_io != TAGG_DIO_MODE_ON && f->cfg.direct_io != TAGG_DIO_MODE_WRITE)
        return TAGG_DIO_WANT_NONE;
    return want;
}

int tagg_sub_dio_setup(tagg_file_t *f, sub_t *s)
{
    int reserve, want = dio_wanted(f, s, &reserve);
    if (want == TAGG_DIO_WANT_NONE)
        return 0;
    if (!(s->dio = calloc(s->ix.count, sizeof *s->dio)) || !(s->dctx = calloc(s->ix.count, sizeof *s->dctx))) {
        free(s->dio), s->dio = NULL;
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        return -1;
    }
    for (uint32_t k = 0; k < s->ix.count; k++) {
        s->dctx[k].s = s, s->dctx[k].k = k;
        tagg_dio_init(&s->dio[k], &sub_dio, &s->dctx[k], s->paths[k], want, (uint64_t)f->cfg.direct_io_min,
                      f->stats.dio_bytes);
        s->dio[k].reserve = reserve; /* dio.h: concurrent direct writers of one subfile */
    }
    return 0;
}

void tagg_sub_dio_free(sub_t *s)
{
    for (uint32_t k = 0; s->dio && k < s->ix.count; k++)
        tagg_dio_fini(&s->dio[k]);
    free(s->dio), free(s->dctx);
    s->dio = NULL, s->dctx = NULL;
}

/* n bytes at local of data subfile k (descriptor fd): through its direct
 * path when direct_io is on and asked (direct), else as before; reads stop at
 * limit (zeros past it). -1 with errno (a failed direct request has also
 * pushed its message). */
static int sub_rw(sub_t *s, uint32_t k, int fd, int write, uint64_t local, uint64_t n, char *buf, uint64_t limit,
                  int direct)
{
    if (!direct || !s->dio || k >= s->ix.count || fd != s->fd[k]) {
        return write ? tagg_sf_pwrite_all(fd, buf, (size_t)n, local) : tagg_sf_pread_upto(fd, buf, (size_t)n, local, limit);
    }
    uint64_t m = write || local + n <= limit ? n : local >= limit ? 0 : limit - local;
    if (m < n)
        memset(buf + m, 0, (size_t)(n - m));
    return m ? tagg_dio_access(&s->dio[k], write, local, m, buf) : 0;
}

/* Formats 1 and 2: the whole subfile (or metadata file, k = count) against
 * its size and CRC, the first time this rank reads it. */
static int verify_whole(tagg_file_t *f, int fd, uint32_t k, const char *name)
{
    sub_t                 *s   = sub_of(f);
    const tagg_sf_entry_t *e   = k < s->ix.count ? &s->ix.sub[k] : &s->ix.meta;
    uint64_t               crc = 0, at = 0;
    struct stat            st;
    if (!tagg_sub_vbuf(s))
        return -1;
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != e->size) {
        TAGG_ERR(TAGG_E_IO, "SIZE MISMATCH: '%s' has %llu bytes, the index records %llu (see tagg-fuse --check)", name,
                 (unsigned long long)st.st_size, (unsigned long long)e->size);
        return -1;
    }
    while (at < e->size) {
        size_t n = e->size - at < s->ix.stripe ? (size_t)(e->size - at) : (size_t)s->ix.stripe;
        if (tagg_sf_pread_upto(fd, s->vbuf, n, at, e->size) < 0) {
            TAGG_ERR(TAGG_E_IO, "reading '%s' at %llu: %s", name, (unsigned long long)at, strerror(errno));
            return -1;
        }
        crc = tagg_crc64(crc, s->vbuf, n);
        at += n;
    }
    if (crc != e->crc) {
        TAGG_ERR(TAGG_E_IO,
                 "CHECKSUM MISMATCH in '%s': crc64 %016llx, the index records %016llx (changed or damaged after it was "
                 "written; see tagg-fuse --check)",
                 name, (unsigned long long)crc, (unsigned long long)e->crc);
        return -1;
    }
    return 0;
}

/* The padded CRC form (crc_shift.h) stripe j of space sp had when this
 * read-write open began, as far as this open's cuts left it: zeros past a
 * cut or the old end, else its record (a hole: zeros). */
uint64_t tagg_sub_base_form(const sub_t *s, int sp, uint64_t j)
{
    uint64_t S = s->ix.stripe;
    if ((s->cut != UINT64_MAX && j * S >= s->cut) || j * S >= s->base_L)
        return 0;
    const tagg_sf_stripe_t *r  = tagg_sf_stripe_find(sp ? s->ix.mst : s->ix.st, sp ? s->ix.nmst : s->ix.nst, j);
    uint64_t                L0 = tagg_sf_stripe_len(s->base_L, S, j);
    return r ? tagg_crc_pad(r->crc, L0, S) : 0;
}

int tagg_sub_zmay(const sub_t *s, uint64_t j)
{
    if (!s->zmay)
        return 0;
    if (s->z.enc || !s->writable) /* read-only: closed files go by the index (zread), salvage probes */
        return 1;
    const tagg_sf_stripe_t *r = tagg_sf_stripe_find(s->ix.st, s->ix.nst, j);
    return r && r->form;
}

/* A read of a read-write open (base_on), the first of stripe j by a rank
 * that has not written it: the whole slot's logical bytes (a compressed one
 * decoded, its own header's CRC checked) against the base. A mismatch is
 * noted (suspect) and judged at close, when every rank's writes are known;
 * the read returns what the slot holds. */
static int zread(tagg_file_t *f, int fd, uint32_t k, uint64_t j, uint64_t local, uint64_t n, char *buf, const char *name,
                 uint64_t limit);
static int read_base_checked(tagg_file_t *f, int fd, uint32_t k, int sp, uint64_t j, uint64_t local, uint64_t n,
                             char *buf, const char *name)
{
    sub_t   *s = sub_of(f);
    uint64_t S = s->ix.stripe, key = 2 * j + (uint64_t)sp, base = sp ? j * S : local - local % S;
    if (!tagg_sub_vbuf(s))
        return -1;
    int zr = !sp && tagg_sub_zmay(s, j) ? zread(f, fd, k, j, base, S, s->vbuf, name, UINT64_MAX) : 0;
    if (zr < 0)
        return -1;
    /* directly only when the read wants the whole stripe (as read_checked) */
    if (!zr && sub_rw(s, k, fd, 0, base, S, s->vbuf, UINT64_MAX, local == base && n >= S) < 0) {
        TAGG_ERR(TAGG_E_IO, "read of stripe %llu of '%s' failed: %s", (unsigned long long)j, name, strerror(errno));
        return -1;
    }
    uint64_t form = tagg_crc_pad(tagg_crc64(0, s->vbuf, (size_t)S), S, S);
    if (tagg_notes_put(&s->checked, key, form == tagg_sub_base_form(s, sp, j) ? NOTE_VERIFIED : NOTE_SUSPECT, 0) < 0)
        return TAGG_ERR(TAGG_E_NOMEM, "out of memory"), -1;
    memcpy(buf, s->vbuf + (local - base), (size_t)n);
    return 0;
}

/* verify: the copy of the checked stripe of key (2 j + space), or NULL. */
static struct sub_copy *copy_find(sub_t *s, uint64_t key)
{
    for (int i = 0; i < s->ncopy; i++)
        if (s->copy[i].key == key + 1)
            return &s->copy[i];
    return NULL;
}

/* verify: a slot for a stripe about to be checked (empty, and its memory
 * allocated): an unused one, else the one that served a read longest ago.
 * NULL with an error pushed (no memory). */
static struct sub_copy *copy_take(sub_t *s)
{
    uint64_t S = s->ix.stripe;
    if (!s->ncopy) {
        uint64_t n = TAGG_SUB_COPY_BYTES / S;
        s->ncopy   = n < 1 ? 1 : n > TAGG_SUB_COPIES ? TAGG_SUB_COPIES : (int)n;
    }
    struct sub_copy *c = &s->copy[0];
    for (int i = 0; i < s->ncopy && c->key; i++)
        if (!s->copy[i].key || s->copy[i].used < c->used)
            c = &s->copy[i];
    c->key = 0;
    if (!c->buf && !(c->buf = tagg_buf_get((size_t)S))) /* pages a kept buffer has touched already */
        TAGG_ERR(TAGG_E_NOMEM, "out of memory (a stripe of %llu bytes for checksums)", (unsigned long long)S);
    return c->buf ? c : NULL;
}

/* verify: reads stripe j of space sp (slen bytes from base in fd, k's
 * subfile) whole into a copy slot, directly (O_DIRECT, dio.h) when `direct`,
 * and checks it against the index: the copy, noted as checked, or NULL with
 * an error pushed (read failed, checksum mismatch, no memory). */
static struct sub_copy *check_into_copy(tagg_file_t *f, int fd, uint32_t k, int sp, uint64_t j, uint64_t base,
                                        uint64_t slen, uint64_t limit, int direct, const char *name, struct sub_copy *use)
{
    sub_t           *s   = sub_of(f);
    uint64_t         key = 2 * j + (uint64_t)sp, got;
    struct sub_copy *c   = use ? use : copy_take(s);
    if (!c)
        return NULL;
    c->key = 0, c->mask = 0;
    if (sub_rw(s, k, fd, 0, base, slen, c->buf, limit, direct) < 0) {
        TAGG_ERR(TAGG_E_IO, "read of stripe %llu of '%s' failed: %s", (unsigned long long)j, name, strerror(errno));
        return NULL;
    }
    const tagg_sf_stripe_t *st  = sp ? s->ix.mst : s->ix.st;
    uint64_t                nst = sp ? s->ix.nmst : s->ix.nst;
    if (!tagg_sf_stripe_ok(st, nst, j, c->buf, (size_t)slen, &got)) {
        const tagg_sf_stripe_t *r = tagg_sf_stripe_find(st, nst, j);
        char                    what[40];
        if (sp)
            snprintf(what, sizeof what, "metadata file");
        else
            snprintf(what, sizeof what, "subfile %u", (unsigned)k);
        TAGG_ERR(TAGG_E_IO,
                 "CHECKSUM MISMATCH %s '%s', stripe %llu (its bytes %llu..%llu): crc64 %016llx, the index "
                 "records %s%016llx (the file was changed or damaged after it was written; see tagg-fuse --check; "
                 "verify=0 skips the check)",
                 what, name, (unsigned long long)j, (unsigned long long)base, (unsigned long long)(base + slen - 1),
                 (unsigned long long)got, r ? "crc64 " : "a hole (zeros), not ", (unsigned long long)(r ? r->crc : got));
        return NULL;
    }
    if (tagg_notes_put(&s->checked, key, NOTE_VERIFIED, 0) < 0)
        return TAGG_ERR(TAGG_E_NOMEM, "out of memory"), NULL;
    c->key = key + 1, c->mask = ~UINT64_C(0);
    f->stats.sf_verified++;
    return c;
}

/* Format 4: the mask of blocks b0..b1 of a stripe (at most TAGG_SF_BLOCKS). */
static uint64_t blocks_mask(uint64_t b0, uint64_t b1) { return (UINT64_C(2) << b1) - (UINT64_C(1) << b0); }

/* Under s->mu: the blocks of stripe `key` this rank has not checked yet, as
 * its note records them (format 3: none once checked, 0), `all` when it has
 * no note (nothing checked). */
static uint64_t unchecked_blocks(sub_t *s, uint64_t key, uint64_t all)
{
    return tagg_notes_get(&s->checked, key) ? tagg_notes_crc(&s->checked, key) : all;
}

/* Format 4, under s->mu: the blocks in `got` of data stripe j (nblk blocks)
 * are checked; the rank's note of the stripe keeps the ones not yet checked
 * (none at first: all of them). 0 or -1 (pushed). */
static int note_blocks_checked(sub_t *s, uint64_t j, uint64_t nblk, uint64_t got)
{
    uint64_t key = 2 * j, unchecked = unchecked_blocks(s, key, blocks_mask(0, nblk - 1));
    if (tagg_notes_put(&s->checked, key, NOTE_VERIFIED, unchecked & ~got) < 0)
        return TAGG_ERR(TAGG_E_NOMEM, "out of memory"), -1;
    return 0;
}

/* Format 4: block bi of data stripe j (its bytes at..at+n-1 of subfile k
 * `name`) read back with CRC got, against want (hole: it should be zeros). */
static void block_mismatch(uint32_t k, const char *name, uint64_t j, uint64_t bi, uint64_t at, uint64_t n, uint64_t got,
                           int hole, uint64_t want)
{
    TAGG_ERR(TAGG_E_IO,
             "CHECKSUM MISMATCH subfile %u '%s', stripe %llu, block %llu (its bytes %llu..%llu): crc64 %016llx, the "
             "index records %s%016llx (the file was changed or damaged after it was written; see tagg-fuse --check; "
             "verify=0 skips the check)",
             (unsigned)k, name, (unsigned long long)j, (unsigned long long)bi, (unsigned long long)at,
             (unsigned long long)(at + n - 1), (unsigned long long)got, hole ? "a hole (zeros), not " : "crc64 ",
             (unsigned long long)want);
}

/* Format 4: the blocks [b0, b1] of data stripe j (slen bytes from base in fd,
 * k's subfile; bc its blocks' CRCs, B bytes each) read into copy c at their
 * places, directly, and each checked; c then holds them (c->mask), and the
 * rank's note of the stripe no longer counts them as unchecked. 0, or -1
 * with an error pushed (c emptied). */
static int check_blocks(tagg_file_t *f, int fd, uint32_t k, uint64_t j, uint64_t base, uint64_t slen, uint64_t limit,
                        const uint64_t *bc, uint64_t b0, uint64_t b1, struct sub_copy *c, const char *name)
{
    sub_t   *s = sub_of(f);
    uint64_t B = s->ix.block, lo = b0 * B, hi = (b1 + 1) * B < slen ? (b1 + 1) * B : slen, key = 2 * j;
    if (c->key != key + 1)
        c->mask = 0;
    c->key = 0; /* until checked */
    if (sub_rw(s, k, fd, 0, base + lo, hi - lo, c->buf + lo, limit, 1) < 0) {
        TAGG_ERR(TAGG_E_IO, "read of stripe %llu of '%s' failed: %s", (unsigned long long)j, name, strerror(errno));
        return -1;
    }
    for (uint64_t b = b0; b <= b1; b++) {
        uint64_t at = b * B, n = slen - at < B ? slen - at : B, got = tagg_crc64(0, c->buf + at, (size_t)n);
        if (got != bc[b]) {
            block_mismatch(k, name, j, b, base + at, n, got, 0, bc[b]);
            c->mask = 0;
            return -1;
        }
    }
    if (note_blocks_checked(s, j, (slen + B - 1) / B, blocks_mask(b0, b1)) < 0)
        return -1;
    c->mask |= blocks_mask(b0, b1), c->key = key + 1;
    f->stats.sf_blocks += b1 - b0 + 1;
    return 0;
}

/* A read of a read-only open: n bytes at local in fd, stripe j of space sp
 * (0 data, 1 metadata file), never past the recorded size; verified the first
 * time this rank reads the stripe. */
static int read_checked(tagg_file_t *f, int fd, uint32_t k, int sp, uint64_t j, uint64_t local, uint64_t n, char *buf,
                        const char *name)
{
    sub_t   *s     = sub_of(f);
    uint64_t S     = s->ix.stripe;
    uint64_t limit = !s->limit ? UINT64_MAX : sp ? s->ix.meta.size : s->ix.sub[k].size;
    if (s->base_on && !tagg_notes_get(&s->checked, 2 * j + (uint64_t)sp) &&
        !tagg_notes_get(&s->written, 2 * j + (uint64_t)sp))
        return read_base_checked(f, fd, k, sp, j, local, n, buf, name);
    int      zr    = !sp && tagg_sub_zmay(s, j) ? zread(f, fd, k, j, local, n, buf, name, limit) : 0; /* compressed stripes */
    if (zr)
        return zr < 0 ? -1 : 0;
    if (s->verify && s->ix.version < TAGG_SF_VERSION_3) { /* old formats: whole files */
        uint64_t key = UINT64_MAX / 2 - (sp ? s->ix.count : k);
        if (!tagg_notes_get(&s->checked, key)) {
            if (verify_whole(f, fd, sp ? s->ix.count : k, name) < 0)
                return -1;
            if (tagg_notes_put(&s->checked, key, NOTE_VERIFIED, 0) < 0)
                return TAGG_ERR(TAGG_E_NOMEM, "out of memory"), -1;
        }
    }
    else if (s->verify) {
        /* the first read of a stripe reads it whole into a copy and checks
         * it; the copy serves this rank's further reads of it while it is
         * among the last ones checked (HDF5 reads a compound's records once
         * per member, every member across the same stripes) */
        uint64_t         key = 2 * j + (uint64_t)sp, slen = tagg_sf_stripe_len(s->ix.logical_size, S, j);
        uint64_t         base = sp ? j * S : local - local % S, in = local - base, B = s->ix.block;
        struct sub_copy *c = slen ? copy_find(s, key) : NULL;
        const uint64_t  *bc = B && !sp && slen && in < slen && (in || n < slen) ? tagg_sf_blocks_find(s->ix.blk, s->ix.nblk, j)
                                                                               : NULL;
        if (bc) { /* format 4, a read of part of the stripe: its blocks, each checked the first time */
            uint64_t b0 = in / B, b1 = ((in + n < slen ? in + n : slen) - 1) / B;
            uint64_t need = blocks_mask(b0, b1);
            uint64_t unchecked = unchecked_blocks(s, key, ~UINT64_C(0));
            if (c && !(need & ~c->mask))
                f->stats.sf_from_copy++;
            else if (need & unchecked) { /* from the first block the copy lacks to the last */
                uint64_t lack = need & ~(c ? c->mask : 0);
                if (!c && !(c = copy_take(s)))
                    return -1;
                if (check_blocks(f, fd, k, j, base, slen, limit, bc, (uint64_t)__builtin_ctzll(lack),
                                 63 - (uint64_t)__builtin_clzll(lack), c, name) < 0)
                    return -1;
            }
            else
                c = NULL; /* checked before, no copy: read as is */
        }
        else if (slen && (!c || c->mask != ~UINT64_C(0)) && unchecked_blocks(s, key, ~UINT64_C(0))) {
            /* the whole stripe, not checked whole yet (a copy of some of its blocks gives its slot) */
            /* directly only when this read wants the whole stripe: a stripe
             * read in part is likely read by other ranks of the node for the
             * rest, and buffered, the page cache serves them after the first
             * (GlusterFS testbed, subfiles, direct against buffered: S3D 32^3
             * 117 against 174 MiB/s, the workflow's HACC 215 against 299;
             * session 38, every checked stripe direct on FUSE, 9 cases x 2
             * runs: +7 to +12 % on three, -4 to -16 % on six) */
            if (!(c = check_into_copy(f, fd, k, sp, j, base, slen, limit, local == base && n >= slen, name, c)))
                return -1;
        }
        else if (c && c->mask == ~UINT64_C(0))
            f->stats.sf_from_copy++;
        else if (!bc)
            c = NULL; /* checked whole before, no whole copy: read as is */
        if (c) { /* the piece from the verified copy */
            c->used = ++s->vclock;
            if (in < slen)
                memcpy(buf, c->buf + in, (size_t)(n < slen - in ? n : slen - in));
            if (in + n > slen)
                memset(buf + (in < slen ? slen - in : 0), 0, (size_t)(in + n - (in > slen ? in : slen)));
            return 0;
        }
    }
    if (sub_rw(s, k, fd, 0, local, n, buf, limit, 1) < 0) {
        TAGG_ERR(TAGG_E_IO, "read of %llu bytes at offset %llu of '%s' failed: %s", (unsigned long long)n,
                 (unsigned long long)local, name, strerror(errno));
        return -1;
    }
    return 0;
}

/* Compression hooks (sf_stripe_codec.h). A write of n bytes at local of
 * data stripe j: a whole stripe goes through the codec, a partial one expands
 * a compressed stripe first. 1 done (*form: the stored form), 0 not this
 * hook's (write raw as usual), -1 failed. */
static int zwrite(tagg_file_t *f, int fd, uint64_t j, uint64_t local, uint64_t n, const char *buf, uint64_t crc,
                  uint64_t *form, const char *name, char *old)
{
    sub_t   *s = sub_of(f);
    uint64_t S = s->ix.stripe, base = local - local % S;
    char     err[ERRLEN];
    int      expanded = 0, rc;
    if (!tagg_sub_zmay(s, j))
        return 0;
    if (n == S && local % S == 0) {
        if (!s->z.enc) /* raw, over whatever the slot held */
            return 0;
        rc = tagg_sfz_put_whole(&s->z, fd, base, buf, (size_t)n, crc, form, err, sizeof err);
        if (rc == 0) {
            __atomic_add_fetch(&f->stats.comp_logical, n, __ATOMIC_RELAXED);
            __atomic_add_fetch(&f->stats.comp_stored, *form ? TAGG_SFZ_FORM_STORED(*form) : n, __ATOMIC_RELAXED);
            __atomic_add_fetch(*form ? &f->stats.comp_stripes : &f->stats.comp_raw, 1, __ATOMIC_RELAXED);
        }
    }
    else
        rc = tagg_sfz_put_part(&s->z, fd, base, S, local % S, buf, (size_t)n, old, &expanded, err, sizeof err);
    if (rc < 0) {
        TAGG_ERR(TAGG_E_IO, "stripe %llu of subfile '%s' (compression): %s", (unsigned long long)j, name, err);
        return -1;
    }
    return 1;
}

/* A read of n bytes at local of data stripe j (read_checked): 1 done from a
 * compressed stripe, 0 raw (read as usual), -1 failed (damaged: the message
 * names the subfile and stripe). A closed file read-only: the index says
 * which stripes are compressed; an open one: the slot's header does. */
static int zread(tagg_file_t *f, int fd, uint32_t k, uint64_t j, uint64_t local, uint64_t n, char *buf, const char *name,
                 uint64_t limit)
{
    sub_t   *s = sub_of(f);
    uint64_t S = s->ix.stripe, base = local - local % S, form = 0;
    char     err[ERRLEN] = "";
    int      rc = 0;
    if (s->limit) { /* closed, read-only: by the index, decoded once per stripe */
        const tagg_sf_stripe_t *r = tagg_sf_stripe_find(s->ix.st, s->ix.nst, j);
        if (!r || !r->form)
            return 0;
        if (!s->zbuf && !(s->zbuf = malloc(2 * (size_t)S)))
            return TAGG_ERR(TAGG_E_NOMEM, "out of memory (decompression buffers)"), -1;
        if (s->zj != j + 1) {
            s->zj = 0;
            rc    = tagg_sfz_load_form(fd, base, (size_t)S, limit, r->form, r->crc, s->verify, s->zbuf, s->zbuf + S, err,
                                       sizeof err);
            form  = r->form;
            if (rc == 0)
                s->zj = j + 1;
        }
        else
            form = r->form;
    }
    else { /* an open file: probe the slot's header first (raw stripes cost 40 bytes more) */
        /* under a shared lock on the slot: another rank's (or thread's)
         * expansion of it is never seen half done */
        unsigned char h[TAGG_SFZ_HDR];
        unsigned      enc;
        uint64_t      lg, pl, crc;
        int           probe;
        if (!s->zbuf && !(s->zbuf = malloc(2 * (size_t)S)))
            return TAGG_ERR(TAGG_E_NOMEM, "out of memory (decompression buffers)"), -1;
        pthread_mutex_lock(&s->z.mu);
        if (tagg_sfz_slot_lock(fd, base, S, 2) < 0) {
            pthread_mutex_unlock(&s->z.mu);
            return TAGG_ERR(TAGG_E_IO, "cannot lock stripe %llu of '%s': %s", (unsigned long long)j, name,
                            strerror(errno)),
                   -1;
        }
        if ((probe = tagg_sf_pread_upto(fd, h, sizeof h, base, limit)) < 0)
            TAGG_ERR(TAGG_E_IO, "read of stripe %llu of '%s' failed: %s", (unsigned long long)j, name, strerror(errno));
        else if (tagg_sfz_header(h, &enc, &lg, &pl, &crc) && lg == S) {
            s->zj = 0; /* other ranks write: no cache */
            rc    = tagg_sfz_slot_load(fd, base, (size_t)S, limit, s->zbuf, s->zbuf + S, &form, err, sizeof err);
            probe = 1;
        }
        tagg_sfz_slot_lock(fd, base, S, 0);
        pthread_mutex_unlock(&s->z.mu);
        if (probe <= 0)
            return probe; /* -1 failed, 0 raw */
    }
    if (rc < 0) {
        TAGG_ERR(TAGG_E_IO,
                 "subfile %u '%s', stripe %llu (compressed%s%s, file addresses %llu..%llu): %s (the file was changed or "
                 "damaged after it was written; see tagg-fuse --check)",
                 (unsigned)k, name, (unsigned long long)j, form ? ", " : "",
                 form ? tagg_sfz_name(TAGG_SFZ_FORM_ENC(form)) : "", (unsigned long long)(j * S),
                 (unsigned long long)(j * S + S - 1), err);
        return -1;
    }
    if (!form)
        return 0;
    memcpy(buf, s->zbuf + local % S, (size_t)n);
    return 1;
}

/* Fresh files, under s->mu: the remembered partial write of exactly
 * [at, at+n) of stripe key, or -1. */
static int recent_find(const sub_t *s, uint64_t key, uint64_t at, uint64_t n)
{
    for (int i = s->nrecent - 1; i >= 0; i--)
        if (s->recent[i].key == key && s->recent[i].at == at && s->recent[i].n == n)
            return i;
    return -1;
}

/* Under s->mu: forgets the remembered writes of stripe key that overlap
 * [lo, hi) (a write there changes their bytes). */
static void recent_forget(sub_t *s, uint64_t key, uint64_t lo, uint64_t hi)
{
    int w = 0;
    for (int i = 0; i < s->nrecent; i++)
        if (!(s->recent[i].key == key && s->recent[i].at < hi && lo < s->recent[i].at + s->recent[i].n))
            s->recent[w++] = s->recent[i];
    s->nrecent = w;
}

/* Under s->mu: remembers a partial write that landed (the oldest goes when
 * the list is full; a rewrite of it then reads its bytes back). */
static void recent_add(sub_t *s, uint64_t key, uint64_t at, uint64_t n, uint64_t crc, const uint64_t *pc)
{
    recent_forget(s, key, at, at + n);
    if (s->nrecent == TAGG_SUB_RECENT)
        memmove(s->recent, s->recent + 1, (TAGG_SUB_RECENT - 1) * sizeof *s->recent), s->nrecent--;
    struct sub_recent *r = &s->recent[s->nrecent++];
    r->key = key, r->at = at, r->n = n, r->crc = crc;
    memcpy(r->pc, pc, sizeof r->pc);
}

/* Format 4: the changes to the padded forms of the blocks (B bytes each) of a
 * stripe when its bytes [at, at+n) become buf, replacing `old` (n bytes), or
 * bytes whose CRC-64 in each block they touch is oldp[0], oldp[1], ... (a
 * remembered write), or zeros (both NULL). bd: TAGG_SF_BLOCKS words, set;
 * newp: the CRC-64 of buf's bytes in each block they touch, in order. */
static void block_deltas(uint64_t B, uint64_t at, uint64_t n, const char *buf, const char *old, const uint64_t *oldp,
                         uint64_t *bd, uint64_t *newp)
{
    memset(bd, 0, TAGG_SF_BLOCKS * sizeof *bd);
    for (uint64_t p = at, i = 0; p < at + n; i++) {
        uint64_t b = p / B, e = (b + 1) * B < at + n ? (b + 1) * B : at + n, np = e - p;
        uint64_t nc = tagg_crc64(0, buf + (p - at), (size_t)np);
        uint64_t oc = old ? tagg_crc64(0, old + (p - at), (size_t)np) : oldp ? oldp[i] : tagg_crc_zeros(np);
        bd[b] ^= tagg_crc_delta(oc, nc, p - b * B, np, B);
        newp[i] = nc;
        p = e;
    }
}

/* Format 4: the block changes of a whole-stripe write (bc: its blocks' CRC-64,
 * all B bytes long), as a note replaces them. */
static void full_block_deltas(uint64_t B, const uint64_t *bc, uint64_t *bd)
{
    uint64_t z = tagg_crc_zeros(B);
    for (unsigned b = 0; b < TAGG_SF_BLOCKS; b++)
        bd[b] = tagg_crc_delta(z, bc[b], 0, B, B);
}

/* A new file (s->fresh): the change of the padded CRC form of stripe `key`
 * when its bytes [at, at+n) (at `local` in fd) become bytes whose CRC-64
 * is crc. They were zeros, except where this rank wrote before (its spans):
 * when that was one write of exactly these bytes, its remembered checksum
 * stands for them; otherwise they are read first, from the first such byte
 * to the last. Another rank's bytes among them would mean overlapping spans:
 * close re-reads the stripe then, whatever this delta says. The remembered
 * writes that overlap the range are forgotten (the caller remembers this one
 * once it landed). bd (format 4, else NULL): the same change per block
 * (block_deltas), and newp the CRC-64 of buf's bytes in each block, for the
 * remembered write. 0 or -1 (pushed). */
static int fresh_delta(tagg_file_t *f, int fd, uint64_t key, uint64_t at, uint64_t local, uint64_t n, uint64_t crc,
                       const char *buf, const char *name, uint64_t *delta, uint64_t *bd, uint64_t *newp)
{
    sub_t   *s = sub_of(f);
    uint64_t a = 0, b = 0, before = 0, oldp[TAGG_SF_BLOCKS];
    int      one = 0;
    pthread_mutex_lock(&s->mu);
    int had = tagg_notes_touch(&s->written, key, at, at + n, &a, &b), i = had ? recent_find(s, key, at, n) : -1;
    if (i >= 0)
        before = s->recent[i].crc, had = 0, one = 1, memcpy(oldp, s->recent[i].pc, sizeof oldp);
    else if (!had)
        before = tagg_crc_zeros(n);
    recent_forget(s, key, at, at + n);
    pthread_mutex_unlock(&s->mu);
    if (bd && !had)
        block_deltas(s->ix.block, at, n, buf, NULL, one ? oldp : NULL, bd, newp);
    if (had) {
        char *old = calloc(1, (size_t)n);
        if (!old) {
            TAGG_ERR(TAGG_E_NOMEM, "out of memory (%llu bytes to follow a rewrite)", (unsigned long long)n);
            return -1;
        }
        if (tagg_sf_pread_upto(fd, old + (a - at), (size_t)(b - a), local + (a - at), UINT64_MAX) < 0) {
            TAGG_ERR(TAGG_E_IO, "read of the %llu bytes at offset %llu of '%s' before rewriting them failed: %s",
                     (unsigned long long)(b - a), (unsigned long long)(local + (a - at)), name, strerror(errno));
            free(old);
            return -1;
        }
        __atomic_add_fetch(&f->stats.sf_pre_read, b - a, __ATOMIC_RELAXED);
        before = tagg_crc64(0, old, (size_t)n);
        if (bd)
            block_deltas(s->ix.block, at, n, buf, old, NULL, bd, newp);
        free(old);
    }
    *delta = tagg_crc_delta(before, crc, at, n, s->ix.stripe);
    return 0;
}

int tagg_sub_share_first(tagg_file_t *f)
{
    sub_t   *s    = sub_of(f);
    uint64_t S    = s->ix.stripe, slen = tagg_sf_stripe_len(s->ix.logical_size, S, 0);
    /* the same on every rank: the index (rank 0's) and the configuration */
    if (!s->verify || s->ix.version < TAGG_SF_VERSION_3 || s->ix.nvr || f->size < 2 || !slen ||
        S > TAGG_SUB_COPY_BYTES || tagg_sub_zmay(s, 0)) /* a stripe the copies hold, one broadcast's count */
        return 0;
    struct sub_copy *c  = NULL;
    int              ok = 1, all = 0;
    /* format 4: its first block only (HDF5's superblock and first headers),
     * the rest checked block by block where ranks read it */
    uint64_t        B   = s->ix.block;
    const uint64_t *bc0 = B && slen > B ? tagg_sf_blocks_find(s->ix.blk, s->ix.nblk, 0) : NULL;
    uint64_t        len = bc0 ? B : slen, nblk = B ? (slen + B - 1) / B : 0;
    pthread_mutex_lock(&s->mu);
    if (f->rank == 0) {
        /* errors are the business of the read that meets them (the same
         * message then, on the rank that reads): collected here, dropped */
        tagg_err_sink_t sink;
        tagg_err_capture(&sink);
        int fd = tagg_sub_fd_of(f, 0, 0);
        uint64_t limit = s->limit ? s->ix.sub[0].size : UINT64_MAX;
        if (fd >= 0 && bc0)
            c = (c = copy_take(s)) && check_blocks(f, fd, 0, 0, 0, slen, limit, bc0, 0, 0, c, s->paths[0]) == 0 ? c : NULL;
        else
            c = fd >= 0 ? check_into_copy(f, fd, 0, 0, 0, 0, slen, limit, 1, s->paths[0], NULL) : NULL;
        ok = c != NULL;
        tagg_err_capture(NULL);
    }
    else if (!copy_find(s, 0) && !tagg_notes_get(&s->checked, 0)) {
        tagg_err_sink_t sink; /* no memory for a slot: this rank reads it itself later */
        tagg_err_capture(&sink);
        ok = (c = copy_take(s)) != NULL;
        tagg_err_capture(NULL);
    }
    else
        ok = 0;
    int code = tagg_mpi_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, f->comm);
    if (code == MPI_SUCCESS && all)
        code = tagg_mpi_bcast_bulk(c->buf, (int)len, MPI_BYTE, 0, f->comm);
    if (code == MPI_SUCCESS && all && f->rank != 0) {
        uint64_t unchecked = bc0 ? blocks_mask(0, nblk - 1) & ~UINT64_C(1) : 0; /* all but block 0, or none */
        if (tagg_notes_put(&s->checked, 0, NOTE_VERIFIED, unchecked) == 0)
            c->key = 1, c->mask = bc0 ? 1 : ~UINT64_C(0), c->used = ++s->vclock;
        f->stats.sf_shared++;
    }
    pthread_mutex_unlock(&s->mu);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Bcast (the first stripe)", code);
        return -1;
    }
    return 0;
}

/* A data write of n bytes at local in subfile `name` (HDF5 address off) failed (errno). */
static void write_failed(uint64_t n, uint64_t local, const char *name, uint64_t off)
{
    TAGG_ERR(TAGG_E_IO, "write of %llu bytes at offset %llu of subfile '%s' (address %llu) failed: %s",
             (unsigned long long)n, (unsigned long long)local, name, (unsigned long long)off,
             errno == ENOSPC ? "no space (a write wrote nothing)" : strerror(errno));
}

/* Moves one piece that lies within one stripe. */
static int piece(tagg_file_t *f, uint64_t off, uint64_t n, char *buf, tagg_dir_t dir)
{
    sub_t   *s = sub_of(f);
    uint32_t k;
    uint64_t local, S = s->ix.stripe, j = off / S;
    int      fd, sp = s->ix.nvr && f->io_meta;
    const char *name;
    tagg_sf_locate(off, S, s->ix.count, &k, &local);
    if (sp) /* metadata: the shared metadata file, at the logical address */
        fd = meta_fd_of(f), local = off, name = s->meta_path;
    else
        fd = tagg_sub_fd_of(f, k, off), name = s->paths[k];
    if (fd < 0)
        return -1;
    if (dir == TAGG_READ) {
        pthread_mutex_lock(&s->mu);
        int rc = read_checked(f, fd, k, sp, j, local, n, buf, name);
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    if (s->ix.nvr && tagg_fault("nvr_write", f->rank)) {
        TAGG_ERR(TAGG_E_IO, "write of %llu bytes at offset %llu of '%s' failed: %s (injected by TAGG_FAULT)",
                 (unsigned long long)n, (unsigned long long)local, name, strerror(ENOSPC));
        return -1;
    }
    /* the note: a whole stripe brings its checksum (and stored form); a
     * partial write of a read-write open of a closed file brings the change it
     * makes (the logical bytes it replaces are read first: a compressed stripe
     * decoded); in a new file every write brings its change from zeros (or,
     * over bytes this rank wrote before, from those), which close sums when
     * no two ranks' spans overlap; anything else is re-read at close */
    int      full  = off % S == 0 && n == S, unsure = 0, remember = 0, bok = 0;
    uint64_t at    = off % S, key = 2 * j + (uint64_t)sp, bd[TAGG_SF_BLOCKS], bc[TAGG_SF_BLOCKS] = {0};
    uint64_t crc = 0, delta = 0, form = 0;
    int      blocks = s->written.nb && !sp; /* format 4: follow the blocks' changes too */
    if (full && blocks) { /* the stripe's CRC from its blocks': one pass over the bytes */
        crc = tagg_sf_block_crcs(buf, S, s->ix.block, bc);
        full_block_deltas(s->ix.block, bc, bd), bok = 1;
    }
    else if (full || s->fresh)
        crc = tagg_crc64(0, buf, (size_t)n);
    char *old = NULL; /* the logical bytes a partial write replaces (read-write open of a closed file) */
    if (!full && s->base_on && !(old = malloc((size_t)n))) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory (%llu bytes to check a rewrite)", (unsigned long long)n);
        return -1;
    }
    /* raw slots: read here; possibly compressed ones: by the codec, under the slot's lock */
    if (old && (sp || !tagg_sub_zmay(s, j)) && tagg_sf_pread_upto(fd, old, (size_t)n, local, UINT64_MAX) < 0) {
        TAGG_ERR(TAGG_E_IO, "read of the %llu bytes at offset %llu of '%s' before rewriting them failed: %s",
                 (unsigned long long)n, (unsigned long long)local, name, strerror(errno));
        free(old);
        return -1;
    }
    if (s->fresh && (full || (!sp && tagg_sub_zmay(s, j)))) { /* the stripe's remembered writes go */
        pthread_mutex_lock(&s->mu);
        recent_forget(s, key, 0, S);
        pthread_mutex_unlock(&s->mu);
        if (full)
            delta = tagg_crc_delta(tagg_crc_zeros(n), crc, 0, n, S);
        else
            unsure = NOTE_UNSURE; /* the codec may rewrite the slot whole */
    }
    else if (s->fresh) {
        if (fresh_delta(f, fd, key, at, local, n, crc, buf, name, &delta, blocks ? bd : NULL, bc) < 0)
            return -1;
        remember = 1, bok = blocks; /* bc: its bytes' CRC in each block, for a rewrite of exactly them */
    }
    int zr = sp ? 0 : zwrite(f, fd, j, local, n, buf, crc, &form, name, old); /* compression: 1 done, -1 failed */
    if (zr < 0) {
        free(old);
        return -1;
    }
    if (old) {
        delta = tagg_crc_delta(tagg_crc64(0, old, (size_t)n), tagg_crc64(0, buf, (size_t)n), at, n, S);
        free(old);
    }
    if (!zr && sub_rw(s, k, fd, 1, local, n, buf, UINT64_MAX, 1) < 0) {
        write_failed(n, local, name, off);
        return -1;
    }
    pthread_mutex_lock(&s->mu);
    if (s->wend && !sp && !zr && local + n > s->wend[k]) /* the subfile's size as this rank knows it */
        s->wend[k] = local + n;
    int rc = tagg_notes_write(&s->written, key, full, full ? crc : 0, form, delta, bok ? bd : NULL, at, at + n, unsure);
    if (remember)
        recent_add(s, key, at, n, crc, bc);
    pthread_mutex_unlock(&s->mu);
    if (rc < 0)
        TAGG_ERR(TAGG_E_NOMEM, "out of memory (noting written stripes)");
    return rc;
}

/* Whole stripes that follow one another in one subfile (a file of one
 * subfile: stripe j at j S) are written in one request: a FUSE client keeps
 * several of a large direct request's parts in flight, where stripe after
 * stripe waits for each (GlusterFS testbed, 128 MiB per rank: the file
 * access of a subfiled file 0.44-0.55 s against the shared file's 0.36-0.47).
 * The bytes of such a run, at the start of [off, off + len): a multiple of the
 * stripe, at least two stripes, or 0 (no run: several subfiles, node-local
 * ones, or a codec that may compress a stripe). */
static uint64_t write_run_len(const sub_t *s, uint64_t off, uint64_t len)
{
    uint64_t S = s->ix.stripe, r = len / S * S;
    return s->ix.count == 1 && !s->ix.nvr && !s->zmay && off % S == 0 && r >= 2 * S ? r : 0;
}

/* Writes such a run: each stripe's checksum (and, in a new file, its change
 * from zeros) noted as piece() notes a whole stripe, after one write of all. */
static int write_run(tagg_file_t *f, uint64_t off, uint64_t len, char *buf)
{
    sub_t   *s = sub_of(f);
    uint64_t S = s->ix.stripe, j0 = off / S, nst = len / S, local;
    uint32_t k;
    tagg_sf_locate(off, S, s->ix.count, &k, &local);
    int       fd  = tagg_sub_fd_of(f, k, off);
    uint64_t *crc = fd >= 0 ? malloc((size_t)nst * sizeof *crc) : NULL;
    if (fd < 0)
        return -1;
    if (!crc) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory (checksums of %llu stripes)", (unsigned long long)nst);
        return -1;
    }
    uint64_t B = s->written.nb ? s->ix.block : 0, *bd = B ? malloc((size_t)nst * TAGG_SF_BLOCKS * sizeof *bd) : NULL;
    if (B && !bd) {
        free(crc);
        TAGG_ERR(TAGG_E_NOMEM, "out of memory (block checksums of %llu stripes)", (unsigned long long)nst);
        return -1;
    }
    for (uint64_t i = 0; i < nst; i++) {
        if (B) { /* format 4: the blocks' CRCs, the stripe's composed from them */
            uint64_t bc[TAGG_SF_BLOCKS];
            crc[i] = tagg_sf_block_crcs(buf + i * S, S, B, bc);
            full_block_deltas(B, bc, bd + i * TAGG_SF_BLOCKS);
        }
        else
            crc[i] = tagg_crc64(0, buf + i * S, (size_t)S);
    }
    if (sub_rw(s, k, fd, 1, local, len, buf, UINT64_MAX, 1) < 0) {
        write_failed(len, local, s->paths[k], off);
        free(crc), free(bd);
        return -1;
    }
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    if (s->wend && local + len > s->wend[k])
        s->wend[k] = local + len;
    for (uint64_t i = 0; i < nst; i++) {
        uint64_t key = 2 * (j0 + i), delta = 0;
        if (s->fresh) { /* the stripe's remembered writes go; its change from zeros */
            recent_forget(s, key, 0, S);
            delta = tagg_crc_delta(tagg_crc_zeros(S), crc[i], 0, S, S);
        }
        if (tagg_notes_write(&s->written, key, 1, crc[i], 0, delta, bd ? bd + i * TAGG_SF_BLOCKS : NULL, 0, S, 0) < 0)
            rc = -1;
    }
    pthread_mutex_unlock(&s->mu);
    free(crc), free(bd);
    if (rc < 0)
        TAGG_ERR(TAGG_E_NOMEM, "out of memory (noting written stripes)");
    return rc;
}

/* Format 4, a verifying read-only open of a file of one subfile whose raw
 * stripes all have block checksums (a stripe J at J S in the subfile): a read
 * across stripes is one request for the blocks it covers, at most two
 * stripes' worth (the run buffer), each block checked, instead of a request
 * per stripe one after the other (GlusterFS testbed, h5bench's CONTIG, a
 * rank's 4 MiB across two stripes: 14 ms in two requests against 8.5 ms for
 * the shared layout's one). The bytes of such a run at the start of
 * [off, off + len), or 0 (the range stays in one stripe: a piece). */
static uint64_t read_run_len(const sub_t *s, uint64_t off, uint64_t len)
{
    uint64_t S = s->ix.stripe, B = s->bunit, a = B ? off / B * B : 0, m = len < a + 2 * S - off ? len : a + 2 * S - off;
    if (!s->verify || !B || s->ix.count != 1 || s->ix.nvr || s->zmay || off + m > s->ix.logical_size)
        return 0;
    return off / S != (off + m - 1) / S ? m : 0;
}

/* Reads such a run: the blocks [a, b) its bytes touch into the run buffer,
 * each checked against its record (a hole's against zeros), noted as checked,
 * then the bytes asked copied out. The buffer keeps what it holds: a later
 * run inside it is served from it (HDF5 reads a compound's records once per
 * member, every member across the same bytes). */
static int read_run(tagg_file_t *f, uint64_t off, uint64_t n, char *buf)
{
    sub_t   *s = sub_of(f);
    uint64_t S = s->ix.stripe, B = s->bunit, L = s->ix.logical_size, a = off / B * B;
    uint64_t b = (off + n + B - 1) / B * B < L ? (off + n + B - 1) / B * B : L;
    int      fd = tagg_sub_fd_of(f, 0, off), rc = 0;
    if (fd < 0)
        return -1;
    pthread_mutex_lock(&s->mu);
    if (s->run_hi && s->run_lo <= a && b <= s->run_hi) { /* checked, and still held */
        memcpy(buf, s->runbuf + (off - s->run_lo), (size_t)n);
        f->stats.sf_from_copy++;
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    if (!s->runbuf && !(s->runbuf = tagg_buf_get(2 * (size_t)S))) {
        pthread_mutex_unlock(&s->mu);
        TAGG_ERR(TAGG_E_NOMEM, "out of memory (a read buffer of %llu bytes)", (unsigned long long)(2 * S));
        return -1;
    }
    s->run_lo = s->run_hi = 0;
    if (sub_rw(s, 0, fd, 0, a, b - a, s->runbuf, s->ix.sub[0].size, 1) < 0) {
        TAGG_ERR(TAGG_E_IO, "read of %llu bytes at offset %llu of '%s' failed: %s", (unsigned long long)(b - a),
                 (unsigned long long)a, s->paths[0], strerror(errno));
        rc = -1;
    }
    for (uint64_t x = a; rc == 0 && x < b;) { /* stripe by stripe: its blocks in the run */
        uint64_t j = x / S, slen = tagg_sf_stripe_len(L, S, j), e = (j + 1) * S < b ? (j + 1) * S : b;
        const tagg_sf_stripe_t *r  = tagg_sf_stripe_find(s->ix.st, s->ix.nst, j);
        const uint64_t         *bc = r ? tagg_sf_blocks_find(s->ix.blk, s->ix.nblk, j) : NULL;
        uint64_t                mask = 0, nblk = (slen + B - 1) / B;
        if (r && !bc) { /* cannot be: the open found blocks for every raw stripe (bunit) */
            TAGG_ERR(TAGG_E_IO, "stripe %llu of '%s' has no block checksums", (unsigned long long)j, f->path);
            rc = -1;
            break;
        }
        for (uint64_t y = x; y < e; y += B) {
            uint64_t bi = (y - j * S) / B, bl = slen - (y - j * S) < B ? slen - (y - j * S) : B, got = 0;
            const char *p = s->runbuf + (y - a);
            if (r ? (got = tagg_crc64(0, p, (size_t)bl)) != bc[bi] : !tagg_sf_all_zero(p, (size_t)bl)) {
                block_mismatch(0, s->paths[0], j, bi, y, bl, r ? got : tagg_crc64(0, p, (size_t)bl), !r, r ? bc[bi] : 0);
                rc = -1;
                break;
            }
            mask |= UINT64_C(1) << bi;
            f->stats.sf_blocks++;
        }
        if (rc == 0 && note_blocks_checked(s, j, nblk, mask) < 0)
            rc = -1;
        x = e;
    }
    if (rc == 0)
        memcpy(buf, s->runbuf + (off - a), (size_t)n), s->run_lo = a, s->run_hi = b;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int sub_io(tagg_file_t *f, uint64_t off, uint64_t len, char *buf, tagg_dir_t dir)
{
    uint64_t S = sub_of(f)->ix.stripe;
    for (uint64_t done = 0; done < len;) {
        uint64_t at = off + done, n = S - at % S;
        uint64_t run = dir == TAGG_WRITE ? write_run_len(sub_of(f), at, len - done) : read_run_len(sub_of(f), at, len - done);
        if (run) {
            if ((dir == TAGG_WRITE ? write_run(f, at, run, buf + done) : read_run(f, at, run, buf + done)) < 0)
                return -1;
            done += run;
            continue;
        }
        if (n > len - done)
            n = len - done;
        if (piece(f, at, n, buf + done, dir) < 0)
            return -1;
        done += n;
    }
    return 0;
}

int tagg_sub_pwrite(tagg_file_t *f, uint64_t off, uint64_t len, const void *buf)
{
    return sub_io(f, off, len, (char *)buf, TAGG_WRITE); /* not written to on TAGG_WRITE */
}

int tagg_sub_pread(tagg_file_t *f, uint64_t off, uint64_t len, void *buf)
{
    return sub_io(f, off, len, buf, TAGG_READ);
}
