"""The `latscope` command. Bad input: a message naming the value and what is allowed, exit 2."""
from __future__ import annotations

import argparse
import os
import signal
import sys
from types import FrameType
from typing import Any

from latscope import commands
from latscope.jobs import status
from latscope.jobs.job import JobStopped, stopped_by
from latscope.run import LaunchError, apply_net

EXIT_USAGE = 2


class _Version(argparse.Action):
    """--version: the version is looked up (pip's metadata) only when asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from latscope import __version__
        print(f"latscope {__version__}")   # on standard output, as argparse's own version action
        parser.exit()


def build_parser(wanted: str | None = commands.EVERY) -> argparse.ArgumentParser:
    """The parser: every command of latscope/commands.py's table, the `wanted` one's module
    loaded and its parser complete, the others a name and a help line (commands.EVERY: all
    complete). A new command is a new module and a row there; this file is not edited."""
    ap = argparse.ArgumentParser(prog="latscope", description="MPI latency: measure, decompose, model, perturb.",
                                 epilog=status.epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action=_Version)
    sub = ap.add_subparsers(dest="cmd", required=True)
    ap.set_defaults(_commands=commands.add_all(sub, wanted))
    return ap


def _value_options(ap: argparse.ArgumentParser) -> tuple[set[str], set[str]]:
    """(options that take a value, every option string) over the parser and all its subparsers."""
    takes: set[str] = set()
    known: set[str] = set()
    stack = [ap]
    while stack:
        p = stack.pop()
        for act in p._actions:
            known.update(act.option_strings)
            if act.option_strings and act.nargs != 0:
                takes.update(act.option_strings)
            if isinstance(act, argparse._SubParsersAction):
                stack.extend(act.choices.values())
    return takes, known


def _join_dash_values(ap: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """`--mean -5us` -> `--mean=-5us`, `--alg -linear` -> `--alg=-linear`.

    argparse takes a word that starts with '-' for an option unless it is a plain negative number,
    so a negative duration or an exclusion in the `a,b,-c` grammar reached the command as "expected
    one argument". Joining the value to its option lets the command itself judge it (and name it:
    "negative delay", "unknown algorithm"). Words after `--` belong to another program: untouched."""
    takes, known = _value_options(ap)
    out: list[str] = []
    for i, w in enumerate(argv):
        if w == "--":
            return out + argv[i:]
        prev = out[-1] if out else ""
        if (w.startswith("-") and len(w) > 1 and w not in known and not w.startswith("--")
                and prev in takes and prev.startswith("--") and "=" not in prev):
            out[-1] = f"{prev}={w}"
            continue
        out.append(w)
    return out


def _command_parser(ap: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the (sub)command argv names (`budget`, `barrier compare`): its usage and
    name go with an error about its arguments, not the top-level list of every command."""
    p = ap
    for w in argv:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and w in subs[0].choices:
            p = subs[0].choices[w]
    return p


def no_such(e: FileNotFoundError) -> str:
    """A missing file's message; where its folder is what is missing (`-o /no/dir/x.tbl`), that
    folder is named: 'no such file' read as if the output had to exist already."""
    if e.filename is None:   # pyarrow's: the path only in its text ("Failed to open local file '...'")
        return str(e.args[-1] if e.args else e)
    name = str(e.filename)
    parent = os.path.dirname(name)
    if parent and not os.path.isdir(parent):
        return f"{name}: no such file or directory ({parent} does not exist)"
    return f"{name}: no such file"


def _fail(msg: str) -> int:
    print(f"latscope: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


class _Stop(BaseException):
    """SIGTERM or SIGHUP outside a job: unwinds, so temporary files and directories go."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise _Stop(signum)


def main(argv: list[str] | None = None) -> int:
    """The command; an unexpected exception is one line and exit 1 (LATSCOPE_DEBUG=1: the traceback).
    A signal while a job runs ends the job (latscope/jobs/job.py) and is one line, exit 128+N."""
    old: dict[int, Any] = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            old[sig] = signal.signal(sig, _on_signal)
    except ValueError:   # not the main thread: the defaults stay
        pass
    try:
        return _main(argv)
    except JobStopped as e:
        print(e.line(), file=sys.stderr)
        return e.status
    except _Stop as e:
        stop = stopped_by(e.signum)
        print(stop.line(), file=sys.stderr)
        return stop.status
    except KeyboardInterrupt:
        print("latscope: stopped by SIGINT", file=sys.stderr)
        return status.SIGNAL_BASE + signal.SIGINT
    except BrokenPipeError:
        # the reader went away (`latscope ... | head`): nothing left to say, and nowhere to say it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except FileNotFoundError as e:
        return _fail(no_such(e))
    except Exception as e:  # noqa: BLE001 - no Python traceback reaches a user
        if os.environ.get("LATSCOPE_DEBUG") == "1":
            raise
        what = str(e).splitlines()[0] if str(e) else ""
        print(f"latscope: internal error: {type(e).__name__}{': ' + what if what else ''} "
              f"(run with LATSCOPE_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1
    finally:
        for signum, h in old.items():
            signal.signal(signum, h)


def _complete(ap: argparse.ArgumentParser) -> None:
    """Shell completion (README.md, "Shell completion"): when the shell's completion hook runs us
    (argcomplete sets _ARGCOMPLETE), argcomplete answers from the parser and exits; otherwise
    nothing is imported."""
    if "_ARGCOMPLETE" not in os.environ:
        return
    try:
        import argcomplete
    except ImportError:
        return
    argcomplete.autocomplete(ap)


def _main(argv: list[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # only the command being run is imported; shell completion needs them all
    ap = build_parser(commands.EVERY if "_ARGCOMPLETE" in os.environ else commands.wanted_command(words))
    _complete(ap)
    argv = _join_dash_values(ap, words)
    args, extra = ap.parse_known_args(argv)
    if extra and not getattr(args, "takes_extra", False):   # only `latscope bench` passes words on
        _command_parser(ap, argv).error(f"unrecognized arguments: {' '.join(extra)}")
    args.unparsed = extra   # the words no parser took (a command that sets takes_extra reads them)
    try:
        apply_net(args)
        return int(args._commands.find(args).main(args))
    except ValueError as e:   # bad input (ResultsError, FitError, ... are ValueErrors): one line, exit 2
        return _fail(str(e))
    except FileNotFoundError as e:
        return _fail(no_such(e))
    except LaunchError as e:
        return _fail(str(e))


if __name__ == "__main__":
    sys.exit(main())
