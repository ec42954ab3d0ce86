"""The latency-variation study (seed 004; docs/study.md): one module per `latscope study`
subcommand (load: §5 load characterisation)."""
from __future__ import annotations


class StudyError(ValueError):
    """Bad input to a study subcommand: the message names the value and what is allowed (exit 2)."""
