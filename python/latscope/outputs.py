"""Files named on the command line, judged before any work: an output that cannot be written,
an input that is binary where text is expected. Each problem is a ValueError naming the option,
the file and what is allowed (the CLI prints it as one line, exit 2)."""
from __future__ import annotations

import os
from pathlib import Path


def writable(path: str | os.PathLike[str], flag: str) -> None:
    """The file can be created or overwritten (checked by doing so: a missing folder, a read-only
    one, /proc and a directory in the way all fail here); a file created for the check is removed."""
    p = Path(path)
    existed = p.exists()
    try:
        with open(p, "a"):
            pass
    except OSError as e:
        if str(p.parent) and not p.parent.is_dir():
            raise ValueError(f"{flag} {str(path)!r}: no such file or directory ({p.parent} does not exist); "
                             "give a writable path") from None
        raise ValueError(f"{flag} {str(path)!r}: cannot be written ({e.strerror}); give a writable path") from None
    if not existed:
        p.unlink(missing_ok=True)


def writable_dir(path: str | os.PathLike[str], flag: str) -> None:
    """The directory exists or can be made, and a file can be written in it."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / f".latscope-write-check-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise ValueError(f"{flag} {str(path)!r}: cannot be written ({e.strerror}); give a writable directory") \
            from None


def is_binary(data: bytes) -> bool:
    """NUL bytes or bytes that are not UTF-8: not a text file."""
    if b"\0" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start < len(data) - 4   # a multi-byte character cut by a prefix read is still text
    return False


def read_text(path: str | os.PathLike[str], flag: str, what: str) -> str:
    """The file's text; a binary file is a ValueError naming it and what was expected (what)."""
    data = Path(path).read_bytes()
    if is_binary(data):
        raise ValueError(f"{flag} {str(path)!r}: a binary file, not {what}")
    return data.decode("utf-8")


def check_text(path: str | os.PathLike[str], flag: str, what: str, limit: int = 1 << 16) -> None:
    """As read_text, on the first `limit` bytes only (a large input read by a C program)."""
    with open(path, "rb") as f:
        if is_binary(f.read(limit)):
            raise ValueError(f"{flag} {str(path)!r}: a binary file, not {what}")
