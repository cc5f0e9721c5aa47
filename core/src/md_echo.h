/* Metadata echoes: an independent metadata write of bytes this rank already
 * wrote at the same place, with nothing written over them since, is not
 * written again.
 *
 * HDF5 writes a file's superblock when the file is flushed and again, byte
 * for byte the same, when it is closed (strace of every tagg-bench file: two
 * identical 96-byte writes at offset 0, before and after the flush's fsync).
 * On a FUSE client each is a round trip that waits for the file's other
 * writes (0.5-8.7 ms on the GlusterFS testbed, for files that take 10-60 ms).
 *
 * What is remembered: the last TAGG_MD_ECHO_SLOTS independent metadata
 * extents of at most TAGG_MD_ECHO_MAX bytes the process wrote (a copy of the
 * bytes). Forgotten: an extent that any later write overlaps (raw or
 * metadata), everything at a collective or failed write and at a change of
 * the file's size. Used for files of one process only (file.c): with several
 * ranks, HDF5's distributed metadata writes let another rank write an entry
 * this rank wrote before, so the file may no longer hold what is remembered.
 * A process outside the open that writes into the file is outside MPI-IO's
 * consistency anyway. Measured with every file (2 ranks, GlusterFS testbed,
 * 134 KiB files, 3 alternating pairs of 15 repetitions): writes 15.6-16.5 ms
 * against 16.6-19.0 ms; that gain is left to a safe rule for several ranks. */
#ifndef TAGG_MD_ECHO_H
#define TAGG_MD_ECHO_H

#include <stdint.h>

#include "extents.h"

#define TAGG_MD_ECHO_SLOTS 8
#define TAGG_MD_ECHO_MAX 4096u

typedef struct tagg_md_echo_slot {
    uint64_t off, len; /* len 0: free */
    uint64_t age;
    char     bytes[TAGG_MD_ECHO_MAX];
} tagg_md_echo_slot_t;

typedef struct tagg_md_echo {
    tagg_md_echo_slot_t slot[TAGG_MD_ECHO_SLOTS];
    uint64_t            clock;
} tagg_md_echo_t;

void tagg_md_echo_init(tagg_md_echo_t *m);
/* 1 when every extent of x (at least one) lies inside a remembered write and
 * has its bytes there: the write may be left out. 0 otherwise. */
int tagg_md_echo_repeats(const tagg_md_echo_t *m, const tagg_extents_t *x);
/* After x was written by this rank: forgets what x overlaps; when remember,
 * keeps x's small extents (x was an independent metadata write). */
void tagg_md_echo_wrote(tagg_md_echo_t *m, const tagg_extents_t *x, int remember);
/* Forgets everything (a collective write, a change of size). */
void tagg_md_echo_forget(tagg_md_echo_t *m);

#endif
