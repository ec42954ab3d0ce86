# bench/blocking_wait.c: when a blocking receive returns, against when its message was sent
# (docs/barriers.md "Blocking waits"; the evidence for logp's rwait and the barrier wait floor).
add_executable(blocking-wait ${CMAKE_SOURCE_DIR}/bench/blocking_wait.c)
target_link_libraries(blocking-wait PRIVATE MPI::MPI_C)
set_target_properties(blocking-wait PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
