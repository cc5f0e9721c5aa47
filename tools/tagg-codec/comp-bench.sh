#!/usr/bin/env bash
# Compression benchmark (issue 15): HACC-, S3D-shaped and random data, one
# HDF5 dataset written and read by NP ranks, per directory:
#   mpio       MPI-IO collective (H5Pset_fapl_mpio), one file
#   tagg-raw   tagg, layout=subfiles, no compression
#   tagg-<c>   tagg, layout=subfiles, compression=<c> for each codec given
# REPS repetitions, variants round-robin; raw lines in OUT/raw.csv, medians
# with min..max in OUT/summary.txt. Bandwidth in logical bytes per second;
# stored bytes: the files' allocated size (du) and, for tagg, the summary's
# comp_stored_bytes. Writes include flushing to storage (H5Fflush: fsync),
# and the page cache is dropped before every read (root; h5-comp-bench says so
# when it cannot), so reads come from storage.
#   comp-bench.sh BUILD OUT NP MIB_PER_RANK REPS "DIR..." "CODEC..."
# A CODEC may carry settings after a colon, joined by '+', e.g.
#   blosc-lz4:compression_shuffle=bit+compression_typesize=8
set -u
build=$1 out=$2 np=$3 mib=$4 reps=$5 dirs=$6 codecs=$7
bench=$build/tools/tagg-codec/h5-comp-bench
. ~/.cache/tagg/env.sh >/dev/null 2>&1 || true
export LD_LIBRARY_PATH=$HDF5_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$out"
raw=$out/raw.csv
[ -s "$raw" ] || echo "dir,kind,variant,rep,bytes,write_s,read_s,stored_bytes,comp_ratio" > "$raw"
for dir in $dirs; do
  for kind in hacc s3d random; do
    for rep in $(seq 1 "$reps"); do
      for v in mpio tagg-raw $(for c in $codecs; do echo tagg-$c; done); do
        f=$dir/comp-bench-$$.h5
        rm -f "$f" "$f".tagg.*
        case $v in
          mpio) line=$(mpiexec -n "$np" "$bench" "$f" "$kind" "$mib" mpio fsync 2>&1 | grep '^kind='); ratio= ;;
          *) cfg="layout=subfiles;stripe_size=4M;subfiles=$np"
             c=${v#tagg-}
             [ "$v" = tagg-raw ] || cfg="$cfg;compression=${c%%:*}"
             case $c in *:*) cfg="$cfg;$(echo "${c#*:}" | tr '+' ';')" ;; esac
             res=$(HDF5_PLUGIN_PATH=$build/plugins HDF5_DRIVER=tagg HDF5_DRIVER_CONFIG="$cfg" TAGG_VERBOSE=1 \
                   mpiexec -n "$np" "$bench" "$f" "$kind" "$mib" default fsync 2>&1)
             line=$(echo "$res" | grep '^kind=')
             ratio=$(echo "$res" | grep -o 'comp_ratio=[0-9.]*' | head -1 | cut -d= -f2) ;;
        esac
        stored=$(du -B1 -c "$f" "$f".tagg.* 2>/dev/null | tail -1 | cut -f1)
        rm -f "$f" "$f".tagg.*
        case "$line" in *bad=0*) ;; *) echo "FAILED: $dir $kind $v: $line" >&2; continue ;; esac
        b=$(echo "$line" | sed 's/.*bytes=\([0-9]*\).*/\1/'); w=$(echo "$line" | sed 's/.*write_s=\([0-9.]*\).*/\1/')
        r=$(echo "$line" | sed 's/.*read_s=\([0-9.]*\).*/\1/')
        echo "$dir,$kind,$v,$rep,$b,$w,$r,$stored,$ratio" >> "$raw"
        echo "$dir $kind $v rep $rep: write $w s read $r s stored $stored ratio ${ratio:--}" >&2
      done
    done
  done
done
# medians (and min..max) of the logical bandwidth, MiB/s
python3 - "$raw" > "$out/summary.txt" <<'PY'
import csv, sys, statistics as st
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {}
for r in rows:
    groups.setdefault((r['dir'], r['kind'], r['variant']), []).append(r)
print("dir kind variant n | write MiB/s median (min..max) | read MiB/s median (min..max) | stored MiB median | ratio | write vs tagg-raw")
base = {}
for (d, k, v), rs in groups.items():
    if v == 'tagg-raw':
        base[(d, k)] = st.median(int(r['bytes']) / float(r['write_s']) for r in rs)
for (d, k, v), rs in sorted(groups.items()):
    w = [int(r['bytes']) / float(r['write_s']) / 2**20 for r in rs]
    rd = [int(r['bytes']) / float(r['read_s']) / 2**20 for r in rs]
    s = st.median(int(r['stored_bytes']) for r in rs) / 2**20
    ratio = rs[0]['comp_ratio'] or '-'
    rel = st.median(w) * 2**20 / base[(d, k)] if (d, k) in base else float('nan')
    print(f"{d} {k} {v} {len(rs)} | {st.median(w):.0f} ({min(w):.0f}..{max(w):.0f}) | {st.median(rd):.0f} ({min(rd):.0f}..{max(rd):.0f}) | {s:.1f} | {ratio} | {rel:.2f}x")
PY
cat "$out/summary.txt"
