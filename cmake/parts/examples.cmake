# The user program the README's injection commands run (`./app` there): a plain MPI ring, built so
# every documented command runs as written (tests/python/test_docs.py). It uses MPI only, no
# liblatscope: what an application looks like to the injector.
lts_program(example-ring SOURCES ${CMAKE_SOURCE_DIR}/examples/ring.c LIBS MPI::MPI_C)
# A program latscope did not write, in the style of NPB IS (docs/your-application.md): built here
# only for bench/sim_vs_real.py, which finds its programs in build/bin; the docs and tests build it
# with mpicc as a user would.
lts_program(example-intsort SOURCES ${CMAKE_SOURCE_DIR}/examples/intsort.c LIBS MPI::MPI_C)
