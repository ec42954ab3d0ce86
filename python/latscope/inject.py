"""The latency injector seen from Python (seed 004 §3): its settings as environment variables,
the checks it applies to a table and a seed, its per-rank logs, and the §3.2 validation (a
ping-pong without and with injection against the distribution the table asks for; the method:
inject_cli.VALIDATE_DOC). `latscope inject` (inject_cli) parses, calls and prints; the study
(latscope.study) starts runs with the same settings. numpy, scipy and matplotlib are imported
where samples are compared or drawn, so the CLI's parser is built without them."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from latscope.run import LaunchError, library, program

if TYPE_CHECKING:
    import numpy as np

    from latscope import tables as T


LIB_NAME = "liblatscope_inject.so"


ENV_KEYS = ("LATSCOPE_INJECT_TABLE", "LATSCOPE_INJECT_SEED", "LATSCOPE_INJECT_CALLS", "LATSCOPE_INJECT_RANKS",
            "LATSCOPE_INJECT_LOG", "LATSCOPE_INJECT_STRICT", "LATSCOPE_INJECT_COLL")


class InjectError(ValueError):
    """Bad input to ``latscope inject`` (the message names the value and what is allowed)."""


def library_path() -> Path:
    """The injector beside the programs (latscope.run.build_dir: the build tree or the installed package)."""
    return library(LIB_NAME)


def check_table(path: str) -> T.DelayTable:
    """Parse the table up front with the same rules as the injector (docs/delay-table.md)."""
    from latscope import tables as T
    p = Path(path)
    if not p.is_file():
        raise InjectError(f"--table {path!r}: no such file (a delay table: latscope tables make ...)")
    try:
        return T.read_table(p)
    except T.TableError as e:
        raise InjectError(f"--table {path!r}: {e}") from None
    except OSError as e:
        raise InjectError(f"--table {path!r}: cannot be read ({e.strerror})") from None


def check_seed(text: str) -> int:
    """The injector's seed: a non-negative integer below 2^64, or a file holding one (paper §3.1)."""
    t = text.strip()
    if re.fullmatch(r"\d+", t):
        v = int(t)
    else:
        p = Path(text)
        if not p.is_file():
            raise InjectError(f"--seed {text!r}: neither a non-negative integer nor a seed file")
        body = p.read_text(errors="replace").strip()
        if not re.fullmatch(r"\d+", body):
            raise InjectError(f"--seed {text!r}: the seed file must hold one non-negative integer")
        v = int(body)
    if v >= 1 << 64:
        raise InjectError(f"--seed {text!r}: must be below 2^64")
    return v


@dataclass
class InjectSettings:
    """What the injector is told, as environment variables (docs/delay-table.md, README)."""

    table: Path
    seed: str
    calls: str | None = None
    ranks: str | None = None
    log_prefix: Path | None = None
    strict: bool = True
    coll: str = "calls"   # per collective call, or per message of latscope's own algorithm

    def env(self, base: dict[str, str] | None = None, preload: Path | None = None) -> dict[str, str]:
        env = {k: v for k, v in (base if base is not None else os.environ).items() if k not in ENV_KEYS}
        lib = str(preload or library_path())
        old = env.get("LD_PRELOAD", "")
        env["LD_PRELOAD"] = lib if not old else f"{lib}:{old}"
        env["LATSCOPE_INJECT_TABLE"] = str(self.table.resolve())
        seed_path = Path(self.seed)
        env["LATSCOPE_INJECT_SEED"] = str(seed_path.resolve()) if not self.seed.strip().isdigit() else self.seed.strip()
        if self.calls is not None:
            env["LATSCOPE_INJECT_CALLS"] = self.calls
        if self.ranks is not None:
            env["LATSCOPE_INJECT_RANKS"] = self.ranks
        env["LATSCOPE_INJECT_COLL"] = self.coll
        if self.log_prefix is not None:
            env["LATSCOPE_INJECT_LOG"] = str(self.log_prefix.resolve())
        # in `inject run` the user asked for injection: a bad setting aborts instead of running uninjected
        env["LATSCOPE_INJECT_STRICT"] = "1" if self.strict else "0"
        return env


def read_logs(prefix: Path) -> list[dict[str, Any]]:
    """The per-rank logs written at MPI_Finalize (<prefix>.<rank>.json), in rank order."""
    recs = []
    for f in prefix.parent.glob(prefix.name + ".*.json"):
        try:
            recs.append(json.loads(f.read_text()))
        except (OSError, json.JSONDecodeError):
            continue
    return sorted(recs, key=lambda r: r.get("rank", 0))


MC_DRAWS = 1 << 20   # Monte Carlo size of the requested distribution (median to ~0.1 %)


@dataclass
class Validation:
    """The verdict of `latscope inject validate` (all times in seconds; achieved_added_median_s is
    the noise-corrected median, raw_achieved_added_median_s the plain one; VALIDATE_DOC)."""

    table: str
    seed: int
    np: int
    size_bytes: int
    reps: int
    base_median_s: float
    injected_median_s: float
    table_median_s: float
    table_mean_s: float
    pair_mean_median_s: float
    requested_added_median_s: float
    achieved_added_median_s: float
    added_median_error_s: float
    added_median_rel_error: float
    noise_share: float
    raw_achieved_added_median_s: float
    tolerance: float
    abs_tolerance_s: float
    ks_distance: float
    ks_pvalue: float
    passed: bool
    quick: bool = False   # LATSCOPE_QUICK=1: a smoke test, too few samples for a verdict

    def to_json(self) -> dict[str, Any]:
        return {"format": "latscope.inject-validate/1", **asdict(self)}


def requested_samples(table: T.DelayTable, base_s: np.ndarray, n: int = MC_DRAWS,
                      seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(pair means of two table draws, base + pair mean), n each, in seconds."""
    import numpy as np
    rng = np.random.default_rng(seed)
    d = table.delays_ns.astype(np.float64) * 1e-9
    pair = (d[rng.integers(0, d.size, n)] + d[rng.integers(0, d.size, n)]) / 2
    return pair, base_s[rng.integers(0, base_s.size, n)] + pair


MAX_NOISE_SHARE = 0.25


def noise_share(req: np.ndarray, inj: np.ndarray) -> float:
    """c in F_inj(x) = (1 - c) F_req(x) below the requested median: the share of injected samples
    that noise moved above it (noise only adds time). 0 when the injected samples are faster."""
    import numpy as np
    qs = np.array([0.1, 0.2, 0.3, 0.4])
    x = np.quantile(req, qs)
    ratio = np.searchsorted(np.sort(inj), x, side="right") / inj.size / qs
    # The signature of noise is a ratio the same at every q. A shift of the whole distribution
    # (an injector adding too much) lowers the ratio most in the low tail: then no correction,
    # and the raw median is judged. Allowance: 4 sd of the ratio at q = 0.1 and this n.
    # Half or more of the samples "lengthened" is a shift too (a constant table's samples all
    # move together).
    c = 1.0 - float(np.median(ratio))
    if float(np.ptp(ratio)) > 4 * np.sqrt(0.9 / (0.1 * inj.size)) + 0.02 or c >= 0.5:
        return 0.0
    return max(c, 0.0)


def compare(tbl: T.DelayTable, base_s: np.ndarray, inj_s: np.ndarray, tolerance: float,
            abs_tolerance_s: float, **meta: Any) -> tuple[Validation, np.ndarray]:
    import numpy as np
    from scipy import stats

    pair, req = requested_samples(tbl, base_s)
    b_med = float(np.median(base_s))
    req_added = float(np.median(req)) - b_med
    raw_added = float(np.median(inj_s)) - b_med
    c = noise_share(req, inj_s)
    ach_added = float(np.quantile(inj_s, 0.5 * (1 - c))) - b_med
    err = ach_added - req_added
    rel = err / req_added if req_added > 0 else float("nan")   # printed as "none (...)", JSON null
    ks = stats.ks_2samp(inj_s, req)
    passed = abs(err) <= max(tolerance * abs(req_added), abs_tolerance_s) and c <= MAX_NOISE_SHARE
    v = Validation(base_median_s=b_med, injected_median_s=float(np.median(inj_s)),
                   table_median_s=float(np.median(tbl.delays_ns)) * 1e-9, table_mean_s=tbl.mean_s(),
                   pair_mean_median_s=float(np.median(pair)), requested_added_median_s=req_added,
                   achieved_added_median_s=ach_added, added_median_error_s=err, added_median_rel_error=rel,
                   noise_share=c, raw_achieved_added_median_s=raw_added,
                   tolerance=tolerance, abs_tolerance_s=abs_tolerance_s, ks_distance=float(ks.statistic),
                   ks_pvalue=float(ks.pvalue), passed=bool(passed), **meta)
    return v, req


BLOCKS = 4   # baseline and injected blocks, alternating within the launch


def pingpong_samples(np_: int, size: int, reps: int, env: dict[str, str], prefix: list[str], out: Path,
              timeout: float) -> tuple[np.ndarray, np.ndarray]:
    """(baseline, tool) half-RTT samples in seconds, `reps` each, from one launch: the ping-pong
    through the PMPI_ entry points (which the injector does not intercept) and through the MPI_
    ones, in BLOCKS alternating blocks so that a slow drift of the machine falls on both alike."""
    import numpy as np
    per = -(-reps // BLOCKS)
    cmd = prefix + [str(program("latscope-bench")), "p2p", "--op", ",".join(["pingpong_pmpi,pingpong"] * BLOCKS),
                    "--pairs", "0:1", "--sizes", str(size), "--min-reps", str(per), "--max-reps", str(per),
                    "--budget", "0", "--raw", "-o", str(out)]
    cp = subprocess.run(cmd, env=env, timeout=timeout, capture_output=True, text=True)
    if cp.returncode != 0:
        raise LaunchError(f"the ping-pong failed (exit {cp.returncode}): {shlex.join(cmd)}\n{cp.stderr.strip()}")
    from latscope.results import load
    res = load(out)
    ops = list(res.points["op"])
    got: dict[str, list[np.ndarray]] = {"pingpong_pmpi": [], "pingpong": []}
    for i, op in enumerate(ops):
        if op not in got:
            raise LaunchError(f"the ping-pong wrote a point for {op!r}, expected pingpong_pmpi and pingpong: {out}")
        got[op].append(np.asarray(res.samples(i), dtype=np.float64))
    if any(len(v) != BLOCKS for v in got.values()):
        raise LaunchError(f"the ping-pong wrote {len(ops)} points, expected {2 * BLOCKS}: {out}")
    return np.concatenate(got["pingpong_pmpi"]), np.concatenate(got["pingpong"])


def plot_validation(v: Validation, base: np.ndarray, inj: np.ndarray, req: np.ndarray, out: Path) -> Path:
    """Left: CDFs of the added half-RTT, requested vs achieved. Right: quantile-quantile plot."""
    import numpy as np
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    b = v.base_median_s
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for x, label, style in (((req - b) * 1e6, "requested: base + (D1+D2)/2", "-"),
                            ((inj - b) * 1e6, "achieved: injected ping-pong", "--")):
        xs = np.sort(x)
        a1.plot(xs, np.arange(1, xs.size + 1) / xs.size, style, label=label)
    a1.axvline(v.requested_added_median_s * 1e6, color="k", lw=0.6)
    a1.set_xlabel("added half-RTT (us), relative to the base median")
    a1.set_ylabel("CDF")
    a1.legend(loc="lower right", fontsize=8)
    qs = np.linspace(0.01, 0.99, 99)
    rq, iq = np.quantile(req, qs) * 1e6, np.quantile(inj, qs) * 1e6
    a2.plot(rq, iq, ".", ms=4)
    lo, hi = min(rq.min(), iq.min()), max(rq.max(), iq.max())
    a2.plot([lo, hi], [lo, hi], "k-", lw=0.6)
    a2.set_xlabel("requested half-RTT quantile (us)")
    a2.set_ylabel("achieved half-RTT quantile (us)")
    fig.suptitle(f"{Path(v.table).name}: added median requested {v.requested_added_median_s * 1e6:.3f} us, "
                 f"achieved {v.achieved_added_median_s * 1e6:.3f} us ({rel_error_text(v.added_median_rel_error)}), "
                 f"KS {v.ks_distance:.3f}", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def rel_error_text(rel: float) -> str:
    """The relative error of the added median, or why there is none (no delay was requested)."""
    if rel != rel:
        return "relative error none (the table adds no delay at the median)"
    return f"{100 * rel:+.2f} %"
