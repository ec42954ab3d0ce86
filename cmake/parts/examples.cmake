# The user program the README's injection commands run (`./app` there): a plain MPI ring, built so
# every documented command runs as written (tests/python/test_docs.py). It uses MPI only, no
# liblatscope: what an application looks like to the injector.
add_executable(example-ring ${CMAKE_SOURCE_DIR}/examples/ring.c)
target_link_libraries(example-ring PRIVATE MPI::MPI_C)
target_compile_options(example-ring PRIVATE -Wall -Wextra)
set_target_properties(example-ring PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
# A program latscope did not write, in the style of NPB IS (docs/your-application.md): built here
# only for bench/sim_vs_real.py, which finds its programs in build/bin; the docs and tests build it
# with mpicc as a user would.
add_executable(example-intsort ${CMAKE_SOURCE_DIR}/examples/intsort.c)
target_link_libraries(example-intsort PRIVATE MPI::MPI_C)
target_compile_options(example-intsort PRIVATE -Wall -Wextra)
set_target_properties(example-intsort PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
