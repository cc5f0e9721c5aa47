/* Stripes one rank noted in an open of a subfiled file (store_subfiles.c):
 * written whole (with the CRC-64 of the buffer), written partially (dirty),
 * or verified on read. A hash map from key (2*j + space; space 0 data, 1 the
 * metadata file) to state and CRC; pure C, no MPI. */
#ifndef TAGG_STRIPE_NOTES_H
#define TAGG_STRIPE_NOTES_H

#include <stddef.h>
#include <stdint.h>

enum { NOTE_FULL = 1, NOTE_DIRTY = 2, NOTE_VERIFIED = 3 };
typedef struct {
    uint64_t *key; /* key + 1; 0: empty slot */
    uint64_t *crc;
    uint64_t *form; /* stored form of a FULL stripe (sf_stripe_codec.h): 0 raw */
    uint8_t  *state;
    size_t    cap, n;
} notes_t;

/* Sets key's note (the last event wins). 0 or -1 (out of memory). */
int tagg_notes_put(notes_t *m, uint64_t key, int state, uint64_t crc);
/* The same with the stripe's stored form (compressed whole stripes). */
int tagg_notes_put_form(notes_t *m, uint64_t key, int state, uint64_t crc, uint64_t form);
/* The stored form noted for key (0: raw or none). */
uint64_t tagg_notes_form(const notes_t *m, uint64_t key);
/* Frees the map's arrays (the struct is the caller's). */
void tagg_notes_free(notes_t *m);
/* The state of key's note, 0 when none. */
int tagg_notes_get(const notes_t *m, uint64_t key);
/* Drops the notes of stripes at or past stripe j0 (both spaces): a cut. Out
 * of memory: marks every note dirty instead (safe: re-read at close). */
void tagg_notes_cut(notes_t *m, uint64_t j0);

#endif
