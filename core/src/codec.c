/* Stripe codecs (codec.h): LZ4 and Zstandard directly, and c-blosc with its
 * shuffle / bitshuffle pre-conditioners over LZ4 or Zstandard. */
#include "codec.h"

#include <blosc.h>
#include <lz4.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <zstd.h>

static int too_big(size_t n, char *err, size_t errlen)
{
    if (n <= (size_t)INT_MAX - 4096)
        return 0;
    snprintf(err, errlen, "block of %zu bytes is too large for the codec", n);
    return 1;
}

/* ---- LZ4 */
static size_t lz4_bound(size_t n) { return n > (size_t)LZ4_MAX_INPUT_SIZE ? 0 : (size_t)LZ4_compressBound((int)n); }
static int    lz4_encode(const tagg_codec_opts_t *o, const void *src, size_t n, void *dst, size_t cap, size_t *stored,
                         char *err, size_t errlen)
{
    if (too_big(n, err, errlen) || too_big(cap, err, errlen))
        return -1;
    int accel = o->level > 1 ? o->level : 1; /* LZ4's knob is acceleration: higher is faster */
    int k     = LZ4_compress_fast(src, dst, (int)n, (int)cap, accel);
    if (k <= 0) {
        snprintf(err, errlen, "lz4: compression of %zu bytes failed", n);
        return -1;
    }
    *stored = (size_t)k;
    return 0;
}
static int lz4_decode(const void *src, size_t n, void *dst, size_t want, char *err, size_t errlen)
{
    if (too_big(n, err, errlen) || too_big(want, err, errlen))
        return -1;
    int k = LZ4_decompress_safe(src, dst, (int)n, (int)want);
    if (k < 0 || (size_t)k != want) {
        snprintf(err, errlen, "lz4: damaged block (%d of %zu bytes decoded)", k < 0 ? 0 : k, want);
        return -1;
    }
    return 0;
}

/* ---- Zstandard */
static size_t zstd_bound(size_t n) { return ZSTD_compressBound(n); }
static int    zstd_encode(const tagg_codec_opts_t *o, const void *src, size_t n, void *dst, size_t cap,
                          size_t *stored, char *err, size_t errlen)
{
    size_t k = ZSTD_compress(dst, cap, src, n, o->level);
    if (ZSTD_isError(k)) {
        snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(k));
        return -1;
    }
    *stored = k;
    return 0;
}
static int zstd_decode(const void *src, size_t n, void *dst, size_t want, char *err, size_t errlen)
{
    unsigned long long size = ZSTD_getFrameContentSize(src, n);
    if (size != want) {
        snprintf(err, errlen, "zstd: damaged block (frame says %s, want %zu bytes)",
                 size == ZSTD_CONTENTSIZE_ERROR ? "not a frame" : size == ZSTD_CONTENTSIZE_UNKNOWN ? "unknown size" : "another size", want);
        return -1;
    }
    size_t k = ZSTD_decompress(dst, want, src, n);
    if (ZSTD_isError(k) || k != want) {
        snprintf(err, errlen, "zstd: damaged block (%s)", ZSTD_isError(k) ? ZSTD_getErrorName(k) : "short");
        return -1;
    }
    return 0;
}

/* ---- c-blosc (shuffle + inner codec), thread-safe context calls */
static size_t blosc_bound(size_t n) { return n + BLOSC_MAX_OVERHEAD; }
static int    blosc_encode_with(const char *inner, const tagg_codec_opts_t *o, const void *src, size_t n, void *dst,
                                size_t cap, size_t *stored, char *err, size_t errlen)
{
    if (too_big(n, err, errlen))
        return -1;
    int shuffle = o->shuffle == TAGG_SHUFFLE_BIT ? BLOSC_BITSHUFFLE : o->shuffle == TAGG_SHUFFLE_BYTE ? BLOSC_SHUFFLE
                                                                                                        : BLOSC_NOSHUFFLE;
    int level   = o->level < 1 ? 1 : o->level > 9 ? 9 : o->level;
    int k = blosc_compress_ctx(level, shuffle, o->typesize ? o->typesize : 1, n, src, dst, cap, inner, 0,
                               o->threads > 0 ? o->threads : 1);
    if (k <= 0) {
        snprintf(err, errlen, "blosc-%s: compression of %zu bytes failed (%d)", inner, n, k);
        return -1;
    }
    *stored = (size_t)k;
    return 0;
}
static int blosc_decode(const void *src, size_t n, void *dst, size_t want, char *err, size_t errlen)
{
    size_t nbytes = 0;
    if (n < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(src, n, &nbytes) < 0 || nbytes != want) {
        snprintf(err, errlen, "blosc: damaged block (header of %zu bytes does not describe %zu bytes)", n, want);
        return -1;
    }
    int k = blosc_decompress_ctx(src, dst, want, 1);
    if (k < 0 || (size_t)k != want) {
        snprintf(err, errlen, "blosc: damaged block (decoder returned %d, want %zu bytes)", k, want);
        return -1;
    }
    return 0;
}
static int blosc_lz4_encode(const tagg_codec_opts_t *o, const void *s, size_t n, void *d, size_t c, size_t *st, char *e,
                            size_t el)
{
    return blosc_encode_with("lz4", o, s, n, d, c, st, e, el);
}
static int blosc_zstd_encode(const tagg_codec_opts_t *o, const void *s, size_t n, void *d, size_t c, size_t *st,
                             char *e, size_t el)
{
    return blosc_encode_with("zstd", o, s, n, d, c, st, e, el);
}

static const tagg_codec_t codecs[] = {
    {"lz4", lz4_bound, lz4_encode, lz4_decode},
    {"zstd", zstd_bound, zstd_encode, zstd_decode},
    {"blosc-lz4", blosc_bound, blosc_lz4_encode, blosc_decode},
    {"blosc-zstd", blosc_bound, blosc_zstd_encode, blosc_decode},
};

const tagg_codec_t *tagg_codec_at(int i)
{
    return i >= 0 && (size_t)i < sizeof codecs / sizeof codecs[0] ? &codecs[i] : NULL;
}

const tagg_codec_t *tagg_codec_find(const char *name)
{
    for (int i = 0; tagg_codec_at(i); i++)
        if (strcmp(codecs[i].name, name) == 0)
            return &codecs[i];
    return NULL;
}

void tagg_codec_opts_default(tagg_codec_opts_t *o)
{
    o->level = 1, o->shuffle = TAGG_SHUFFLE_BYTE, o->typesize = 4, o->threads = 1;
}
