# Injector extras. bench/inject_overhead.py runs inject-overhead with and without
# liblatscope_inject.so preloaded; like bare-pingpong it links only MPI, so what it measures is
# the MPI library's MPI_Send and whatever LD_PRELOAD puts in front of it.
lts_program(inject-overhead SOURCES ${CMAKE_SOURCE_DIR}/bench/inject_overhead.c LIBS MPI::MPI_C)

# The injector's wrappers, generated at build time from the MPI standard (src/inject/gen_wrappers.py,
# pympistandard): every send-like and collective call the MPI being built against declares. Its
# declarations are its mpi.h, preprocessed here once (rewritten only when it changes). The Python:
# Python_EXECUTABLE, which the Makefile passes (its venv's) and scikit-build-core sets (`pip install .`:
# pympistandard is a build requirement in pyproject.toml); else the first python3 found.
find_package(Python 3.10 COMPONENTS Interpreter REQUIRED)
execute_process(COMMAND "${Python_EXECUTABLE}" -c
  "import pathlib, pympistandard; print(pathlib.Path(pympistandard.__file__).parent / 'data' / 'apis.json')"
  OUTPUT_VARIABLE LTS_MPI_STANDARD OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${Python_EXECUTABLE} has no pympistandard (the MPI standard the injector's wrappers "
                      "are generated from): pip install -r requirements.txt, or pass "
                      "-DPython_EXECUTABLE=<a python with it>")
endif()
set(LTS_INJECT_GEN ${CMAKE_BINARY_DIR}/inject)
file(WRITE ${LTS_INJECT_GEN}/mpi_decls.c "#include <mpi.h>\n")
set(lts_mpi_flags)
foreach(d ${MPI_C_INCLUDE_DIRS})
  list(APPEND lts_mpi_flags "-I${d}")
endforeach()
foreach(d ${MPI_C_COMPILE_DEFINITIONS})
  list(APPEND lts_mpi_flags "-D${d}")
endforeach()
execute_process(COMMAND ${CMAKE_C_COMPILER} ${lts_mpi_flags} -E mpi_decls.c -o mpi_decls.i.new
                WORKING_DIRECTORY ${LTS_INJECT_GEN} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot preprocess mpi.h with ${CMAKE_C_COMPILER} ${lts_mpi_flags}: ${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different mpi_decls.i.new mpi_decls.i
                WORKING_DIRECTORY ${LTS_INJECT_GEN})
add_custom_command(OUTPUT ${LTS_INJECT_GEN}/wrappers_gen.inc
  COMMAND "${Python_EXECUTABLE}" ${CMAKE_SOURCE_DIR}/src/inject/gen_wrappers.py
          --mpi-decls ${LTS_INJECT_GEN}/mpi_decls.i --coll-ops ${CMAKE_SOURCE_DIR}/include/latscope/algos.h
          -o ${LTS_INJECT_GEN}/wrappers_gen.inc
  DEPENDS ${CMAKE_SOURCE_DIR}/src/inject/gen_wrappers.py ${CMAKE_SOURCE_DIR}/include/latscope/algos.h
          ${LTS_INJECT_GEN}/mpi_decls.i ${LTS_MPI_STANDARD}
  COMMENT "Generating the injector's wrappers from the MPI standard (pympistandard)" VERBATIM)
target_sources(latscope_inject PRIVATE ${LTS_INJECT_GEN}/wrappers_gen.inc)
target_include_directories(latscope_inject PRIVATE ${LTS_INJECT_GEN})

# Which MPI-3/4 entry points this MPI has: inject-probe (tests/c/inject_probe.c) calls each group
# only where it exists, so the tests see them delayed (a missing function is the one thing a build
# option is for: choices are made at run time, docs/architecture.md "C: one driver, descriptors
# and registries").
include(CheckSymbolExists)
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
set(CMAKE_REQUIRED_QUIET ON)
foreach(pair "PMPI_Send_c:LTS_HAVE_LARGE_COUNT" "PMPI_Isendrecv:LTS_HAVE_ISENDRECV"
             "PMPI_Neighbor_allgather:LTS_HAVE_NEIGHBOR" "PMPI_Barrier_init:LTS_HAVE_PERSISTENT_COLL")
  string(REPLACE ":" ";" pv ${pair})
  list(GET pv 0 sym)
  list(GET pv 1 var)
  check_symbol_exists(${sym} mpi.h ${var})
  if(${var})
    target_compile_definitions(inject-probe PRIVATE ${var})
  endif()
endforeach()
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_QUIET)

# The injector's message mode (LATSCOPE_INJECT_COLL=messages): a bcast timed as
# the job sees it (largest time over the ranks), beside its PMPI_ baseline; links only MPI.
lts_program(inject-coll-probe SOURCES ${CMAKE_SOURCE_DIR}/tests/c/inject_coll_probe.c LIBS MPI::MPI_C
            INCLUDES ${CMAKE_SOURCE_DIR}/bench)  # standalone.h
