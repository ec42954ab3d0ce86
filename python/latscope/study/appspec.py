"""How a study reads a run of any MPI program (docs/your-application.md): where its runtime is in
its output, and how the run is verified.

The runtime is the last match of a regular expression (Python `re`) over the run's output
(stdout and stderr together, then any `output_file` the program wrote), its first group (or the
group named `runtime`) a number in `runtime_unit`; or the launch's wall time. A preset names
the pattern of a common format. Verification: a pattern that must match, one that must not, the
exit status alone, or none (the run's verification is then "unverified"). A run whose exit
status is not 0 never counts: its runtime would be that of a partial run."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

UNITS: dict[str, float] = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
VERIFY_KINDS = ("exit", "none")
WALL = "wall"
LATSCOPE = "latscope"
NUMBER = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"


@dataclass(frozen=True)
class Preset:
    runtime: str | None          # pattern; None: the latscope mini-app line, or the wall time
    unit: str
    match: str | None            # verification: must match
    reject: str | None           # must not match
    output_file: str | None      # a file the program writes its report into (glob, in its directory)
    what: str
    label: str = ""              # the pattern's words, for messages


# One row per format. NPB 3.x: " Time in seconds =   0.02" and " Verification    =   SUCCESSFUL"
# (UNSUCCESSFUL on failure, still exit 0). LULESH 2.0: "Elapsed time         =      56.29 (s)",
# no verification line (it exits non-zero on a bad run). HPCG 3.x writes its report to
# HPCG-Benchmark_<version>_<date>.txt: "Benchmark Time Summary::Total=60.04" and
# "Final Summary::HPCG result is VALID ...".
PRESETS: dict[str, Preset] = {
    "npb": Preset(r"Time in seconds\s*=\s*" + NUMBER, "s", r"Verification\s*=\s*SUCCESSFUL",
                  r"UNSUCCESSFUL", None, "NAS Parallel Benchmarks: 'Time in seconds =', 'Verification = SUCCESSFUL'",
                  "Time in seconds ="),
    "lulesh": Preset(r"Elapsed time\s*=\s*" + NUMBER + r"\s*\(s\)", "s", None, None, None,
                     "LULESH 2.0: 'Elapsed time = T (s)', verified by the exit status", "Elapsed time = T (s)"),
    "hpcg": Preset(r"Benchmark Time Summary::Total=\s*" + NUMBER, "s", r"HPCG result is VALID", None,
                   "HPCG-Benchmark*.txt", "HPCG 3.x: its HPCG-Benchmark*.txt report, 'Total=', 'result is VALID'",
                   "Benchmark Time Summary::Total="),
    LATSCOPE: Preset(None, "s", None, None, None,
                     "the latscope mini-apps' line 'latscope-miniapp ... runtime_s=T verification=passed'"),
    WALL: Preset(None, "s", None, None, None, "the launch's wall time (mpiexec start to exit), verified by the exit status"),
}


class SpecError(ValueError):
    """A bad runtime or verification setting (the message names the value and what is allowed;
    `key` is the plan's key that holds it)."""

    def __init__(self, key: str, msg: str) -> None:
        super().__init__(msg)
        self.key = key


@dataclass(frozen=True)
class RunSpec:
    """The timing and verification of one app of a plan."""

    timing: str                  # a preset name, or "regex"
    pattern: str | None
    unit: str
    verify: str                  # "regex", "exit", "none" or LATSCOPE
    match: str | None
    reject: str | None
    output_file: str | None

    @property
    def label(self) -> str:
        """The runtime pattern as messages name it: a preset's words, or the user's pattern."""
        p = PRESETS.get(self.timing)
        return f"'{p.label}' (preset {self.timing})" if p is not None and p.label else f"'{self.pattern}'"

    def timing_text(self) -> str:
        if self.timing == WALL:
            return "wall time of the launch"
        if self.timing == LATSCOPE:
            return "latscope-miniapp line, runtime_s="
        src = f" in {self.output_file}" if self.output_file else ""
        if self.timing != "regex":
            return f"preset {self.timing}: {PRESETS[self.timing].label}{src}"
        return f"/{self.pattern}/ in {self.unit}{src}"

    def verify_text(self) -> str:
        if self.verify == "none":
            return "none (unverified)"
        if self.verify == "exit":
            return "exit status 0"
        if self.verify == LATSCOPE:
            return "verification=passed and exit status 0"
        parts = []
        if self.match:
            parts.append(f"must match /{self.match}/")
        if self.reject:
            parts.append(f"must not match /{self.reject}/")
        return ", ".join(parts) + ", exit status 0"


def _compile(name: str, key: str, pat: Any) -> str:
    if not isinstance(pat, str) or not pat:
        raise SpecError(key, f"app '{name}': {key} = {pat!r}: a regular expression (Python re), e.g. 'Time = ([0-9.]+)'")
    try:
        re.compile(pat)
    except re.error as e:
        raise SpecError(key, f"app '{name}': {key} = {pat!r}: not a valid regular expression ({e})") from None
    return pat


def make_spec(name: str, doc: dict[str, Any], default_timing: str) -> RunSpec:
    """The RunSpec of [apps.NAME] from its keys runtime, runtime_regex, runtime_unit, verify,
    verify_match, verify_reject, output_file."""
    timing = doc.get("runtime")
    regex = doc.get("runtime_regex")
    if timing is not None and regex is not None:
        raise SpecError("runtime_regex", f"app '{name}': runtime = {timing!r} and runtime_regex: give one of them")
    unit = doc.get("runtime_unit", "s")
    if unit not in UNITS:
        raise SpecError("runtime_unit", f"app '{name}': runtime_unit = {unit!r}: one of {', '.join(UNITS)}")
    if regex is not None:
        pattern: str | None = _compile(name, "runtime_regex", regex)
        rx = re.compile(str(pattern))
        if rx.groups < 1:
            raise SpecError("runtime_regex", f"app '{name}': runtime_regex = {regex!r}: needs a group around the number, e.g. "
                            "'took ([0-9.]+) ms'")
        preset = Preset(pattern, str(unit), None, None, None, "")
        timing = "regex"
    else:
        timing = default_timing if timing is None else timing
        if timing not in PRESETS:
            raise SpecError("runtime", f"app '{name}': runtime = {timing!r}: unknown preset; known: {', '.join(PRESETS)} "
                            "(or runtime_regex = '...' with runtime_unit)")
        preset = PRESETS[str(timing)]
        if "runtime_unit" in doc:
            raise SpecError("runtime_unit", f"app '{name}': runtime_unit goes with runtime_regex (preset {timing} has its own unit)")
        pattern, unit = preset.runtime, preset.unit
    match = doc.get("verify_match")
    reject = doc.get("verify_reject")
    verify = doc.get("verify")
    if verify is not None and verify not in VERIFY_KINDS:
        raise SpecError("verify", f"app '{name}': verify = {verify!r}: one of {', '.join(VERIFY_KINDS)} "
                        "(or verify_match / verify_reject = '...')")
    if verify is not None and (match is not None or reject is not None):
        raise SpecError("verify", f"app '{name}': verify = {verify!r} and verify_match/verify_reject: give one of them")
    if match is not None or reject is not None:
        m = None if match is None else _compile(name, "verify_match", match)
        r = None if reject is None else _compile(name, "verify_reject", reject)
        vkind = "regex"
    elif verify is not None:
        m = r = None
        vkind = str(verify)
    elif timing == LATSCOPE:
        m = r = None
        vkind = LATSCOPE
    else:
        m, r = preset.match, preset.reject
        vkind = "regex" if (m or r) else "exit"
    out_file = doc.get("output_file", preset.output_file)
    if out_file is not None and (not isinstance(out_file, str) or not out_file.strip()):
        raise SpecError("output_file", f"app '{name}': output_file = {out_file!r}: a file name or glob in the app's directory")
    return RunSpec(str(timing), pattern, str(unit), vkind, m, r, out_file)


@dataclass
class Reading:
    status: str                  # ok | failed (verification) | error (no runtime, bad exit) | timeout
    runtime_s: float | None
    verification: str | None     # passed | failed | unverified | None (not reached)
    reason: str | None           # why the run is not ok, one line
    fields: dict[str, str]


def last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "(no output)"
    ln = lines[-1]
    return repr(ln if len(ln) <= 120 else ln[:117] + "...")


def _signal_name(rc: int) -> str:
    import signal

    n = -rc if rc < 0 else rc - 128
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def exit_reason(rc: int, text: str) -> str:
    what = f"exit status {rc}"
    if rc < 0 or 128 < rc < 160:
        what += f" (killed by {_signal_name(rc)})"
    # MPICH's hydra says how a rank ended ("... EXIT STRING: Segmentation fault (signal 11)"); the
    # lines after it are advice
    m = re.search(r"EXIT STRING:\s*(.+)", text)
    if m:
        return f"{what}; a rank ended: {m.group(1).strip()}"
    return f"{what}; last line: {last_line(text)}"


def read(spec: RunSpec, out: str, rc: int, wall_s: float) -> Reading:
    """The runtime, verification and status of a finished run from its output and exit status."""
    fields: dict[str, str] = {}
    runtime: float | None = None
    why_no_time: str | None = None
    if spec.timing == LATSCOPE:
        from latscope.study.matrix import parse_line

        fields = parse_line(out) or {}
        try:
            runtime = float(fields["runtime_s"])
        except (KeyError, ValueError):
            why_no_time = ("no 'latscope-miniapp ... runtime_s=' line in the output (a program of your own: "
                           "give runtime = \"npb\" | \"lulesh\" | \"hpcg\" | \"wall\" or runtime_regex); "
                           f"last line: {last_line(out)}")
    elif spec.timing == WALL:
        runtime = wall_s
    else:
        rx = re.compile(str(spec.pattern))
        ms = list(rx.finditer(out))
        if not ms:
            why_no_time = f"runtime pattern {spec.label} not found in the output; last line: {last_line(out)}"
        else:
            m = ms[-1]
            g = m.group("runtime") if "runtime" in rx.groupindex else m.group(1)
            try:
                runtime = float(g) * UNITS[spec.unit]
            except (TypeError, ValueError):
                why_no_time = f"runtime pattern {spec.label} matched {m.group(0)!r}, whose group {g!r} is not a number"
    if rc != 0:
        if spec.timing == LATSCOPE and fields and rc == 1 and fields.get("verification") == "failed":
            return Reading("failed", runtime, "failed", "verification=failed (the mini-app's own check)", fields)
        return Reading("error", runtime, None, exit_reason(rc, out), fields)
    if runtime is None:
        return Reading("error", None, None, why_no_time, fields)
    if not runtime >= 0:
        return Reading("error", None, None, f"runtime {runtime!r} s read from the output is not a time", fields)
    if spec.verify == "none":
        return Reading("ok", runtime, "unverified", None, fields)
    if spec.verify == "exit":
        return Reading("ok", runtime, "passed", None, fields)
    if spec.verify == LATSCOPE:
        v = fields.get("verification")
        if v == "passed":
            return Reading("ok", runtime, "passed", None, fields)
        return Reading("failed", runtime, v or "failed", f"verification={v} in the mini-app's line", fields)
    if spec.reject:
        bad = re.search(spec.reject, out)
        if bad:
            line = out[out.rfind("\n", 0, bad.start()) + 1:].split("\n", 1)[0].strip()
            return Reading("failed", runtime, "failed",
                           f"verification: the output matches '{spec.reject}', which it must not: {line!r}", fields)
    if spec.match and not re.search(spec.match, out):
        return Reading("failed", runtime, "failed",
                       f"verification pattern '{spec.match}' not found in the output; last line: {last_line(out)}",
                       fields)
    return Reading("ok", runtime, "passed", None, fields)
