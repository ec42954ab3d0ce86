"""latscope's exit statuses, one table: the `latscope --help` epilogue and docs/architecture.md
("Exit statuses") show it."""
from __future__ import annotations

OK = 0
FAILURE = 1
USAGE = 2
PAYLOAD = 3
TIMEOUT = 124   # as timeout(1): the run was ended, not judged
SIGNAL_BASE = 128

TABLE = [
    (str(OK), "success"),
    (str(FAILURE), "failure: a run or check failed, or an internal error (one line; LATSCOPE_DEBUG=1 for the traceback)"),
    (str(USAGE), "bad input or misuse, refused before anything starts (one line naming the value)"),
    (str(PAYLOAD), "payload mismatch: received bytes differ from those sent (mini-apps' check)"),
    (str(TIMEOUT), "--timeout expired: the whole job was ended, finished points kept"),
    ("128+N", "stopped by signal N (130 SIGINT, 129 SIGHUP, 143 SIGTERM): the whole job was ended, "
              "finished points kept"),
]


def epilog() -> str:
    """The table as the `latscope --help` epilogue."""
    return "exit statuses:\n" + "\n".join(f"  {code:<6} {what}" for code, what in TABLE)
