/* Stripes one rank noted in an open of a subfiled file (store_subfiles.c):
 * written whole (with the CRC-64 of the buffer), written partially (dirty),
 * verified on read, or found not to match on read (suspect). A hash map from
 * key (2*j + space; space 0 data, 1 the metadata file) to state, CRC, the
 * stored form of a whole stripe (sf_stripe_codec.h: compressed or raw) and
 * the XOR of this rank's changes to the stripe's padded CRC form
 * (crc_shift.h), with the spans of the stripe's bytes this rank wrote (a
 * close composes the checksum of a new file's stripe from the ranks' changes
 * when no two ranks' spans overlap); pure C, no MPI. */
#ifndef TAGG_STRIPE_NOTES_H
#define TAGG_STRIPE_NOTES_H

#include <stddef.h>
#include <stdint.h>

/* A state is the kind of the last event, plus flags that stay once set. */
enum { NOTE_FULL = 1, NOTE_DIRTY = 2, NOTE_VERIFIED = 3, NOTE_SUSPECT = 4 };
enum {
    NOTE_HADFULL = 0x10, /* some write of this rank covered the whole stripe */
    NOTE_UNSURE  = 0x20, /* the delta may not describe the stripe (a compressed stripe, a cut): read it at close */
    NOTE_NOBLOCKS = 0x40 /* the block deltas may not describe the stripe's blocks (a write they could not follow) */
};
#define NOTE_KIND(state) ((state)&7)
/* Spans kept per note: more writes apart than this merge the two spans with
 * the smallest gap between them (a conservative cover: overlaps are only
 * over-reported). */
#define NOTE_SPANS 4
typedef struct {
    uint64_t *key; /* key + 1; 0: empty slot */
    uint64_t *crc;
    uint64_t *delta;
    uint64_t *form; /* stored form of a FULL stripe (sf_stripe_codec.h): 0 raw */
    uint64_t *span;  /* [cap][2 * NOTE_SPANS]: the stripe's bytes this rank wrote, disjoint [lo, hi) pairs by lo */
    uint8_t  *nspan; /* how many pairs hold spans */
    uint8_t  *state;
    uint64_t *bd;    /* [cap][nb]: per block of the stripe, the XOR of this rank's changes to the block's padded
                      * CRC form (format 4 block checksums; crc_shift.h); NULL when nb is 0 */
    unsigned  nb;    /* blocks per stripe whose deltas are kept: set before the first note, else 0 */
    size_t    cap, n;
} notes_t;

/* Sets key's note (the last event wins; flags and delta stay). 0 or -1 (out of memory). */
int tagg_notes_put(notes_t *m, uint64_t key, int state, uint64_t crc);
/* Notes a write of bytes [lo, hi) of key's stripe: whole (full, with the CRC
 * of the stripe and its stored form; delta then replaces the note's: the
 * write replaced every byte) or partial (dirty: delta is XORed into the
 * note's); the spans come to cover [lo, hi) and `flags` (NOTE_UNSURE) are
 * added. bdelta (m->nb words, with m->nb > 0): the same per block (replacing
 * on a full write, which also clears NOTE_NOBLOCKS); NULL: the write's block
 * changes are unknown (NOTE_NOBLOCKS). 0 or -1 (out of memory). */
int tagg_notes_write(notes_t *m, uint64_t key, int full, uint64_t crc, uint64_t form, uint64_t delta,
                     const uint64_t *bdelta, uint64_t lo, uint64_t hi, int flags);
/* Key's block deltas (m->nb words), or NULL (no note, or none kept). */
const uint64_t *tagg_notes_bdelta(const notes_t *m, uint64_t key);
/* The bytes of [a, b) that key's spans touch: 1 with [*lo, *hi), from the
 * first touched byte to the last, else 0. */
int tagg_notes_touch(const notes_t *m, uint64_t key, uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi);
/* Key's spans: how many (0 when no note), copied as lo, hi pairs to out
 * (2 * NOTE_SPANS words). */
int tagg_notes_spans(const notes_t *m, uint64_t key, uint64_t *out);
/* A cut at byte `at` of stripe j: the notes of stripe j (both spaces) whose
 * span reaches past it become unsure (their bytes past `at` are gone). */
void tagg_notes_cut_within(notes_t *m, uint64_t j, uint64_t at);
/* The stored form noted for key (0: raw or none). */
uint64_t tagg_notes_form(const notes_t *m, uint64_t key);
/* The note's crc (0 when none). */
uint64_t tagg_notes_crc(const notes_t *m, uint64_t key);
/* The note's delta (0 when none). */
uint64_t tagg_notes_delta(const notes_t *m, uint64_t key);
void     tagg_notes_free(notes_t *m);
/* The state of key's note, 0 when none. */
int tagg_notes_get(const notes_t *m, uint64_t key);
/* Drops the notes of stripes at or past stripe j0 (both spaces): a cut. Out
 * of memory: marks every note dirty instead (safe: re-read at close). */
void tagg_notes_cut(notes_t *m, uint64_t j0);

#endif
