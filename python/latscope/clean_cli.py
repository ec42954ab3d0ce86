"""`latscope clean`: list and remove what dead launches left (latscope/jobs/clean.py): the
processes and /dev/shm segments of jobs whose latscope was killed outright, and MPI segments no
live process holds. Live jobs are listed, never touched."""
from __future__ import annotations

import argparse
from typing import Any


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("clean", help="list and remove what dead MPI launches left (processes, /dev/shm segments)",
                              description=__doc__)
    p.add_argument("--dry-run", action="store_true", help="list only; remove nothing")
    p.add_argument("--min-age", type=float, default=30.0, metavar="S",
                   help="a segment that names no process counts as stale only after S seconds (default 30: "
                        "a job that is starting may not hold it yet)")


def main(args: argparse.Namespace) -> int:
    from latscope.jobs.clean import clean
    if not args.min_age >= 0:
        raise ValueError(f"--min-age {args.min_age}: must be >= 0 seconds")
    c = clean(dry_run=args.dry_run, min_age_s=args.min_age)
    verb = "would remove" if args.dry_run else "removed"
    for rec in c.live_jobs:
        print(f"live job of latscope pid {rec.owner.pid}: {' '.join(rec.command)[:120]} (left alone)")
    for rec, left in c.dead_jobs:
        what = f"{'would end' if args.dry_run else 'ended'} {len(left)} process{'es' if len(left) != 1 else ''}"
        print(f"dead job of latscope pid {rec.owner.pid}: {' '.join(rec.command)[:120]}: {what}")
    for s in c.segments:
        print(f"{verb} /dev/shm/{s.name} ({s.size_bytes / 2**20:.1f} MiB): {s.why}")
    total = sum(s.size_bytes for s in c.segments)
    ended = sum(len(left) for _, left in c.dead_jobs)
    if not c.segments and not ended:
        print("nothing left behind by dead launches")
    else:
        print(f"{verb} {len(c.segments)} segment{'s' if len(c.segments) != 1 else ''} ({total / 2**20:.1f} MiB)"
              + (f"; {'would end' if args.dry_run else 'ended'} {ended} orphaned process{'es' if ended != 1 else ''}"
                 if ended else ""))
    return 0
