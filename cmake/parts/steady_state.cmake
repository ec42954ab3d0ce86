# bench/steady_state.py's reference run: OSU's fixed loop and latscope's default repetition
# control side by side in one launch (links the library, as an application would).
lts_program(steady-state SOURCES ${CMAKE_SOURCE_DIR}/bench/steady_state.c LIBS latscope MPI::MPI_C)
# bench/steady_state_trace.py's per-sample traces (what a missed adaptive run met)
lts_program(steady-state-trace SOURCES ${CMAKE_SOURCE_DIR}/bench/steady_state_trace.c LIBS latscope MPI::MPI_C)
