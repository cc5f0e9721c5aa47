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
/* Indexes are small (about 60 bytes a subfile); anything larger is not one. */
#define TAGG_SF_INDEX_MAX ((size_t)64 << 20)

typedef struct {
    char    *name; /* relative to the index file's directory */
    uint64_t size; /* bytes */
    uint64_t crc;  /* CRC-64/XZ of the whole subfile */
    char    *node; /* format 2: the node holding it (NULL in format 1) */
} tagg_sf_entry_t;

typedef struct {
    unsigned         version;
    int              closed; /* 1: sizes and checksums are final */
    uint64_t         stripe; /* S */
    uint32_t         count;  /* N */
    uint64_t         logical_size;
    tagg_sf_entry_t *sub; /* count entries */
    int              nvr;  /* format 2: subfiles node-local, metadata in `meta` */
    tagg_sf_entry_t  meta; /* format 2: the metadata file (name beside the index) */
} tagg_sf_index_t;

/* --- stripe map (S > 0, N > 0) */
/* Subfile and offset in it of logical address off. */
void tagg_sf_locate(uint64_t off, uint64_t S, uint32_t N, uint32_t *k, uint64_t *local);
/* Size subfile k has when the logical size is L and every byte below L exists. */
uint64_t tagg_sf_subfile_size(uint64_t L, uint64_t S, uint32_t N, uint32_t k);
/* Logical end (last byte + 1) of the data subfile k holds when it is size bytes; 0 for 0. */
uint64_t tagg_sf_logical_end(uint64_t size, uint64_t S, uint32_t N, uint32_t k);

/* --- checksums */
uint64_t tagg_crc64(uint64_t crc, const void *buf, size_t len); /* start with crc = 0 */
/* Reads a whole file: its size and CRC-64. 0, or -1 with a message. */
int tagg_sf_file_crc(const char *path, uint64_t *size, uint64_t *crc, char *err, size_t errlen);

/* --- the index */
/* Allocates idx->sub for count entries (names NULL). 0 or -1 (out of memory). */
int tagg_sf_index_init(tagg_sf_index_t *idx, uint64_t stripe, uint32_t count);
void tagg_sf_index_free(tagg_sf_index_t *idx);
/* The default subfile name: "<base of path>.tagg.<k>of<N>" (malloc'd). */
char *tagg_sf_default_name(const char *path, uint32_t k, uint32_t N);
/* Path of a subfile named in the index of the file at path (malloc'd); an
 * absolute name (format 2) is itself. */
char *tagg_sf_subfile_path(const char *path, const char *name);
/* Format 2 names (malloc'd). The metadata file: "<base>.tagg.meta". A node-local
 * subfile: "<dir>/tagg-nvr.<node>/<base>.<h>.<k>of<N>", h = 16 hex digits of the
 * CRC-64 of the index's absolute path, so that two files of one name in
 * different directories do not meet in the node-local directory. */
char *tagg_sf_meta_name(const char *path);
char *tagg_sf_nvr_path(const char *dir, const char *node, const char *path, uint32_t k, uint32_t N);
/* Creates the directory of a file path (and its parents), mode 0777 & umask. 0 or -1 (errno). */
int tagg_sf_mkdir_for(const char *file);

/* --- format 2 helpers (fuse, drain) */
/* ORs the metadata file's bytes of logical [off, off+n) into buf (holes and
 * past-the-end read as zeros). 0 or -1 with a message. */
int tagg_sf_overlay_meta(int meta_fd, uint64_t off, char *buf, size_t n, char *err, size_t errlen);
/* Drains subfile k of the format-2 index ix (of the file at path): writes to
 * out what subfile k of an ordinary (format 1) file holds, its raw data with
 * the metadata of its stripes merged in, tagg_sf_subfile_size(logical size)
 * bytes, fsync'd; checks the node-local subfile against the index's size and
 * CRC on the way. *size, *crc: those of out. 0 or -1 with a message (out removed). */
int tagg_sf_drain_one(const char *path, const tagg_sf_index_t *ix, uint32_t k, int meta_fd, const char *out,
                      uint64_t *size, uint64_t *crc, char *err, size_t errlen);

/* Text of the index (malloc'd, *len bytes, no terminating NUL counted). 0 or -1. */
int tagg_sf_index_format(const tagg_sf_index_t *idx, char **text, size_t *len);
/* Parses and checks; on success idx owns its names. 0 or -1 with a message. */
int tagg_sf_index_parse(const char *text, size_t len, tagg_sf_index_t *idx, char *err, size_t errlen);
/* Reads a file whole (at most TAGG_SF_INDEX_MAX bytes; *text malloc'd, NUL-terminated). */
int tagg_sf_read_whole(const char *path, char **text, size_t *len, char *err, size_t errlen);
/* Reads and parses the index at path. */
int tagg_sf_index_read(const char *path, tagg_sf_index_t *idx, char *err, size_t errlen);
/* Writes the index at path atomically (a temporary beside it, then rename);
 * fsyncs it when sync. 0 or -1 with a message. */
int tagg_sf_index_write(const char *path, const tagg_sf_index_t *idx, int sync, char *err, size_t errlen);
/* 1 when the file at path starts with the magic, 0 when it does not (or is
 * absent), -1 when it cannot be read (message). */
int tagg_sf_probe(const char *path, char *err, size_t errlen);

#endif
