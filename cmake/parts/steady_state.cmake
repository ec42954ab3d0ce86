# bench/steady_state.py's reference run: OSU's fixed loop and latscope's default repetition
# control side by side in one launch (links the library, as an application would).
add_executable(steady-state ${CMAKE_SOURCE_DIR}/bench/steady_state.c)
target_link_libraries(steady-state PRIVATE latscope MPI::MPI_C)
set_target_properties(steady-state PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
# bench/steady_state_trace.py's per-sample traces (what a missed adaptive run met)
add_executable(steady-state-trace ${CMAKE_SOURCE_DIR}/bench/steady_state_trace.c)
target_link_libraries(steady-state-trace PRIVATE latscope MPI::MPI_C)
set_target_properties(steady-state-trace PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
