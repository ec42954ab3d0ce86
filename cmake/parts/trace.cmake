# The tracer (docs/trace.md): liblatscope_trace.so, loaded with LD_PRELOAD like
# the injector, records each rank's MPI calls; its blocking collectives run as rows of
# liblatscope's algorithm registry. trace-pingpong is the program its tests and
# bench/sim_vs_real.py trace (links only MPI).
add_library(latscope_trace SHARED ${CMAKE_SOURCE_DIR}/src/trace/trace.c)
target_link_libraries(latscope_trace PRIVATE latscope MPI::MPI_C)
target_compile_definitions(latscope_trace PRIVATE _GNU_SOURCE)
target_compile_options(latscope_trace PRIVATE -O2 -Wall -Wextra -Wno-unused-parameter)
set_target_properties(latscope_trace PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
                      OUTPUT_NAME latscope_trace)
install(TARGETS latscope_trace LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

lts_program(trace-pingpong SOURCES ${CMAKE_SOURCE_DIR}/tests/c/trace_pingpong.c LIBS MPI::MPI_C)
