# Barrier algorithms (docs/barriers.md "Barrier rows"): the semantics check run under mpiexec by
# tests/python/test_barrier.py.
lts_program(barrier-check SOURCES tests/c/barrier_check.c apps/test_hooks.c LIBS latscope
            INCLUDES ${CMAKE_SOURCE_DIR}/apps)
