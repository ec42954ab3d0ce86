"""Study plans for `latscope study run` (seed 004 §6-7; docs/study.md, "study run"): a TOML file
naming delay tables, applications, rank counts and repetitions, checked with the line of every
bad value (exit 2 before anything runs)."""
from __future__ import annotations

import re
import tomllib
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from latscope.study import StudyError
from latscope.study.appspec import RunSpec, SpecError, make_spec

# The applications are the mini-apps of latscope.miniapps.REGISTRY (docs/miniapps.md), each
# printing one line `latscope-miniapp app=... runtime_s=... verification=passed|failed ...`.
NO_TABLE = "none"        # a table entry with this value runs the application without the injector
TOP_KEYS = {"repetitions", "launches", "pin", "seed", "np", "timeout_s", "calls", "coll", "tables", "apps"}
COLL_MODES = ("calls", "messages")    # LATSCOPE_INJECT_COLL (docs/delay-table.md, "Per call or per message")
APP_KEYS = {"args", "np", "program", "timeout_s", "runtime", "runtime_regex", "runtime_unit", "verify",
            "verify_match", "verify_reject", "output_file", "env", "cwd"}
MAX_NP = 1024


@dataclass(frozen=True)
class Table:
    name: str
    path: Path | None            # None: run without the injector (NO_TABLE)
    mean_s: float
    sd_s: float
    distribution: str


@dataclass(frozen=True)
class App:
    name: str
    program: str                 # a program name in build/bin, or a path
    args: tuple[str, ...]
    nps: tuple[int, ...]
    timeout_s: float
    spec: RunSpec = field(default_factory=lambda: make_spec("", {}, "latscope"))
    env: tuple[tuple[str, str], ...] = ()
    cwd: Path | None = None      # None: the study's own working directory

    @property
    def mine(self) -> bool:
        """A latscope mini-app (a program in build/bin), not a program of the user's."""
        return "/" not in self.program and self.spec.timing == "latscope"


@dataclass(frozen=True)
class Cell:
    """One run of the matrix: (app, table, np, repetition) and, with `launches` > 1, which of the
    cell's launches. Its key identifies it across resumes (launch 0's key is the cell's: a plan
    without `launches` keeps the keys it always had)."""

    app: App
    table: Table
    np: int
    rep: int
    launch: int = 0

    @property
    def cell_key(self) -> str:
        return f"{self.app.name}|{self.table.name}|{self.np}|{self.rep}"

    @property
    def key(self) -> str:
        return self.cell_key + (f"|l{self.launch}" if self.launch else "")


@dataclass
class Plan:
    path: Path
    text: str
    repetitions: int
    seed: int
    calls: str | None
    coll: str
    tables: list[Table]
    apps: list[App]
    launches: int = 1
    pin: bool = False            # each rank bound to a core of its own (latscope.run.launch(pin=True))
    digest: str = field(default="")

    def blocks(self) -> list[list[Cell]]:
        """One block per repetition, holding every (app, table, np) once, in an order shuffled by
        the plan's seed and the block number (a randomised complete block design: a slow drift of
        a shared machine falls on every table alike instead of on the tables run last). The order
        is a function of the plan alone, so a resumed study runs the same sequence.

        With `launches` L > 1 a block runs its cells L times, each pass in its own shuffled order:
        a cell's launches lie a whole pass apart, so a burst of another tenant's work that slows
        one of them is unlikely to slow all (the analysis keeps each cell's minimum,
        docs/study.md "Repeated launches")."""
        import numpy as np

        out = []
        for rep in range(self.repetitions):
            block: list[Cell] = []
            for launch in range(self.launches):
                cells = [Cell(a, t, n, rep, launch) for a in self.apps for t in self.tables for n in a.nps]
                # pass 0 keeps the order a plan without `launches` always had
                key = [self.seed, rep] if launch == 0 else [self.seed, rep, launch]
                order = np.random.default_rng(key).permutation(len(cells))
                block += [cells[int(i)] for i in order]
            out.append(block)
        return out

    def injector_seed(self, cell: Cell) -> int:
        """The injector's seed: the plan's seed and the repetition only, so that within one block
        every table is driven by the same random stream (common random numbers: all tables made
        with one seed share one permutation, docs/delay-table.md), which sharpens the comparison."""
        return self.seed * 1_000_003 + cell.rep


def _line_of(text: str, section: str | None, key: str | None) -> int:
    """The 1-based line of `key` inside `[section]` (top level when None), or of the section's
    header when key is None; 1 when not found (tomllib reports no positions for values)."""
    cur: str | None = None
    header_line = 1
    for i, ln in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", ln)
        if m:
            cur = m.group(1).replace('"', "").replace(" ", "")
            if cur == section:
                header_line = i
                if key is None:
                    return i
            continue
        if key is None:
            continue
        m = re.match(r'^\s*"?([^"=\s]+)"?\s*=', ln)
        if not m:
            continue
        k = m.group(1)
        if cur == section and k == key:
            return i
        # dotted keys at the top level: apps.cg.args = [...]
        if cur is None and section is not None and k == f"{section}.{key}":
            return i
    return header_line


class _Checker:
    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text = path, text

    def fail(self, section: str | None, key: str | None, msg: str) -> StudyError:
        return StudyError(f"{self.path}:{_line_of(self.text, section, key)}: {msg}")

    def integer(self, doc: dict[str, Any], key: str, section: str | None, lo: int, default: int | None) -> int:
        v = doc.get(key, default)
        where = f"{section}.{key}" if section else key
        if v is None:
            raise self.fail(section, None, f"'{where}' is missing (an integer >= {lo})")
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(section, key, f"'{where}' = {v!r}: must be an integer >= {lo}")
        if v < lo:
            raise self.fail(section, key, f"'{where}' = {v}: must be >= {lo}")
        return v

    def number(self, doc: dict[str, Any], key: str, section: str | None, default: float) -> float:
        v = doc.get(key, default)
        where = f"{section}.{key}" if section else key
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise self.fail(section, key, f"'{where}' = {v!r}: must be a number of seconds > 0")
        return float(v)

    def nps(self, doc: dict[str, Any], section: str | None, default: list[int] | None) -> list[int]:
        v = doc.get("np", default)
        where = f"{section}.np" if section else "np"
        if isinstance(v, int) and not isinstance(v, bool):
            v = [v]
        if not isinstance(v, list) or not v or any(isinstance(x, bool) or not isinstance(x, int) for x in v):
            raise self.fail(section, "np", f"'{where}' = {v!r}: a rank count or a list of them, e.g. [1, 2]")
        for x in v:
            if not 1 <= x <= MAX_NP:
                raise self.fail(section, "np", f"'{where}': {x} ranks; allowed 1 to {MAX_NP}")
        if len(set(v)) != len(v):
            raise self.fail(section, "np", f"'{where}' = {v}: each rank count once")
        return list(v)

    def unknown(self, doc: dict[str, Any], allowed: set[str], section: str | None) -> None:
        for k in doc:
            if k not in allowed:
                raise self.fail(section, k, f"unknown key '{k}'" + (f" in [{section}]" if section else "")
                                + f"; allowed: {', '.join(sorted(allowed))}")


def _read_table(ck: _Checker, name: str, value: Any) -> Table:
    from latscope import tables as T

    if not isinstance(value, str) or not value.strip():
        raise ck.fail("tables", name, f"table '{name}' = {value!r}: the path of a delay table "
                                      f"(latscope tables make ...), or \"{NO_TABLE}\" for no injection")
    if value == NO_TABLE:
        return Table(name, None, 0.0, 0.0, NO_TABLE)
    p = Path(value)
    if not p.is_absolute():
        p = ck.path.parent / p
    if not p.is_file():
        raise ck.fail("tables", name, f"table '{name}': {value}: no such file (relative paths are from "
                                      f"the plan's directory; make one with latscope tables make ...)")
    try:
        t = T.read_table(p)
    except T.TableError as e:
        raise ck.fail("tables", name, f"table '{name}': {e}") from None
    except OSError as e:
        raise ck.fail("tables", name, f"table '{name}': {value}: cannot be read ({e.strerror})") from None
    return Table(name, p.resolve(), t.mean_s(), t.sd_s(), t.distribution)


def _app(ck: _Checker, name: str, doc: Any, default_np: list[int], timeout: float) -> App:
    sec = f"apps.{name}"
    if not isinstance(doc, dict):
        raise ck.fail("apps", name, f"'apps.{name}' must be a table ([apps.{name}] with args, np, ...)")
    ck.unknown(doc, APP_KEYS, sec)
    from latscope import miniapps

    prog = doc.get("program")
    default_args: list[Any] = []
    if prog is None:
        if name not in miniapps.names():
            raise ck.fail(sec, None, f"unknown app '{name}'; known: {', '.join(sorted(miniapps.names()))} "
                                     "(or give program = \"PATH\" for your own)")
        app = miniapps.get(name)
        prog = app.program
        default_args = ["--class", app.study_class]
    elif not isinstance(prog, str) or not prog.strip():
        raise ck.fail(sec, "program", f"'{sec}.program' = {prog!r}: a program in build/bin or a path to one")
    else:
        prog = _program(ck, sec, name, prog)
    args = doc.get("args", default_args)
    if not isinstance(args, list) or any(not isinstance(a, (str, int, float)) or isinstance(a, bool) for a in args):
        raise ck.fail(sec, "args", f"'{sec}.args' = {args!r}: a list of strings, e.g. [\"--class\", \"S\"]")
    nps = ck.nps(doc, sec, default_np)
    try:
        spec = make_spec(name, doc, "latscope")
    except SpecError as e:
        raise ck.fail(sec, e.key if e.key in doc else None, str(e)) from None
    env = doc.get("env", {})
    if not isinstance(env, dict) or any(not isinstance(v, (str, int, float)) or isinstance(v, bool)
                                        for v in env.values()):
        raise ck.fail(sec, "env", f"app '{name}': env = {env!r}: a table of NAME = \"value\", e.g. "
                                  "env = {OMP_NUM_THREADS = \"1\"}")
    cwd = doc.get("cwd")
    wd: Path | None = None
    if cwd is not None:
        if not isinstance(cwd, str) or not cwd.strip():
            raise ck.fail(sec, "cwd", f"app '{name}': cwd = {cwd!r}: a directory (relative to the plan's)")
        wd = Path(cwd) if Path(cwd).is_absolute() else ck.path.parent / cwd
        if not wd.is_dir():
            raise ck.fail(sec, "cwd", f"app '{name}': cwd = {cwd!r}: no such directory")
        wd = wd.resolve()
    return App(name, prog, tuple(str(a) for a in args), tuple(nps), ck.number(doc, "timeout_s", sec, timeout),
               spec, tuple((str(k), str(v)) for k, v in env.items()), wd)


def _program(ck: _Checker, sec: str, name: str, prog: Any) -> str:
    """The program of [apps.NAME]: a path (relative to the plan's directory), a latscope program
    in build/bin, or a program on PATH; it must be an executable file."""
    import os
    import shutil

    if not isinstance(prog, str) or not prog.strip():
        raise ck.fail(sec, "program", f"app '{name}': program = {prog!r}: a path to an executable, a program "
                                      "in build/bin or on PATH")
    if "/" in prog:
        p = Path(prog)
        if not p.is_absolute():
            p = ck.path.parent / p
    else:
        from latscope.run import build_dir

        p = build_dir() / "bin" / prog
        if not p.exists():
            found = shutil.which(prog)
            if found is None:
                raise ck.fail(sec, "program", f"app '{name}': program = {prog!r}: not in build/bin nor on PATH "
                                              "(give a path, e.g. \"./is.W.x\")")
            p = Path(found)
        else:
            return prog          # run.program() finds it when the study runs
    if not p.is_file():
        raise ck.fail(sec, "program", f"app '{name}': program = {prog!r}: no such file")
    if not os.access(p, os.X_OK):
        raise ck.fail(sec, "program", f"app '{name}': program = {prog!r}: not executable (chmod +x?)")
    return str(p.resolve())


def parse_plan(path: Path) -> Plan:
    """Read and check a plan; StudyError (exit 2) names the file, the line and the bad value."""
    if not path.is_file():
        raise StudyError(f"{path}: no such plan file")
    if path.suffix.lower() in (".yaml", ".yml"):
        raise StudyError(f"{path}: YAML plans are not supported (no YAML parser is installed); write it as TOML")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise StudyError(f"{path}: cannot be read ({e})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        where = f"{path}:{m.group(1)}" if m else str(path)
        raise StudyError(f"{where}: not valid TOML: {str(e).split(' (at line')[0]}") from None
    ck = _Checker(path, text)
    ck.unknown(doc, TOP_KEYS, None)
    reps = ck.integer(doc, "repetitions", None, 1, None)
    launches = ck.integer(doc, "launches", None, 1, 1)
    pin = doc.get("pin", False)
    if not isinstance(pin, bool):
        raise ck.fail(None, "pin", f"'pin' = {pin!r}: true or false (bind each rank to a core of its own)")
    seed = ck.integer(doc, "seed", None, 0, 1)
    timeout = ck.number(doc, "timeout_s", None, 300.0)
    default_np = ck.nps(doc, None, [2])
    calls = doc.get("calls")
    if calls is not None and (not isinstance(calls, str) or not calls.strip() or any(c.isspace() for c in calls)):
        raise ck.fail(None, "calls", f"'calls' = {calls!r}: the injector's call list without spaces, e.g. p2p,coll")
    coll = doc.get("coll", "calls")
    if coll not in COLL_MODES:
        raise ck.fail(None, "coll", f"'coll' = {coll!r}: one of {', '.join(COLL_MODES)} (a collective delayed once "
                                    "per call, or run as point-to-point messages each delayed)")
    tdoc = doc.get("tables")
    if not isinstance(tdoc, dict) or not tdoc:
        raise ck.fail("tables" if isinstance(tdoc, dict) else None, "tables" if tdoc is not None else None,
                      "a [tables] section with at least one name = \"path\" entry is required")
    tables = [_read_table(ck, k, v) for k, v in tdoc.items()]
    adoc = doc.get("apps")
    if not isinstance(adoc, dict) or not adoc:
        raise ck.fail(None, None, "at least one [apps.NAME] section is required (e.g. [apps.cg])")
    apps = [_app(ck, k, v, default_np, timeout) for k, v in adoc.items()]
    plan = Plan(path, text, reps, seed, calls, str(coll), tables, apps, launches, pin)
    plan.digest = f"{zlib.crc32(text.encode()):08x}"
    return plan
