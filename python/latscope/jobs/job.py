"""One job: a launcher line (mpiexec, srun, a user's command) and every process below it.

Started in a session of its own, so a Ctrl-C at the terminal reaches latscope alone, which then
ends the job as a whole. That cannot be one killpg: MPICH's hydra proxy and each rank call
setsid, so the job spans several sessions; a thread follows its process tree from the launcher
down instead (procs.descendants), recording each process (pid and start time) and the /dev/shm
segments it holds. SIGINT, SIGTERM, SIGHUP and --timeout end the job: SIGTERM to every process,
SIGKILL to those left after GRACE_S (a second signal: at once); then the job's segments that no
live process holds are removed. The record (state.py) lets `latscope clean` do the same for a
job whose latscope was itself killed with SIGKILL."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from types import FrameType
from typing import IO, Any

from latscope.jobs import procs, shm, state, status

GRACE_S = 3.0
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class JobStopped(Exception):
    """The job was ended by a signal to latscope or by --timeout; `how` says which
    ('stopped by SIGTERM', 'timed out after 20 s'), `status` is latscope's exit status for it."""

    def __init__(self, how: str, exit_status: int, detail: str = "", sep: str = " after") -> None:
        super().__init__(how + detail)
        self.how = how
        self.sep = sep   # what joins how and a count of points: 'stopped by SIGINT after 3 points'

        self.status = exit_status
        self.detail = detail

    def line(self, prog: str = "latscope") -> str:
        return f"{prog}: {self.how}{self.detail}"


class _Signal(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def stopped_by(signum: int) -> JobStopped:
    return JobStopped(f"stopped by {signal_name(signum)}", status.SIGNAL_BASE + signum)


def timed_out(timeout: float) -> JobStopped:
    return JobStopped(f"timed out after {timeout:g} s", status.TIMEOUT, sep=", with")


# ---------------------------------------------------------------- MPI's termination banners

_RULE = re.compile(rb"\s*={20,}\s*")
_BANNER = re.compile(rb"=\s+(?:PID (\d+) RUNNING AT (\S+)|EXIT CODE: (-?\d+)|.*)\s*")
_EXIT_STRING = re.compile(rb"YOUR APPLICATION TERMINATED WITH THE EXIT STRING: (.*?)\s*")
_NOISE = re.compile(rb"This typically refers to a problem with your application\.\s*|"
                    rb"Please see the FAQ page for debugging suggestions\s*|"
                    rb"\[mpiexec@[^\]]*\] (?:Sending Ctrl-C to processes as requested|"
                    rb"Press Ctrl-C again to force abort)\s*")


class BannerFilter:
    """Passes a job's standard error through, line by line, except MPICH's termination banner
    ("BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES ... YOU CAN IGNORE THE BELOW CLEANUP
    MESSAGES"), which becomes one line at the end. Once latscope ends the job itself, nothing
    more passes: its own line says what happened."""

    def __init__(self, write: Callable[[bytes], Any], note: Callable[[bytes], Any] | None = None) -> None:
        self.write = write
        self.note = note or write
        self.silenced = False
        self.pid: str | None = None
        self.host: str | None = None
        self.code: str | None = None
        self.exit_string: str | None = None
        self.seen = False
        self._blank = b""

    def line(self, ln: bytes) -> None:
        if self.silenced:
            return
        if not ln.strip():
            self._blank += ln   # held: the banner starts with a blank line
            return
        if _RULE.fullmatch(ln):
            self.seen, self._blank = True, b""
            return
        if self.seen and ln.startswith(b"="):
            m = _BANNER.fullmatch(ln)
            if m and m.group(1):
                self.pid, self.host = m.group(1).decode(), m.group(2).decode()
            if m and m.group(3):
                self.code = m.group(3).decode()
            return
        m = _EXIT_STRING.fullmatch(ln)
        if m:
            self.seen, self.exit_string = True, m.group(1).decode(errors="replace")
            return
        if _NOISE.fullmatch(ln):
            return
        self.write(self._blank + ln)
        self._blank = b""

    def close(self) -> None:
        if self._blank and not self.silenced:
            self.write(self._blank)
        if self.seen and not self.silenced:
            what = f"rank process {self.pid}" + (f" on {self.host}" if self.host else "") if self.pid else "a rank"
            code = f" exited with code {self.code}" if self.code is not None else " ended abnormally"
            why = f" ({self.exit_string})" if self.exit_string else ""
            self.note(f"latscope: mpiexec: {what}{code}{why}; MPI's cleanup messages left out\n".encode())


_EOL = re.compile(rb"[\r\n]")


def _pump(src: IO[bytes], sink: BannerFilter | list[bytes]) -> None:
    fd = src.fileno()
    part = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        if isinstance(sink, list):
            sink.append(chunk)
            continue
        part += chunk
        while (m := _EOL.search(part)) is not None:
            sink.line(part[:m.end()])
            part = part[m.end():]
    if isinstance(sink, BannerFilter):
        if part:
            sink.line(part)
        sink.close()
    src.close()


def _writer(fd: int) -> Callable[[bytes], None]:
    def write(b: bytes) -> None:
        try:
            while b:
                b = b[os.write(fd, b):]
        except OSError:   # the reader went away (| head): the job's output has nowhere to go
            pass
    return write


# ---------------------------------------------------------------- following the tree

class _Monitor(threading.Thread):
    """Follows the job's processes and the segments they hold into rec, often at first (the
    ranks and their segments appear in MPI_Init), then once a second."""

    def __init__(self, root: int, rec: state.Record) -> None:
        super().__init__(daemon=True, name="latscope-job-monitor")
        self.root = root
        self.rec = rec
        self.lock = threading.RLock()
        self.done = threading.Event()
        self.t0 = time.monotonic()
        self.last_maps = -1e9

    def sample(self) -> None:
        with self.lock:
            live = {p.pid for p in self.rec.procs if procs.alive(p)} | {self.root}
            tree = procs.descendants(live)
            me = os.getpid()
            tree = {p for p in tree if p.pid != me}
            changed = not tree <= self.rec.procs
            self.rec.procs |= tree
            segs: set[str] = set()
            # the maps of an MPI rank are long: read them at every sample while segments appear (in
            # MPI_Init), then every few seconds, for what a later communicator adds
            age = time.monotonic() - self.t0
            if age < 10 or not self.rec.segments or age - self.last_maps >= 5:
                self.last_maps = age
                for p in tree:
                    segs |= {s for s in procs.shm_held_by(p.pid) if shm.is_mpi_segment(s)}
            if not segs <= self.rec.segments:
                self.rec.segments |= segs
                changed = True
            if changed:
                self.rec.save()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                self.sample()
            except OSError:
                pass
            age = time.monotonic() - self.t0
            self.done.wait(0.1 if age < 2 else 0.5 if age < 10 else 2.0)   # about 2 ms of CPU a sample


def _terminate(targets: set[procs.Proc], hurry: threading.Event, find_more: Callable[[], set[procs.Proc]]) -> None:
    """SIGTERM to every process of targets, SIGKILL after GRACE_S to those left (at once when hurry
    is set); processes the job starts meanwhile (find_more) join them."""
    sent: set[procs.Proc] = set()

    def send(sig: int, ps: set[procs.Proc]) -> None:
        for p in ps:
            if procs.alive(p):
                try:
                    os.kill(p.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
    deadline = time.monotonic() + GRACE_S
    while True:
        targets |= find_more()
        left = {p for p in targets if procs.alive(p)}
        if not left:
            return
        send(signal.SIGTERM, left - sent)
        sent |= left
        if hurry.is_set() or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    kill_deadline = time.monotonic() + 5.0
    while time.monotonic() < kill_deadline:
        targets |= find_more()
        left = {p for p in targets if procs.alive(p)}
        if not left:
            return
        send(signal.SIGKILL, left)
        time.sleep(0.05)


def end_tree(pid: int, grace: bool = True) -> None:
    """End a process and everything below it (a job started with Popen elsewhere): SIGTERM, then
    SIGKILL after GRACE_S (at once without grace). A killpg does not do: hydra's proxy and ranks
    each call setsid."""
    tree = {p for p in procs.descendants({pid}) if p.pid != os.getpid()}
    hurry = threading.Event()
    if not grace:
        hurry.set()
    _terminate(tree, hurry, lambda: {p for p in procs.descendants({q.pid for q in tree if procs.alive(q)})
                                     if p.pid != os.getpid()})


def end_popen(proc: "subprocess.Popen[str]") -> None:
    """End a launch started with Popen(start_new_session=True) elsewhere: its whole tree
    (end_tree), then its group, and reap it."""
    end_tree(proc.pid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=2)
            return
        except subprocess.TimeoutExpired:
            continue


def run_job(cmd: Sequence[str], env: dict[str, str] | None = None, timeout: float | None = None,
            capture: bool = False, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run cmd as a job latscope owns. capture: stdout and stderr collected (text), as
    subprocess.run(capture_output=True); else stdout is inherited and stderr passes through
    BannerFilter. Raises JobStopped on SIGINT, SIGTERM or SIGHUP to latscope and when timeout
    seconds pass, after the whole job has ended and its segments are gone; OSError when cmd
    cannot be started (as subprocess.run)."""
    sys.stdout.flush()   # what latscope printed comes before what the job prints on the same descriptors
    sys.stderr.flush()
    me = procs.of(os.getpid())
    rec = state.Record(me if me else procs.Proc(os.getpid(), 0), [str(c) for c in cmd])
    before = shm.names()
    t_start = time.time()
    hurry = threading.Event()
    stopping = [False]

    def handler(signum: int, frame: FrameType | None) -> None:
        if stopping[0]:
            hurry.set()   # a second signal: no grace
            return
        raise _Signal(signum)
    old: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for s in SIGNALS:
            old[s] = signal.signal(s, handler)
    proc: subprocess.Popen[bytes] | None = None
    monitor: _Monitor | None = None
    filters: list[BannerFilter] = []
    out_chunks: list[bytes] = []
    err_chunks: list[bytes] = []
    pumps: list[threading.Thread] = []
    stop: JobStopped | None = None
    try:
        try:
            # hydra prints its termination banner on standard output: both streams go through a filter
            proc = subprocess.Popen(list(cmd), env=env, cwd=cwd, start_new_session=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            monitor = _Monitor(proc.pid, rec)
            monitor.start()
            assert proc.stderr is not None and proc.stdout is not None
            if not capture:
                filters = [BannerFilter(_writer(1), _writer(2)), BannerFilter(_writer(2))]
            for src, sink in ((proc.stdout, out_chunks if capture else filters[0]),
                              (proc.stderr, err_chunks if capture else filters[1])):
                pumps.append(threading.Thread(target=_pump, args=(src, sink), daemon=True))
            for t in pumps:
                t.start()
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop = timed_out(timeout if timeout is not None else 0)
        except _Signal as sg:
            stop = stopped_by(sg.signum)
    finally:
        stopping[0] = True
        if stop is not None:
            for f in filters:
                f.silenced = True
        if proc is not None and monitor is not None:
            monitor.done.set()
            monitor.join(timeout=5)
            root = proc.pid
            with monitor.lock:
                try:
                    monitor.sample()
                except OSError:
                    pass

                def more() -> set[procs.Proc]:
                    live = {p.pid for p in rec.procs if procs.alive(p)} | {root}
                    found = {p for p in procs.descendants(live) if p.pid != os.getpid()}
                    rec.procs |= found
                    return found
                _terminate(set(rec.procs), hurry, more)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            for t in pumps:
                t.join(timeout=5)
            _clean_segments(rec, before, t_start)
            rec.drop()
        for signum, h in old.items():
            signal.signal(signum, h)
    if stop is not None:
        raise stop
    assert proc is not None
    return subprocess.CompletedProcess(list(cmd), proc.returncode,
                                       b"".join(out_chunks).decode(errors="replace") if capture else None,
                                       b"".join(err_chunks).decode(errors="replace") if capture else None)


def _clean_segments(rec: state.Record, before: set[str], t_start: float) -> list[shm.Segment]:
    """The job's segments that no live process holds: those its processes held, the pid-named
    ones of its processes, and the MPI segments created while it ran that nobody holds now (a
    rank killed before the monitor saw it)."""
    pids = {str(p.pid) for p in rec.procs}
    cands = set(rec.segments)
    for name in shm.names() - before:
        m = shm.PID_NAMED.fullmatch(name)
        if m:
            if m.group(1) in pids:
                cands.add(name)
            continue
        try:
            if (shm.SHM_DIR / name).stat().st_mtime >= t_start - 1:
                cands.add(name)
        except OSError:
            continue
    return shm.remove(cands, "left by this job")
