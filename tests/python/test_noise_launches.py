"""Noise awareness and launch-to-launch variation (docs/results-schema.md "Load and
oversubscription", "Several launches"): every record says how busy the machine was and whether
ranks were oversubscribed; `latscope bench --launches N` repeats a run in N launches and tells
when they disagree beyond their own CIs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import NPS, mpirun, write_barrier_results, write_params, write_records
from latscope import apps_twins, barrier_cli, cli, launches, report
from latscope.results import LOAD_MARGIN_CPUS, load, noisy, under_load
from latscope.run import build_dir, launch

FAST = ["--min-reps", "20", "--max-reps", "20", "--warmup", "2"]


def available_cpus() -> int:
    """What the ranks may run on: they inherit this process's affinity (mpiexec binds nothing here)."""
    return len(os.sched_getaffinity(0))


@pytest.mark.parametrize("np_", NPS)
def test_records_carry_load_and_oversubscription(np_, tmp_path):
    out = tmp_path / "b.jsonl"
    cp = mpirun(np_, ["coll", "--op", "barrier", "--alg", "native", "--sizes", "0", "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    res = load(out)
    m = res.meta
    assert m["schema"] == "latscope.results/3"
    # one host: every rank on it; CPUs as this machine says (any machine: compared, not assumed)
    assert m["ranks_per_host"] == np_
    assert m["cpus_online"] == os.cpu_count()
    assert m["cpus_available"] == available_cpus()
    assert m["oversubscribed"] is (np_ > available_cpus())
    ld = m["load"]
    assert set(ld) == {"host", "load1", "load5", "load15", "runnable", "tasks", "ranks", "cpus_available"}
    assert ld["host"] == m["hosts"][0] and ld["ranks"] == np_ and ld["cpus_available"] == available_cpus()
    assert ld["load1"] >= 0 and ld["load15"] >= 0 and 1 <= ld["runnable"] <= ld["tasks"]
    raw = [json.loads(x) for x in out.read_text().splitlines()[1:]]
    assert raw and all("load1" in r and "load_others" in r for r in raw)
    assert all(r["load1"] >= 0 and (r["load_others"] is None or r["load_others"] >= 0) for r in raw)
    df = res.points
    assert (df["oversubscribed"] == (np_ > available_cpus())).all()
    assert str(df["under_load"].dtype) == "boolean"
    # an oversubscribed point is noisy whatever the load
    assert noisy(df).all() if np_ > available_cpus() else True


def test_oversubscribed_at_4_not_at_2(tmp_path):
    """Oversubscription (docs/results-schema.md "Load and oversubscription"), judged against this
    machine's CPUs: 4 ranks on 2 cores are oversubscribed, 2 are not (on a machine with 4 or more
    CPUs neither is)."""
    verdict = {}
    for np_ in (2, 4):
        out = tmp_path / f"o{np_}.jsonl"
        cp = mpirun(np_, ["p2p", "--pairs", "0:1", "--sizes", "8", "-o", str(out)] + FAST)
        assert cp.returncode == 0, cp.stderr
        verdict[np_] = load(out).meta["oversubscribed"]
    assert verdict == {2: 2 > available_cpus(), 4: 4 > available_cpus()}
    if available_cpus() == 2:
        assert verdict == {2: False, 4: True}


def _cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of /proc/stat's aggregate line (idle and iowait not busy)."""
    f = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(f) - f[3] - f[4], sum(f)


def test_load_others_sees_other_processes_not_ours(tmp_path):
    """Busy processes beside the run: load_others counts them. Our own two busy-polling ranks are
    not: were they, the run without the burners would show the others' share plus ours (about
    1.3 of 2 CPUs on a quiet machine). Ours and the others' are measured from outside as well,
    over the whole run: our ranks' CPU time from getrusage(RUSAGE_CHILDREN) (mpiexec waits for
    them), the machine's from /proc/stat. A fixed bound (base < 1.0) failed beside a CPU-bound
    process plus other work, where the others alone took 1.0-1.16 CPUs."""
    import resource
    ncpu = available_cpus()

    def measure(name: str, nburn: int) -> tuple["pd.Series", float, float]:
        burners = [subprocess.Popen([sys.executable, "-c", "import time\nt = time.time() + 30\nwhile time.time() < t: pass"])
                   for _ in range(nburn)]
        try:
            out = tmp_path / name
            ru0, (b0, t0) = resource.getrusage(resource.RUSAGE_CHILDREN), _cpu_ticks()
            # points of ~0.6 s (budget-bound): 120 ticks of /proc/stat's 10 ms on 2 CPUs
            cp = mpirun(2, ["p2p", "--pairs", "0:1", "--sizes", "8,64,1K,4K,8K", "--min-reps", "100", "--max-reps",
                            "100000000", "--rel-err", "0.00001", "--budget", "0.6", "-o", str(out)])
            # before the burners are waited for: only the launch's processes are in the children's time
            ru1, (b1, t1) = resource.getrusage(resource.RUSAGE_CHILDREN), _cpu_ticks()
        finally:
            for b in burners:
                b.kill()
                b.wait()
        assert cp.returncode == 0, cp.stderr
        lo = load(out).points["load_others"].dropna()
        assert len(lo) == 5
        wall = (t1 - t0) / os.cpu_count()   # jiffies of wall time
        hz = os.sysconf("SC_CLK_TCK")
        ours = ((ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)) * hz / wall
        return lo, ours, (b1 - b0) / wall - ours

    base, ours, others = measure("base.jsonl", 0)
    # ours not in it: at most the others' share seen from outside plus half of ours (both over
    # the whole run, start-up included, where the points see only their own 0.6 s windows)
    assert ours >= 0.5, ours   # two busy-polling ranks
    assert base.median() < others + 0.5 * ours, (base.tolist(), others, ours)
    # two busy processes per CPU: CFS would give them 2 ncpu^2 / (2 ncpu + 2) CPUs. Measured here
    # 0.6-1.0 on a quiet machine, and about 0.66 beside a third busy process: the shares our
    # yielding ranks leave vary too much for a tighter bound, so the test asks that others are seen.
    busy, _, _ = measure("busy.jsonl", 2 * ncpu)
    assert busy.median() >= 0.3, (base.tolist(), busy.tolist())


def test_under_load_threshold():
    meta = {"load": {"cpus_available": 2, "ranks": 2}}
    assert under_load({"load_others": LOAD_MARGIN_CPUS - 0.01}, meta) is False
    assert under_load({"load_others": LOAD_MARGIN_CPUS + 0.01}, meta) is True
    spare = {"load": {"cpus_available": 8, "ranks": 2}}   # 6 CPUs free: others may use them
    assert under_load({"load_others": 6.4}, spare) is False
    assert under_load({"load_others": 6.6}, spare) is True
    assert under_load({"load_others": None}, meta) is None
    assert under_load({}, meta) is None
    assert under_load({"load_others": 0.6}) is True   # no metadata: no CPU taken as spare


def test_golden_v2_and_v1(golden):
    res = load(golden / "results_p2p_v2.jsonl")
    # 4 CPUs, 2 ranks: 2 spare; only the 1 KiB point's others (2.7 CPUs) exceed 2 + 0.5
    assert res.points["under_load"].tolist() == [False, False, True, False]
    assert not res.points["oversubscribed"].any()
    assert res.summary()["noise"].tolist() == ["-", "-", "under load", "-"]
    old = load(golden / "results_p2p_v1.jsonl")
    assert old.points["under_load"].isna().all() and old.points["oversubscribed"].isna().all()
    assert not noisy(old.points).any()


# ---- several launches ---------------------------------------------------------------------------

def _launch_file(path: Path, medians_us: list[list[float]], half_us: float) -> Path:
    """A file as `--launches N` writes it: per launch a metadata record, then one point per size."""
    recs = []
    sizes = [8, 1024]
    for k, meds in enumerate(medians_us):
        recs.append({"type": "meta", "schema": "latscope.results/2", "bench": "p2p", "op": "pingpong", "ranks": 2,
                     "oversubscribed": False, "load": {"cpus_available": 2, "ranks": 2}, "launch": k,
                     "launches": len(medians_us)})
        for s, med in zip(sizes, meds):
            recs.append({"type": "point", "bench": "p2p", "op": "pingpong", "mode": "par", "group": [0, 1],
                         "round": 0, "size_bytes": s, "reply_bytes": s, "window": 64, "n": 1000,
                         "min_s": med * 0.9e-6, "mean_s": med * 1e-6, "median_s": med * 1e-6, "max_s": med * 2e-6, "p99_s": med * 1.5e-6,
                         "ci_of": "median", "ci_level": 0.95, "ci_lo_s": (med - half_us) * 1e-6,
                         "ci_hi_s": (med + half_us) * 1e-6, "ci_half_s": half_us * 1e-6, "rel_err": half_us / med,
                         "stop_reason": "converged", "load1": 0.5, "load_others": 0.1, "launch": k})
    return write_records(path, recs)


def test_launch_table_and_disagreement(tmp_path, capsys):
    # the bimodal 8 B ping-pong of this machine: 1.19 or 1.47 us per launch, each +-0.02 us
    bad = _launch_file(tmp_path / "bad.jsonl", [[1.19, 2.0], [1.47, 2.01], [1.19, 1.99]], 0.02)
    good = _launch_file(tmp_path / "good.jsonl", [[1.19, 2.0], [1.20, 2.01], [1.18, 1.99]], 0.03)
    res = load(bad)
    assert len(res.launches) == 3 and sorted(res.points["launch"].unique()) == [0, 1, 2]
    t = launches.launch_table(res).set_index("size_bytes")
    assert t.loc[8, "medians_s"] == pytest.approx([1.19e-6, 1.47e-6, 1.19e-6])
    assert t.loc[8, "min_s"] == pytest.approx(1.19e-6) and t.loc[8, "max_s"] == pytest.approx(1.47e-6)
    # t-interval on the launch medians: mean +- t(0.975, 2) sd / sqrt(3), t(0.975, 2) = 4.3027
    med = np.array([1.19, 1.47, 1.19]) * 1e-6
    half = 4.302652729749462 * med.std(ddof=1) / np.sqrt(3)
    assert t.loc[8, "across_ci_lo_s"] == pytest.approx(med.mean() - half, rel=1e-9)
    assert t.loc[8, "across_ci_hi_s"] == pytest.approx(med.mean() + half, rel=1e-9)
    assert bool(t.loc[8, "disagree"]) and t.loc[8, "p"] < 1e-6
    assert not bool(t.loc[1024, "disagree"])          # 2.00/2.01/1.99 +- 0.02: consistent
    assert not launches.launch_table(load(good))["disagree"].any()

    assert cli.main(["results", "summary", str(bad)]) == 0
    cap = capsys.readouterr()
    assert "across 3 launches" in cap.out and "DISAGREE" in cap.out
    assert "launches disagree beyond their own CIs at 1 of 2 points" in cap.err and "pingpong 8 B" in cap.err
    assert cli.main(["results", "summary", str(good)]) == 0
    cap = capsys.readouterr()
    assert "across 3 launches" in cap.out and "DISAGREE" not in cap.out and "disagree" not in cap.err


def test_report_shows_the_launches(tmp_path):
    bad = _launch_file(tmp_path / "bad.jsonl", [[1.19, 2.0], [1.47, 2.01], [1.19, 1.99]], 0.02)
    out = report.build([load(bad)], tmp_path / "r.html")
    text = out.read_text()
    assert "<h2>Launch-to-launch variation</h2>" in text
    sec = text.split("<h2>Launch-to-launch variation</h2>")[1].split("<h2>")[0]
    assert "could not be drawn" not in sec and "<img" in sec
    assert "<b>1 of 2</b>" in sec and "1.47 us" in sec.replace("µ", "u")


@pytest.mark.parametrize("bad", ["0", "-1", "1.5", "three"])
def test_bad_launches_exit_2(bad, capsys):
    assert cli.main(["bench", "p2p", "--launches", bad]) == 2
    err = capsys.readouterr().err
    assert f"--launches '{bad}'" in err and "positive integer" in err


def test_a_failing_launch_stops_the_set(tmp_path, capfd):
    """latscope-bench's own verdict (exit 2, the bad value named) ends the set; no empty file."""
    out = tmp_path / "f.jsonl"
    assert cli.main(["bench", "p2p", "--np", "2", "--launches", "2", "--sizes", "bogus", "-o", str(out)]) == 2
    err = capfd.readouterr().err   # latscope-bench's message comes from the child process
    assert "--sizes" in err and "bogus" in err and "launch 1 of 2 failed (exit 2)" in err
    assert not out.exists()


def test_launches_3_live(tmp_path):
    env = dict(launch(2).env)
    env.update({"LATSCOPE_QUICK": "1", "LATSCOPE_BUILD_DIR": str(build_dir())})
    out = tmp_path / "l.jsonl"
    exe = str(Path(sys.prefix) / "bin" / "latscope")
    cp = subprocess.run([exe, "bench", "p2p", "--np", "2", "--sizes", "8,1K", "--launches", "3", "-o", str(out)],
                        env=env, capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stderr
    assert "launch 3 of 3" in cp.stderr and "across 3 launches" in cp.stderr
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    metas = [r for r in recs if r["type"] == "meta"]
    assert [m["launch"] for m in metas] == [0, 1, 2] and all(m["launches"] == 3 for m in metas)
    res = load(out)
    assert len(res.points) == 6 and res.points.groupby("launch").size().tolist() == [2, 2, 2]
    t = launches.launch_table(res)
    assert len(t) == 2 and (t["launches"] == 3).all()
    assert (t["min_s"] <= t["mean_of_medians_s"]).all() and (t["mean_of_medians_s"] <= t["max_s"]).all()
    cp = subprocess.run([exe, "results", "summary", str(out)], env=env, capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0 and "across 3 launches" in cp.stdout and "Traceback" not in cp.stderr


# ---- comparisons flag noisy points ----------------------------------------------------------------

def _barrier_file(tmp_path: Path, name: str, loads: dict[str, float], oversubscribed: bool) -> Path:
    return write_barrier_results(tmp_path / name, 2, dict.fromkeys(loads, 1e-6),
                                 {"oversubscribed": oversubscribed, "load": {"cpus_available": 2, "ranks": 2}},
                                 {alg: {"load_others": lo} for alg, lo in loads.items()})


def test_barrier_compare_marks_noisy_points(tmp_path, capsys):
    params = write_params(tmp_path / "p.json")
    quiet = _barrier_file(tmp_path, "q.jsonl", {"dissemination": 0.05, "tree:k=4": 1.5}, False)
    over = _barrier_file(tmp_path, "o.jsonl", {"dissemination": 0.0}, True)
    assert cli.main(["barrier", "compare", "--params", str(params), str(quiet), str(over)]) == 0
    out = capsys.readouterr().out
    assert sum("* under load" in ln for ln in out.splitlines()) == 1
    assert sum("* oversubscribed" in ln for ln in out.splitlines()) == 1
    assert "over 1 modelled points" in out and "2 modelled points left out" in out
    assert cli.main(["barrier", "compare", "--params", str(params), str(quiet), str(over), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["noisy_points"] == 2
    clean = [p for p in doc["points"] if not p["noise"]]
    assert len(clean) == 1 and doc["mean_abs_rel_err"] == pytest.approx(abs(clean[0]["rel_err"]))


def test_apps_headline_leaves_out_points_under_load():
    table = pd.DataFrame({"rel_err": [0.1, 0.2, 0.9, 0.8], "oversubscribed": [False, False, False, True],
                          "under_load": [False, False, True, False]})
    assert apps_twins.median_abs_rel_err(table) == pytest.approx(0.15)
    assert apps_twins.median_abs_rel_err(table, include_oversubscribed=True) == pytest.approx(0.5)
