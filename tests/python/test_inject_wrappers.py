"""The injector's wrappers, generated at build time from the MPI standard (src/inject/gen_wrappers.py,
pympistandard; docs/delay-table.md "Which calls are delayed"): the generated set covers every
send-like and collective call of the standard (MPI-4 and later: `_c` large-count variants and the
persistent collectives MPI_X_init included), computed here from the standard's own data, and the
library built against this MPI defines a wrapper for each one the MPI has. Run under MPICH and, in
`make test-openmpi`, under Open MPI: each checks the build of its own MPI, generated and compiled
there, and compiles inject.c with the generated file once more with every warning an error."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from latscope.run import build_dir, mpi_flavor, mpiexec_path

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_wrappers", REPO / "src" / "inject" / "gen_wrappers.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_wrappers"] = mod   # dataclasses resolve the module by name
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def procs(gen: ModuleType) -> dict[str, object]:
    return gen.load_standard()


def params(proc: object) -> set[str]:
    return {p.name for p in proc.express.iso_c.parameters}  # type: ignore[attr-defined]


def with_large_count(procs: dict[str, object], names: set[str]) -> set[str]:
    """names and, for each the standard gives a large-count form, that form (MPI_X_c)."""
    out = set(names)
    for n in names:
        if procs[n].has_embiggenment():  # type: ignore[attr-defined]
            out.add(procs[n].express.embiggen.iso_c.name)  # type: ignore[attr-defined]
    return out


def symbols(lib: Path, *flags: str) -> set[str]:
    out = subprocess.run(["nm", "-D", *flags, str(lib)], capture_output=True, text=True, check=True).stdout
    return {ln.split()[-1] for ln in out.splitlines() if ln.strip()}


def test_generated_set_covers_send_like_and_collective_calls(gen: ModuleType, procs: dict[str, object]) -> None:
    wrapped = {w.name: w for w in gen.spec_wrappers(procs)}
    # send-like: the standard gives the call a destination rank
    send_like = {n for n, p in procs.items() if "dest" in params(p)}
    assert set(gen.EXCLUDED) <= send_like, "an exclusion that is not a send-like call of the standard"
    assert with_large_count(procs, send_like - set(gen.EXCLUDED)) <= set(wrapped)
    # collective: takes a communicator and no peer rank, and has a nonblocking twin MPI_Ix
    blocking = {n for n, p in procs.items()
                if "comm" in params(p) and not params(p) & {"dest", "source"} and "MPI_I" + n[4:].lower() in procs}
    forms = blocking | {"MPI_I" + n[4:].lower() for n in blocking} | {n + "_init" for n in blocking}
    assert forms <= set(procs), sorted(forms - set(procs))   # MPI-4: every collective is also persistent
    assert with_large_count(procs, forms) <= set(wrapped)
    # ... and nothing else: every wrapper is one of those, of the kind its name says
    assert set(wrapped) == with_large_count(procs, forms | (send_like - set(gen.EXCLUDED)))
    for n, w in wrapped.items():
        base = n.removesuffix("_c")
        persistent = base.endswith("_init")
        assert w.kind == {(True, True): "pp2p", (True, False): "p2p", (False, True): "pcoll",
                          (False, False): "coll"}[(base in send_like, persistent)], n
        assert w.call == ("start" if w.kind == "pp2p" else base[4:].removesuffix("_init").lower()), n
    # the families MPI-4 names (§6.12 and §8.6: 17 + 5 blocking collectives; 12 sends + 4 persistent)
    assert len(blocking) >= 22 and len(send_like - set(gen.EXCLUDED)) >= 16
    for n in ("MPI_Send_c", "MPI_Isendrecv_replace_c", "MPI_Rsend_init_c", "MPI_Barrier_init",
              "MPI_Reduce_scatter_block_init_c", "MPI_Ineighbor_alltoallw_c", "MPI_Neighbor_alltoallw_init"):
        assert n in wrapped, n


def test_call_names_are_the_selectable_ones(gen: ModuleType, procs: dict[str, object]) -> None:
    """Every LATSCOPE_INJECT_CALLS name (src/inject/table.h) but startall (MPI_Startall, written by
    hand) is some generated wrapper's call, and no wrapper delays under another name."""
    listed = set(re.findall(r"\bX\((\w+), (?:P2P|COLL)\)", (REPO / "src" / "inject" / "table.h").read_text()))
    used = {w.call for w in gen.spec_wrappers(procs)}
    assert used == listed - {"startall"}


def test_library_wraps_every_call_this_mpi_has(gen: ModuleType, procs: dict[str, object]) -> None:
    lib = build_dir() / "lib" / "liblatscope_inject.so"
    assert lib.exists(), f"{lib} not built (make build)"
    ldd = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, check=True).stdout
    libmpi = Path(next(ln.split("=>")[1].split("(")[0].strip() for ln in ldd.splitlines() if "libmpi.so" in ln))
    mpi_has = {s[1:] for s in symbols(libmpi, "--defined-only") if s.startswith("PMPI_")}
    defined = symbols(lib, "--defined-only")
    wanted = {w.name for w in gen.spec_wrappers(procs)}
    missing = sorted(n for n in wanted if n in mpi_has and n not in defined)
    assert not missing, f"this MPI has them, the injector does not wrap them: {missing}"
    # every PMPI_ entry point the wrappers call is one the MPI library defines
    unresolved = sorted(s for s in symbols(lib, "--undefined-only") if s.startswith("PMPI_") and s[1:] not in mpi_has)
    assert not unresolved, unresolved
    # MPICH 4+ implements all of MPI-4 (the _c forms too); Open MPI 5 all but the _c forms
    have = wanted & mpi_has
    if mpi_flavor(mpiexec_path()) == "mpich":
        assert have == wanted, sorted(wanted - have)
    else:
        assert {n for n in wanted if not n.endswith("_c")} <= have


def test_generated_code_compiles_warning_free() -> None:
    """inject.c with the generated file of this build, against this MPI: -Wall -Wextra -Werror."""
    b = build_dir()
    inc = b / "inject" / "wrappers_gen.inc"
    assert inc.exists(), f"{inc} not generated (make build)"
    mpicc = os.environ.get("MPICC") or str(Path(sys.prefix) / "bin" / "mpicc")
    cp = subprocess.run([mpicc, "-std=c11", "-D_GNU_SOURCE", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                         "-Wno-unused-parameter", f"-I{b / 'inject'}", f"-I{REPO / 'include'}", f"-I{b / 'include'}",
                         str(REPO / "src" / "inject" / "inject.c")], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr[-4000:]
