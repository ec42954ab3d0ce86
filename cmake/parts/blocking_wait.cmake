# bench/blocking_wait.c: when a blocking receive returns, against when its message was sent
# (docs/barriers.md "Blocking waits"; the evidence for logp's rwait and the barrier wait floor).
lts_program(blocking-wait SOURCES ${CMAKE_SOURCE_DIR}/bench/blocking_wait.c LIBS MPI::MPI_C)
