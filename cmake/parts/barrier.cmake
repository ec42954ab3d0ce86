# Barrier algorithms (docs/barriers.md "Barrier rows"): the semantics check run under mpiexec by
# tests/python/test_barrier.py.
add_executable(barrier-check tests/c/barrier_check.c apps/test_hooks.c)
target_include_directories(barrier-check PRIVATE ${CMAKE_SOURCE_DIR}/apps)
target_link_libraries(barrier-check PRIVATE latscope)
target_compile_definitions(barrier-check PRIVATE _GNU_SOURCE)
target_compile_options(barrier-check PRIVATE -Wall -Wextra -Wno-unused-parameter)
set_target_properties(barrier-check PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
