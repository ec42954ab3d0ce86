#!/usr/bin/env python3
"""Writes the injector's wrappers (wrappers_gen.inc, included at the end of inject.c) from the MPI
Forum's machine-readable standard, the pympistandard package (requirements.txt; its data file is
bundled, no network): one wrapper for every send-like and every collective communication call of
the standard, each with its large-count (_c) variant where the standard has one. CMake runs it at
build time into the build directory (cmake/parts/inject.cmake); nothing generated is committed.

Which calls, by rules over the standard (docs/delay-table.md, "Which calls are delayed"):
- send-like: a procedure with a `dest` parameter. Delayed at the call, as its own name, or, for a
  persistent send (X_init), recorded and delayed at MPI_Start/MPI_Startall as `start`. Partitioned
  sends (a `partitions` parameter, MPI_Psend_init) are left out: their messages leave at
  MPI_Pready, per partition, which the injector does not follow (EXCLUDED below).
- collective: an operation X that takes a communicator and no peer rank (`dest`, `source`) and
  comes in the standard's three forms, blocking MPI_X, nonblocking MPI_Ix and persistent MPI_X_init
  (MPI-4 §6.12, §6.13, §8.6-8.8). Delayed at the call (blocking and nonblocking, as x and ix) or at
  MPI_Start (persistent, as x). Blocking collectives latscope has algorithms for (the operations of
  include/latscope/algos.h's LTS_COLL_OP_LIST) begin with LTS_AS_MESSAGES: LATSCOPE_INJECT_COLL=
  messages runs them as latscope's own point-to-point algorithm.
The call names are those of LTS_INJECT_CALL_LIST (src/inject/table.h), which LATSCOPE_INJECT_CALLS
selects by; a name missing there is a compile error.

A function the MPI being built against does not declare is left out (listed in a comment): the
MPI's declarations are its preprocessed mpi.h (--mpi-decls), so the file compiles against any MPI.

    python3 src/inject/gen_wrappers.py --mpi-decls mpi_h.i --coll-ops include/latscope/algos.h -o wrappers_gen.inc
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

# Send-like procedures the injector does not wrap, and why (kept as data, so the coverage test
# names them instead of silently missing them).
EXCLUDED = {"MPI_Psend_init": "partitioned: its messages leave at MPI_Pready, one per partition"}


@dataclass(frozen=True)
class Wrapper:
    """One generated wrapper: the C function, its parameters and how it delays."""
    name: str                       # MPI_Send_c
    params: tuple[tuple[str, str], ...]   # (declaration, name): ("const void* buf", "buf")
    kind: str                       # p2p | pp2p (persistent send) | coll | pcoll (persistent collective)
    call: str                       # LATSCOPE_INJECT_CALLS name: send, start, bcast, ...
    blocking_op: str                # the collective's op name (bcast) when blocking and not _c, else ""


def load_standard() -> dict[str, object]:
    """The standard's procedures by C name (MPI_Send), from the bundled data file."""
    try:
        import pympistandard as std  # type: ignore[import-untyped]
    except ImportError:
        raise SystemExit(f"{sys.executable}: no module pympistandard (pip install -r requirements.txt)")
    std.use_api_version(1, force_bundled=True)
    return {p.express.iso_c.name: p for p in std.PROCEDURES.values() if p.express.iso_c is not None}


def c_params(expr: object) -> tuple[tuple[str, str], ...]:
    return tuple((str(p), p.name) for p in expr.parameters)  # type: ignore[attr-defined]


def spec_wrappers(procs: dict[str, object]) -> list[Wrapper]:
    """Every send-like and collective call of the standard, by the rules in the module docstring."""
    def names(n: str) -> set[str]:
        return {p for _, p in c_params(procs[n].express.iso_c)}  # type: ignore[attr-defined]

    base: list[tuple[str, str, str, str]] = []   # (name, kind, call, blocking op)
    for n in sorted(procs):
        ps = names(n)
        if "dest" in ps and n not in EXCLUDED:
            if "partitions" in ps:
                raise SystemExit(f"{n}: a partitioned send the generator does not know (add it to EXCLUDED)")
            base.append((n, "pp2p", "start", "") if n.endswith("_init") else (n, "p2p", n[4:].lower(), ""))
    for n in sorted(procs):
        x = n[4:]
        ps = names(n)
        forms = ("MPI_I" + x.lower(), n + "_init")
        if ("comm" in ps and not ps & {"dest", "source"} and not x.startswith("I") and not x.endswith("_init")
                and all(f in procs for f in forms)):
            base += [(n, "coll", x.lower(), x.lower()), (forms[0], "coll", "i" + x.lower(), ""),
                     (forms[1], "pcoll", x.lower(), "")]
    out = []
    for n, kind, call, op in base:
        p = procs[n]
        out.append(Wrapper(n, c_params(p.express.iso_c), kind, call, op))  # type: ignore[attr-defined]
        if p.has_embiggenment():  # type: ignore[attr-defined]
            e = p.express.embiggen.iso_c  # type: ignore[attr-defined]
            out.append(Wrapper(e.name, c_params(e), kind, call, ""))
    return out


def wrapper_c(w: Wrapper, msg_ops: set[str]) -> str:
    decl = ", ".join(d for d, _ in w.params)
    args = ", ".join(a for _, a in w.params)
    head = f"int {w.name}({decl}) {{\n"
    if w.kind == "p2p":
        return head + f"    lts_p2p(CALL({w.call}), dest, comm);\n    return P{w.name}({args});\n}}\n"
    if w.kind == "coll":
        body = ""
        if w.blocking_op in msg_ops:
            shadow = ", ".join("shadow" if a == "comm" else a for _, a in w.params)
            op = w.blocking_op
            body = f"    LTS_AS_MESSAGES({op}, LTS_COLL_{op.upper()}, {op}, ({shadow}));\n"
        return head + body + f"    lts_coll(CALL({w.call}), comm);\n    return P{w.name}({args});\n}}\n"
    test = "lts_remote(dest, comm)" if w.kind == "pp2p" else "lts_coll_sends(comm)"
    return (head + f"    int rc = P{w.name}({args});\n"
            f"    if (rc == MPI_SUCCESS && {test}) pset_add(*request, CALL({w.call}));\n    return rc;\n}}\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mpi-decls", required=True, type=Path, help="the MPI's mpi.h, preprocessed")
    ap.add_argument("--coll-ops", required=True, type=Path, help="include/latscope/algos.h (LTS_COLL_OP_LIST)")
    ap.add_argument("-o", "--output", required=True, type=Path)
    a = ap.parse_args(argv)
    declared = set(re.findall(r"\bPMPI_(\w+)\s*\(", a.mpi_decls.read_text(errors="replace")))
    m = re.search(r"#define LTS_COLL_OP_LIST\(X\)(.*?)\n\s*\n", a.coll_ops.read_text(), re.S)
    if not m:
        raise SystemExit(f"{a.coll_ops}: no LTS_COLL_OP_LIST(X)")
    msg_ops = set(re.findall(r"\bX\((\w+),", m.group(1)))
    ws = spec_wrappers(load_standard())
    if not msg_ops or msg_ops - {w.blocking_op for w in ws}:   # each runs as messages (LTS_AS_MESSAGES)
        raise SystemExit(f"{a.coll_ops}: LTS_COLL_OP_LIST {sorted(msg_ops)}: not all blocking collectives")
    have = [w for w in ws if w.name[4:] in declared]
    lacks = [w.name for w in ws if w.name[4:] not in declared]
    if not have:
        raise SystemExit(f"{a.mpi_decls}: declares none of the standard's send or collective functions")
    text = ("/* GENERATED at build time by src/inject/gen_wrappers.py from the MPI standard (pympistandard):\n"
            " * do not edit. Included at the end of inject.c. */\n")
    text += (f"/* {len(have)} wrappers; not declared by this MPI, so not wrapped ({len(lacks)}): "
             + (", ".join(lacks) or "none") + " */\n")
    text += "\n".join(wrapper_c(w, msg_ops) for w in have)
    a.output.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.output.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
