"""``latscope inject``: latency variation without recompiling (seed 004 §3).

``run`` starts any MPI command with liblatscope_inject.so preloaded and the LATSCOPE_INJECT_*
settings in its environment, and passes its exit status through.
``validate`` is the seed's §3.2 as a command: a ping-pong without and with injection, the added
delay compared with what the table asks for (medians, Kolmogorov-Smirnov distance, a plot).

Bad input: ``latscope inject: error: ...`` naming the value and what is allowed, exit 2.
``validate`` exits 0 when the achieved median is within tolerance, 1 when it is not."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from latscope import jsonio
from latscope.inject import (MAX_NOISE_SHARE, InjectError, check_seed, check_table, compare, pingpong_samples,
                             plot_validation)
# what the study (latscope.study.matrix) and the install test take from here, until they import
# latscope.inject: explicitly re-exported
from latscope.inject import ENV_KEYS as ENV_KEYS, InjectSettings as InjectSettings, rel_error_text
from latscope.inject import library_path as library_path, read_logs as read_logs
from latscope.jobs.job import JobStopped, run_job
from latscope.run import LaunchError, launch, mpi_flavor, mpiexec_path, timeout_seconds, user_command
from latscope.units import fmt_time, parse_duration

EXIT_USAGE = 2
PROG = "latscope inject"
# A command that already starts its ranks: run as given (its own -n), never wrapped again.
LAUNCHERS = {"mpiexec", "mpirun", "mpiexec.hydra", "mpiexec.gforker", "orterun", "prterun", "srun", "aprun",
             "jsrun", "flux", "ibrun"}


# ---------------------------------------------------------------- shared set-up


def _settings(args: argparse.Namespace, log_prefix: Path | None) -> InjectSettings:
    check_table(args.table)
    check_seed(args.seed)
    for flag, v in (("--calls", args.calls), ("--ranks", args.ranks)):
        if v is not None and (not v.strip() or any(c.isspace() for c in v)):
            raise InjectError(f"{flag} {v!r}: a comma-separated list without spaces, e.g. "
                              + ("p2p,coll,-barrier" if flag == "--calls" else "0,3-5"))
    if not args.lenient:   # --lenient: a bad value warns in the ranks, which then run uninjected
        _check_selection(args.calls, args.ranks, getattr(args, "np", None))
    return InjectSettings(Path(args.table), args.seed, args.calls, args.ranks, log_prefix, not args.lenient, args.coll)


def _check_selection(calls: str | None, ranks: str | None, np_: int | None) -> None:
    """--calls and --ranks judged here, by the injector's own parsers (liblatscope_inject.so, through
    ctypes), before any rank starts: a bad value is one line and exit 2, not an MPI_Abort in every
    rank. --ranks is checked against the job size where latscope knows it."""
    if calls is None and ranks is None:
        return
    import ctypes
    try:
        lib = ctypes.CDLL(str(library_path()), mode=ctypes.RTLD_LOCAL)
    except OSError:
        return   # the ranks will judge them (strict mode aborts)
    err = ctypes.create_string_buffer(1600)
    if calls is not None:
        enabled = ctypes.create_string_buffer(4096)
        if lib.lts_inject_calls_parse(calls.encode(), enabled, err, ctypes.c_size_t(len(err))) != 0:
            msg = err.value.decode(errors="replace").replace("LATSCOPE_INJECT_CALLS: ", "")
            raise InjectError(f"--calls {calls!r}: {msg}")
    if ranks is not None:
        n = np_ if np_ else 1 << 20
        sel = ctypes.create_string_buffer(n)
        if lib.lts_inject_ranks_parse(ranks.encode(), ctypes.c_int(n), sel, err, ctypes.c_size_t(len(err))) != 0:
            msg = err.value.decode(errors="replace").replace("LATSCOPE_INJECT_RANKS: ", "")
            raise InjectError(f"--ranks {ranks!r}: {msg}")


# ---------------------------------------------------------------- parser

def _common(p: argparse.ArgumentParser, seed_default: str | None) -> None:
    p.add_argument("--table", required=True, help="delay table (docs/delay-table.md; latscope tables make ...)")
    if seed_default is None:
        p.add_argument("--seed", required=True, help="an integer, or a file holding one (paper §3.1)")
    else:
        p.add_argument("--seed", default=seed_default, help=f"an integer, or a file holding one (default {seed_default})")
    p.add_argument("--lenient", action="store_true",
                   help="on a bad setting, warn and run uninjected (default: abort, LATSCOPE_INJECT_STRICT=1)")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser("inject", help="run an MPI command under the latency injector; validate it",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="icmd", required=True)

    r = sub.add_parser("run", help="run a command with liblatscope_inject.so preloaded",
                       description="latscope inject run --table T --seed S [options] -- COMMAND... "
                                   "A COMMAND that starts with mpiexec/mpirun/srun runs as given; otherwise --np N "
                                   "(or --launcher) starts it under mpiexec, and without either it runs as one "
                                   "process (MPI singleton).")
    _common(r, None)
    r.add_argument("--calls", help="which calls are delayed: p2p, coll, all, call names, -exclusions "
                                   "(e.g. p2p,coll,-barrier; default all)")
    r.add_argument("--ranks", help="only these ranks inject, e.g. 0,3-5 (default all)")
    r.add_argument("--coll", choices=("calls", "messages"), default="calls",
                   help="collectives delayed once per call (default), or run as latscope's point-to-point "
                        "algorithms with every message delayed (docs/delay-table.md)")
    r.add_argument("--log", metavar="DIR", help="each rank writes DIR/inject.<rank>.json at MPI_Finalize "
                                                "(count, requested and achieved delay); a summary is printed")
    r.add_argument("--np", type=int, help="start COMMAND under mpiexec -n NP")
    r.add_argument("--launcher", help="your own launcher line for COMMAND, e.g. 'srun -N 4 -n 64'")
    r.add_argument("--timeout", type=timeout_seconds, help="end the command after this many seconds (exit 124)")
    r.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")

    v = sub.add_parser("validate", help="seed 004 §3.2: ping-pong with and without injection against the table",
                       description=VALIDATE_DOC, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(v, "1")
    v.add_argument("--np", type=int, default=2, help="ranks (>= 2; the ping-pong runs between 0 and 1; default 2)")
    v.add_argument("--size", default="8", help="message size in bytes, e.g. 8 or 1K (default 8)")
    v.add_argument("--reps", type=int, default=4000, help="ping-pongs per run (default 4000)")
    v.add_argument("--tolerance", type=float, default=0.02,
                   help="allowed relative error of the added median (default 0.02)")
    v.add_argument("--abs-tolerance", default="50ns",
                   help="...or this absolute error, whichever is larger (default 50ns: timer and noise floor)")
    v.add_argument("--plot", help="write requested vs achieved (PNG)")
    v.add_argument("--json", help="write the verdict and figures (format latscope.inject-validate/1)")
    v.add_argument("--timeout", type=float, default=300, help="per run, seconds (default 300)")
    return p


# ---------------------------------------------------------------- run

def _is_launcher(cmd: list[str]) -> bool:
    return bool(cmd) and Path(cmd[0]).name in LAUNCHERS


def _run(args: argparse.Namespace) -> int:
    try:
        cmd = user_command(args.command, "latscope inject run --table T --seed S -- COMMAND [ARGS...]", args.np)
    except ValueError as e:
        raise InjectError(str(e)) from None
    if _is_launcher(cmd) and (args.np is not None or args.launcher):
        raise InjectError(f"{cmd[0]} already starts the ranks: drop --np/--launcher, or give the program alone")
    log_prefix = None
    if args.log:
        d = Path(args.log)
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InjectError(f"--log {args.log!r}: cannot create the directory ({e.strerror})") from None
        log_prefix = d / "inject"
        for old in d.glob("inject.*.json"):
            old.unlink()
    s = _settings(args, log_prefix)
    base = dict(os.environ)
    prefix: list[str] = []
    if not _is_launcher(cmd) and (args.np is not None or args.launcher):
        ln = launch(args.np, args.launcher)
        for w in ln.warnings:
            print(f"latscope: warning: {w}", file=sys.stderr)
        base, prefix = ln.env, ln.prefix
        if not args.launcher and mpi_flavor(mpiexec_path()) == "openmpi":
            # Open MPI forwards only what -x names to ranks on other hosts
            prefix = prefix[:1] + [a for k in ("LD_PRELOAD",) + ENV_KEYS for a in ("-x", k)] + prefix[1:]
    env = s.env(base)
    try:
        cp = run_job(prefix + cmd, env, args.timeout)
    except FileNotFoundError:
        raise InjectError(f"command {cmd[0]!r}: not found") from None
    except JobStopped as e:
        e.detail = "; the command and its ranks were ended"
        raise
    if log_prefix is not None:
        logs = read_logs(log_prefix)
        for r in logs:
            n = r.get("count", 0)
            req = r.get("requested_ns_sum", 0) / n * 1e-9 if n else None
            ach = r.get("achieved_ns_sum", 0) / n * 1e-9 if n else None
            print(f"latscope inject: rank {r.get('rank')}: {n} delays, mean requested {fmt_time(req)}, "
                  f"achieved {fmt_time(ach)}", file=sys.stderr)
        if not logs:
            print(f"latscope inject: note: no logs in {args.log} (the command did not reach MPI_Finalize under "
                  f"injection)", file=sys.stderr)
    return cp.returncode


# ---------------------------------------------------------------- validate

VALIDATE_DOC = """\
Seed 004 §3.2 as a command. A ping-pong between ranks 0 and 1 (latscope-bench p2p --op
pingpong_pmpi,pingpong,... --raw, a fixed number of repetitions) runs in one launch under the
injector (only point-to-point sends delayed: LATSCOPE_INJECT_CALLS=p2p), in four alternating
blocks each: through the PMPI_ entry points, which the injector does not intercept (the
baseline), and through the MPI_ ones.
One launch, because two launches of the same ping-pong differ by up to a few hundred ns on a
shared machine (where the ranks and their shared memory land), which is several % of a 10 us
delay.
Each rank is bound to a core of its own where every rank has one: two ranks taking turns on one
core (another process holding the other) pay two context switches a round trip in the baseline
(4.9 us instead of 1.2 us half round trip) that the injected round trip partly hides in its wait.

What is compared. Each round trip holds two delayed sends (0 -> 1 and the reply 1 -> 0), each
with its own independent draw D from the table, so an injected sample is
    half_RTT_injected = half_RTT_base + (D1 + D2) / 2.
The added half-RTT therefore follows the distribution of the mean of two draws -- same mean as
the table, narrower, and for a skewed table a median between the table's median and mean. The
requested distribution is built by Monte Carlo: a base sample (resampled from the uninjected run)
plus the mean of two table draws. Reported:
  * median: achieved added = median(injected) - median(base); requested added =
    median(requested) - median(base).
  * the share of round trips the machine lengthened (preemption, a descheduled receiver): noise
    only ever adds time, so below the requested median the injected distribution function is
    (1 - c) times the requested one, F_inj(x) = (1 - c) F_req(x); c is the median of
    1 - F_inj(Q_req(q)) / q over q = 0.1, 0.2, 0.3, 0.4 (0 when the injected samples are not
    slower, or when that ratio is not the same at every q or c would be 50 % or more: a shift of
    the whole distribution is the injector's error, not noise, and is judged uncorrected). Those c of the samples sit above the median and move it up by about c/2 of the
    distribution -- nothing for a constant table, over 1 us for a wide one at c = 8 %, seen on a
    busy 2-core machine. The injector's own median is the injected samples' quantile
    (1 - c)/2: pass when it differs from the requested added median by at most --tolerance (2 %)
    of it, or --abs-tolerance, whichever is larger, and c <= 25 % (beyond, too noisy to judge:
    fail). Both medians are printed.
  * Kolmogorov-Smirnov distance between the injected samples and the requested distribution
    (scipy.stats.ks_2samp): reported, not gated (shared machines add tails of their own).
  * the table's own median and that of the pairwise mean, for reference.
Exit 0: within tolerance; 1: outside; 2: bad input."""


def _validate(args: argparse.Namespace) -> int:
    table = check_table(args.table)
    seed = check_seed(args.seed)
    if args.np < 2:
        raise InjectError(f"--np {args.np}: the ping-pong needs at least 2 ranks")
    if args.reps < 100:
        raise InjectError(f"--reps {args.reps}: at least 100 (the median and KS need samples)")
    if not 0 < args.tolerance < 1:
        raise InjectError(f"--tolerance {args.tolerance}: a fraction in (0, 1), e.g. 0.02")
    try:
        abs_tol = parse_duration(args.abs_tolerance)
    except ValueError as e:
        raise InjectError(f"--abs-tolerance: {e}") from None
    if abs_tol < 0:
        raise InjectError(f"--abs-tolerance {args.abs_tolerance!r}: must be >= 0")
    from latscope.units import parse_size
    try:
        size = int(parse_size(args.size))
    except ValueError as e:
        raise InjectError(f"--size: {e}") from None
    for flag, path in (("--plot", args.plot), ("--json", args.json)):
        if path and not Path(path).resolve().parent.is_dir():
            raise InjectError(f"--{flag.lstrip('-')} {path!r}: its directory does not exist")
    ln = launch(args.np, pin=True)
    for w in ln.warnings:
        print(f"latscope: warning: {w}", file=sys.stderr)
    s = InjectSettings(Path(args.table), args.seed, calls="p2p", strict=not args.lenient)
    clean = {k: v for k, v in ln.env.items() if k not in ENV_KEYS and k != "LD_PRELOAD"}
    with tempfile.TemporaryDirectory(prefix="latscope-validate-") as tmp:
        base, inj = pingpong_samples(args.np, size, args.reps, s.env(clean), ln.prefix, Path(tmp) / "pp.jsonl", args.timeout)
    v, req = compare(table, base, inj, args.tolerance, abs_tol, table=str(args.table), seed=seed, np=args.np,
                     size_bytes=size, reps=args.reps)
    print(f"table {args.table}: {table.distribution}, median {fmt_time(v.table_median_s)}, "
          f"mean {fmt_time(v.table_mean_s)}; median of the mean of two draws {fmt_time(v.pair_mean_median_s)}")
    print(f"ping-pong half-RTT median: base {fmt_time(v.base_median_s)}, injected {fmt_time(v.injected_median_s)}")
    print(f"added half-RTT median: requested {fmt_time(v.requested_added_median_s)}, achieved "
          f"{fmt_time(v.achieved_added_median_s)} (error {v.added_median_error_s * 1e9:+.1f} ns, "
          f"{rel_error_text(v.added_median_rel_error)})")
    print(f"round trips lengthened by the machine (preemption): {100 * v.noise_share:.1f} %, excluded; "
          f"median with them {fmt_time(v.raw_achieved_added_median_s)}")
    print(f"Kolmogorov-Smirnov distance, injected vs requested: {v.ks_distance:.4f} (p = {v.ks_pvalue:.3g})")
    tol_txt = f"{100 * args.tolerance:g} % or {fmt_time(abs_tol)}"
    # LATSCOPE_QUICK=1 caps latscope-bench at 30 repetitions: a median of 30 cannot judge 2 %, so the
    # run checks that everything works end to end and says that it passed no verdict
    v.quick = os.environ.get("LATSCOPE_QUICK") == "1"
    if v.quick:
        print(f"verdict: not judged: LATSCOPE_QUICK=1 capped the ping-pongs to a smoke test "
              f"({len(base)} and {len(inj)} samples); unset it for a verdict")
    elif v.noise_share > MAX_NOISE_SHARE:
        print(f"verdict: FAIL: the machine lengthened {100 * v.noise_share:.0f} % of the round trips "
              f"(more than {100 * MAX_NOISE_SHARE:.0f} %): too noisy to judge the injector; rerun on a quieter machine")
    else:
        print(f"verdict: PASS: added median within {tol_txt}" if v.passed else
              f"verdict: FAIL: added median off by more than {tol_txt}")
    if args.json:
        Path(args.json).write_text(jsonio.dumps(v.to_json(), indent=1) + "\n")
    if args.plot:
        plot_validation(v, base, inj, req, Path(args.plot))
        print(args.plot)
    return 0 if v.passed or v.quick else 1


# ---------------------------------------------------------------- entry

def main(args: argparse.Namespace) -> int:
    try:
        if args.icmd == "run":
            return _run(args)
        return _validate(args)
    except InjectError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except LaunchError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_USAGE if "does not exist" in str(e) else 3
