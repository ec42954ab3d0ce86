# Injector extras (issue 5). bench/inject_overhead.py runs inject-overhead with and without
# liblatscope_inject.so preloaded; like bare-pingpong it links only MPI, so what it measures is
# the MPI library's MPI_Send and whatever LD_PRELOAD puts in front of it.
add_executable(inject-overhead ${CMAKE_SOURCE_DIR}/bench/inject_overhead.c)
target_link_libraries(inject-overhead PRIVATE MPI::MPI_C)
target_compile_definitions(inject-overhead PRIVATE _GNU_SOURCE)
set_target_properties(inject-overhead PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

# Which MPI-3/4 entry points this MPI declares: src/inject/wrappers_gen.inc wraps each group only
# where it exists (a missing function is the one thing a build option is for: choices are made
# at run time, docs/architecture.md "C: one driver, descriptors and registries").
include(CheckSymbolExists)
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
set(CMAKE_REQUIRED_QUIET ON)
foreach(pair "PMPI_Send_c:LTS_HAVE_LARGE_COUNT" "PMPI_Isendrecv:LTS_HAVE_ISENDRECV"
             "PMPI_Isendrecv_c:LTS_HAVE_ISENDRECV_LARGE_COUNT" "PMPI_Neighbor_allgather:LTS_HAVE_NEIGHBOR"
             "PMPI_Barrier_init:LTS_HAVE_PERSISTENT_COLL" "PMPI_Bcast_init_c:LTS_HAVE_PERSISTENT_COLL_LARGE_COUNT")
  string(REPLACE ":" ";" pv ${pair})
  list(GET pv 0 sym)
  list(GET pv 1 var)
  check_symbol_exists(${sym} mpi.h ${var})
  if(${var})
    target_compile_definitions(latscope_inject PRIVATE ${var})
  endif()
endforeach()
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_QUIET)
# inject-probe (tests/c/inject_probe.c) exercises the same groups, so the tests see them delayed.
foreach(var LTS_HAVE_LARGE_COUNT LTS_HAVE_ISENDRECV LTS_HAVE_NEIGHBOR LTS_HAVE_PERSISTENT_COLL)
  if(${var})
    target_compile_definitions(inject-probe PRIVATE ${var})
  endif()
endforeach()

# The injector's message mode (LATSCOPE_INJECT_COLL=messages, issue 13 item 6): a bcast timed as
# the job sees it (largest time over the ranks), beside its PMPI_ baseline; links only MPI.
add_executable(inject-coll-probe ${CMAKE_SOURCE_DIR}/tests/c/inject_coll_probe.c)
target_link_libraries(inject-coll-probe PRIVATE MPI::MPI_C)
set_target_properties(inject-coll-probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
