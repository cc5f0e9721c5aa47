/* Stripes one rank noted in an open of a subfiled file (store_subfiles.c):
 * written whole (with the CRC-64 of the buffer), written partially (dirty),
 * verified on read, or found not to match on read (suspect). A hash map from
 * key (2*j + space; space 0 data, 1 the metadata file) to state, CRC, the
 * stored form of a whole stripe (sf_stripe_codec.h: compressed or raw) and
 * the XOR of this rank's changes to the stripe's padded CRC form
 * (crc_shift.h); pure C, no MPI. */
#ifndef TAGG_STRIPE_NOTES_H
#define TAGG_STRIPE_NOTES_H

#include <stddef.h>
#include <stdint.h>

/* A state is the kind of the last event, plus flags that stay once set. */
enum { NOTE_FULL = 1, NOTE_DIRTY = 2, NOTE_VERIFIED = 3, NOTE_SUSPECT = 4 };
enum { NOTE_HADFULL = 0x10 /* some write of this rank covered the whole stripe */ };
#define NOTE_KIND(state) ((state)&7)
typedef struct {
    uint64_t *key; /* key + 1; 0: empty slot */
    uint64_t *crc;
    uint64_t *delta;
    uint64_t *form; /* stored form of a FULL stripe (sf_stripe_codec.h): 0 raw */
    uint8_t  *state;
    size_t    cap, n;
} notes_t;

/* Sets key's note (the last event wins; flags and delta stay). 0 or -1 (out of memory). */
int tagg_notes_put(notes_t *m, uint64_t key, int state, uint64_t crc);
/* Notes a write of key's stripe: whole (full, with the CRC of the stripe and
 * its stored form) or partial (dirty), and XORs delta into the note's. 0 or
 * -1 (out of memory). */
int tagg_notes_write(notes_t *m, uint64_t key, int full, uint64_t crc, uint64_t form, uint64_t delta);
/* The stored form noted for key (0: raw or none). */
uint64_t tagg_notes_form(const notes_t *m, uint64_t key);
/* The note's delta (0 when none). */
uint64_t tagg_notes_delta(const notes_t *m, uint64_t key);
void     tagg_notes_free(notes_t *m);
/* The state of key's note, 0 when none. */
int tagg_notes_get(const notes_t *m, uint64_t key);
/* Drops the notes of stripes at or past stripe j0 (both spaces): a cut. Out
 * of memory: marks every note dirty instead (safe: re-read at close). */
void tagg_notes_cut(notes_t *m, uint64_t j0);

#endif
