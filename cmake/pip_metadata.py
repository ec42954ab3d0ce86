"""`pip install .` metadata that depends on the MPI the C parts are built against.

A scikit-build-core dynamic-metadata provider (pyproject.toml, [[tool.dynamic-metadata]]). With
MPICC unset, CMakeLists.txt builds against the bundled MPICH wheel (requirements-mpich.txt): the
pin is then a build requirement (its mpicc and mpi.h) and a run-time dependency (its libmpi and
mpiexec, which the installed programs use). With MPICC set, the user's MPI is used for both and
nothing more is required (docs/architecture.md, "Install"). The version is CMakeLists.txt's
project(VERSION), the one place it is written (docs/architecture.md, "One source of truth")."""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def bundled_mpi() -> list[str]:
    """The bundled MPICH's pin, or nothing when MPICC names the MPI to build against."""
    if os.environ.get("MPICC"):
        return []
    lines = (ROOT / "requirements-mpich.txt").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def project_version() -> str:
    """project(latscope VERSION x.y.z) of CMakeLists.txt, which also makes the C LTS_VERSION."""
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"^project\(latscope\s+VERSION\s+([0-9][0-9.]*)", text, re.MULTILINE)
    if not m:
        raise RuntimeError("CMakeLists.txt: no 'project(latscope VERSION x.y.z)' line")
    return m.group(1)


def dynamic_metadata(settings: Mapping[str, Any], project: Mapping[str, Any]) -> dict[str, Any]:
    """The version, and what is added to [project] dependencies (which list the Python ones)."""
    return {"dependencies": bundled_mpi(), "version": project_version()}


def get_requires_for_dynamic_metadata(settings: Mapping[str, Any]) -> list[str]:
    return bundled_mpi()


def dynamic_wheel(settings: Mapping[str, Any]) -> dict[str, bool]:
    """The sdist does not know yet: MPICC at wheel-build time decides."""
    return {"dependencies": True}
