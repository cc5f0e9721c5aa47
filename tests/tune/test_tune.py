"""tagg-tune against the library's evaluator (model/src/tune.c, via tagg-tune-eval).

- The record format round-trips: records formatted by the C library are read
  back by tagg-tune with every double exact and the file name intact.
- For each model kind, the trees the C evaluator walks are scikit-learn's:
  the same leaf in every tree for every input (bit for bit on the decisions)
  and the same prediction up to rounding.
- tagg-tune fit prints the cross-validated error table and writes a model the
  C side accepts; an edited model is refused.
"""
import argparse
import importlib.machinery
import importlib.util
import json
import math
import os
import random
import statistics
import subprocess
import sys

import numpy as np
import pytest

TOOL = os.environ["TAGG_TUNE"]
EVAL = os.environ["TAGG_TUNE_EVAL"]
VOCAB_LEN = 23  # tagg/tune.h TAGG_TV_COUNT_ (test_record_round_trip: tagg-tune's and C's)


def tool_module():
    loader = importlib.machinery.SourceFileLoader("tagg_tune", TOOL)
    spec = importlib.util.spec_from_loader("tagg_tune", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


tt = tool_module()


def synthetic_rows(n=400, seed=3):
    """Calls of a made-up machine: patterns from a small grid, each run under
    several settings (as tagg-tune explore does); time = latency per piece
    without aggregation, or bytes / a bandwidth that grows with aggregators
    up to a limit, plus 5 % noise."""
    rnd = random.Random(seed)
    patterns = [(ranks, bpr, pieces) for ranks in (2, 4, 8, 16) for bpr in (4096, 65536, 1 << 20, 8 << 20, 64 << 20)
                for pieces in (1, 16, 256)]
    rows = []
    for i in range(n):
        ranks, bpr, pieces = patterns[i % len(patterns)]
        direct = rnd.choice([0, 1])
        aggr = 0 if direct else rnd.choice([1, 2, 4])
        bufsz = rnd.choice([1 << 20, 4 << 20, 16 << 20])
        past_end = 1.0 if bpr == 4096 else 0.5 if pieces == 256 else 0.0  # of the pattern, as in a sweep
        setup = 2 if ranks == 2 else 1 if ranks == 4 else 0
        resident = 0.25 if pieces == 16 else 0.0  # of the pattern too
        flight = 0.125 if pieces == 256 else 0.0
        ahead = 3.5 if pieces == 256 and bpr == 65536 else 0.0  # where some bytes are in flight
        v = [ranks, max(1, ranks // 4), bpr, 0.25, pieces, 1.0 if pieces == 1 else 0.5,
             0.5, 3, 0, past_end, setup, 0, 0, resident, flight, ahead, direct, aggr, bufsz, 2, 0, 0, 1]
        total = ranks * bpr
        cost_direct = 2e-4 * pieces * ranks / 2 + total / 1.5e9  # the cost model's estimates
        cost_aggr = 1e-3 + total / (min(max(aggr, 1), 2) * 1.0e9)
        t = cost_direct if direct else cost_aggr + total / (bufsz * 400)
        t += 2e-4 * setup  # resources made before the call's data moves
        t *= math.exp(rnd.gauss(0, 0.05))
        rows.append(v + [cost_direct, cost_aggr, t * 0.1, t * 0.6, t * 0.5, t])
    return rows


def vocab(**kw):
    """A record's vocabulary: an aggregated 1 MiB a rank write of 2 ranks on
    one node of local disk (one aggregator, two 4 MiB buffers), every other
    input 0; kw changes any of it or adds keys."""
    r = {k: 0 for k in tt.VOCAB}
    r.update(ranks=2, nodes=1, bytes_per_rank=1 << 20, pieces_per_rank=1, contiguity=1, aligned=1, fs_kind=1,
             aggregators=1, buffer_size=4 << 20, buffers=2)
    r.update(kw)
    return r


def c_records(rows, tmp_path):
    inp = "\n".join(" ".join(repr(float(x)) for x in r) for r in rows) + "\n"
    out = subprocess.run([EVAL, "--record"], input=inp, capture_output=True, text=True, check=True).stdout
    path = tmp_path / "records.jsonl"
    path.write_text(out)
    return path


def test_record_round_trip(tmp_path):
    rows = synthetic_rows(50)
    path = c_records(rows, tmp_path)
    lines = path.read_text().splitlines()
    assert len(lines) == len(rows)
    assert len(tt.VOCAB) == VOCAB_LEN and len(json.loads(lines[0])) == VOCAB_LEN + 9  # + format, op, file, 6 numbers
    for row, line in zip(rows, lines):
        r = json.loads(line)
        assert r["tagg_record"] == 8 and r["op"] == "write"
        assert r["file"] == 'a "quoted"\\name\n.h5'
        for k, x in zip(tt.VOCAB + tt.COSTS + ["t_plan", "t_move", "t_fs", "t_total"], row):
            assert r[k] == float(x), k  # exact: 17 significant digits
    back = tt.read_records([str(path)])
    assert len(back) == len(rows)
    assert [r["in_flight"] for r in back] == [float(row[tt.VOCAB.index("in_flight")]) for row in rows]
    assert any(r["in_flight"] != 0 for r in back)
    assert [r["flight_ahead"] for r in back] == [float(row[tt.VOCAB.index("flight_ahead")]) for row in rows]
    assert any(r["flight_ahead"] != 0 for r in back)
    def as_format(version, drop, recs=None):
        """The records (fresh from lines, or recs as they are) declared format
        version without the keys in drop, written and read back."""
        recs = [json.loads(line) for line in lines] if recs is None else recs
        for r in recs:
            r["tagg_record"] = version
            for k in drop:
                del r[k]
        path.write_text("".join(json.dumps(r) + "\n" for r in recs))
        return recs, tt.read_records([str(path)])

    # format 7 (no flight_ahead) is still read, flight_ahead as 0 (not measured)
    _, back = as_format(7, ["flight_ahead"])
    assert len(back) == len(rows) and all(r["flight_ahead"] == 0 for r in back)
    assert any(r["in_flight"] != 0 for r in back)
    # format 6 (no in_flight) is still read, in_flight as 0 (not measured)
    _, back = as_format(6, ["in_flight", "flight_ahead"])
    assert len(back) == len(rows) and all(r["in_flight"] == 0 for r in back)
    # format 5 (resident with pages under readahead) is still read, as it is
    old, back = as_format(5, ["in_flight", "flight_ahead"])
    assert [r["resident"] for r in back] == [r["resident"] for r in old]
    # format 4 (no resident) is still read, resident as 0 (not measured)
    assert any(json.loads(line)["resident"] != 0 for line in lines)
    _, back = as_format(4, ["resident"])
    assert len(back) == len(rows) and all(r["resident"] == 0 for r in back)
    # format 3 (no dio_min) is still read: O_DIRECT from 1 MiB on FUSE (fs_kind 3), as
    # direct_io=auto did at its default, never elsewhere
    old = [json.loads(line) for line in lines]
    for i, r in enumerate(old):
        r["fs_kind"] = 3 if i % 2 else 1
    old, back = as_format(3, ["dio_min"], old)
    assert [r["dio_min"] for r in back] == [1048576 if i % 2 else 0 for i in range(len(old))]
    # format 2 (no cost estimates) is still read, those as None
    old, back = as_format(2, ["cost_direct", "cost_aggr"], old)
    assert len(back) == len(rows) and all(r["cost_direct"] is None and r["cost_aggr"] is None for r in back)
    # format 1 (no past_end, setup, repeat either) is still read, those as 0
    old, back = as_format(1, ["past_end", "setup", "repeat"], old)
    assert len(back) == len(rows) and all(r["past_end"] == 0 and r["setup"] == 0 and r["repeat"] == 0 for r in back)

    def refused(text):
        """tagg-tune fit's exit code and message for a record file holding text."""
        path.write_text(text + "\n")
        r = subprocess.run([sys.executable, TOOL, "fit", str(path), "-o", str(tmp_path / "m")],
                           capture_output=True, text=True)
        return r.returncode, r.stderr

    # an unknown format is refused; a record of this format lacking a key its
    # format has (format 3's estimates; dio_min, resident, in_flight, flight_ahead) too
    code, err = refused(lines[0].replace('"tagg_record":8', '"tagg_record":9'))
    assert code == 1 and "not a tagg record of format 1 to 8" in err, err
    for key in ("cost_aggr", "flight_ahead", "in_flight", "resident", "dio_min"):
        lacking = json.loads(lines[0])
        del lacking[key]
        code, err = refused(json.dumps(lacking))
        assert code == 1 and "record lacks numeric " + key in err, (key, err)


def c_eval(model, X_full):
    inp = "\n".join(" ".join(repr(float(x)) for x in r) for r in X_full) + "\n"
    out = subprocess.run([EVAL, str(model)], input=inp, capture_output=True, text=True, check=True).stdout
    res = [line.split() for line in out.splitlines()]
    return np.array([float(r[0]) for r in res]), np.array([[int(x) for x in r[1:]] for r in res])


@pytest.mark.parametrize("target", ["seconds", "per_byte"])
@pytest.mark.parametrize("kind", ["decision_tree", "random_forest", "gradient_boosting"])
def test_c_evaluator_is_sklearn(kind, target, tmp_path):
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
    from sklearn.tree import DecisionTreeRegressor
    rows = synthetic_rows()
    inputs = ["ranks", "bytes_per_rank", "pieces_per_rank", "fs_kind", "direct", "aggregators", "buffer_size"]
    idx = [tt.VOCAB.index(k) for k in inputs]
    X = np.array([[r[i] for i in idx] for r in rows])
    y = tt.target_of([dict(zip(tt.VOCAB + ["t_total"], r[:VOCAB_LEN] + [r[-1]])) for r in rows], target)
    est = {"decision_tree": DecisionTreeRegressor(random_state=0),
           "random_forest": RandomForestRegressor(n_estimators=20, random_state=0, n_jobs=1),
           "gradient_boosting": GradientBoostingRegressor(n_estimators=30, random_state=0)}[kind].fit(X, y)
    model = tmp_path / "m.tune"
    model.write_text(tt.export(kind, est, inputs, [("aggregators", [0.0, 1.0, 2.0, 4.0])], target))
    assert ("target log_seconds_per_byte\n" in model.read_text()) == (target == "per_byte")
    # inputs off the training grid too, and values that sit exactly on thresholds
    rnd = random.Random(9)
    probe = [r[:VOCAB_LEN] for r in rows]
    trees, _ = tt.trees_of(kind, est)
    for _ in range(300):
        v = list(rnd.choice(probe))
        t = rnd.choice(trees)
        feats = [f for f in t.feature if f >= 0]
        if feats:
            j = rnd.randrange(len(t.feature))
            if t.feature[j] >= 0:
                v[idx[t.feature[j]]] = float(np.float32(t.threshold[j])) if rnd.random() < 0.5 else t.threshold[j] * rnd.uniform(0.5, 2)
        probe.append(v)
    Xp = np.array([[v[i] for i in idx] for v in probe])
    pred_c, leaves_c = c_eval(model, probe)
    apply = est.apply(Xp.astype(np.float32))
    leaves_sk = apply.reshape(len(probe), -1)
    assert leaves_c.shape == leaves_sk.shape
    mism = np.argwhere(leaves_c != leaves_sk)
    assert len(mism) == 0, "C and scikit-learn reach different leaves at %s" % mism[:5]
    pred_sk = tt.seconds_of(est.predict(Xp), [dict(zip(tt.VOCAB, v)) for v in probe], target)
    np.testing.assert_allclose(pred_c, pred_sk, rtol=1e-12)
    # the Python reader of model files agrees as well
    m = tt.load_model(str(model))
    for v, p in zip(probe[:50], pred_c[:50]):
        assert tt.predict_one(m, dict(zip(tt.VOCAB, v))) == pytest.approx(p, rel=1e-12)


def test_fit_writes_table_and_model(tmp_path):
    path = c_records(synthetic_rows(), tmp_path)
    model = tmp_path / "best.tune"
    out = subprocess.run([sys.executable, TOOL, "fit", str(path), "-o", str(model), "--trees", "30"],
                         capture_output=True, text=True, check=True).stdout
    for kind in ("decision_tree", "random_forest", "gradient_boosting"):
        assert kind in out
    assert "call err" in out.splitlines()[3], out
    assert out.startswith("writes: each call's own time (no explore CSV"), out  # records without explore's runs
    errs = {l.split()[0]: float(l.split()[1].rstrip("%")) for l in out.splitlines()
            if l.split() and l.split()[0] in ("decision_tree", "random_forest", "gradient_boosting")}
    calls = {l.split()[0]: float(l.split()[4].rstrip("%")) for l in out.splitlines()
             if l.split() and l.split()[0] in ("decision_tree", "random_forest", "gradient_boosting")}
    assert len(errs) == 3 and len(calls) == 3
    assert min(calls.values()) < 25, out
    assert min(errs.values()) < 25, out  # the synthetic machine is learnable
    shown = subprocess.run([sys.executable, TOOL, "show", str(model)], capture_output=True, text=True, check=True).stdout
    assert "the engine may choose aggregators" in shown and "predicts ln(seconds per byte of the call)" in shown
    # choose: many pieces per rank must go through aggregators, one small
    # piece per rank must not (by construction, by factors of 3 and 30)
    many = vocab(ranks=16, nodes=4, bytes_spread=0.25, pieces_per_rank=256, contiguity=0.5, aligned=0.5, fs_kind=3,
                 past_end=0.5, in_flight=0.125, direct=1, aggregators=0, throttle=1)
    one = vocab(bytes_per_rank=65536, bytes_spread=0.25, aligned=0.5, fs_kind=3, setup=2, aggregators=2, throttle=1)
    line = lambda r: " ".join(str(r[k]) for k in tt.VOCAB)
    ch = subprocess.run([EVAL, "--choose", str(model)], input="%s\n%s\n" % (line(many), line(one)),
                        capture_output=True, text=True, check=True).stdout.splitlines()
    assert "direct=0" in ch[0] and "direct=1" in ch[1], ch
    # an edited model is refused with the line named
    text = model.read_text().replace("kind ", "kind x", 1)
    bad = tmp_path / "bad.tune"
    bad.write_text(text)
    r = subprocess.run([EVAL, str(bad)], input="", capture_output=True, text=True)
    assert r.returncode == 1 and "line 2: expected 'kind" in r.stderr, r.stderr
    bad.write_text(model.read_text().replace("node 1 ", "node 1  ", 1))
    r = subprocess.run([EVAL, str(bad)], input="", capture_output=True, text=True)
    assert r.returncode == 1 and "checksum mismatch" in r.stderr, r.stderr


def test_bad_records_are_refused(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text('{"tagg_record":1,"ranks":2}\n')
    r = subprocess.run([sys.executable, TOOL, "fit", str(p), "-o", str(tmp_path / "m")], capture_output=True, text=True)
    assert r.returncode == 1 and "r.jsonl:1: record lacks numeric" in r.stderr
    p.write_text("not json\n")
    r = subprocess.run([sys.executable, TOOL, "fit", str(p), "-o", str(tmp_path / "m")], capture_output=True, text=True)
    assert r.returncode == 1 and "not a JSON record" in r.stderr


def test_median_rows_one_per_pattern_and_settings():
    """fit --medians / heldout: one row per (kernel, pattern, settings), its
    time the median of the repetitions; other settings stay apart."""
    base = vocab()
    rows = []
    for t in (0.1, 0.5, 0.2):               # three repetitions of one setting
        rows.append(dict(base, t_total=t))
    rows.append(dict(base, direct=1, aggregators=0, t_total=9.0))  # another setting
    rows.append(dict(base, t_total=7.0, _kernel="other"))          # same numbers, another kernel
    m = tt.median_rows(rows)
    assert len(m) == 3, m
    by = {(r.get("_kernel"), r["direct"]): r for r in m}
    assert by[(None, 0)]["t_total"] == 0.2 and by[(None, 0)]["_n"] == 3
    assert by[(None, 1)]["t_total"] == 9.0 and by[("other", 0)]["t_total"] == 7.0


def test_fit_medians_fits_fewer_rows(tmp_path):
    rows = synthetic_rows(n=120)
    path = c_records(rows + rows, tmp_path)  # every record twice: the medians halve the rows
    model = tmp_path / "m.tune"
    out = subprocess.run([sys.executable, TOOL, "fit", str(path), "-o", str(model), "--trees", "5", "--medians"],
                         capture_output=True, text=True, check=True).stdout
    groups = len({tuple(r[:VOCAB_LEN]) for r in rows})  # repeated patterns x settings merge too
    assert groups < 120 and "tagg-tune: %d records" % groups in out, out
    out = subprocess.run([sys.executable, TOOL, "fit", str(path), "-o", str(model), "--trees", "5"],
                         capture_output=True, text=True, check=True).stdout
    assert "tagg-tune: 240 records" in out, out


def test_forest_max_features(tmp_path):
    """--max-features: the forest's splits draw from that share of the inputs
    (default 0.5): other trees than with every input; 0, 1.5 and text refused."""
    path = c_records(synthetic_rows(n=120), tmp_path)
    texts = {}
    for mf in ("0.5", "1", None):
        model = tmp_path / ("m%s.tune" % mf)
        argv = [sys.executable, TOOL, "fit", str(path), "-o", str(model), "--trees", "5", "--kind", "forest"]
        subprocess.run(argv + (["--max-features", mf] if mf else []), capture_output=True, text=True, check=True)
        texts[mf] = model.read_text()
    assert texts["0.5"] == texts[None]  # the default
    assert texts["0.5"] != texts["1"]
    for bad in ("0", "1.5", "half"):
        r = subprocess.run([sys.executable, TOOL, "fit", str(path), "-o", str(tmp_path / "x.tune"), "--max-features", bad],
                           capture_output=True, text=True)
        assert r.returncode != 0 and "a share of the inputs" in r.stderr, r.stderr


def test_bench_csv_medians_and_reps(tmp_path):
    """heldout reads tagg-bench's --csv: medians, min, max and every repetition per variant."""
    p = tmp_path / "b.csv"
    p.write_text("kernel,ranks,files,variant,rep,status,bytes,write_s,write_MiBs,read_s,read_MiBs,read_cache\n"
                 "hacc,2,shared,tuned,1,ok,100,0.1,10.0,0.05,20.0,fadvise\n"
                 "hacc,2,shared,tuned,2,ok,100,0.1,30.0,0.05,40.0,fadvise\n"
                 "hacc,2,shared,tuned,median,ok,100,,20.0,,30.0,fadvise\n"
                 "hacc,2,shared,tuned,min,ok,100,,10.0,,20.0,fadvise\n"
                 "hacc,2,shared,tuned,max,ok,100,,30.0,,40.0,fadvise\n"
                 "hacc,2,shared,bad,-,failed: oops,100,,,,,fadvise\n")
    b = tt.bench_csv(str(p))
    assert b["tuned"]["write"] == [20.0, 10.0, 30.0, [10.0, 30.0]]
    assert b["tuned"]["read"] == [30.0, 20.0, 40.0, [20.0, 40.0]]
    assert b["bad"]["write"][0] is None


def test_ratio_interval_is_the_noise_of_a_ratio_of_medians():
    """heldout's 95 % interval of median(a) / median(b): it holds the ratio of the
    medians, is a point for identical repetitions, scales with a, widens with the
    spread, and pairs the repetitions (a load change that hit both cancels)."""
    rnd = random.Random(3)
    b = [rnd.uniform(800, 1200) for _ in range(41)]
    lo, hi = tt.ratio_interval(b, b)
    assert lo == hi == 1.0
    half = [x / 2 for x in b]
    lo, hi = tt.ratio_interval(half, b)
    assert abs(lo - 0.5) < 1e-12 and abs(hi - 0.5) < 1e-12   # paired: the same draw of both
    a = [rnd.uniform(800, 1200) for _ in range(41)]
    lo, hi = tt.ratio_interval(a, b)
    r = statistics.median(a) / statistics.median(b)
    assert lo <= r <= hi and lo < 1.0 < hi and hi - lo < 0.3, (lo, r, hi)
    wide = [rnd.uniform(400, 1600) for _ in range(41)]
    wlo, whi = tt.ratio_interval(wide, b)
    assert whi - wlo > hi - lo, ((wlo, whi), (lo, hi))
    # a drift that hits both alike: unpaired, the ratio would spread over the drift; paired it stays 0.9
    drift = [100.0 * (1 + i) for i in range(41)]
    lo, hi = tt.ratio_interval([0.9 * x for x in drift], drift)
    assert abs(lo - 0.9) < 1e-12 and abs(hi - 0.9) < 1e-12
    lo, hi = tt.ratio_interval([0.9 * x for x in drift], drift[:40])   # unequal counts: each on its own
    assert hi - lo > 0.2, (lo, hi)
    assert tt.ratio_interval([], b) == (None, None)


def test_rel_center_minimises_relative_error():
    """The center fitted per pattern x settings is the value with the smallest
    sum of |c - t| / t over the repetitions (checked against every candidate),
    and with one stall in the repetitions it stays with the bulk, below the median."""
    rnd = random.Random(5)
    for _ in range(200):
        ts = [rnd.lognormvariate(-5, 1.0) for _ in range(rnd.randint(1, 9))]
        c = tt.rel_center(ts)
        assert c in ts
        cost = lambda v: sum(abs(v - t) / t for t in ts)
        assert cost(c) <= min(cost(t) for t in ts) * (1 + 1e-12)
        assert cost(c) <= min(cost(min(ts) + k * (max(ts) - min(ts)) / 50) for k in range(51)) * (1 + 1e-12)
    ts = [0.010, 0.011, 0.012, 0.5, 0.6]  # two stalls of 50x: the median is 0.012
    assert tt.rel_center(ts) == 0.011


def test_call_errors_judge_each_call_by_its_medians():
    """call_errors (heldout's per call figure and the tables' `call err`): one
    value per call (kernel, pattern and settings), the median of its
    predictions against the median of its times; calls of another kernel or
    setting are apart."""
    base = vocab()
    rows = [dict(base, t_total=t) for t in (1.0, 2.0, 9.0)]  # median 2
    pred = [2.0, 2.0, 50.0]  # median 2: exact, whatever the stall
    rows += [dict(base, direct=1, aggregators=0, t_total=t) for t in (1.0, 1.0)]
    pred += [2.0, 3.0]  # median 2.5 against 1
    rows += [dict(base, t_total=4.0, _kernel="other")]
    pred += [3.0]  # 1/4
    assert tt.call_errors(rows, pred) == [0.0, 1.5, 0.25]
    counts = []  # heldout's weighted per call figure: each call's repetitions, in the same order
    assert tt.call_errors(rows, pred, counts) == [0.0, 1.5, 0.25] and counts == [3, 2, 1]
    assert tt.call_errors([], []) == []


def test_phase_errors_sum_a_files_calls():
    """phase_errors (heldout's per phase figure): a repetition's calls of one
    file and direction are summed, measured and predicted, and the median of
    the sums is judged per (kernel, file system, op, setting); a call that is
    off alone counts in its phase's sum, not as a call of its own; records
    without explore's runs are left out."""
    base = vocab(_kernel="k", _variant="default")
    rows, pred = [], []
    for rep, (a, b) in enumerate([(1.0, 3.0), (2.0, 2.0), (1.0, 9.0)]):  # sums 4, 4, 10: median 4
        for t, p, size in ((a, 3.5, 1 << 20), (b, 0.5, 2 << 20)):  # predicted sums 4: each call off, the phase not
            rows.append(dict(base, t_total=t, bytes_per_rank=size, _bench=("f", 1, rep, "default")))
            pred.append(p)
    rows.append(dict(base, is_read=1, t_total=2.0, _bench=("f", 1, 0, "default")))  # the read of rep 0: its own phase
    pred.append(3.0)
    rows.append(dict(base, t_total=1.0, _variant="direct", direct=1, _bench=("f", 1, 0, "direct")))
    pred.append(1.25)
    rows.append(dict(base, t_total=5.0, _variant=None, _bench=None))  # no run: left out
    pred.append(50.0)
    got = tt.phase_errors(rows, pred)
    assert got == {("k", 1.0, 0.0, "default"): 0.0, ("k", 1.0, 1.0, "default"): 0.5, ("k", 1.0, 0.0, "direct"): 0.25}
    assert tt.call_errors(rows[:6], pred[:6]) == [2.5, pytest.approx(5 / 6)]  # per call: medians 1 and 3
    assert tt.phase_errors([], []) == {}


def test_place_errors_follow_a_call_through_its_repetitions():
    """place_errors (heldout's per call by place): the i-th call of a file's
    write or read under one setting is one call over the repetitions, whatever
    state each repetition recorded; two calls alike in every input stay two."""
    base = vocab(_kernel="k", _variant="default", is_read=1)
    rows, pred = [], []
    for rep in range(3):
        bench = ("f", 1, rep, "default")
        # the first read: 1 ms, predicted 1.5 (resident differs by repetition: three groups by vocabulary)
        rows.append(dict(base, t_total=1.0, resident=(rep + 1) / 8, _bench=bench))
        pred.append(1.5)
        # the second and third: alike in every input, 2 and 4 ms, both predicted 3
        rows += [dict(base, t_total=2.0, _bench=bench), dict(base, t_total=4.0, _bench=bench)]
        pred += [3.0, 3.0]
        rows.append(dict(base, is_read=0, t_total=8.0, _bench=bench))  # the write of the file: its own first call
        pred.append(6.0)
    rows.append(dict(base, t_total=1.0, _bench=None))  # no run: left out
    pred.append(9.0)
    got = tt.place_errors(rows, pred)
    assert got == {("k", 1.0, 1.0, "default", 0): 0.5, ("k", 1.0, 1.0, "default", 1): 0.5,
                   ("k", 1.0, 1.0, "default", 2): 0.25, ("k", 1.0, 0.0, "default", 0): 0.25}
    # by vocabulary: the first read is three calls, the second and third one (median 3 of 2, 4)
    assert sorted(tt.call_errors(rows[:-1], pred[:-1])) == [0.0, 0.25, 0.5, 0.5, 0.5]
    assert tt.place_errors([], []) == {}


def test_training_rows_group_repetitions():
    base = vocab()
    rows = [dict(base, t_total=t) for t in (0.010, 0.011, 0.012, 0.5, 0.6)]
    rows.append(dict(base, direct=1, aggregators=0, t_total=0.02))
    rows.append(dict(base, t_total=3.0, _kernel="other"))
    tr = tt.training_rows(rows, "rel")
    by = {(r.get("_kernel"), r["direct"]): r for r in tr}
    assert len(tr) == 3
    assert by[(None, 0)]["t_total"] == 0.011 and by[(None, 0)]["_n"] == 5
    assert by[(None, 1)]["_n"] == 1 and by[("other", 0)]["t_total"] == 3.0
    assert {r["t_total"] for r in tt.training_rows(rows, "median")} == {0.012, 0.02, 3.0}
    assert len(tt.training_rows(rows, "none")) == len(rows)


def test_pattern_key_holds_out_whole_kernels():
    """The whole-pattern CV never tests a call whose write/read or file-system
    twin is in training: the unit is the kernel, else the shape."""
    base = vocab()
    assert tt.pattern_key(dict(base, fs_kind=3, is_read=1)) == tt.pattern_key(base)
    assert tt.pattern_key(dict(base, bytes_per_rank=4096)) != tt.pattern_key(base)
    assert tt.pattern_key(dict(base, _kernel="s3d-32")) == tt.pattern_key(dict(base, bytes_per_rank=7, _kernel="s3d-32"))


def machine_rows(sizes, reps=5, seed=4):
    """A bandwidth-bound machine: t = B / (300 MB/s direct, 600 MB/s aggregated)
    with a stall (x20) in one repetition of five."""
    rnd = random.Random(seed)
    rows = []
    for bpr in sizes:
        for direct in (0, 1):
            for rep in range(reps):
                t = 2 * bpr / (300e6 if direct else 600e6) * math.exp(rnd.gauss(0, 0.03)) * (20 if rep == 2 else 1)
                rows.append(vocab(bytes_per_rank=bpr, direct=direct, aggregators=0 if direct else 1,
                                  t_total=t, _kernel="k%d" % bpr, _stall=rep == 2))
    return rows


@pytest.mark.parametrize("kind", ["decision_tree", "random_forest", "gradient_boosting"])
def test_per_byte_target_carries_to_unseen_sizes(kind):
    """A size between the trained ones: ln(seconds) trees predict the time of a
    trained size (off by up to 8x), ln(seconds per byte) trees the right time."""
    train = machine_rows([1 << 20, 64 << 20])
    test = [r for r in machine_rows([8 << 20]) if not r["_stall"]]
    inputs = ["bytes_per_rank", "direct", "aggregators"]
    errs = {}
    for target in ("seconds", "per_byte"):
        args = argparse.Namespace(center="rel", target=target, seed=1, trees=20)
        est, _ = tt.fit_one(kind, train, inputs, args)
        pred = tt.seconds_of(est.predict(tt.features(test, inputs)), test, target)
        true = np.array([r["t_total"] for r in test])
        errs[target] = float(np.mean(np.abs(pred - true) / true))
    assert errs["per_byte"] < 0.1 and errs["seconds"] > 0.5, errs


def test_rel_center_beats_every_record_fit_on_stalls():
    """Fitted on every record (ln t, squared loss) a model sits above the bulk of
    the calls (the stalls pull the mean of ln t up); on the relative-error center
    of the repetitions, it predicts the bulk."""
    rows = machine_rows([1 << 20, 8 << 20, 64 << 20], reps=5)
    inputs = ["bytes_per_rank", "direct", "aggregators"]
    true = np.array([r["t_total"] for r in rows])
    errs = {}
    for center in ("none", "rel"):
        args = argparse.Namespace(center=center, target="per_byte", seed=1, trees=20)
        est, _ = tt.fit_one("decision_tree", rows, inputs, args)
        pred = tt.seconds_of(est.predict(tt.features(rows, inputs)), rows, "per_byte")
        errs[center] = float(np.median(np.abs(pred - true) / true))
    assert errs["rel"] < 0.05 and errs["none"] > 0.5, errs


def test_cross_validation_fits_on_training_folds_only(monkeypatch):
    """No fold's model sees a test row, not even inside a group's center."""
    rows = machine_rows([1 << 20, 4 << 20, 16 << 20, 64 << 20], reps=3)
    for i, r in enumerate(rows):
        r["_id"] = i
    seen = []
    real = tt.fit_one

    def spy(kind, tr, inputs, args):
        seen.append({r["_id"] for r in tr})
        return real(kind, tr, inputs, args)
    monkeypatch.setattr(tt, "fit_one", spy)
    args = argparse.Namespace(center="rel", target="per_byte", seed=1, trees=5, folds=4)
    lines = []
    for by_pattern in (False, True):
        seen.clear()
        tt.cross_validate(rows, ["bytes_per_rank", "direct"], ["decision_tree"], args, by_pattern, lines.append)
        assert len(seen) == 4
        # each row is left out of exactly one fold's training
        for r in rows:
            assert sum(r["_id"] not in s for s in seen) == 1
        if by_pattern:  # whole kernels: a kernel is all in or all out of a fold
            for s in seen:
                for k in {r["_kernel"] for r in rows}:
                    ids = {r["_id"] for r in rows if r["_kernel"] == k}
                    assert ids <= s or not ids & s
    assert any(l.startswith("noise floor") for l in lines), lines
    assert any("whole kernels held out (4 kernels)" in l for l in lines), lines


@pytest.mark.parametrize("by_pattern", [False, True])
def test_cross_validation_judges_places_and_phases_out_of_fold(monkeypatch, by_pattern):
    """The tables' `place err` and `phase err`: place_errors and phase_errors of
    the out-of-fold predictions, each record predicted by the model of the one
    fold that held it out (a shuffled split spreads a phase's repetitions over
    the folds; they are judged together); median rows have no such columns."""
    rows = machine_rows([1 << 20, 4 << 20, 16 << 20, 64 << 20], reps=6)
    for i, r in enumerate(rows):  # one file per repetition and setting: a write of one call
        r.update(_id=i, _variant="direct" if r["direct"] else "a1", _bench=("f", r["_kernel"], i))
    folds, handed = [], {}
    real_fit = tt.fit_one

    def fit_spy(kind, tr, inputs, args):
        est, t = real_fit(kind, tr, inputs, args)
        folds.append(({r["_id"] for r in tr}, est))
        return est, t

    def spy(name):
        real = getattr(tt, name)

        def f(rs, pred):
            handed[name] = (list(rs), np.array(pred, dtype=float))
            return real(rs, pred)
        return f
    monkeypatch.setattr(tt, "fit_one", fit_spy)
    monkeypatch.setattr(tt, "place_errors", spy("place_errors"))
    monkeypatch.setattr(tt, "phase_errors", spy("phase_errors"))
    args = argparse.Namespace(center="rel", target="per_byte", seed=1, trees=5, folds=3)
    inputs = ["bytes_per_rank", "direct"]
    lines = []
    tt.cross_validate(rows, inputs, ["decision_tree"], args, by_pattern, lines.append)
    header = next(l for l in lines if l.startswith("model"))
    assert header.split()[9:13] == ["place", "err", "phase", "err"], header
    for name in ("place_errors", "phase_errors"):
        got_rows, pred = handed[name]
        assert [r["_id"] for r in got_rows] == list(range(len(rows)))
        for r, p in zip(got_rows, pred):
            est = [e for ids, e in folds if r["_id"] not in ids]
            assert len(est) == 1  # held out by one fold only
            want = tt.seconds_of(est[0].predict(tt.features([r], inputs)), [r], args.target)[0]
            assert p == want
    row = next(l for l in lines if l.startswith("decision_tree")).split()
    monkeypatch.undo()  # the real functions again, on what the table was given
    want_place = 100 * np.mean(list(tt.place_errors(*handed["place_errors"]).values()))
    want_phase = 100 * np.mean(list(tt.phase_errors(*handed["phase_errors"]).values()))
    assert row[5] == "%.1f%%" % want_place and row[6] == "%.1f%%" % want_phase, (row, want_place, want_phase)
    assert want_phase > 0
    lines.clear()
    tt.cross_validate(tt.median_rows(rows), inputs, ["decision_tree"], args, by_pattern, lines.append, phases=False)
    assert "phase err" not in next(l for l in lines if l.startswith("model"))


@pytest.mark.parametrize("target", ["seconds", "per_byte"])
def test_c_choice_is_the_fastest_prediction(target, tmp_path):
    """The engine's choice (tagg_tune_choose, via tagg-tune-eval --choose) on a
    fitted model is the combination of settings the records held (the model
    file's combos) with the smallest prediction, found here by brute force in
    Python; a combination no record had is never chosen, though the product of
    the candidate values holds it (direct calls carry the file's 4 MiB buffers,
    as tagg records them, and 16 MiB buffers only ever aggregated)."""
    import itertools
    rows = [dict(zip(tt.VOCAB + tt.COSTS + ["t_plan", "t_move", "t_fs", "t_total"], r)) for r in synthetic_rows(400)]
    for r in rows:
        r["buffers"] = random.Random(int(r["t_total"] * 1e9)).choice([2, 4])
        if r["direct"]:
            r["buffer_size"] = 4 << 20
    inputs = ["ranks", "bytes_per_rank", "pieces_per_rank", "direct", "aggregators", "buffer_size", "buffers"]
    args = argparse.Namespace(center="rel", target=target, seed=1, trees=20)
    _, text = tt.fit_export(rows, inputs, "random_forest", args)
    model = tmp_path / "m.tune"
    model.write_text(text)
    m = tt.load_model(str(model))
    assert set(m["cands"]) == {"direct", "aggregators", "buffer_size", "buffers"}
    names = list(m["cands"])
    seen = {tuple(float(r[k]) for k in names) for r in rows}
    assert {tuple(c) for c in m["combos"]} == seen
    product = set(itertools.product(*(m["cands"][k] for k in names)))
    assert seen < product and any(c[0] == 1 and c[2] != 4 << 20 for c in product - seen)
    probes = [[r[k] for k in tt.VOCAB] for r in rows[:60]]
    out = subprocess.run([EVAL, "--choose", str(model)], input="".join(" ".join(repr(float(x)) for x in p) + "\n" for p in probes),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(probes)
    phantoms = 0  # probes where a combination no record had is predicted faster than every one they had
    for p, line in zip(probes, out):
        best = math.inf
        for combo in m["combos"]:
            best = min(best, tt.predict_one(m, dict(zip(tt.VOCAB, p), **dict(zip(names, combo)))))
        anything = min(tt.predict_one(m, dict(zip(tt.VOCAB, p), **dict(zip(names, c)))) for c in product
                       if (c[0] >= 0.5) == (c[1] == 0))
        phantoms += anything < best
        w = line.split()
        assert float(w[0]) == pytest.approx(best, rel=1e-12), (p, line)
        chosen = dict(zip(tt.VOCAB, p), **{kv.split("=")[0]: float(kv.split("=")[1]) for kv in w[1:]})
        assert tt.predict_one(m, chosen) == pytest.approx(best, rel=1e-12)
        assert tuple(chosen[k] for k in names) in seen
    assert phantoms > 0  # the rule matters on these probes: every combination would have chosen otherwise


def test_choice_quality_scores_the_chosen_setting():
    """Per call pattern, the setting predicted fastest is taken and scored
    best / chosen by the measured times (their center over repetitions);
    patterns are kept apart by kernel, pattern and op."""
    rows = machine_rows([1 << 20, 4 << 20], reps=5)  # aggregated (direct=0) twice as fast, one stall each
    # predictions that rank correctly: 1.0 for both patterns, whatever the stalls
    right = [r["t_total"] if not r["_stall"] else r["t_total"] / 20 for r in rows]
    assert tt.choice_quality(rows, right) == pytest.approx([1.0, 1.0])
    # predicting direct faster: best / chosen = 300 / 600 MB/s for both patterns
    wrong = [1.0 if r["direct"] else 2.0 for r in rows]
    assert tt.choice_quality(rows, wrong) == pytest.approx([0.5, 0.5], rel=0.1)
    # a pattern with one setting only gives no ratio; reads are apart from writes
    one = [r for r in rows if r["direct"] == 0]
    assert tt.choice_quality(one, [1.0] * len(one)) == []
    both = rows + [dict(r, is_read=1) for r in rows]
    assert len(tt.choice_quality(both, [1.0 if r["direct"] else 2.0 for r in both])) == 4


def test_pick_kind_by_choice_then_error():
    """The exported kind is the best chooser; within 0.01 of it the one with the
    smaller error; without choice figures, the smallest error."""
    err = {"decision_tree": 0.30, "random_forest": 0.35, "gradient_boosting": 0.40}
    assert tt.pick_kind(err, {"decision_tree": 0.80, "random_forest": 0.95, "gradient_boosting": 0.90}) == "random_forest"
    assert tt.pick_kind(err, {"decision_tree": 0.80, "random_forest": 0.95, "gradient_boosting": 0.955}) == "random_forest"
    assert tt.pick_kind(err, {"decision_tree": 0.80, "random_forest": 0.93, "gradient_boosting": 0.95}) == "gradient_boosting"
    assert tt.pick_kind(err, {}) == "decision_tree"


def test_effective_repeat_python_is_c(tmp_path):
    """Formats 2 and 3: a re-read whose file accesses reach dio_min goes through
    O_DIRECT and is seen as no repeat (format 3: unless the read cache holds a
    direct one), by tagg-tune's features (what the trees are fitted on) and by
    the C evaluator (what the engine predicts), on the same rows; the rule's
    edges (access exactly dio_min, one byte less; the cache's limits) agree."""
    from sklearn.tree import DecisionTreeRegressor
    rnd = random.Random(11)
    rows = []
    for _ in range(300):
        pieces = rnd.choice([1, 2, 3, 16])
        bpr = rnd.choice([1 << 19, 1 << 20, 3 << 20, (1 << 20) * pieces, (1 << 20) * pieces - 1, (4 << 20) * pieces])
        direct = rnd.choice([0, 1])
        r = dict(zip(tt.VOCAB, [2, 1, bpr, 0, pieces, 1, 1, 3, 1, 0, 0, rnd.choice([0, 1]),
                                rnd.choice([0, 1 << 20]), rnd.choice([0, 0, 1]), rnd.choice([0, 0.5]),
                                rnd.choice([0, 0, 2, 7]), direct,
                                0 if direct else rnd.choice([1, 2, 4]),
                                rnd.choice([1 << 19, 1 << 20, 4 << 20]), 2, 0, 0, 0]))
        e = tt.effective(r)
        # cached re-reads are 10x faster, reads from memory (resident) 2x more,
        # reads of pages readahead still reads (in_flight) 1.5x slower, and
        # more so the more readahead reads after them (flight_ahead)
        r["t_total"] = (1e-3 * bpr / (1 << 20) * (0.1 if e["repeat"] else 1.0) * (0.5 if e["resident"] else 1.0)
                        * (1.5 if e["in_flight"] else 1.0) * (1 + 0.25 * e["flight_ahead"]))
        rows.append(r)
    # by hand on a few, format 2: 1 MiB runs direct on dio_min 1 MiB are not cached; 1 MiB - 1 are
    base = dict(rows[0], repeat=1, dio_min=1 << 20, direct=1, aggregators=0, pieces_per_rank=1, buffer_size=4 << 20)
    assert tt.effective(dict(base, bytes_per_rank=1 << 20), 2)["repeat"] == 0
    assert tt.effective(dict(base, bytes_per_rank=(1 << 20) - 1), 2)["repeat"] == 1
    assert tt.effective(dict(base, bytes_per_rank=1 << 20, dio_min=0), 2)["repeat"] == 1
    assert tt.effective(dict(base, bytes_per_rank=1 << 20), 1)["repeat"] == 1  # format 1: as recorded
    # format 3 (the default): the read cache holds direct runs under 4 MiB, 16 MiB a rank at most
    assert tt.effective(dict(base, bytes_per_rank=1 << 20))["repeat"] == 1
    assert tt.effective(dict(base, bytes_per_rank=(4 << 20) - 1))["repeat"] == 1
    assert tt.effective(dict(base, bytes_per_rank=4 << 20))["repeat"] == 0
    assert tt.effective(dict(base, bytes_per_rank=16 << 20, pieces_per_rank=16))["repeat"] == 1
    assert tt.effective(dict(base, bytes_per_rank=17 << 20, pieces_per_rank=17))["repeat"] == 0
    # format 4 (the default): such cached direct re-reads are resident; format 3 keeps the probe's 0
    assert tt.effective(dict(base, bytes_per_rank=1 << 20, resident=0))["resident"] == 1
    assert tt.effective(dict(base, bytes_per_rank=1 << 20, resident=0, in_flight=0.5))["in_flight"] == 0  # none in flight
    assert tt.effective(dict(base, bytes_per_rank=4 << 20, resident=0, in_flight=0.5))["in_flight"] == 0.5  # as probed
    assert tt.effective(dict(base, bytes_per_rank=1 << 20, resident=0, in_flight=0.5, flight_ahead=7))["flight_ahead"] == 0
    assert tt.effective(dict(base, bytes_per_rank=4 << 20, resident=0, in_flight=0.5, flight_ahead=7))["flight_ahead"] == 7
    assert tt.effective(dict(base, bytes_per_rank=1 << 20, resident=0), 3)["resident"] == 0
    assert tt.effective(dict(base, bytes_per_rank=(1 << 20) - 1, resident=0))["resident"] == 0  # buffered: as probed
    assert tt.effective(dict(base, bytes_per_rank=4 << 20, resident=0))["resident"] == 0      # from the storage
    assert tt.effective(dict(base, bytes_per_rank=1 << 20, resident=0, repeat=0))["resident"] == 0
    assert tt.effective(dict(base, bytes_per_rank=1 << 20, resident=0, direct=0, aggregators=4))["resident"] == 0
    agg = dict(base, direct=0, aggregators=2, bytes_per_rank=1 << 20)  # 2 MiB / 2 aggregators, all formats
    for v in (2, 3, 4):
        assert tt.effective(agg, v)["repeat"] == 0 and tt.effective(dict(agg, aggregators=4), v)["repeat"] == 1
        assert tt.effective(dict(agg, buffer_size=1 << 19), v)["repeat"] == 1  # rounds of one 512 KiB buffer
    inputs = ["bytes_per_rank", "repeat", "direct", "resident", "in_flight", "flight_ahead"]
    est = DecisionTreeRegressor(random_state=0).fit(tt.features(rows, inputs), tt.target_of(rows, "seconds"))
    model = tmp_path / "m.tune"
    model.write_text(tt.export("decision_tree", est, inputs, [], "seconds"))
    assert model.read_text().startswith("tagg-tune model 6\n")  # format 6: format 4's rule (and combos, domain)
    probe = [[r[k] for k in tt.VOCAB] for r in rows]
    pred_c, _ = c_eval(model, probe)
    pred_sk = np.exp(est.predict(tt.features(rows, inputs)))
    np.testing.assert_allclose(pred_c, pred_sk, rtol=1e-12)
    m = tt.load_model(str(model))
    for r, p in zip(rows[:80], pred_c[:80]):
        assert tt.predict_one(m, r) == pytest.approx(p, rel=1e-12)
    # the transform matters on these rows: without it the C side would differ
    raw = np.exp(est.predict(np.array([[float(r[k]) for k in inputs] for r in rows])))
    assert np.any(np.abs(raw - pred_c) > 1e-9 * pred_c)

    def as_format(v):
        """The fitted model's file, declared format v (its checksum redone)."""
        path = tmp_path / ("v%d.tune" % v)
        body = model.read_text().split("\nend ")[0].replace("tagg-tune model 6\n", "tagg-tune model %d\n" % v, 1) + "\n"
        path.write_text(body + "end %016x\n" % tt.fnv1a(body.encode("ascii")))
        return path

    # a format 1 file is evaluated on the records as they are, by both readers
    v1 = as_format(1)
    pred_v1, _ = c_eval(v1, probe)
    np.testing.assert_allclose(pred_v1, raw, rtol=1e-12)
    m1 = tt.load_model(str(v1))
    assert tt.predict_one(m1, rows[0]) == pytest.approx(pred_v1[0], rel=1e-12)
    # format 2: the rule without the read cache; format 3: the read cache keeps repeat, resident as
    # probed; each by both readers, and each differs from formats 4 to 6 on these rows; formats 4 and 5 are 6's
    assert np.array_equal(c_eval(as_format(4), probe)[0], pred_c)
    assert np.array_equal(c_eval(as_format(5), probe)[0], pred_c)
    for v in (2, 3):
        vf = as_format(v)
        pred_v, _ = c_eval(vf, probe)
        mv = tt.load_model(str(vf))
        for r, p in zip(rows, pred_v):
            assert tt.predict_one(mv, r) == pytest.approx(p, rel=1e-12)
        assert np.any(np.abs(pred_v - pred_c) > 1e-9 * pred_c), v


def test_domain_python_is_c(tmp_path):
    """Format 6's recorded domain: the classes and ranges tagg-tune writes from
    the records (domain_of), read back by both readers, and the same answer
    from tagg-tune's inside() and the library's tagg_tune_inside (via
    tagg-tune-eval --inside) on calls inside, at the edges of and outside every
    range; --domain none writes none (every call inside)."""
    from sklearn.tree import DecisionTreeRegressor
    rnd = random.Random(5)
    def rec(fs, rd, ranks, bpr, spread, pieces, contig):
        return dict(zip(tt.VOCAB, [ranks, 1, bpr, spread, pieces, contig, 1, fs, rd, 0, 0, 0, 0, 0, 0, 0,
                                   1, 0, 4 << 20, 2, 0, 0, 0]), t_total=1e-3)
    rows = []
    for _ in range(200):  # two file systems, both directions; even and uneven; one piece or several
        fs, rd = rnd.choice([1, 3]), rnd.choice([0, 1])
        if rnd.random() < 0.5:
            rows.append(rec(fs, rd, 2, rnd.choice([64 << 10, 1 << 20, 16 << 20]), 0, 1, 1))
        else:
            rows.append(rec(fs, rd, 2, rnd.choice([512 << 10, 4 << 20]), 0, rnd.choice([128, 512]), 1))
    rows.append(rec(1, 0, 2, 3 << 20, 0.7, 1, 1))  # one uneven class, one size
    dom = tt.domain_of(rows)
    assert ((1.0, 0.0, 2.0, 1.0, 1.0, 0.0, 0.0), 65536.0, 16777216.0, 1.0, 1.0) in dom
    assert ((1.0, 0.0, 2.0, 1.0, 1.0, 1.0, 0.0), 3145728.0, 3145728.0, 1.0, 1.0) in dom
    est = DecisionTreeRegressor(random_state=0).fit(tt.features(rows, ["bytes_per_rank"]), tt.target_of(rows, "seconds"))
    model = tmp_path / "d.tune"
    model.write_text(tt.export("decision_tree", est, ["bytes_per_rank"], [], "seconds", domain=dom))
    m = tt.load_model(str(model))
    assert m["domain"] == dom
    probes = [rec(1, 0, 2, b, 0, 1, c) for b in (32 << 10, 64 << 10, (64 << 10) + 1, 1 << 20, 16 << 20, (16 << 20) + 1)
              for c in (1, 0.9995, 0.998)]
    probes += [rec(3, 1, 2, 4 << 20, 0, p, 1) for p in (64, 128, 129, 512, 513)]
    probes += [rec(1, 0, 2, b, s, 1, 1) for b in (3 << 20, (3 << 20) + 1) for s in (0.7, 0.011, 0.01)]
    probes += [rec(1, 0, 4, 1 << 20, 0, 1, 1), rec(2, 0, 2, 1 << 20, 0, 1, 1)]  # other ranks, another file system
    py = [tt.inside(m, r) for r in probes]
    inp = "\n".join(" ".join(repr(float(r[k])) for k in tt.VOCAB) for r in probes) + "\n"
    out = subprocess.run([EVAL, "--inside", str(model)], input=inp, capture_output=True, text=True, check=True).stdout
    assert [line == "1" for line in out.split()] == py
    # contiguous (contiguity 1): the least and largest recorded inside, a byte beyond either outside;
    # contiguity 0.9995 counts as contiguous, 0.998 is a class with gaps, not recorded
    assert py[0:18:3] == [False, True, True, True, True, False]
    assert py[4] and not py[5]
    assert py.count(True) >= 10 and py.count(False) >= 10
    # no domain: every call inside, by both
    plain = tmp_path / "p.tune"
    plain.write_text(tt.export("decision_tree", est, ["bytes_per_rank"], [], "seconds"))
    assert "\ndomain " not in plain.read_text() and tt.load_model(str(plain))["domain"] == []
    out = subprocess.run([EVAL, "--inside", str(plain)], input=inp, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1"] * len(probes)


def test_warm_up_names_the_model_and_forces_aggregation():
    # a variant's warm-up makes the same engine resources through an aggregated
    # call and loads the same model (so the timed repetitions pay for neither),
    # records nothing, and leaves the settings the model may change to itself
    warm = tt.warm_config("tuning=/m/x.tune;record=/r.jsonl;buffer_size=1M;aggregators=2;throttle=1;aggregate=auto")
    assert warm.split(";") == ["tuning=/m/x.tune", "buffer_size=1M", "aggregate=always"], warm
    assert tt.warm_config("") == "aggregate=always"


def test_heldout_reads_as_the_sweep_read(tmp_path):
    # heldout measures reads the way the pattern's sweep did: the runs line's
    # read_cache (explore writes it since session 44), else the read_cache
    # column of the run's CSV (runs of older sweeps), else nothing known
    csv = tmp_path / "k.csv"
    csv.write_text("kernel,ranks,files,variant,rep,status,bytes,write_s,write_MiBs,read_s,read_MiBs,read_cache,position\n"
                   "hacc,2,shared,default,median,ok,1,1,1,1,1,,\n"
                   "hacc,2,shared,default,1,ok,1,1,1,1,1,drop,1\n")
    assert tt.read_cache_of({"read_cache": "none", "csv": str(csv)}) == "none"
    assert tt.read_cache_of({"csv": str(csv)}) == "drop"
    assert tt.read_cache_of({"csv": str(tmp_path / "absent.csv")}) is None
    assert tt.read_cache_of({}) is None


def test_margin_is_chosen_by_the_engines_choices():
    # two call patterns, three settings each; the cost model ("default"
    # variant) chose setting A.  Pattern 1: the model rightly predicts B 5 %
    # faster (B is 20 % faster); pattern 2: the model wrongly predicts C 20 %
    # faster (C is 2x slower).  The engine takes the model's choice only beyond
    # the margin: 0 takes both, 0.1 only pattern 2's wrong one, 0.3 neither
    def rec(pattern, settings, t, variant):
        r = {k: 0.0 for k in tt.VOCAB}
        r.update(bytes_per_rank=float(pattern), aggregators=float(settings), _kernel="k%d" % pattern,
                 _variant=variant)
        r[tt.TARGET] = t
        return r
    rows, pred = [], []
    truth = {1: {1: 1.0, 2: 0.8, 3: 1.5}, 2: {1: 1.0, 2: 1.1, 3: 2.0}}
    guess = {1: {1: 1.0, 2: 0.95, 3: 1.2}, 2: {1: 1.0, 2: 1.1, 3: 0.8}}
    for p in (1, 2):
        for s in (1, 2, 3):
            for variant in (("default", "a") if s == 1 else ("b",)):
                for _ in range(3):
                    rows.append(rec(p, s, truth[p][s], variant))
                    pred.append(guess[p][s])
    q = tt.engine_choice_quality(rows, pred, margins=[0.0, 0.1, 0.3])
    assert q[0.0] == [pytest.approx(1.0), pytest.approx(0.5)]        # B (best), C (2x slower than A)
    assert q[0.1] == [pytest.approx(0.8), pytest.approx(0.5)]        # A kept, C taken
    assert q[0.3] == [pytest.approx(0.8), pytest.approx(1.0)]        # A kept in both
    # without a "default" variant the cost model's choice is unknown: no pattern
    assert tt.engine_choice_quality([dict(r, _variant="b") for r in rows], pred, margins=[0.0]) == {0.0: []}
    # auto: the most patterns at 0.9 of the best, then the highest mean, then the larger margin
    args = argparse.Namespace(margin="auto")
    lines = []
    assert tt.margin_of(args, 0.2, {0.0: [1.0, 0.5], 0.1: [0.8, 0.5], 0.3: [0.8, 1.0]}, lines.append) == 0.3
    assert tt.margin_of(args, 0.2, {0.0: [1.0, 0.5], 0.1: [1.0, 0.95], 0.3: [0.8, 1.0]}, lines.append) == 0.1
    assert tt.margin_of(args, 0.2, {0.0: [1.0, 0.5], 0.1: [1.0, 0.5]}, lines.append) == 0.1
    assert "chosen by the cross-validated choices" in lines[0]
    # the median error where the records do not tell (and --margin as given)
    assert tt.margin_of(args, 0.2, None, lines.append) == 0.2 and "median error" in lines[-1]
    assert tt.margin_of(args, 0.2, {0.0: []}, lines.append) == 0.2
    assert tt.margin_of(argparse.Namespace(margin="0.05"), 0.2, {0.0: [1.0, 1.0]}, lines.append) == 0.05


def test_a_write_gets_its_share_of_its_files_deferred_time(tmp_path):
    # one explore run of two settings x two repetitions, each file written by
    # two write calls (1 and 3 bytes per rank) and read by one: tagg-bench's
    # write time of the file beyond its calls is shared by the write calls
    # in proportion to their bytes; reads keep their own time
    rec = tmp_path / "r.jsonl"
    lines = []
    for rep, order in ((1, ("direct", "default")), (2, ("default", "direct"))):  # as the CSV's positions say
        for variant in order:
            for b, is_read in ((1, 0), (3, 0), (4, 1)):
                r = {k: 0 for k in tt.VOCAB}
                r.update(tagg_record=5, op="write", file="f.h5", ranks=2, bytes_per_rank=b, is_read=is_read,
                         direct=int(variant == "direct"), t_plan=0, t_move=0, t_fs=0, t_total=0.01)
                r.update({k: 0.0 for k in tt.COSTS})
                lines.append(json.dumps(r))
    rec.write_text("\n".join(lines) + "\n")
    csv = tmp_path / "run.csv"
    head = "kernel,ranks,files,variant,rep,status,bytes,write_s,write_MiBs,read_s,read_MiBs,read_cache,position\n"
    rows_csv = ["k,2,shared,default,1,ok,8,0.10,1,0.1,1,drop,2", "k,2,shared,direct,1,ok,8,0.06,1,0.1,1,drop,1",
                "k,2,shared,default,2,ok,8,0.02,1,0.1,1,drop,1", "k,2,shared,direct,2,ok,8,0.01,1,0.1,1,drop,2",
                "k,2,shared,default,median,ok,8,0.06,1,0.1,1,,"]
    csv.write_text(head + "\n".join(rows_csv) + "\n")
    (tmp_path / "r.jsonl.runs").write_text(json.dumps({"kernel": "k", "records": [1, 12], "csv": str(csv)}) + "\n")
    rows = tt.attach_variants(tt.attach_kernels(tt.read_records([str(rec)]), [str(rec)]), [str(rec)])
    # repetition 1 ran direct first (position 1), repetition 2 default first
    assert [r["_variant"] for r in rows] == ["direct"] * 3 + ["default"] * 3 + ["default"] * 3 + ["direct"] * 3
    assert [r["direct"] for r in rows] == [1] * 3 + [0] * 6 + [1] * 3
    assert tt.add_deferred_writes(rows) == 4  # rep 2's files took no more than their calls: unchanged
    t = [r[tt.TARGET] for r in rows]
    # direct, rep 1: 0.06 - 0.02 = 0.04 shared 1:3
    assert t[0:3] == [pytest.approx(0.02), pytest.approx(0.04), 0.01]
    # default, rep 1: 0.10 - 0.02 = 0.08; default, rep 2: 0.02 - 0.02 = 0 (a share of nothing)
    assert t[3:6] == [pytest.approx(0.03), pytest.approx(0.07), 0.01]
    assert t[6:12] == [0.01] * 6
    assert rows[1]["_t_call"] == 0.01 and "_t_call" not in rows[2]
    # without a CSV the records keep their own times
    (tmp_path / "r.jsonl.runs").write_text(json.dumps({"kernel": "k", "records": [1, 12], "csv": "/nonexistent"}) + "\n")
    rows = tt.attach_variants(tt.attach_kernels(tt.read_records([str(rec)]), [str(rec)]), [str(rec)])
    assert tt.add_deferred_writes(rows) == 0 and all(r[tt.TARGET] == 0.01 for r in rows)


def run_check(k, close, lines):
    return subprocess.run([EVAL, "--check", str(k), str(close)], input="".join(l + "\n" for l in lines),
                          capture_output=True, text=True)


def replay_line(c, r):
    assert len(c) == len(r)
    return "%d %s %s" % (len(c), " ".join(map(repr, c)), " ".join(map(repr, r)))


def test_check_replay_runs_the_engines_rule():
    # tagg-tune-eval --check: the library's state machine (tune.h), call i taking
    # the i-th time of whichever candidate it runs; K = 3, close 10 %
    n = 34
    p = run_check(3, 10, [
        replay_line([1.0] * n, [2.0] * n),  # the choice ahead by far: kept after one round (3 + 3 calls)
        replay_line([2.0] * n, [1.0] * n),  # the rival ahead: every round (9 + 9), then the rival
        # session 61: a rival fast in its first calls only (calls 3-5), slow in its next (9-11): the
        # choice is ahead over 6 + 6 and kept there, where one round would have made the rival run
        replay_line([1.0] * n, [0.8] * 6 + [1.6] * (n - 6)),
        replay_line([1.0] * n, [0.99] * n),  # close every round: 3 rounds, then the medians (the rival)
        replay_line([1.0] * 5, [2.0] * 5),  # too few calls to settle
    ])
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("\n")[:5] == ["0 6", "1 18", "0 12", "1 18", "-1 5"], p.stdout
    # K = 1: rounds of one call; close 0: a choice ahead by any share is kept at once
    p = run_check(1, 0, [replay_line([1.0] * n, [1.01] * n), replay_line([1.01] * n, [1.0] * n)])
    assert p.returncode == 0 and p.stdout.split("\n")[:2] == ["0 2", "1 6"], p.stdout + p.stderr
    # bad input: a message and a failure, never a guess
    p = run_check(3, 10, ["3 1 2 3 4 5"])
    assert p.returncode == 1 and "a line needs N and 2N seconds" in p.stderr, p.stderr
    for k, close in ((0, 10), (17, 10), (3, -1), ("x", 10)):
        p = run_check(k, close, [])
        assert p.returncode == 2 and "--check K CLOSE" in p.stderr, (k, close, p.stderr)


def test_replay_reports_the_checks_outcomes(tmp_path):
    # an explore run of two settings x 40 repetitions (each file written and
    # read by one call): "a" reads in 1.0 s, "b" in 0.5 s in its first 8
    # repetitions and 1.2 s in the other 32 (its median: 1.2, below 90 % of
    # a's bandwidth). tagg-tune replay runs the check from each of the
    # 40 - 34 + 1 = 7 starts s of both ordered pairs: 14 replays; call i takes
    # repetition s + i + 1 of the setting it runs
    rec, csv = tmp_path / "r.jsonl", tmp_path / "run.csv"
    lines, rows_csv = [], []
    for rep in range(1, 41):
        for pos, variant in enumerate(("a", "b"), 1):
            t = 1.0 if variant == "a" else 0.5 if rep <= 8 else 1.2
            for op, secs in (("write", 0.01), ("read", t)):
                r = {k: 0 for k in tt.VOCAB}
                r.update(tagg_record=8, op=op, file="f.h5", ranks=2, bytes_per_rank=1, is_read=int(op == "read"),
                         t_plan=0, t_move=0, t_fs=0, t_total=secs)
                r.update({k: 0.0 for k in tt.COSTS})
                lines.append(json.dumps(r))
            rows_csv.append("k,2,shared,%s,%d,ok,8,0.1,1,0.1,1,drop,%d" % (variant, rep, pos))
    rec.write_text("\n".join(lines) + "\n")
    csv.write_text("kernel,ranks,files,variant,rep,status,bytes,write_s,write_MiBs,read_s,read_MiBs,read_cache,position\n"
                   + "\n".join(rows_csv) + "\n")
    (tmp_path / "r.jsonl.runs").write_text(json.dumps({"kernel": "k", "records": [1, len(lines)], "csv": str(csv)}) + "\n")
    env = dict(os.environ, TAGG_TUNE_EVAL=EVAL)
    p = subprocess.run([sys.executable, TOOL, "replay", str(rec), "--k", "3,1"], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert "14 replays (2 ordered pairs of settings 1.10..1.60 times apart" in p.stdout, p.stdout
    got = {l.split()[0]: l.split()[1:] for l in p.stdout.splitlines() if l.split() and l.split()[0].isdigit()}
    # K = 3. a the choice: b's round-1 calls (3-5) are fast from starts 0-3, so b is ahead and every round
    # runs; b's slow later calls keep a (18 calls from starts 0-2; start 3 settles at 12, b behind after 6);
    # from starts 4-6 a is ahead at once (6 calls). b the choice: its first calls are fast from every start,
    # so b is kept at once, 7 misses (6 calls each). 7 of 14 below 90 %, no overturn, 126 / 14 calls
    assert got["3"] == ["10%", "14", "50.00%", "0.00%", "9.0"], p.stdout
    # K = 1: a the choice, b's call 1 is fast from every start: b ahead, 3 rounds; its calls 3 and 5
    # keep it ahead from starts 0-4 (5 overturns, 5 misses), not from 5-6 (a kept), 6 calls each; b the
    # choice kept after 2 calls from every start (7 misses): 12 of 14, 5 overturns, 56 / 14 calls
    assert got["1"] == ["10%", "14", "85.71%", "35.71%", "4.0"], p.stdout
    # no pair in the band, no replay: a message and a failure
    p = subprocess.run([sys.executable, TOOL, "replay", str(rec), "--band", "2,3"], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 1 and "no pair of settings within --band" in p.stderr, p.stderr
