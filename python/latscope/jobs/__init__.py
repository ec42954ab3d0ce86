"""Launches that latscope owns: every process of a job tracked from the launcher down, ended as
a whole on a signal or a timeout, and what its ranks leave in /dev/shm removed
(docs/architecture.md, "Jobs"). procs.py reads /proc, shm.py knows the MPIs' segment names,
job.py runs one job, state.py keeps a record of each live job for `latscope clean`, status.py
is the table of exit statuses."""
