"""Every command README.md, docs/*.md and examples/README.md show runs as written.

Fenced blocks carry an info string that says what is done with them:
  sh           run as written, in order, in one temporary directory per document (later blocks may
               use files earlier ones made); `.venv` and `build` there are links to this checkout's
  sh cluster   needs a cluster (srun, a launcher across hosts, more cores than here): every command is
               parse-checked only (latscope: its argparse parser; a C program: PROGRAM ARGS --help)
  sh slurm     srun lines for a one-node Slurm: parse-checked here as `sh cluster`; run as written by
               tests/slurm/test_slurm.py under the Slurm `make test-slurm` brings up
  sh make      `make -n` of the line, in the repository
  sh synopsis  a usage skeleton: not run; every `latscope A B` it names must be a real command
  anything else (text, json, c): not a command
Small sizes come only from the environment (LATSCOPE_QUICK=1), never from a different command.
A block fails on a non-zero exit status or "Traceback" anywhere in its output."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from latscope import cli
from latscope.run import build_dir, launch

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))] + \
    ([REPO / "examples" / "README.md"] if (REPO / "examples" / "README.md").exists() else [])
SH_TAGS = {"sh", "sh cluster", "sh slurm", "sh make", "sh synopsis"}
BLOCK_TIMEOUT = 120
LAUNCHERS = {"srun", "mpiexec", "mpirun", "sbatch"}


@dataclass
class Block:
    doc: Path
    line: int          # of the opening fence
    tag: str
    text: str

    def __str__(self) -> str:
        name = self.doc.relative_to(REPO) if self.doc.is_relative_to(REPO) else self.doc
        return f"{name}:{self.line} ({self.tag})"


def blocks(doc: Path) -> list[Block]:
    out: list[Block] = []
    lines = doc.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+)(.*)$", lines[i])
        if not m:
            i += 1
            continue
        fence, tag, start = m.group(2), m.group(3).strip(), i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        out.append(Block(doc, start + 1, tag, "\n".join(body) + "\n"))
        i += 1
    return out


def commands(text: str) -> list[str]:
    """The block's commands: continuation lines joined, comments and blank lines dropped."""
    cmds: list[str] = []
    cur = ""
    for ln in text.splitlines():
        cur += ln
        if cur.rstrip().endswith("\\"):
            cur = cur.rstrip()[:-1] + " "
            continue
        words = shlex.split(cur, comments=True)
        if words:
            cmds.append(cur)
        cur = ""
    return cmds


def words_of(cmd: str) -> list[str]:
    w = shlex.split(cmd, comments=True)
    if w and w[-1] == "&":
        w = w[:-1]
    while w and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w[0]):   # VAR=value prefixes
        w = w[1:]
    return w


def doc_env(tmp: Path) -> dict[str, str]:
    env = dict(launch(2).env)
    venv_bin = str(Path(sys.prefix) / "bin")
    env.update({"PATH": f"{venv_bin}:{env.get('PATH', os.environ.get('PATH', ''))}", "VIRTUAL_ENV": sys.prefix,
                "LATSCOPE_QUICK": "1", "LATSCOPE_BUILD_DIR": str(build_dir()), "MPLBACKEND": "Agg"})
    env.pop("LATSCOPE_DEBUG", None)
    return env


def setup_dir(tmp: Path) -> None:
    """The commands are written for the repository root: `.venv`, `build` and `examples` resolve there."""
    for name, target in ((".venv", Path(sys.prefix)), ("build", build_dir()), ("examples", REPO / "examples")):
        if not (tmp / name).exists():
            (tmp / name).symlink_to(target)


def check_output(b: Block, cp: subprocess.CompletedProcess) -> None:
    out = cp.stdout + cp.stderr
    assert cp.returncode == 0, f"{b}: exit {cp.returncode}\n{b.text}\n--- output:\n{out[-4000:]}"
    assert "Traceback" not in out, f"{b}: a traceback\n{out[-4000:]}"


def run_sh(b: Block, tmp: Path) -> None:
    setup_dir(tmp)
    # as a script: `set -e` so a failing command in the middle fails the block
    cp = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", b.text], cwd=tmp, env=doc_env(tmp),
                        capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    check_output(b, cp)


def parse_latscope(b: Block, argv: list[str], tmp: Path) -> None:
    ap = cli.build_parser()
    argv = cli._join_dash_values(ap, argv)
    try:
        args, extra = ap.parse_known_args(argv)
    except SystemExit as e:
        raise AssertionError(f"{b}: `latscope {shlex.join(argv)}` does not parse (exit {e.code})") from None
    assert not extra or args.cmd == "bench", f"{b}: unrecognized arguments {extra}"
    if args.cmd == "bench":   # the rest goes to latscope-bench: its own --help-level check
        help_check(b, [str(build_dir() / "bin" / "latscope-bench"), args.kind, *extra], tmp)


def help_check(b: Block, words: list[str], tmp: Path) -> None:
    """PROGRAM ARGS --help: the options before --help are read by the program's own parser."""
    cp = subprocess.run(words + ["--help"], cwd=tmp, env=doc_env(tmp), capture_output=True, text=True, timeout=60)
    check_output(b, cp)
    assert "error" not in cp.stderr.lower(), f"{b}: {shlex.join(words)}: {cp.stderr}"


def run_cluster(b: Block, tmp: Path) -> None:
    setup_dir(tmp)
    for cmd in commands(b.text):
        w = words_of(cmd)
        if w and w[0] in LAUNCHERS:   # the program is the first word that names one
            k = next((i for i, x in enumerate(w) if i and ("/" in x or x in ("latscope", "latscope-bench"))
                      and not x.startswith("-")
                      and "=" not in x), None)
            assert k is not None, f"{b}: no program in `{cmd}`"
            w = w[k:]
        if w[0] == "latscope":
            parse_latscope(b, w[1:], tmp)
        else:
            on_path = shutil.which(w[0], path=doc_env(tmp)["PATH"]) if "/" not in w[0] else None
            prog = Path(on_path) if on_path else (tmp / w[0]) if not os.path.isabs(w[0]) else Path(w[0])
            assert prog.exists(), f"{b}: {w[0]}: no such program"
            help_check(b, [str(prog), *w[1:]], tmp)


def run_make(b: Block) -> None:
    for cmd in commands(b.text):
        w = words_of(cmd)
        env_prefix = shlex.split(cmd, comments=True)[: len(shlex.split(cmd, comments=True)) - len(w)]
        assert w[0] == "make", f"{b}: `{cmd}` is not a make command"
        env = dict(os.environ)
        env.update(dict(x.split("=", 1) for x in env_prefix))
        cp = subprocess.run(["make", "-n", *w[1:]], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        check_output(b, cp)


def run_synopsis(b: Block) -> None:
    ap = cli.build_parser()
    for cmd in commands(b.text):
        w = words_of(cmd)
        if w[0] != "latscope":
            continue
        path = [x for x in w[1:3] if re.fullmatch(r"[a-z][a-z-]*", x)]
        try:
            ap.parse_known_args(path + ["--help"])
        except SystemExit as e:
            assert e.code == 0, f"{b}: `latscope {' '.join(path)}` is not a command"


def test_every_block_is_tagged():
    """A fence without an info string could hide a command from this test."""
    untagged = [str(b) for d in DOCS for b in blocks(d) if not b.tag]
    assert not untagged, f"fenced blocks without an info string (sh, sh cluster, sh slurm, sh make, sh synopsis, text, ...): {untagged}"
    bad = [f"{b}: {b.tag!r}" for d in DOCS for b in blocks(d) if b.tag.startswith("sh") and b.tag not in SH_TAGS]
    assert not bad, bad


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_doc_commands(doc, tmp_path, capsys):
    for b in blocks(doc):
        if b.tag == "sh":
            run_sh(b, tmp_path)
        elif b.tag in ("sh cluster", "sh slurm"):
            run_cluster(b, tmp_path)
        elif b.tag == "sh make":
            run_make(b)
        elif b.tag == "sh synopsis":
            run_synopsis(b)
    capsys.readouterr()   # argparse --help text of the synopsis checks


def test_the_checker_fails_on_a_bad_command(tmp_path):
    """The test cannot pass vacuously: a failing command, a traceback, an unknown option fail it."""
    doc = tmp_path / "x.md"
    for text in ("```sh\nfalse\ntrue\n```\n", "```sh\npython3 -c 'raise SystemExit(\"Traceback\")' || true\n```\n",
                 "```sh\nlatscope results summary missing.jsonl\n```\n"):
        doc.write_text(text)
        with pytest.raises(AssertionError):
            for b in blocks(doc):
                run_sh(b, tmp_path)
    doc.write_text("```sh cluster\nsrun -n 64 build/bin/latscope-bench p2p --no-such-option 3\n```\n")
    with pytest.raises(AssertionError):
        run_cluster(blocks(doc)[0], tmp_path)
    doc.write_text("```sh cluster\nlatscope bench p2p --launcher 'srun -n 4' --np\n```\n")
    with pytest.raises(AssertionError):
        run_cluster(blocks(doc)[0], tmp_path)
    doc.write_text("```sh synopsis\nlatscope model no-such-model --np 3\n```\n")
    with pytest.raises(AssertionError):
        run_synopsis(blocks(doc)[0])
    doc.write_text("```sh make\nmake no-such-target\n```\n")
    with pytest.raises(AssertionError):
        run_make(blocks(doc)[0])
