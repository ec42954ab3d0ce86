# Run-time selection (seed 001 §4 Opt_Scatter): the example application that
# tunes scatter and then uses lts_scatter_tuned, and the MPI test program of tune.h (run under
# mpiexec by tests/python/test_tune.py at np 1..4).
lts_program(example-tuned-scatter SOURCES ${CMAKE_SOURCE_DIR}/examples/tuned_scatter.c LIBS latscope)

lts_program(tune-check SOURCES ${CMAKE_SOURCE_DIR}/tests/c/tune_check.c LIBS latscope ${LIBM}
            INCLUDES ${CMAKE_SOURCE_DIR}/src/include)  # jsonread.h
