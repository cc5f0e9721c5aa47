/* tagg configuration: the one table of keys, parsed and validated in one place.
 *
 * Sources, lowest to highest precedence:
 *   1. built-in defaults (the table below),
 *   2. environment variables (TAGG_*; read on rank 0 and broadcast by the callers
 *      that have a communicator, so every rank sees the same values),
 *   3. the configuration string: HDF5_DRIVER_CONFIG, H5Pset_driver_by_name(fapl,
 *      "tagg", str), or the VOL connector's info string ("key=value;key=value").
 * Unknown keys and bad values are rejected with a message listing what is valid.
 */
#ifndef TAGG_CONFIG_H
#define TAGG_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* Names of the environment variables, for documentation and tests. */
#define TAGG_ENV_VERBOSE "TAGG_VERBOSE"
#define TAGG_ENV_SUMMARY "TAGG_SUMMARY"
#define TAGG_ENV_BACKEND "TAGG_BACKEND"
#define TAGG_ENV_FSYNC "TAGG_FSYNC"
#define TAGG_ENV_CONFIG "TAGG_CONFIG"
#define TAGG_ENV_AGGREGATORS "TAGG_AGGREGATORS"
#define TAGG_ENV_BUFFER_SIZE "TAGG_BUFFER_SIZE"
#define TAGG_ENV_STRATEGY "TAGG_STRATEGY"
#define TAGG_ENV_THROTTLE "TAGG_THROTTLE"
#define TAGG_ENV_TOPOLOGY "TAGG_TOPOLOGY"
#define TAGG_ENV_SUBFILES "TAGG_SUBFILES"
#define TAGG_ENV_AGGR_TIER "TAGG_AGGR_TIER"
#define TAGG_ENV_PERSISTENCY "TAGG_PERSISTENCY"
#define TAGG_ENV_AGGREGATE "TAGG_AGGREGATE"
#define TAGG_ENV_TIERS "TAGG_TIERS"
#define TAGG_ENV_NVR_DIR "TAGG_NVR_DIR"
#define TAGG_ENV_HBM_CAPACITY "TAGG_HBM_CAPACITY"
#define TAGG_ENV_DRAM_CAPACITY "TAGG_DRAM_CAPACITY"
#define TAGG_ENV_NVR_CAPACITY "TAGG_NVR_CAPACITY"
#define TAGG_ENV_HBM_EMULATE "TAGG_HBM_EMULATE"
#define TAGG_ENV_ASYNC "TAGG_ASYNC"
#define TAGG_ENV_WORKERS "TAGG_WORKERS"
#define TAGG_ENV_STAGING_BYTES "TAGG_STAGING_BYTES"
#define TAGG_ENV_WRITE_BEHIND "TAGG_WRITE_BEHIND"
#define TAGG_ENV_RECORD "TAGG_RECORD"
#define TAGG_ENV_TUNING "TAGG_TUNING"
#define TAGG_ENV_TUNING_CHECK "TAGG_TUNING_CHECK"
#define TAGG_ENV_COMPRESSION "TAGG_COMPRESSION"

/* Raw-data paths (the io backend registry in io.c). */
typedef enum { TAGG_BACKEND_TAPIOCA = 0, TAGG_BACKEND_MPIIO, TAGG_BACKEND_COUNT_ } tagg_backend_t;

/* Aggregator election strategies: the cost model's registry (model/). */
typedef enum {
    TAGG_STRATEGY_MEMORY_AWARE = 0,
    TAGG_STRATEGY_TOPO_AWARE,
    TAGG_STRATEGY_SHORTEST,
    TAGG_STRATEGY_LONGEST,
    TAGG_STRATEGY_FIRST_PER_NODE,
    TAGG_STRATEGY_RANDOM,
    TAGG_STRATEGY_COUNT_
} tagg_strategy_kind_t;

/* Aggregation tier (MA-TAPIOCA_AGGRTIER): auto = the cost model chooses; the
 * others force one tier of the registry in tier.c. Same order as the names. */
typedef enum {
    TAGG_AGGR_TIER_AUTO = 0,
    TAGG_AGGR_TIER_DRAM,
    TAGG_AGGR_TIER_HBM,
    TAGG_AGGR_TIER_NVR,
    TAGG_AGGR_TIER_TEST,
    TAGG_AGGR_TIER_COUNT_
} tagg_aggr_tier_t;

/* Required persistency of the aggregated data (MA-TAPIOCA_PERSISTENCY). */
typedef enum { TAGG_PERSISTENCY_NONE = 0, TAGG_PERSISTENCY_JOB, TAGG_PERSISTENCY_COUNT_ } tagg_persistency_t;

/* Layouts of the data on storage. */
typedef enum { TAGG_LAYOUT_SHARED = 0, TAGG_LAYOUT_SUBFILES = 1, TAGG_LAYOUT_COUNT_ } tagg_layout_t;

/* Where the subfiles of layout=subfiles go (MA-TAPIOCA's node-local SSD as a
 * destination, seed 002 section 4.4): beside the index on the shared file
 * system, or in the node-local directory of each node. */
typedef enum { TAGG_DEST_PFS = 0, TAGG_DEST_NVR = 1, TAGG_DEST_COUNT_ } tagg_destination_t;

/* When node-local subfiles are copied to the shared file system. */
typedef enum { TAGG_DRAIN_NONE = 0, TAGG_DRAIN_CLOSE = 1, TAGG_DRAIN_COUNT_ } tagg_drain_t;

/* Stripe compression of layout=subfiles (issue 15): none, one codec of
 * codec.h (same names), or auto (the cost model chooses per file). */
typedef enum {
    TAGG_COMP_NONE = 0,
    TAGG_COMP_LZ4,
    TAGG_COMP_ZSTD,
    TAGG_COMP_BLOSC_LZ4,
    TAGG_COMP_BLOSC_ZSTD,
    TAGG_COMP_AUTO,
    TAGG_COMP_COUNT_
} tagg_compression_t;
/* The pre-conditioner of the blosc codecs (codec.h tagg_shuffle_t order). */
typedef enum { TAGG_CSHUF_NONE = 0, TAGG_CSHUF_BYTE, TAGG_CSHUF_BIT, TAGG_CSHUF_COUNT_ } tagg_cshuffle_t;

/* X(name, kind, field type, env var, default text, min, max, enum names, help)
 * kind: BOOL, INT, SIZE (accepts K/M/G suffixes), ENUM, STR. */
#define TAGG_CONFIG_TABLE(X)                                                                              \
    X(verbose, INT, int, TAGG_ENV_VERBOSE, "0", 0, 2, NULL,                                              \
      "0 quiet; 1 one summary line per file on rank 0 at close; 2 also the effective configuration at open") \
    X(summary, STR, char *, TAGG_ENV_SUMMARY, "", 0, 0, NULL,                                            \
      "file to which rank 0 appends the per-file summary line at close (empty: none)")                   \
    X(backend, ENUM, int, TAGG_ENV_BACKEND, "tapioca", 0, 0, tagg_backend_names,                         \
      "aggregation: tapioca = tagg's two-phase engine with model-placed aggregators; mpiio = none of tagg's own (MPI-IO, ROMIO two-phase)") \
    X(aggregators, INT, int, TAGG_ENV_AGGREGATORS, "0", 0, 1 << 20, NULL,                                \
      "aggregators per collective call; 0 = the cost model's #Aggr rule")                              \
    X(aggregate, ENUM, int, TAGG_ENV_AGGREGATE, "auto", 0, 0, tagg_aggregate_names,                        \
      "collective raw-data calls: auto = through aggregators when the cost model says it pays (each "      \
      "rank's runs as file-system requests against a few large requests plus the copy and the "          \
      "synchronisations, with the target's latency and bandwidth by request size from `tiers`); always; " \
      "never = every rank accesses its own runs (node-local subfiles always aggregate)")                   \
    X(fs_client, ENUM, int, NULL, "auto", 0, 0, tagg_fs_client_names,                                      \
      "how the file system's client takes one node's writes into one file: auto = from the mount table "  \
      "(FUSE serialises them: Linux's FUSE client takes the file's lock for each write; any other type "  \
      "does not) and the device (direct_io writes of runs interleaved between ranks into a local disk "   \
      "on a rotational device are taken as serial: one stream at a time does not seek); serial; "         \
      "parallel. Serial, without a tier file that measured writers together: one aggregator per node "    \
      "for writes into one file, and a node's direct writes costed as taking turns")                      \
    X(direct_io, ENUM, int, NULL, "auto", 0, 0, tagg_direct_io_names,                                      \
      "file accesses of at least direct_io_min bytes (aggregators' rounds, large direct accesses) move "  \
      "their whole 4 KiB blocks with O_DIRECT, their unaligned ends buffered (layout=shared, and the "    \
      "raw stripes of layout=subfiles): auto = on FUSE mounts (GlusterFS testbed, 256 MiB: writes 1.3x, " \
      "reads 1.6-2x of buffered; not node-local subfiles); as write on a local disk (ext2/3/4, xfs, "     \
      "btrfs) when its writes are known to be synced: fsync=1, or the application of this process has "   \
      "synced a file on such a disk before (H5Fflush); off elsewhere; on; off; write = writes only, "      \
      "reads buffered (local disk, writes that are synced: 1.1-1.4x of buffered). A file system that "    \
      "refuses O_DIRECT is accessed buffered (README: Direct I/O)")                                        \
    X(direct_io_min, SIZE, int64_t, NULL, "1M", 4096, 1LL << 40, NULL,                                      \
      "direct_io: accesses shorter than this stay buffered (HDF5's metadata accesses are far smaller); "  \
      "an aggregator's access that holds its round's data is judged by the call's round, so that every "  \
      "aggregator of a call moves its rounds the same way")                                               \
    X(file_io, ENUM, int, NULL, "auto", 0, 0, tagg_file_io_names,                                          \
      "how tagg's engine reaches a layout=shared file (backend=tapioca): posix = a descriptor of each "   \
      "rank's own (open, pread/pwrite, fsync); mpiio = a handle of each rank's own on MPI_COMM_SELF "    \
      "(ROMIO's driver for the file system: NFS's locks, Lustre, GPFS); auto = posix where ROMIO uses "  \
      "its generic driver anyway (local file systems, tmpfs, FUSE: one round trip less per open), "      \
      "mpiio elsewhere. A path with a ROMIO prefix (ufs:, lustre:) is always mpiio")                     \
    X(buffer_size, SIZE, int64_t, TAGG_ENV_BUFFER_SIZE, "4M", 4096, 1LL << 30, NULL,                      \
      "size of one aggregation buffer (one round)")                                                     \
    X(buffers, INT, int, NULL, "2", 2, 16, NULL, "aggregation buffers per aggregator (pipeline depth)")   \
    X(overlap, BOOL, int, NULL, "1", 0, 1, NULL,                                                            \
      "an aggregator's file access of a round runs on a helper thread while the rank moves the next "     \
      "round's data into (or out of) the other buffer, so that the copy and the file-system call overlap " \
      "(calls of 2 rounds or more; layouts whose accesses are POSIX calls: shared with file_io=posix, "    \
      "subfiles; with buffers >= 3 and no throttle the helper runs ahead of the rounds' agreements). 0 = " \
      "both on the calling thread, one after the other")                                  \
    X(speculate, BOOL, int, NULL, "1", 0, 1, NULL,                                                          \
      "speculative direct access (backend=tapioca): a rank whose collective request has the shape of "   \
      "one of its recent requests that the cost model sent direct (or every request, aggregate=never) "   \
      "accesses its runs before the describe gather and says so in its row; when every rank did, that "   \
      "gather, which carries any failure, is the call's only synchronisation. A wrong guess only "       \
      "leaves that rank's runs out of the aggregation. 0 = every call waits for the plan")               \
    X(block, SIZE, int64_t, NULL, "1M", 1, 1LL << 30, NULL,                                                \
      "file domains are aligned to this (file-system block or stripe) unless the layout has a stripe; "  \
      "where whole blocks would leave a domain of at least one block more than a sixteenth above an "    \
      "equal share (a 2 MiB dataset after HDF5's header, two aggregators: 2 MiB and 2 KiB), to the "     \
      "largest power-of-two fraction of it, a multiple of 4 KiB, that does not")                         \
    X(strategy, ENUM, int, TAGG_ENV_STRATEGY, "memory-aware", 0, 0, tagg_strategy_names,                  \
      "aggregator placement (model/ registry)")                                                          \
    X(throttle, INT, int, TAGG_ENV_THROTTLE, "-1", -1, 1 << 20, NULL,                                    \
      "at most this many aggregators write or read the file system at once; -1 = the model's rule "    \
      "(writes: tagg_throttle, enough streams to fill the target tier, one per gateway at least; "       \
      "reads: no limit); 0 = no limit")                                                                   \
    X(aggr_per_node, INT, int, NULL, "-1", -1, 1024, NULL,                                                 \
      "at most this many aggregators on one node (stepwise aggregation); -1 = the model's rule "       \
      "(tagg_aggr_per_node: ceil(aggregators / nodes)); 0 = no limit")                                  \
    X(topology, STR, char *, TAGG_ENV_TOPOLOGY, "", 0, 0, NULL,                                           \
      "topology file (model/README.md) mapping ranks to nodes; empty = the real machine's node split") \
    X(aggr_tier, ENUM, int, TAGG_ENV_AGGR_TIER, "auto", 0, 0, tagg_aggr_tier_names,                       \
      "memory tier of the aggregation buffers (MA-TAPIOCA_AGGRTIER): auto = the cost model's choice per "  \
      "node (Cost_A + Cost_T under the capacity and persistency rules); dram, hbm, nvr force a tier (an "  \
      "unavailable or full forced tier is an error, no fallback); test = the fault-injection tier of the " \
      "tests")                                                                                             \
    X(persistency, ENUM, int, TAGG_ENV_PERSISTENCY, "none", 0, 0, tagg_persistency_names,                 \
      "persistency the aggregation tier must offer (MA-TAPIOCA_PERSISTENCY): none, or job = data kept for " \
      "the job's lifetime (only NVR qualifies)")                                                         \
    X(tiers, STR, char *, TAGG_ENV_TIERS, "", 0, 0, NULL,                                                 \
      "tier file (model/README.md format, written by `tagg-calibrate`) with the latency and bandwidth "     \
      "of each tier; empty = the model's built-in table. Capacities in it are upper bounds")             \
    X(nvr_dir, STR, char *, TAGG_ENV_NVR_DIR, "", 0, 0, NULL,                                             \
      "node-local directory of the NVR tier (files mapped into memory); empty = `$TMPDIR`, else `/tmp`")  \
    X(hbm_capacity, SIZE, int64_t, TAGG_ENV_HBM_CAPACITY, "0", 0, 1LL << 60, NULL,                        \
      "cap on the HBM capacity the model may use per node; 0 = what memkind reports")                     \
    X(dram_capacity, SIZE, int64_t, TAGG_ENV_DRAM_CAPACITY, "0", 0, 1LL << 60, NULL,                      \
      "cap on the DRAM capacity the model may use per node; 0 = the node's available memory (MemAvailable)") \
    X(nvr_capacity, SIZE, int64_t, TAGG_ENV_NVR_CAPACITY, "0", 0, 1LL << 60, NULL,                        \
      "cap on the NVR capacity the model may use per node; 0 = the free space of `nvr_dir`")              \
    X(hbm_emulate, BOOL, int, TAGG_ENV_HBM_EMULATE, "0", 0, 1, NULL,                                      \
      "testing only: on a machine without high-bandwidth memory, the HBM tier allocates ordinary memory "  \
      "(memkind's default kind) and reports itself as emulated HBM")                                     \
    X(layout, ENUM, int, NULL, "shared", 0, 0, tagg_layout_names,                                        \
      "storage layout: shared = one HDF5 file; subfiles = the address space striped round-robin over "     \
      "several files beside a small index file `<path>` (read back through tagg with any number of ranks, " \
      "or turned into one HDF5 file with `tagg-fuse`)")                                                      \
    X(stripe_size, SIZE, int64_t, NULL, "4M", 4096, 1073741824, NULL,                                    \
      "layout=subfiles: bytes stored contiguously in one subfile; stripe k of the address space goes to "  \
      "subfile k mod N. Used when a file is created; an existing file keeps the value in its index")       \
    X(subfiles, INT, int, TAGG_ENV_SUBFILES, "0", 0, 65536, NULL,                                          \
      "layout=subfiles: number of subfiles N; 0 = one per node (nodes counted with "                      \
      "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)). Used when a file is created; an existing file keeps "   \
      "the count in its index")                                                                            \
    X(destination, ENUM, int, NULL, "pfs", 0, 0, tagg_destination_names,                                  \
      "layout=subfiles: where the subfiles go. pfs = beside the index; nvr = one subfile per node in the "  \
      "node-local directory (`nvr_dir`), written and read only by ranks of that node; the index on the "    \
      "shared file system records the nodes and paths, file metadata goes to `<path>.tagg.meta` beside "   \
      "it. Needs layout=subfiles, subfiles=0 and backend=tapioca. Used when a file is created")            \
    X(drain, ENUM, int, NULL, "none", 0, 0, tagg_drain_names,                                              \
      "files with node-local subfiles (destination=nvr, also when opened again later, read-only or not): close = at close, each node copies its node-local subfile to the shared file "      \
      "system beside the index (metadata merged in) and the file becomes an ordinary subfiled file; the "   \
      "node-local copies are then removed. none = they stay for the job (`tagg-fuse --drain` later)")       \
    X(verify, BOOL, int, NULL, "1", 0, 1, NULL,                                                          \
      "layout=subfiles: a read-only open checks what a rank reads against the CRC-64s in the index the "  \
      "first time it reads it: the blocks it covers (a sixteenth of the stripe, when the index records "    \
      "block checksums: format 4, stripe sizes that are multiples of 64 KiB) or else the whole stored "     \
      "stripe (stripe 0's first block, or the stripe, is read and checked once, by rank 0 at open, and "    \
      "broadcast); a mismatch is an error naming the subfile, stripe and block. A read-write open checks rewritten and read stripes against the index at close, " \
      "and fails it on damage. 0 = no check: no CRC is compared, for compressed stripes neither (a "      \
      "malformed compressed block, whose header or codec data does not decode to a stripe, still fails "  \
      "the read); a read-write open still probes compressed slots by their header and checks the "        \
      "decoded bytes against it (README: What tagg trusts and what it refuses)")                           \
    X(compression, ENUM, int, TAGG_ENV_COMPRESSION, "none", 0, 0, tagg_compression_names,                    \
      "layout=subfiles (destination=pfs): a piece of raw data that fills a whole stripe is compressed by the " \
      "rank that writes it (the aggregator) and stored at the stripe's place; a stripe that does not shrink " \
      "by 1/64 is stored raw. The index records per stripe the codec, the stored extent, the logical size " \
      "and the CRC-64 of the logical bytes; reading through tagg or tagg-fuse decompresses. Partial stripes " \
      "(HDF5 metadata, small writes) are stored raw (README: Compression). auto = blosc-lz4 where the " \
      "codec's throughput measured by `tagg-calibrate` (the `tiers` file) beats the file system's " \
      "bandwidth, else none. Used for the stripes written in this open")                                 \
    X(compression_level, INT, int, NULL, "1", 1, 19, NULL,                                                \
      "compression: the codec's level: zstd 1..19, blosc 1..9 (higher values are taken as 9), lz4 its "   \
      "acceleration (higher is faster, compresses less)")                                                 \
    X(compression_shuffle, ENUM, int, NULL, "byte", 0, 0, tagg_cshuffle_names,                            \
      "compression, blosc codecs: the pre-conditioner applied by element (compression_typesize) before "  \
      "the codec: none, byte (shuffle) or bit (bitshuffle); lz4 and zstd take none")                      \
    X(compression_typesize, INT, int, NULL, "4", 1, 255, NULL,                                            \
      "compression, blosc codecs: element size in bytes for the shuffle (4: float, int32; 8: double)")    \
    X(salvage, BOOL, int, NULL, "0", 0, 1, NULL,                                                         \
      "layout=subfiles: allow a read-only open of a file whose index says `state open` (its writer crashed " \
      "or failed; refused otherwise), without checksum checks, to save what it holds")                     \
    X(fsync, BOOL, int, TAGG_ENV_FSYNC, "0", 0, 1, NULL,                                                 \
      "call MPI_File_sync at flush and close, so timings include the storage")                          \
    X(async, BOOL, int, TAGG_ENV_ASYNC, "0", 0, 1, NULL,                                                  \
      "asynchronous mode: a write returns once its data is copied into the staging pool; worker threads " \
      "write it in the background (README: Asynchronous mode). Needs MPI_THREAD_MULTIPLE, else the file " \
      "runs synchronously and rank 0 prints one warning")                                                \
    X(workers, INT, int, TAGG_ENV_WORKERS, "0", 0, 64, NULL,                                              \
      "async: worker threads of the process-wide pool that drains the staged writes; 0 = online cores / "  \
      "ranks on the node, between 1 and 4. Set by the file that starts the pool")                        \
    X(staging_bytes, SIZE, int64_t, TAGG_ENV_STAGING_BYTES, "256M", 4096, 1LL << 40, NULL,                \
      "async: bound on the staging pool of the process (DRAM), shared by all files; a write waits for "    \
      "space when the pool is full, and a single write larger than the pool is written synchronously "    \
      "after the file's staged writes. Set by the file that starts the pool")                             \
    X(write_behind, SIZE, int64_t, TAGG_ENV_WRITE_BEHIND, "32M", 0, 1LL << 40, NULL,                      \
      "bytes of raw-data rewrites (writes of ranges the rank has just read: HDF5's read-modify-write of "  \
      "compound members) a rank keeps in memory per file and writes out, in file order, at its next "       \
      "metadata write or collective call, at flush and close, or when full; its own reads see them "       \
      "(README: Write-behind). 0 = off; off in atomic and asynchronous mode")                            \
    X(record, STR, char *, TAGG_ENV_RECORD, "", 0, 0, NULL,                                               \
      "file to which rank 0 appends one JSON line per collective raw-data call: the pattern, the "        \
      "settings used and the measured times (README: Self-tuning); empty = none")                        \
    X(tuning, STR, char *, TAGG_ENV_TUNING, "", 0, 0, NULL,                                               \
      "model file written by `tagg-tune fit`: at each collective call whose plan is not reused, the "     \
      "engine predicts the time of every candidate setting the model knows (direct or aggregated, "      \
      "aggregators, throttle, the round buffer up to buffer_size), each as the call's plan would carry " \
      "it out, and takes the fastest, unless it predicts less gain over the cost "                        \
      "model's own choice than the file's margin, or the call's pattern lies outside the patterns the "  \
      "model was recorded on (format 6's domain; README: Self-tuning); keys set by the user stay as "    \
      "set; empty = the cost model alone decides")                                                       \
    X(tuning_check, INT, int, TAGG_ENV_TUNING_CHECK, "3", 0, 16, NULL,                                    \
      "with tuning=: a pattern (read, or write: tuning_check_writes) runs its choice (the model's, or "  \
      "the cost model's where the margin keeps it) this many times, then a rival as many, each timed "  \
      "(a read with the file's re-reads of the same bytes after it, a write with its share by bytes of " \
      "the file's next sync or close), and keeps the one of the smaller median for the process's later " \
      "calls of that pattern. The rival: the other of the two where "                                   \
      "they differ, else the model's best setting of the other kind (direct or aggregated) if it is "    \
      "predicted within 1.5 times the choice's time; no rival, no trial. Then, where the model's best "  \
      "setting of a third class (direct, or n aggregators with or without a throttle) is predicted "     \
      "within 1.5 times too, the winner is timed against it the same way (README: Self-tuning, the "    \
      "measured check). 0 = the choice stands unmeasured; not in asynchronous mode")                    \
    X(tuning_check_writes, BOOL, int, NULL, "1", 0, 1, NULL,                                              \
      "tuning_check: write patterns are checked too, each timed write charged its share by bytes of "   \
      "the seconds of the file's next sync or close (what it left to the page cache and the flush); "    \
      "0 = reads only")                                                                                  \
    X(tuning_check_close, INT, int, NULL, "10", 0, 100000, NULL,                                          \
      "tuning_check: a close call, in percent: where the two medians differ by less than this share of " \
      "the choice's, each runs tuning_check times more, up to 3 rounds (at most 16 calls each), and the " \
      "medians of all their calls decide (values above 100 count calls a multiple apart as close); "      \
      "0 = no call is close. Either way a rival whose median is the smaller runs only once every round "  \
      "is done (an overturn takes every round), and a choice ahead by this share or more after the "     \
      "first is kept at once")

extern const char *const tagg_backend_names[];
extern const char *const tagg_strategy_names[];
extern const char *const tagg_layout_names[];
extern const char *const tagg_aggr_tier_names[];
extern const char *const tagg_persistency_names[];
extern const char *const tagg_aggregate_names[]; /* order of tagg_aggregate_t (model: tagg/callplan.h) */
extern const char *const tagg_fs_client_names[]; /* auto, serial, parallel: TAGG_FS_CLIENT_* */
enum { TAGG_FS_CLIENT_AUTO = 0, TAGG_FS_CLIENT_SERIAL = 1, TAGG_FS_CLIENT_PARALLEL = 2 };
extern const char *const tagg_direct_io_names[]; /* auto, on, off, write: TAGG_DIO_MODE_* */
enum { TAGG_DIO_MODE_AUTO = 0, TAGG_DIO_MODE_ON = 1, TAGG_DIO_MODE_OFF = 2, TAGG_DIO_MODE_WRITE = 3 };
extern const char *const tagg_file_io_names[]; /* auto, posix, mpiio: TAGG_FILE_IO_* */
enum { TAGG_FILE_IO_AUTO = 0, TAGG_FILE_IO_POSIX = 1, TAGG_FILE_IO_MPIIO = 2 };
extern const char *const tagg_destination_names[];
extern const char *const tagg_drain_names[];
extern const char *const tagg_compression_names[]; /* tagg_compression_t order; codec names of codec.h */
extern const char *const tagg_cshuffle_names[];

typedef struct tagg_config {
#define TAGG_CONFIG_FIELD_(name, kind, ctype, env, def, lo, hi, names, help) ctype name;
    TAGG_CONFIG_TABLE(TAGG_CONFIG_FIELD_)
#undef TAGG_CONFIG_FIELD_
} tagg_config_t;

/* Fills defaults. Always succeeds. */
void tagg_config_init(tagg_config_t *cfg);
/* Releases owned strings (the struct itself is the caller's). */
void tagg_config_clear(tagg_config_t *cfg);
/* Copies (deep). Returns 0, or -1 when out of memory. */
int tagg_config_copy(tagg_config_t *dst, const tagg_config_t *src);

/* Applies one "key=value;key=value" string. Empty or NULL: nothing.
 * Returns 0, or -1 with a message in err (keeps earlier valid keys applied). */
int tagg_config_apply_string(tagg_config_t *cfg, const char *str, char *err, size_t errlen);

/* Gathers the TAGG_* environment into one config string ("key=value;..."), in
 * table order, plus the contents of TAGG_CONFIG at the end. The caller frees it.
 * Used so one rank can read the environment and broadcast it. */
char *tagg_config_env_string(void);

/* Defaults, then environment string env_str (may be NULL), then config string str.
 * Returns 0, or -1 with a message and cfg already cleared (nothing to free).
 * An err of TAGG_CONFIG_ERRLEN bytes holds every message whole (the longest
 * lists every key; config.c asserts at compile time that it fits). */
#define TAGG_CONFIG_ERRLEN 1024
int tagg_config_build(tagg_config_t *cfg, const char *env_str, const char *str, char *err, size_t errlen);

/* Prints the effective configuration as "key=value;key=value" (canonical form).
 * Returns the length that would be written (snprintf semantics). */
int tagg_config_format(const tagg_config_t *cfg, char *buf, size_t len);

/* Writes the documentation table (markdown) of every key, for the README. */
void tagg_config_doc(void *FILE_stream);

#endif
