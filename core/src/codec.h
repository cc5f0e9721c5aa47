/* Stripe codecs of the subfile layout (GLEAN's compression, seed 003): one
 * ops table per codec, a registry, pure C (no MPI, no HDF5) so that tagg-fuse,
 * tagg-calibrate and the unit tests use the very code the library uses.
 *
 * A codec turns a stripe's logical bytes into a stored block and back.  The
 * pre-conditioner (byte or bit shuffle by element size) is part of the codec
 * settings: blosc applies it before its inner codec; the plain codecs apply
 * none.  Decoding treats its input as hostile: a block that does not decode
 * to exactly the expected number of bytes is an error with a message, never a
 * crash (the unit test fuzzes every decoder). */
#ifndef TAGG_CODEC_H
#define TAGG_CODEC_H

#include <stddef.h>
#include <stdint.h>

typedef enum { TAGG_SHUFFLE_NONE = 0, TAGG_SHUFFLE_BYTE, TAGG_SHUFFLE_BIT } tagg_shuffle_t;

typedef struct {
    int            level;    /* codec's level (1 = fastest) */
    tagg_shuffle_t shuffle;  /* pre-conditioner (blosc codecs) */
    size_t         typesize; /* element size for the shuffle, 1..255 */
    int            threads;  /* blosc: threads of one call (1: none) */
} tagg_codec_opts_t;

typedef struct tagg_codec {
    const char *name; /* as in the configuration and the index: "lz4", "zstd", "blosc-lz4", ... */
    /* Upper bound of the stored size of n logical bytes. */
    size_t (*bound)(size_t n);
    /* Compresses n bytes into dst (cap >= bound(n)); *stored gets the size.
     * 0, or -1 with a message. */
    int (*encode)(const tagg_codec_opts_t *o, const void *src, size_t n, void *dst, size_t cap, size_t *stored,
                  char *err, size_t errlen);
    /* Decodes a stored block of n bytes into exactly want bytes at dst.
     * 0, or -1 with a message (damaged or not this codec's block). */
    int (*decode)(const void *src, size_t n, void *dst, size_t want, char *err, size_t errlen);
} tagg_codec_t;

/* The codec of a name, NULL when unknown (or not built in). */
const tagg_codec_t *tagg_codec_find(const char *name);
/* The i-th codec of the registry (0..), NULL past the end. */
const tagg_codec_t *tagg_codec_at(int i);
/* Default options: level 1, byte shuffle, typesize 4, one thread. */
void tagg_codec_opts_default(tagg_codec_opts_t *o);

#endif
