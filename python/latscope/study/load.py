"""`latscope study load` (placeholder while being written)."""
from __future__ import annotations

import argparse

HELP = "seed 004 §5: ping-pong latency under background load (latscope-congest), per load level"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--loads", default="0,10,...,90")


def run(args: argparse.Namespace) -> int:
    return 0
