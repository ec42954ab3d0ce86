"""`latscope study analyze RESULTS` (placeholder while it is written)."""
from __future__ import annotations

import argparse

HELP = "seed 004 §6-7: statistics of a study's runs"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results")


def run(args: argparse.Namespace) -> int:
    return 2
