# Run-time selection (seed 001 §4 Opt_Scatter): the example application that
# tunes scatter and then uses lts_scatter_tuned, and the MPI test program of tune.h (run under
# mpiexec by tests/python/test_tune.py at np 1..4).
add_executable(example-tuned-scatter ${CMAKE_SOURCE_DIR}/examples/tuned_scatter.c)
target_link_libraries(example-tuned-scatter PRIVATE latscope)
target_compile_definitions(example-tuned-scatter PRIVATE _GNU_SOURCE)
target_compile_options(example-tuned-scatter PRIVATE -Wall -Wextra -Wno-unused-parameter)
set_target_properties(example-tuned-scatter PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

add_executable(tune-check ${CMAKE_SOURCE_DIR}/tests/c/tune_check.c)
target_link_libraries(tune-check PRIVATE latscope ${LIBM})
target_include_directories(tune-check PRIVATE ${CMAKE_SOURCE_DIR}/src/include)   # jsonread.h
target_compile_definitions(tune-check PRIVATE _GNU_SOURCE)
target_compile_options(tune-check PRIVATE -Wall -Wextra -Wno-unused-parameter)
set_target_properties(tune-check PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
