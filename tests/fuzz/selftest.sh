#!/bin/sh
# The fuzz driver's own test (ctest fuzz_driver_selftest in build-asan): with the planted bugs of
# fuzz_selftest.c, each kind of failure (ASan, LeakSanitizer, UBSan, a harness invariant) must end
# the run with a non-zero status and the triggering input saved byte for byte; the mutation search
# must find the planted overflow from an unrelated seed; and a clean input must pass.
#   selftest.sh build-asan/fuzz/fuzz-selftest WORKDIR
set -u
BIN=${1:?usage: selftest.sh FUZZ_SELFTEST_BINARY WORKDIR}
W=${2:?usage: selftest.sh FUZZ_SELFTEST_BINARY WORKDIR}
rm -rf "$W"
mkdir -p "$W/in" "$W/art"
fail=0

expect_crash() {   # name, text the report must contain, driver arguments...
    name=$1 needle=$2
    shift 2
    rm -f "$W"/art/crash-*
    "$BIN" --artifacts "$W/art" "$@" > "$W/$name.log" 2>&1
    rc=$?
    saved=$(ls "$W"/art/crash-* 2>/dev/null | head -n 1)
    if [ $rc -eq 0 ] || ! grep -q -e "$needle" "$W/$name.log" || ! grep -q "the input is saved in" "$W/$name.log" \
        || [ -z "$saved" ]; then
        echo "FAILED: $name: exit status $rc, expected a report with '$needle' and a saved input"
        tail -n 30 "$W/$name.log"
        fail=1
        return
    fi
    # the saved input reproduces the failure
    "$BIN" --artifacts "$W/art" "$saved" > "$W/$name.replay.log" 2>&1 && { echo "FAILED: $name: replaying $saved passes"; fail=1; return; }
    echo "ok: $name (exit status $rc, input saved as $(basename "$saved"))"
}

for k in OVF LEAK UBSAN ABORT; do printf '%s' "$k" > "$W/in/$k"; done
expect_crash asan "ERROR: AddressSanitizer: heap-buffer-overflow" "$W/in/OVF"
cmp -s "$W/in/OVF" "$saved" || { echo "FAILED: the saved input differs from OVF"; fail=1; }
expect_crash leak "ERROR: LeakSanitizer" "$W/in/LEAK"
expect_crash ubsan "runtime error: signed integer overflow" "$W/in/UBSAN"
expect_crash invariant "invariant failed" "$W/in/ABORT"
printf 'x' > "$W/seed"
expect_crash search "ERROR: AddressSanitizer: heap-buffer-overflow" --runs 2000000 --seed 1 "$W/seed"

printf 'fine' > "$W/in/clean"
if ! "$BIN" --artifacts "$W/art" "$W/in/clean" > "$W/clean.log" 2>&1 ||
   ! grep -q "no crash" "$W/clean.log"; then
    echo "FAILED: a clean input does not pass"
    cat "$W/clean.log"
    fail=1
else
    echo "ok: clean input passes"
fi
exit $fail
