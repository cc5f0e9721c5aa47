/* The subfile layout's path rule and safe file access, in one place: pure C,
 * no MPI, no HDF5, so that the library, tagg-fuse and the unit tests share it.
 *
 * The rule. tagg opens, creates, truncates and removes only paths it derives
 * itself from the index's own path; an index never chooses a file:
 *
 *   <dir>/<base>.tagg.<k>of<N>      subfile k beside the index <dir>/<base>
 *   <dir>/<base>.tagg.meta          the metadata file (destination=nvr)
 *   <D>/tagg-<uid>/<node>/<base>.<h>.<k>of<N>
 *                                   node-local subfile k (destination=nvr):
 *                                   D the node's nvr_dir (absolute), uid this
 *                                   process's effective user id, node the
 *                                   index's `node k` line, h 16 hex digits of
 *                                   the CRC-64 of the index's absolute path
 *   <D>/tagg-nvr.<node>/<base>.<h>.<k>of<N>
 *                                   the same in format 2 (read only)
 *
 * A name stored in an index must be exactly the derived one (for node-local
 * subfiles: of that form, with the node, base, h, k and N the index's file
 * implies; D is not compared, a later job may see another $TMPDIR); anything
 * else is an error that names the index line. Node-local directories
 * (tagg-<uid> and <node> under it) are created with mode 0700 and refused
 * when they are symbolic links, not directories, owned by another user or
 * writable by group or others.
 *
 * Safe access: every open adds O_NOFOLLOW (a symbolic link at a derived name
 * is an error, never followed) and O_NONBLOCK (a FIFO cannot block the open),
 * then refuses anything fstat does not call a regular file. A file that must
 * be new is created with O_EXCL; a stale regular file at its derived name is
 * removed first, anything else there is an error. */
#ifndef TAGG_SF_PATH_H
#define TAGG_SF_PATH_H

#include "subfile_index.h"

#include <stddef.h>
#include <stdint.h>

/* Derived paths (malloc'd; NULL when out of memory). */
char *tagg_sf_path_beside(const char *index, uint32_t k, uint32_t N);
char *tagg_sf_path_meta(const char *index);
char *tagg_sf_path_nvr(const char *nvr_dir, const char *node, const char *index, uint32_t k, uint32_t N);

/* Checks every name of idx (read from the file at index) against the rule,
 * and the node names (plain, no '/'). 0, or -1 with a message naming the
 * index line. */
int tagg_sf_path_check(const char *index, const tagg_sf_index_t *idx, char *err, size_t errlen);

/* The path of subfile k of idx (checked by tagg_sf_path_check): derived
 * beside the index, or the checked node-local path. malloc'd. */
char *tagg_sf_path_of(const char *index, const tagg_sf_index_t *idx, uint32_t k);

/* Opens an existing regular file (flags: O_RDONLY or O_RDWR); never follows a
 * symbolic link, never blocks on a FIFO. fd, or -1 with a message. */
int tagg_sf_open(const char *path, int flags, char *err, size_t errlen);
/* Creates path new and empty (O_RDWR): a regular file already there is
 * removed first, a symbolic link or anything else is an error. fd or -1. */
int tagg_sf_create(const char *path, char *err, size_t errlen);
/* Removes path (a derived name); absent is fine. 0 or -1 with a message. */
int tagg_sf_remove(const char *path, char *err, size_t errlen);
/* Node-local subfile at a derived path: checks (create: makes, mode 0700) its
 * two private directories (format 2: its one directory, never made). 0 or -1
 * with a message. */
int tagg_sf_nvr_dirs(const char *subfile, unsigned version, int create, char *err, size_t errlen);

#endif
