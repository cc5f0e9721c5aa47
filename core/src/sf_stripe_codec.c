/* Compressed stripes of the subfile layout (sf_stripe_codec.h). */
#define _GNU_SOURCE /* F_OFD_SETLKW */
#include "errmsg.h"
#include "sf_stripe_codec.h"
#include "subfile_index.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const names[TAGG_SFZ_COUNT_] = {NULL, "lz4", "zstd", "blosc-lz4", "blosc-zstd"};

const char *tagg_sfz_name(unsigned enc) { return enc < TAGG_SFZ_COUNT_ ? names[enc] : NULL; }

unsigned tagg_sfz_id(const char *name)
{
    for (unsigned i = 1; name && i < TAGG_SFZ_COUNT_; i++)
        if (!strcmp(names[i], name))
            return i;
    return 0;
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int tagg_sfz_header(const void *h, unsigned *enc, uint64_t *logical, uint64_t *payload, uint64_t *crc)
{
    const unsigned char *p = h;
    if (memcmp(p, "TAGGz\001", 6) || p[7] != 0 || p[6] == TAGG_SFZ_RAW || p[6] >= TAGG_SFZ_COUNT_)
        return 0;
    if (tagg_crc64(0, p, 32) != get64(p + 32))
        return 0;
    *enc = p[6], *logical = get64(p + 8), *payload = get64(p + 16), *crc = get64(p + 24);
    return *payload > 0 && *logical > 0 && *payload < *logical;
}

static void make_header(unsigned char *p, unsigned enc, uint64_t logical, uint64_t payload, uint64_t crc)
{
    memcpy(p, "TAGGz\001", 6);
    p[6] = (unsigned char)enc, p[7] = 0;
    put64(p + 8, logical), put64(p + 16, payload), put64(p + 24, crc);
    put64(p + 32, tagg_crc64(0, p, 32));
}

int tagg_sfz_init(tagg_sfz_t *z, unsigned enc, const tagg_codec_opts_t *o, uint64_t S, char *err, size_t errlen)
{
    memset(z, 0, sizeof *z);
    pthread_mutex_init(&z->mu, NULL);
    z->S = S;
    if (o)
        z->opts = *o;
    else
        tagg_codec_opts_default(&z->opts);
    if (enc == TAGG_SFZ_RAW)
        return 0;
    if (enc >= TAGG_SFZ_COUNT_ || !(z->codec = tagg_codec_find(names[enc]))) {
        tagg_errmsg(err, errlen, "stripe codec %u is not built into this tagg", enc);
        return -1;
    }
    size_t bound = z->codec->bound((size_t)S);
    if (!bound) {
        tagg_errmsg(err, errlen, "%s cannot compress stripes of %" PRIu64 " bytes", names[enc], S);
        return -1;
    }
    z->enc  = enc;
    z->zcap = TAGG_SFZ_HDR + bound;
    return 0;
}

void tagg_sfz_free(tagg_sfz_t *z)
{
    free(z->zbuf), free(z->lbuf);
    z->zbuf = z->lbuf = NULL;
    pthread_mutex_destroy(&z->mu);
}


/* Incompressible data should not pay for compressing it whole: before a large
 * stripe is compressed, three samples (its start, middle and end, 16 KiB each)
 * are; when together they do not shrink by 1/32 the stripe is stored raw
 * untried (random or already compressed data: the whole would not shrink by
 * the 1/64 that storing it compressed needs). The samples still cost codec
 * time. Called with z->mu held. */
#define PROBE_SAMPLE (16u << 10)
static int probe_says_raw(tagg_sfz_t *z, const unsigned char *buf, size_t len)
{
    if (len < 16 * (size_t)PROBE_SAMPLE)
        return 0;
    size_t at[3] = {0, (len / 2) & ~(size_t)4095, len - PROBE_SAMPLE}, in = 0, out = 0;
    char   msg[64];
    for (int i = 0; i < 3; i++) {
        size_t stored = 0;
        if (z->codec->encode(&z->opts, buf + at[i], PROBE_SAMPLE, z->zbuf + TAGG_SFZ_HDR, z->zcap - TAGG_SFZ_HDR,
                             &stored, msg, sizeof msg) != 0)
            return 0; /* the whole decides */
        in += PROBE_SAMPLE, out += stored;
    }
    return out + in / 32 >= in;
}

int tagg_sfz_put_whole(tagg_sfz_t *z, int fd, uint64_t base, const void *buf, size_t len, uint64_t crc, uint64_t *form,
                       char *err, size_t errlen)
{
    size_t stored = 0;
    int    rc     = 0, packed = 0;
    *form         = 0;
    if (z->enc && len > TAGG_SFZ_HDR + 64) {
        pthread_mutex_lock(&z->mu);
        if (!z->zbuf && !(z->zbuf = malloc(z->zcap))) {
            pthread_mutex_unlock(&z->mu);
            tagg_errmsg(err, errlen, "out of memory (a compression buffer of %zu bytes)", z->zcap);
            return -1;
        }
        char msg[256];
        int  skip = probe_says_raw(z, buf, len);
        if (skip)
            __atomic_add_fetch(&z->probe_raw, 1, __ATOMIC_RELAXED);
        if (!skip &&
            z->codec->encode(&z->opts, buf, len, z->zbuf + TAGG_SFZ_HDR, z->zcap - TAGG_SFZ_HDR, &stored, msg,
                             sizeof msg) == 0 &&
            TAGG_SFZ_HDR + stored + len / 64 < len) {
            make_header((unsigned char *)z->zbuf, z->enc, len, stored, crc);
            stored += TAGG_SFZ_HDR;
            static const char zero = 0;
            /* the block, then the slot's last byte: the subfile keeps the raw layout's size */
            if (tagg_sf_pwrite_all(fd, z->zbuf, stored, base) < 0 || tagg_sf_pwrite_all(fd, &zero, 1, base + len - 1) < 0)
                rc = -1;
            packed = 1;
        }
        pthread_mutex_unlock(&z->mu);
        if (rc == 0 && packed) {
            *form = TAGG_SFZ_FORM(z->enc, stored);
            __atomic_add_fetch(&z->comp_stripes, 1, __ATOMIC_RELAXED);
        }
    }
    if (rc == 0 && !packed) {
        stored = len;
        if (tagg_sf_pwrite_all(fd, buf, len, base) < 0)
            rc = -1;
        else if (z->enc)
            __atomic_add_fetch(&z->raw_stripes, 1, __ATOMIC_RELAXED);
    }
    if (rc < 0) {
        tagg_errmsg(err, errlen, "write of stripe (%zu bytes%s) at offset %" PRIu64 " failed: %s", len,
                packed ? ", compressed" : "", base, strerror(errno));
        return -1;
    }
    if (z->enc) {
        __atomic_add_fetch(&z->logical, (uint64_t)len, __ATOMIC_RELAXED);
        __atomic_add_fetch(&z->stored, (uint64_t)stored, __ATOMIC_RELAXED);
    }
    return 0;
}

/* check: the logical bytes against the header's CRC (0: verify=0) */
static int decode(const void *stored, size_t n, void *out, size_t want, int check, char *err, size_t errlen)
{
    unsigned enc;
    uint64_t logical, payload, crc;
    char     msg[256];
    if (n < TAGG_SFZ_HDR || !tagg_sfz_header(stored, &enc, &logical, &payload, &crc)) {
        tagg_errmsg(err, errlen, "damaged compressed stripe: bad header");
        return -1;
    }
    if (logical != want || payload != n - TAGG_SFZ_HDR) {
        tagg_errmsg(err, errlen,
                "damaged compressed stripe: its header says %" PRIu64 " bytes from %" PRIu64 ", expected %zu from %zu",
                logical, payload, want, n - TAGG_SFZ_HDR);
        return -1;
    }
    const tagg_codec_t *c = tagg_codec_find(names[enc]);
    if (!c) {
        tagg_errmsg(err, errlen, "compressed stripe of codec %s, which this tagg does not have", names[enc]);
        return -1;
    }
    if (c->decode((const char *)stored + TAGG_SFZ_HDR, (size_t)payload, out, want, msg, sizeof msg) < 0) {
        tagg_errmsg(err, errlen, "damaged compressed stripe: %s", msg);
        return -1;
    }
    uint64_t got = check ? tagg_crc64(0, out, want) : crc;
    if (got != crc) {
        tagg_errmsg(err, errlen,
                "CHECKSUM MISMATCH after decompression: crc64 %016" PRIx64 ", its header records %016" PRIx64, got, crc);
        return -1;
    }
    return 0;
}

int tagg_sfz_decode(const void *stored, size_t n, void *out, size_t want, char *err, size_t errlen)
{
    return decode(stored, n, out, want, 1, err, errlen);
}

static int pread_zero(int fd, void *buf, size_t len, uint64_t off, uint64_t limit, char *err, size_t errlen)
{
    if (tagg_sf_pread_upto(fd, buf, len, off, limit) < 0) {
        tagg_errmsg(err, errlen, "read of %zu bytes at offset %" PRIu64 " failed: %s", len, off, strerror(errno));
        return -1;
    }
    return 0;
}

int tagg_sfz_slot_load(int fd, uint64_t base, size_t len, uint64_t limit, void *out, void *scratch, uint64_t *form,
                       char *err, size_t errlen)
{
    unsigned enc;
    uint64_t logical, payload, crc;
    *form = 0;
    if (pread_zero(fd, out, len, base, limit, err, errlen) < 0)
        return -1;
    if (len < TAGG_SFZ_HDR || !tagg_sfz_header(out, &enc, &logical, &payload, &crc) || logical != len ||
        payload > len - TAGG_SFZ_HDR)
        return 0; /* raw */
    size_t n = TAGG_SFZ_HDR + (size_t)payload;
    memcpy(scratch, out, n);
    if (tagg_sfz_decode(scratch, n, out, len, err, errlen) < 0)
        return -1;
    *form = TAGG_SFZ_FORM(enc, n);
    return 0;
}

int tagg_sfz_load_form(int fd, uint64_t base, size_t len, uint64_t limit, uint64_t form, uint64_t crc, int check,
                       void *out, void *scratch, char *err, size_t errlen)
{
    uint64_t n = TAGG_SFZ_FORM_STORED(form);
    unsigned e, hen;
    uint64_t logical, payload, hcrc;
    if (n < TAGG_SFZ_HDR || n > len) {
        tagg_errmsg(err, errlen, "stored size %" PRIu64 " out of range", n);
        return -1;
    }
    if (pread_zero(fd, scratch, (size_t)n, base, limit, err, errlen) < 0)
        return -1;
    e = TAGG_SFZ_FORM_ENC(form);
    if (!tagg_sfz_header(scratch, &hen, &logical, &payload, &hcrc)) {
        tagg_errmsg(err, errlen, "damaged compressed stripe: bad header (the index records %s, %" PRIu64 " bytes)",
                tagg_sfz_name(e) ? tagg_sfz_name(e) : "?", n);
        return -1;
    }
    if (hen != e || (check && hcrc != crc)) {
        tagg_errmsg(err, errlen, "damaged compressed stripe: its header (%s, crc64 %016" PRIx64 ") does not match the index (%s, "
                             "crc64 %016" PRIx64 ")",
                tagg_sfz_name(hen), hcrc, tagg_sfz_name(e) ? tagg_sfz_name(e) : "?", crc);
        return -1;
    }
    return decode(scratch, (size_t)n, out, len, check, err, errlen);
}

/* Exclusive lock on [base, base + len) of fd (F_OFD_SETLKW where the system
 * has it: per open file description; else process-wide F_SETLKW). */
int tagg_sfz_slot_lock(int fd, uint64_t base, uint64_t len, int lock)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type   = lock == 2 ? F_RDLCK : lock ? F_WRLCK : F_UNLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start  = (off_t)base;
    fl.l_len    = (off_t)len;
    int cmd;
#ifdef F_OFD_SETLKW
    cmd = F_OFD_SETLKW;
#else
    cmd = F_SETLKW;
#endif
    int rc;
    while ((rc = fcntl(fd, cmd, &fl)) < 0 && errno == EINTR)
        ;
#ifdef F_OFD_SETLKW
    if (rc < 0 && (errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS)) { /* no OFD locks there */
        while ((rc = fcntl(fd, F_SETLKW, &fl)) < 0 && errno == EINTR)
            ;
    }
#endif
    return rc;
}

/* Under z->mu and the slot lock: expands a compressed slot (len logical
 * bytes) into z->lbuf and stores it raw; then, when buf, writes the piece. */
static int expand_locked(tagg_sfz_t *z, int fd, uint64_t base, uint64_t len, uint64_t in, const void *buf, size_t n,
                         void *old, int *expanded, char *err, size_t errlen)
{
    unsigned char h[TAGG_SFZ_HDR];
    unsigned      enc;
    uint64_t      logical, payload, crc;
    *expanded = 0;
    if (pread_zero(fd, h, sizeof h, base, UINT64_MAX, err, errlen) < 0)
        return -1;
    if (tagg_sfz_header(h, &enc, &logical, &payload, &crc) && logical == len && payload <= len - TAGG_SFZ_HDR) {
        char  *scratch = malloc((size_t)len);
        if (!z->lbuf)
            z->lbuf = malloc((size_t)z->S);
        if (!scratch || !z->lbuf) {
            free(scratch);
            tagg_errmsg(err, errlen, "out of memory (expanding a compressed stripe)");
            return -1;
        }
        uint64_t form;
        int      rc = tagg_sfz_slot_load(fd, base, (size_t)len, UINT64_MAX, z->lbuf, scratch, &form, err, errlen);
        free(scratch);
        if (rc < 0)
            return -1;
        if (old)
            memcpy(old, z->lbuf + in, n);
        if (buf)
            memcpy(z->lbuf + in, buf, n);
        if (tagg_sf_pwrite_all(fd, z->lbuf, (size_t)len, base) < 0) {
            tagg_errmsg(err, errlen, "write of an expanded stripe at offset %" PRIu64 " failed: %s", base, strerror(errno));
            return -1;
        }
        *expanded = 1;
        return 0;
    }
    if (old && pread_zero(fd, old, n, base + in, UINT64_MAX, err, errlen) < 0)
        return -1;
    if (buf && tagg_sf_pwrite_all(fd, buf, n, base + in) < 0) {
        tagg_errmsg(err, errlen, "write of %zu bytes at offset %" PRIu64 " failed: %s", n, base + in, strerror(errno));
        return -1;
    }
    return 0;
}

int tagg_sfz_put_part(tagg_sfz_t *z, int fd, uint64_t base, uint64_t len, uint64_t in, const void *buf, size_t n,
                      void *old, int *expanded, char *err, size_t errlen)
{
    if (in + n > len || len > z->S) {
        tagg_errmsg(err, errlen, "piece [%" PRIu64 ", %" PRIu64 ") outside a stripe of %" PRIu64 " bytes", in, in + n, len);
        return -1;
    }
    pthread_mutex_lock(&z->mu);
    if (tagg_sfz_slot_lock(fd, base, z->S, 1) < 0) {
        pthread_mutex_unlock(&z->mu);
        tagg_errmsg(err, errlen, "cannot lock the stripe at offset %" PRIu64 ": %s", base, strerror(errno));
        return -1;
    }
    int rc = expand_locked(z, fd, base, len, in, buf, n, old, expanded, err, errlen);
    tagg_sfz_slot_lock(fd, base, z->S, 0);
    pthread_mutex_unlock(&z->mu);
    return rc;
}

int tagg_sfz_expand(tagg_sfz_t *z, int fd, uint64_t base, char *err, size_t errlen)
{
    int expanded;
    pthread_mutex_lock(&z->mu);
    if (tagg_sfz_slot_lock(fd, base, z->S, 1) < 0) {
        pthread_mutex_unlock(&z->mu);
        tagg_errmsg(err, errlen, "cannot lock the stripe at offset %" PRIu64 ": %s", base, strerror(errno));
        return -1;
    }
    int rc = expand_locked(z, fd, base, z->S, 0, NULL, 0, NULL, &expanded, err, errlen);
    tagg_sfz_slot_lock(fd, base, z->S, 0);
    pthread_mutex_unlock(&z->mu);
    return rc;
}
