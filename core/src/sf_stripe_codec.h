/* Compressed stripes of the subfile layout (issue 15): pure C on POSIX
 * descriptors, no MPI, no HDF5, so that tagg-fuse and the tests use the very
 * code the library uses. Codecs: codec.h.
 *
 * Stored form. Stripe j keeps its slot, [(j/N)*S, (j/N)*S + S) of subfile
 * j mod N. A compressed stripe (only whole stripes, S logical bytes, are ever
 * compressed) holds at the start of its slot a 40-byte header, then the
 * codec's block; the slot's last byte is written (a zero) so that subfile
 * sizes are those of the raw layout; the bytes between are unused:
 *
 *   0  "TAGGz" 0x01 ENC 0x00   magic, version 1, codec id (TAGG_SFZ_*), reserved
 *   8  logical size   (u64 LE) = S
 *   16 payload size   (u64 LE) = block bytes after the header
 *   24 CRC-64/XZ of the logical bytes
 *   32 CRC-64/XZ of bytes 0..31
 *
 * The index (subfile_index.h, format 3) is authoritative for readers of a
 * closed file: its line "s J CRC ENC STORED_OFFSET STORED_SIZE LOGICAL_SIZE"
 * says a stripe is compressed (STORED_SIZE = 40 + payload). The header makes
 * the slot self-describing for an open file, whose index is not final: a
 * partial write or a read in a read-write open, and the close's read-back,
 * probe the slot (tagg_sfz_slot_*). A stripe that does not shrink by at least
 * 1/64 is stored raw, as without compression.
 *
 * Partial writes: a partial write to a compressed stripe expands it (decode,
 * apply the piece, store the whole stripe raw) under an exclusive byte-range
 * lock on the slot (fcntl, open file description locks where available) and
 * the context's mutex, so two ranks or threads doing that on one stripe
 * serialise and both changes survive: the second finds a raw slot. Partial
 * stripes are never compressed. */
#ifndef TAGG_SF_STRIPE_CODEC_H
#define TAGG_SF_STRIPE_CODEC_H

#include "codec.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define TAGG_SFZ_HDR 40
/* Codec ids in headers and forms (stable: the names are in the index). */
enum { TAGG_SFZ_RAW = 0, TAGG_SFZ_LZ4 = 1, TAGG_SFZ_ZSTD, TAGG_SFZ_BLOSC_LZ4, TAGG_SFZ_BLOSC_ZSTD, TAGG_SFZ_COUNT_ };

/* A stripe's stored form packed in 56 bits (the close packs it with a note's
 * state): codec id << 48 | stored size (header included, < S <= 1 GiB);
 * 0 = raw. */
#define TAGG_SFZ_FORM(enc, stored) (((uint64_t)(enc) << 48) | (uint64_t)(stored))
#define TAGG_SFZ_FORM_ENC(form) ((unsigned)(((form) >> 48) & 0xff))
#define TAGG_SFZ_FORM_STORED(form) ((form) & ((UINT64_C(1) << 48) - 1))

/* The name of codec id enc ("lz4", ...), NULL for raw or unknown. */
const char *tagg_sfz_name(unsigned enc);
/* The id of a codec name, 0 when unknown. */
unsigned tagg_sfz_id(const char *name);

/* One writer's compression state (per open file and rank). */
typedef struct {
    unsigned            enc; /* codec id; 0: compression off for writes */
    const tagg_codec_t *codec;
    tagg_codec_opts_t   opts;
    uint64_t            S;
    char               *zbuf; /* header + the codec's bound of S */
    size_t              zcap;
    char               *lbuf; /* one logical stripe (expansions) */
    pthread_mutex_t     mu;   /* the buffers; expansions of this process */
    /* statistics: whole stripes given to the codec; probe_raw: of the raw
     * ones, those whose samples did not shrink (the whole was not tried) */
    uint64_t logical, stored, raw_stripes, comp_stripes, probe_raw;
} tagg_sfz_t;

/* enc 0: no compression of writes (the context still expands and probes).
 * 0, or -1 with a message. */
int  tagg_sfz_init(tagg_sfz_t *z, unsigned enc, const tagg_codec_opts_t *o, uint64_t S, char *err, size_t errlen);
void tagg_sfz_free(tagg_sfz_t *z);

/* Stores a whole stripe (len = S bytes at slot offset base of fd), compressed
 * when z->enc and it shrinks; crc is the CRC-64 of buf. *form: its stored
 * form. 0, or -1 with a message (errno's text). */
int tagg_sfz_put_whole(tagg_sfz_t *z, int fd, uint64_t base, const void *buf, size_t len, uint64_t crc, uint64_t *form,
                       char *err, size_t errlen);

/* Writes n bytes at offset in of the stripe whose slot starts at base (slot of
 * len logical bytes, len <= S): a compressed slot is expanded first (under the
 * lock, see above), a raw one takes the piece. old (NULL: not wanted) gets the
 * n logical bytes the piece replaces, read under the same lock. *expanded: 1
 * when it was compressed. 0, or -1 with a message (a damaged compressed slot
 * included). */
int tagg_sfz_put_part(tagg_sfz_t *z, int fd, uint64_t base, uint64_t len, uint64_t in, const void *buf, size_t n,
                      void *old, int *expanded, char *err, size_t errlen);

/* Byte-range lock on a slot (lock: 1 exclusive, as expansions take it; 2
 * shared, for readers of an open file; 0 unlock). 0 or -1 (errno). */
int tagg_sfz_slot_lock(int fd, uint64_t base, uint64_t len, int lock);

/* Expands the slot at base if it holds a compressed stripe (before a cut
 * through it). 0, or -1 with a message. */
int tagg_sfz_expand(tagg_sfz_t *z, int fd, uint64_t base, char *err, size_t errlen);

/* 1 when the TAGG_SFZ_HDR bytes at h are a valid header (magic, version,
 * known codec, header CRC); then its fields. 0 when not. */
int tagg_sfz_header(const void *h, unsigned *enc, uint64_t *logical, uint64_t *payload, uint64_t *crc);

/* Decodes a stored block (header + payload, n bytes) into exactly want bytes
 * at out and checks them against the header's CRC. 0, or -1 with a message. */
int tagg_sfz_decode(const void *stored, size_t n, void *out, size_t want, char *err, size_t errlen);

/* Probe of an open file's slot: reads the len logical bytes of the stripe at
 * base of fd (bytes at or past limit read as zeros) into out, decoding a
 * compressed slot (scratch: len bytes). *form: the stored form found. 0, or
 * -1 with a message (read error, damaged compressed slot). */
int tagg_sfz_slot_load(int fd, uint64_t base, size_t len, uint64_t limit, void *out, void *scratch, uint64_t *form,
                       char *err, size_t errlen);

/* A closed file's compressed stripe by its index record: stored bytes of
 * form at base (never past limit), decoded into len bytes at out (scratch:
 * the stored size). check (verify=1): the header's CRC must be the record's
 * crc and the decoded bytes must match it; check 0 (verify=0) skips both
 * CRC comparisons, never the rest: a malformed block (header seal, codec,
 * sizes, the codec's own decoding) fails either way. 0, or -1 with a
 * message. */
int tagg_sfz_load_form(int fd, uint64_t base, size_t len, uint64_t limit, uint64_t form, uint64_t crc, int check,
                       void *out, void *scratch, char *err, size_t errlen);

#endif
