# bench/steady_state.py's reference run: OSU's fixed loop and latscope's default repetition
# control side by side in one launch (links the library, as an application would).
add_executable(steady-state ${CMAKE_SOURCE_DIR}/bench/steady_state.c)
target_link_libraries(steady-state PRIVATE latscope MPI::MPI_C)
set_target_properties(steady-state PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
