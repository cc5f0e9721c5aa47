"""h5py's own test suite through tagg, compared with the same suite without tagg.

    python h5py_suite.py <tagg plugin dir> <work dir> [variant ...]

Runs `python -m pytest --pyargs h5py` on this machine in three variants, one
after the other, each in a fresh interpreter and temporary directory:

  sec2      no HDF5_* / TAGG_* variables: the baseline, computed in this run
  shared    HDF5_PLUGIN_PATH + HDF5_DRIVER=tagg (serial files through tagg)
  subfiles  the same with HDF5_DRIVER_CONFIG=layout=subfiles
  direct    the shared layout with direct_io=on;direct_io_min=4K (O_DIRECT for
            every access with a whole 4 KiB block; the summary must count some)

and requires of each tagg variant the baseline's result: the same failed and
errored test ids, the same skipped count, and the same passed count. The only
differences accepted are listed in INHERENT below, each with the reason it
cannot be otherwise through a plugin driver, and each must fail for exactly
that reason (its failure text must contain the given words); nothing is
skipped or deselected. tagg's summary file must show that tagg handled the
files of the variant (one-process files, the variant's layout).

Exit code 0 when every tagg variant matches; 1 with the differences listed."""
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

# test id -> (variants, words its failure text must contain, why it differs)
INHERENT = {
    **{
        f"tests.test_h5pl::{name}": (
            ("shared", "subfiles", "direct"),
            "library initialization failed",
            "the test starts a child interpreter with HDF5_PLUGIN_PATH replaced by a directory "
            "that does not hold the tagg plugin while HDF5_DRIVER=tagg stays set: HDF5 cannot load "
            "the driver it is told to use (true of every plugin driver)",
        )
        for name in ("test_default", "test_append", "test_prepend", "test_insert", "test_replace", "test_remove")
    },
    "tests.test_file.TestDrivers::test_readonly": (
        ("subfiles",),
        "",
        "opens a tagg-written file with driver='core', which reads the bytes at the path; in the "
        "subfiles layout the path holds the index, the data is in the subfiles (any subfiling layout)",
    ),
    "tests.test_file.TestUserblock::test_write_block": (
        ("subfiles",),
        "",
        "writes the user block with Python's open() at the path's first 512 bytes; in the subfiles "
        "layout those bytes are the index, the file's byte 0 lives in a subfile",
    ),
    **{
        f"tests.test_vds.test_highlevel_vds.{cls}::{name}": (
            ("subfiles",),
            "renamed with it",
            f"{how} the file's path with Python (the path alone): a subfiled file is several files, and "
            "tagg refuses an index that names another file's subfiles (data-safety rule of format 3: two "
            "indexes sharing subfiles would overwrite each other)",
        )
        for cls, name, how in (
            ("RelativeLinkTestCase", "test_relative_vds", "renames (os.rename)"),
            ("RelativeLinkBuildVDSTestCase", "test_relative_vds", "renames (os.rename)"),
            ("VDSUnlimitedTestCase", "test_unlimited_axis", "copies (shutil.copyfile)"),
        )
    },
    "tests.test_file::test_reproducible_file": (
        ("subfiles",),
        "sha256",
        "hashes the bytes at two paths; in the subfiles layout each path holds an index naming its "
        "own subfiles, so equal contents give different bytes at the paths",
    ),
}

TIMEOUT = int(os.environ.get("TAGG_H5PY_SUITE_TIMEOUT", "900"))  # seconds per variant


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith(("HDF5_", "TAGG_", "PYTEST_"))}


def variant_env(name, plugins, summary):
    env = clean_env()
    if name != "sec2":
        env["HDF5_PLUGIN_PATH"] = plugins
        env["HDF5_DRIVER"] = "tagg"
        env["TAGG_SUMMARY"] = summary
    if name == "subfiles":
        env["HDF5_DRIVER_CONFIG"] = "layout=subfiles"
    if name == "direct":
        env["HDF5_DRIVER_CONFIG"] = "direct_io=on;direct_io_min=4K"
    return env


LAYOUT = {"shared": "shared", "subfiles": "subfiles", "direct": "shared"}


def run_variant(name, plugins, work):
    vdir = os.path.join(work, name)
    os.makedirs(vdir, exist_ok=True)
    xml = os.path.join(vdir, "junit.xml")
    summary = os.path.join(vdir, "summary.log")
    for path in (xml, summary):
        if os.path.exists(path):
            os.remove(path)
    env = variant_env(name, plugins, summary)
    env["TMPDIR"] = tempfile.mkdtemp(prefix="tmp-", dir=vdir)
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "h5py", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}"]
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=vdir, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        out, timed_out = r.stdout + r.stderr, False
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        timed_out = True
    elapsed = time.monotonic() - t0
    with open(os.path.join(vdir, "pytest.out"), "w") as f:
        f.write(out)
    last = [line for line in out.splitlines() if line.strip()][-1:] or ["(no output)"]
    print(f"[{name}] {elapsed:.0f} s: {last[0]}", flush=True)
    if timed_out:
        return None, elapsed, f"pytest did not finish in {TIMEOUT} s (output in {vdir}/pytest.out)"
    if not os.path.exists(xml):
        return None, elapsed, f"pytest wrote no report (exit code {r.returncode}; output in {vdir}/pytest.out)"
    return parse(xml), elapsed, None


def parse(xml):
    res = {"passed": set(), "failed": {}, "skipped": set()}
    for tc in ET.parse(xml).getroot().iter("testcase"):
        tid = f"{tc.get('classname')}::{tc.get('name')}"
        outcome = "passed"
        for child in tc:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                res["failed"][tid] = (child.get("message") or "") + "\n" + (child.text or "")
            elif child.tag == "skipped" and outcome == "passed":
                outcome = "skipped"
        if outcome == "passed":
            res["passed"].add(tid)
        elif outcome == "skipped":
            res["skipped"].add(tid)
    return res


def check_summary(name, work):
    path = os.path.join(work, name, "summary.log")
    if not os.path.exists(path):
        return ["tagg wrote no summary: no file went through tagg"]
    with open(path) as f:
        lines = [line for line in f if line.startswith("tagg: file=")]
    layout = LAYOUT[name]
    ours = [line for line in lines if f" layout={layout} " in line and " ranks=1 " in line]
    print(f"[{name}] tagg summary: {len(lines)} files with I/O, {len(ours)} of them layout={layout} on 1 rank")
    problems = []
    if len(ours) < 100:  # the suite writes hundreds of files
        problems.append(f"only {len(ours)} summary lines with layout={layout} ranks=1: the suite did not go through tagg")
    if name == "direct":
        moved = sum(int(m) for line in ours for m in re.findall(r" dio_(?:read|write)_bytes=(\d+)", line))
        print(f"[{name}] bytes moved with O_DIRECT: {moved}")
        if moved == 0:
            problems.append("direct_io=on, yet no byte moved with O_DIRECT")
    # Files tagg did not write (h5py's test data, files made by another driver)
    # are read in the layout they have: only reads are allowed there.
    for line in lines:
        if line not in ours and not (" ranks=1 " in line and " raw_write_bytes=0 " in line
                                     and " md_write_bytes=0 " in line):
            problems.append(f"written, but not layout={layout} on one rank: {line.strip()}")
    return problems


def compare(name, base, res):
    problems = []
    accepted = {}
    for tid, text in res["failed"].items():
        if tid in base["failed"]:
            continue
        rule = INHERENT.get(tid)
        if rule and name in rule[0] and rule[1] in text:
            accepted[tid] = rule[2]
        else:
            first = text.strip().splitlines()[0][:300] if text.strip() else ""
            problems.append(f"fails here, not without tagg: {tid}: {first}")
    for tid in sorted(set(base["failed"]) - set(res["failed"])):
        problems.append(f"fails without tagg but not here: {tid}")
    inherent_passed_in_base = sum(1 for tid in accepted if tid in base["passed"])
    if len(res["passed"]) + inherent_passed_in_base != len(base["passed"]):
        problems.append(
            f"passed {len(res['passed'])} (+{inherent_passed_in_base} inherent differences), "
            f"without tagg {len(base['passed'])}"
        )
    if len(res["skipped"]) != len(base["skipped"]):
        problems.append(f"skipped {len(res['skipped'])}, without tagg {len(base['skipped'])}")
    for tid, why in sorted(accepted.items()):
        print(f"[{name}] inherent difference: {tid}: {why}")
    return problems


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    plugins, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    variants = sys.argv[3:] or ["shared", "subfiles", "direct"]
    os.makedirs(work, exist_ok=True)
    base, elapsed, err = run_variant("sec2", plugins, work)
    if err:
        print(f"[sec2] {err}")
        return 1
    print(f"[sec2] passed {len(base['passed'])} failed {len(base['failed'])} skipped {len(base['skipped'])}: "
          f"failures {sorted(base['failed'])}")
    bad = False
    for name in variants:
        res, elapsed, err = run_variant(name, plugins, work)
        problems = [err] if err else compare(name, base, res) + check_summary(name, work)
        if res:
            print(f"[{name}] passed {len(res['passed'])} failed {len(res['failed'])} skipped {len(res['skipped'])}")
        for p in problems:
            print(f"[{name}] DIFFERENCE: {p}")
        bad = bad or bool(problems)
        print(f"[{name}] {'differs from' if problems else 'matches'} the suite without tagg")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
