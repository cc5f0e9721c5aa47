/* The subfile layout's stripe map and its index file: pure C, no MPI, no HDF5,
 * so that tagg-fuse and the unit tests use the very code the library uses.
 *
 * Stripe map. The HDF5 address space is cut into stripes of S bytes; stripe k
 * (bytes [k*S, (k+1)*S)) lives in subfile k mod N at offset (k / N) * S.
 *
 * Index file (format 1). The file `<path>` the application names holds, instead
 * of HDF5 data, this text (one item per line, '\n' ends every line, numbers in
 * decimal, checksums as 16 lower-case hex digits):
 *
 *   tagg subfiled HDF5 file, use tagg-fuse IN OUT for one HDF5 file   <- magic: line starts
 *   format 1                                                              "tagg subfiled HDF5 file"
 *   layout subfiles
 *   state closed                <- "open" while a writer has it open (sizes, checksums stale)
 *   stripe_size 4194304         <- S
 *   subfile_count 3             <- N
 *   logical_size 123456         <- the HDF5 file's size (EOF)
 *   checksum crc64-xz           <- the algorithm of every checksum below
 *   subfile 0 SIZE CRC NAME     <- N lines, k = 0..N-1; NAME (the rest of the line, may hold
 *   ...                            spaces) is relative to the directory of `<path>`
 *   index_crc64 CRC             <- CRC-64 of every byte before this line; last line
 *
 * Format 2 (destination=nvr: node-local subfiles). Written only for such files,
 * so every file with subfiles beside the index stays format 1, readable by
 * older tagg. The differences:
 *
 *   format 2
 *   layout subfiles
 *   destination nvr             <- new line after "layout"
 *   state ...                      (then as format 1 up to "checksum crc64-xz")
 *   metadata SIZE CRC NAME      <- the HDF5 file metadata (every non-raw-data byte), at its
 *                                  logical address in a sparse file beside the index
 *   subfile k SIZE CRC PATH     <- PATH absolute, in the node-local directory of node k
 *   node k NODE                 <- after each subfile line: the node that holds it
 *
 * A logical byte is raw data (in its subfile, by the stripe map) or metadata
 * (in the metadata file); the other copy is a hole, so the logical file is the
 * bytewise OR of both (tagg_sf_overlay_meta). HDF5 never gives one address to
 * both kinds within a file (the driver's free-list map keeps raw data apart).
 *
 * Format 3 (every file tagg writes now; formats 1 and 2 are still read, and
 * opened read-only). Per-stripe checksums instead of per-subfile ones, so that
 * checksums are made while writing and checked while reading, stripe by
 * stripe; an HDF5 signature at byte 512 for readers that look for one:
 *
 *   tagg subfiled HDF5 file, use tagg-fuse IN OUT for one HDF5 file
 *   format 3
 *   layout subfiles
 *   destination nvr             <- node-local subfiles only (as format 2)
 *   state closed
 *   stripe_size S
 *   subfile_count N
 *   logical_size L
 *   checksum crc64-xz per-stripe
 *   pad <spaces>                <- ends with the '\n' at byte 511
 *   <16 bytes at 512>           <- TAGG_SF_HDF5_BLOCK: the HDF5 signature, then
 *                                  superblock version 255, which stock HDF5
 *                                  refuses ("bad superblock version number"),
 *                                  then "tagg-3\n"; netCDF's nc_open and `file`
 *                                  see an HDF5 file, tagg sees its magic at 0
 *   metadata SIZE NAME          <- node-local subfiles only
 *   subfile k SIZE NAME         <- N lines; NAME exactly the derived one (sf_path.h)
 *   node k NODE                 <- node-local subfiles only, after each subfile line
 *   s J CRC                     <- data stripe J: CRC-64 of its len(J) = min(S, L - J*S)
 *   ...                            bytes as stored (in subfile J mod N at (J / N) * S;
 *                                  bytes past the subfile's end are zeros), J ascending
 *   m J CRC                     <- node-local subfiles only: the metadata file's bytes
 *   ...                            [J*S, J*S + len(J)), J ascending
 *   index_crc64 CRC
 *
 * A stripe below L without an `s` (or `m`) line is a hole: all its bytes are
 * zeros (never written, or written with zeros), so a sparse file of any extent
 * keeps a small index. Compression (issue 15, sf_stripe_codec.h): a data
 * stripe stored compressed has the line
 *   s J CRC ENC STORED_OFFSET STORED_SIZE LOGICAL_SIZE
 * ENC the codec's name (codec.h: lz4, zstd, blosc-lz4, blosc-zstd), CRC that
 * of the LOGICAL_SIZE logical bytes (always S: only whole stripes are
 * compressed), STORED_OFFSET the stripe's slot (J / N) * S in subfile J mod N,
 * STORED_SIZE (header included, less than S) the bytes stored there. A line
 * without them is a raw stripe (the flag "stored raw"). Readers before
 * compression refuse any field after CRC, so such a file is never misread by
 * them; metadata-file stripes ("m") are never compressed.
 *
 * Format 4 (written when at least one stripe carries block checksums, else
 * the file is written as format 3; an index read as format 4 is written back
 * as format 4): format 3 with a line "block_size B" after the
 * "checksum" line (B = S / TAGG_SF_BLOCKS, a multiple of 4096) and, after the
 * "s" line of a raw data stripe J, optionally
 *   b J C0 C1 ... Cn-1          <- the CRC-64 of each B-byte block of the stripe's
 *                                  len(J) bytes (n = ceil(len(J) / B), the last one
 *                                  shorter when len(J) is), which must compose to
 *                                  the stripe's CRC (crc_shift.h)
 * so that a read of part of a stripe reads and checks only the blocks it
 * covers. A stripe without a "b" line (composed from changes that could not
 * follow its blocks, compressed, node-local) is checked whole as in format 3.
 * Readers of format 3 refuse format 4 by its version.
 *
 * CRC-64/XZ: polynomial 0x42F0E1EBA9EA3693 (ECMA-182), reflected, initial value
 * and final xor all ones; crc64("123456789") = 0x995dc9bbdf1939fa. Readers check
 * the magic, then the version (a newer format may checksum differently), then
 * the index checksum, then the fields. */
#ifndef TAGG_SUBFILE_INDEX_H
#define TAGG_SUBFILE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#define TAGG_SF_MAGIC "tagg subfiled HDF5 file"
#define TAGG_SF_HEADLINE TAGG_SF_MAGIC ", use tagg-fuse IN OUT for one HDF5 file"
#define TAGG_SF_VERSION 1u     /* subfiles beside the index */
#define TAGG_SF_VERSION_NVR 2u /* node-local subfiles + metadata file */
#define TAGG_SF_VERSION_3 3u   /* per-stripe checksums, HDF5 signature at 512 (written now) */
#define TAGG_SF_VERSION_4 4u   /* format 3 plus block checksums (written when a stripe has them) */
#define TAGG_SF_BLOCKS 16u     /* blocks per stripe (format 4) */
#define TAGG_SF_BLOCK_MIN 4096u /* a block is a multiple of this (direct I/O reads whole blocks) */
#define TAGG_SF_HDF5_AT 512
#define TAGG_SF_HDF5_BLOCK "\211HDF\r\n\032\n\377tagg-3\n" /* 16 bytes */
#define TAGG_SF_HDF5_BLOCK_LEN 16
/* Indexes are small (about 60 bytes a subfile, 26 a written stripe); anything
 * larger is not one. */
#define TAGG_SF_INDEX_MAX ((size_t)256 << 20)

typedef struct {
    char    *name; /* relative to the index file's directory */
    uint64_t size; /* bytes */
    uint64_t crc;  /* formats 1, 2: CRC-64/XZ of the whole subfile */
    char    *node; /* format 2: the node holding it (NULL in format 1) */
    unsigned line; /* parsed: the index line that names it */
} tagg_sf_entry_t;

/* One written stripe (format 3). */
typedef struct {
    uint64_t j;    /* stripe number: bytes [j*S, j*S + len(j)) of the space */
    uint64_t crc;  /* CRC-64/XZ of those (logical) bytes */
    uint64_t form; /* stored form (sf_stripe_codec.h TAGG_SFZ_FORM): 0 raw, else codec and stored size */
} tagg_sf_stripe_t;
/* Records travel between ranks as uint64_t words (drain). */
_Static_assert(sizeof(tagg_sf_stripe_t) == 3 * sizeof(uint64_t), "tagg_sf_stripe_t: three uint64_t, no padding");

typedef struct {
    unsigned         version;
    int              closed; /* 1: sizes and checksums are final */
    uint64_t         stripe; /* S */
    uint32_t         count;  /* N */
    uint64_t         logical_size;
    tagg_sf_entry_t *sub; /* count entries */
    int              nvr;  /* format 2: subfiles node-local, metadata in `meta` */
    tagg_sf_entry_t  meta; /* format 2: the metadata file (name beside the index) */
    tagg_sf_stripe_t *st;  /* format 3: written data stripes, j ascending */
    uint64_t          nst;
    tagg_sf_stripe_t *mst; /* format 3, nvr: written metadata-file stripes */
    uint64_t          nmst;
    uint64_t          block; /* format 4: B, bytes per block; 0: no block checksums */
    uint64_t         *blk;   /* format 4: nblk records of TAGG_SF_BREC words (stripe j, then the CRC-64 of
                              * its blocks, ceil(len(j) / B) used), j ascending; data stripes only */
    uint64_t          nblk;
} tagg_sf_index_t;
#define TAGG_SF_BREC (1 + TAGG_SF_BLOCKS)

/* --- stripe map (S > 0, N > 0) */
/* Subfile and offset in it of logical address off. */
void tagg_sf_locate(uint64_t off, uint64_t S, uint32_t N, uint32_t *k, uint64_t *local);
/* Size subfile k has when the logical size is L and every byte below L exists. */
uint64_t tagg_sf_subfile_size(uint64_t L, uint64_t S, uint32_t N, uint32_t k);
/* Logical end (last byte + 1) of the data subfile k holds when it is size bytes; 0 for 0. */
uint64_t tagg_sf_logical_end(uint64_t size, uint64_t S, uint32_t N, uint32_t k);

/* --- checksums */
/* CRC-64/XZ (crc64.c): the fastest implementation the CPU runs (512-bit or
 * 128-bit carry-less multiplication, else slicing by 8); start with crc = 0. */
uint64_t tagg_crc64(uint64_t crc, const void *buf, size_t len);
/* The implementations one by one (tests compare them): how many there are;
 * implementation i's name and whether this CPU runs it (NULL past the last);
 * the CRC by implementation i (0, the tables, where i does not run here;
 * buffers shorter than i takes go to the fastest that takes them). */
int         tagg_crc64_impl_count(void);
const char *tagg_crc64_impl(int impl, int *usable);
uint64_t    tagg_crc64_with(int impl, uint64_t crc, const void *buf, size_t len);
/* Reads a whole file: its size and CRC-64. 0, or -1 with a message. */
int tagg_sf_file_crc(const char *path, uint64_t *size, uint64_t *crc, char *err, size_t errlen);

/* --- format 3: per-stripe checksums (this section and the next: sf_records.c) */
/* Bytes of stripe j of a space of logical size L (0 at or past L). */
uint64_t tagg_sf_stripe_len(uint64_t L, uint64_t S, uint64_t j);
/* Appends (j, crc) to a list of *n stripe records that only this function
 * grows (NULL when empty; its capacity follows from *n). 0, or -1 (out of memory). */
int tagg_sf_stripe_append(tagg_sf_stripe_t **st, uint64_t *n, uint64_t j, uint64_t crc);
/* The same with a stored form (compressed stripe; 0: raw). */
int tagg_sf_stripe_append_form(tagg_sf_stripe_t **st, uint64_t *n, uint64_t j, uint64_t crc, uint64_t form);
/* 1 when the index records at least one compressed stripe. */
int tagg_sf_any_compressed(const tagg_sf_index_t *ix);
/* The record of stripe j in st[0..n) (sorted), or NULL: a hole. */
const tagg_sf_stripe_t *tagg_sf_stripe_find(const tagg_sf_stripe_t *st, uint64_t n, uint64_t j);
/* Checks the len bytes of stripe j against its record (a hole: all zeros).
 * 1 when they match, 0 when not (*got: their CRC-64). */
int tagg_sf_stripe_ok(const tagg_sf_stripe_t *st, uint64_t n, uint64_t j, const void *buf, size_t len, uint64_t *got);
/* Sorts records by stripe number. */
void tagg_sf_stripes_sort(tagg_sf_stripe_t *st, uint64_t n);
/* 1 when len bytes are all zero. */
int tagg_sf_all_zero(const void *buf, size_t len);
/* Reads len bytes at off of fd: bytes at or past limit, or past the end of
 * the file, read as zeros (nothing past limit is read). 0 or -1 (errno). */
int tagg_sf_pread_upto(int fd, void *buf, size_t len, uint64_t off, uint64_t limit);
/* Writes all n bytes at off (EINTR retried): 0, or -1 with errno (ENOSPC for
 * a write that wrote nothing). */
int tagg_sf_pwrite_all(int fd, const void *buf, size_t n, uint64_t off);
/* Logical stripe j of a format 3 file, verified: from fds[j mod N] (subfile
 * sizes as the index records), with the metadata file's stripe j ORed in when
 * meta_fd >= 0 (node-local subfiles). buf holds len(j) bytes. 0 or -1 with a
 * message naming the subfile and stripe. */
int tagg_sf_read_stripe(const char *path, const tagg_sf_index_t *ix, const int *fds, int meta_fd, uint64_t j, char *buf,
                        char *err, size_t errlen);

/* --- format 4: block checksums */
/* B for a stripe of S bytes: S / TAGG_SF_BLOCKS when that is a multiple of
 * TAGG_SF_BLOCK_MIN, else 0 (no block checksums: stripes are checked whole). */
uint64_t tagg_sf_block_size(uint64_t S);
/* The CRC-64 of each B-byte block of len bytes (ceil(len / B) of them, at
 * most TAGG_SF_BLOCKS) into out; returns the CRC-64 of the len bytes, composed
 * from them (one pass over the bytes). */
uint64_t tagg_sf_block_crcs(const void *buf, uint64_t len, uint64_t B, uint64_t *out);
/* The CRC-64 of a stripe of len bytes from the CRCs of its B-byte blocks. */
uint64_t tagg_sf_blocks_compose(const uint64_t *crc, uint64_t len, uint64_t B);
/* Appends stripe j's block CRCs (ceil(len / B) given; the rest of the record zeros) to *n
 * records that only this function grows. 0 or -1 (out of memory). */
int tagg_sf_blocks_append(uint64_t **blk, uint64_t *n, uint64_t j, const uint64_t *crc, unsigned nb);
/* Stripe j's block CRCs in blk[0..n) (sorted), or NULL (none recorded). */
const uint64_t *tagg_sf_blocks_find(const uint64_t *blk, uint64_t n, uint64_t j);
void            tagg_sf_blocks_sort(uint64_t *blk, uint64_t n);

/* --- the index */
/* Allocates idx->sub for count entries (names NULL); version 3. 0 or -1 (out of memory). */
int tagg_sf_index_init(tagg_sf_index_t *idx, uint64_t stripe, uint32_t count);
void tagg_sf_index_free(tagg_sf_index_t *idx);
/* The default subfile name: "<base of path>.tagg.<k>of<N>" (malloc'd). */
char *tagg_sf_default_name(const char *path, uint32_t k, uint32_t N);
/* The metadata file's name: "<base>.tagg.meta". Paths: sf_path.h. */
char *tagg_sf_meta_name(const char *path);

/* --- format 2 helpers (fuse, drain) */
/* ORs the metadata file's bytes of logical [off, off+n) into buf (holes and
 * past-the-end read as zeros). 0 or -1 with a message. */
int tagg_sf_overlay_meta(int meta_fd, uint64_t off, char *buf, size_t n, char *err, size_t errlen);
/* Drains subfile k of the node-local (format 2 or 3) index ix of the file at
 * path: writes to out (a derived path, created new) what subfile k of an
 * ordinary format 3 file holds, its raw data with the metadata of its stripes
 * merged in, tagg_sf_subfile_size(logical size) bytes, fsync'd; checks the
 * node-local subfile (per stripe, or whole for format 2) on the way. *size:
 * that of out; the records of its non-zero stripes are appended to *st / *nst
 * (realloc'd). 0 or -1 with a message (out removed). */
int tagg_sf_drain_one(const char *path, const tagg_sf_index_t *ix, uint32_t k, int meta_fd, const char *out,
                      uint64_t *size, tagg_sf_stripe_t **st, uint64_t *nst, char *err, size_t errlen);

/* Text of the index (malloc'd, *len bytes, no terminating NUL counted). 0 or -1. */
int tagg_sf_index_format(const tagg_sf_index_t *idx, char **text, size_t *len);
/* The same, the text at most max bytes where block lines made it longer:
 * then without them (format 3; readers refuse an index past
 * TAGG_SF_INDEX_MAX, which tagg_sf_index_format passes as max). */
int tagg_sf_index_format_within(const tagg_sf_index_t *idx, size_t max, char **text, size_t *len);
/* Parses and checks; on success idx owns its names. 0 or -1 with a message. */
int tagg_sf_index_parse(const char *text, size_t len, tagg_sf_index_t *idx, char *err, size_t errlen);
/* Reads a file whole (at most TAGG_SF_INDEX_MAX bytes; *text malloc'd, NUL-terminated). */
int tagg_sf_read_whole(const char *path, char **text, size_t *len, char *err, size_t errlen);
/* Reads and parses the index at path, and checks its names (sf_path.h). */
int tagg_sf_index_read(const char *path, tagg_sf_index_t *idx, char *err, size_t errlen);
/* The index of path from its text (tagg_sf_index_read after the read: parse, names checked). */
int tagg_sf_index_from_text(const char *path, const char *text, size_t len, tagg_sf_index_t *idx, char *err,
                            size_t errlen);
/* Writes the index at path atomically (a temporary beside it, then rename);
 * fsyncs it when sync. 0 or -1 with a message. */
int tagg_sf_index_write(const char *path, const tagg_sf_index_t *idx, int sync, char *err, size_t errlen);
/* A writer's own index, kept open from the write of its "state open" text to
 * its final one (tagg_sf_index_finish): the descriptor (-1: none) and the
 * length of the text it holds. */
typedef struct {
    int    fd;
    size_t len;
} tagg_sf_ixfd_t;
/* The same; fresh: the index of a file being created, written straight at
 * path when nothing is there (one create, no temporary and rename: a rename
 * costs a parallel file system's metadata servers most), replaced atomically
 * when something is. id (may be NULL): the device and inode of the file
 * written, taken from the descriptor this call created (never by path).
 * keep (may be NULL): that descriptor stays open there (write-only,
 * close-on-exec; fd -1 on failure), for the final write. */
int tagg_sf_index_write_mode(const char *path, const tagg_sf_index_t *idx, int sync, int fresh,
                             unsigned long long id[2], tagg_sf_ixfd_t *keep, char *err, size_t errlen);
/* The final index of a writer's close over its own "state open" index, the
 * file (dev, ino) it holds: written in place (one write from offset 0, the
 * rest cut, fsync when sync) when its text is at most TAGG_SF_INPLACE_MAX
 * bytes and path is still that regular file, else replaced atomically as
 * tagg_sf_index_write does. In place saves a temporary's create and the
 * rename (4-7 ms on the GlusterFS testbed, a small file's close); a crash
 * during that one write may leave a torn index, refused by its checksum
 * where a replaced one would still say "state open" (readable with
 * salvage=1). kept (may be NULL): the descriptor the open index was written
 * through (tagg_sf_index_write_mode's keep), always closed here: used
 * instead of opening path while that file still has a name and is (dev,
 * ino), which saves an open, and the close of the open index, per file.
 * *inplace (may be NULL): 1 when written in place. */
#define TAGG_SF_INPLACE_MAX 4096
int tagg_sf_index_finish(const char *path, const tagg_sf_index_t *idx, int sync, unsigned long long dev,
                         unsigned long long ino, tagg_sf_ixfd_t *kept, int *inplace, char *err, size_t errlen);
/* A file the application named (an index, or a plain file at that path),
 * opened: links followed, a regular file only (O_NONBLOCK until fstat says
 * so: no FIFO blocks the open), then blocking and close-on-exec. rdwr:
 * read-write when it can be, read-only where writing is refused (EACCES,
 * EPERM, EROFS, ETXTBSY). The descriptor, or -1 with errno (EINVAL: not a
 * regular file) and a message in err (none for ENOENT when quiet_absent). */
int tagg_sf_open_named(const char *path, int rdwr, int quiet_absent, char *err, size_t errlen);
/* 1 when the file at path starts with the magic, 0 when it does not (or is
 * absent), -1 when it cannot be read (message). */
int tagg_sf_probe(const char *path, char *err, size_t errlen);
/* The same, and when path is an index and text is given, its whole text
 * (read from the same open; *text NULL when that failed: read it again).
 * When path is a regular file without the magic and plain_fd is given, the
 * probe's descriptor stays open there (read-only, blocking, close-on-exec;
 * else -1): a read-only open of the file need not open it again. */
int tagg_sf_probe_text(const char *path, char **text, size_t *len, int *plain_fd, char *err, size_t errlen);
/* The same; rdwr: the file is opened read-write when it can be (read-only
 * when that is refused: EACCES, EPERM, EROFS, ETXTBSY), so a plain file's
 * kept descriptor may serve a read-write open (its access mode says which). */
int tagg_sf_probe_open(const char *path, char **text, size_t *len, int *plain_fd, int rdwr, char *err, size_t errlen);

#endif
