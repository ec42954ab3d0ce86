#!/bin/sh
# The MPI programs of the sanitizer build under mpiexec (make test-asan): the check
# programs the Python tests run (algos-check, barrier-check, tune-check) and short latscope-bench
# p2p / coll (every operation) / logp / app / tune runs, latscope-congest, and the injector
# (liblatscope_inject.so preloaded into inject-probe), at np 2 and, for the check programs, np 1
# and 3 (odd counts matter; docs/architecture.md "Tests and benchmarks"). Few repetitions: the
# point is to run every code path once under ASan+UBSan, not to measure. A run fails on a
# non-zero exit or on any sanitizer report in its output.
#
#   MPIEXEC=.venv/bin/mpiexec tests/c/asan_mpi_checks.sh build-asan
set -u
B=${1:?usage: asan_mpi_checks.sh BUILD_DIR (the -fsanitize=address,undefined build)}
MPIEXEC=${MPIEXEC:-mpiexec}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$B/asan-mpi
mkdir -p "$OUT"
# Stay on shared memory, as python/latscope/run.py launch() does on one machine.
export MPIR_CVAR_CH4_NETMOD=ofi FI_PROVIDER=shm LATSCOPE_QUICK=1
# MPICH is not instrumented and what it keeps until exit is not ours: leaks whose allocation
# passes through the MPI stack are suppressed (lsan-mpi.supp); ours are still reported.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
export LSAN_OPTIONS="suppressions=$HERE/lsan-mpi.supp:print_suppressions=0"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
FAST="--min-reps 5 --max-reps 5 --warmup 1"
failed=0
PRE=

run() {
    np=$1
    shift
    log=$OUT/run.log
    start=$(date +%s.%N)
    # 3 ranks on 2 cores: waiting ranks yield (README.md "Running on small machines")
    if [ "$np" -gt 2 ]; then throttle=1; else throttle=0; fi
    # shellcheck disable=SC2086 # $PRE: extra launcher words (no spaces inside them)
    MPIR_CVAR_CH4_PROGRESS_THROTTLE=$throttle timeout 300 "$MPIEXEC" $PRE -n "$np" "$@" > "$log" 2>&1
    rc=$?
    took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -ne 0 ] || grep -q -e "ERROR: AddressSanitizer" -e "ERROR: LeakSanitizer" -e "runtime error:" "$log"; then
        echo "FAILED (exit status $rc, ${took} s): mpiexec -n $np $*"
        tail -n 60 "$log"
        failed=$((failed + 1))
    else
        echo "ok (${took} s): mpiexec -n $np $*"
    fi
}

for np in 1 2 3; do
    run $np "$B/bin/algos-check"
    run $np "$B/bin/barrier-check" 3 30
done
run 2 "$B/bin/tune-check" run
run 2 "$B/bin/latscope-bench" p2p --op pingpong,roundtrip,bandwidth --sizes 0,1K,64K --raw $FAST -o "$OUT/p2p.jsonl"
run 2 "$B/bin/latscope-bench" coll --op bcast --alg all --sizes 0,8,1K --timing all $FAST -o "$OUT/coll.jsonl"
run 3 "$B/bin/latscope-bench" coll --op scatter --alg all --sizes 0,24,3K $FAST -o "$OUT/coll3.jsonl"
run 3 "$B/bin/latscope-bench" p2p --op p2two --sizes 0,1K $FAST -o "$OUT/p2p3.jsonl"
for op in barrier reduce allreduce gather allgather alltoall; do
    run 2 "$B/bin/latscope-bench" coll --op $op --alg all --sizes 0,16,2K $FAST -o "$OUT/coll-$op.jsonl"
done
run 2 "$B/bin/latscope-bench" logp --sizes 0,64,1K $FAST -o "$OUT/logp.jsonl"
run 2 "$B/bin/latscope-bench" app --pattern remap --dest random --messages 7 --sizes 0,8,1000 $FAST -o "$OUT/remap.jsonl"
run 3 "$B/bin/latscope-bench" app --pattern dag --grid 9 --task-work 0 --sizes 8 --blocks 1,3 $FAST -o "$OUT/dag.jsonl"
run 2 "$B/bin/latscope-bench" tune --op scatter --alg native,linear,binomial --sizes 0,8,1K $FAST -o "$OUT/tune.json"
# latscope-congest: a short timed run (LATSCOPE_QUICK caps --duration) at np 3 (an odd rank idles)
run 3 "$B/bin/latscope-congest" --duration 0.3s --load 0.3 --bandwidth 100M --size 4K --json "$OUT/congest.json"
# The injector, LD_PRELOADed into inject-probe's ranks only (-genv: not into mpiexec): the ASan
# runtime must come first in the preload list (the probe links it, but preloaded libraries load
# before the program's own).
asan_rt=$(ldd "$B/bin/inject-probe" | awk '/libasan/ { print $3 }')
PRE="-genv LD_PRELOAD $asan_rt:$B/lib/liblatscope_inject.so"
export LATSCOPE_INJECT_TABLE="$HERE/../golden/delay_table_lognormal_v1.tbl" LATSCOPE_INJECT_SEED=12345
run 2 "$B/bin/inject-probe" 200 20
export LATSCOPE_INJECT_RANKS=1 LATSCOPE_INJECT_CALLS=-coll,barrier LATSCOPE_INJECT_LOG="$OUT/inject-log"
run 3 "$B/bin/inject-probe" 100 10
# message mode: the collectives run as latscope's algorithms on a duplicated communicator
unset LATSCOPE_INJECT_RANKS LATSCOPE_INJECT_CALLS LATSCOPE_INJECT_LOG
export LATSCOPE_INJECT_COLL=messages
run 3 "$B/bin/inject-probe" 100 10
PRE=
unset LATSCOPE_INJECT_TABLE LATSCOPE_INJECT_SEED LATSCOPE_INJECT_COLL
if [ $failed -ne 0 ]; then
    echo "$failed MPI run(s) of the sanitizer build failed"
    exit 1
fi
