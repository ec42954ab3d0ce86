# Fuzz harnesses: tests/fuzz/fuzz_<parser>.c, each with the libFuzzer entry point,
# linked with our own mutation driver (tests/fuzz/driver.c: there is no clang here). Built only
# in the sanitizer build (`make test-asan` configures build-asan with -DLTS_FUZZ=ON and
# -fsanitize=address,undefined). The parser sources are compiled into each harness with
# -fsanitize-coverage=trace-pc so the driver sees which edges an input reached and keeps the
# inputs that reach new ones; the driver itself is compiled without it (it is the callback).
option(LTS_FUZZ "build the fuzz harnesses of tests/fuzz" OFF)
if(LTS_FUZZ)
  set(LTS_FUZZ_SECONDS 4 CACHE STRING "seconds each harness runs under ctest (make fuzz: FUZZ_SECONDS)")
  add_library(lts-fuzz-driver OBJECT ${CMAKE_SOURCE_DIR}/tests/fuzz/driver.c)
  target_include_directories(lts-fuzz-driver PRIVATE ${CMAKE_SOURCE_DIR}/tests/fuzz)
  target_compile_options(lts-fuzz-driver PRIVATE -Wall -Wextra)

  set(LTS_FUZZ_SRC_sizes ${CMAKE_SOURCE_DIR}/src/core/sizes.c)
  set(LTS_FUZZ_SRC_table ${CMAKE_SOURCE_DIR}/src/inject/table.c)
  set(LTS_FUZZ_SRC_json ${CMAKE_SOURCE_DIR}/src/core/jsonread.c)
  # the decision table's reader and writer (tune_json.c), the table itself (tune_table.c) and the
  # JSON reader compiled in (with coverage) take precedence over liblatscope's copies; the
  # collective registry (the --alg grammar) and the JSON writer come from liblatscope, without
  # coverage: a second copy of the registry's global tables would be an ODR violation (ASan).
  set(LTS_FUZZ_SRC_tune ${CMAKE_SOURCE_DIR}/src/algos/tune_json.c ${CMAKE_SOURCE_DIR}/src/algos/tune_table.c
      ${CMAKE_SOURCE_DIR}/src/core/jsonread.c)
  foreach(p sizes table json tune)
    lts_program(fuzz-${p} SOURCES ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_${p}.c ${LTS_FUZZ_SRC_${p}}
                $<TARGET_OBJECTS:lts-fuzz-driver> LIBS ${LIBM} OPTIONS -fsanitize-coverage=trace-pc DIR fuzz
                INCLUDES ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src/include ${CMAKE_SOURCE_DIR}/tests/fuzz
                ${CMAKE_SOURCE_DIR}/src/inject ${CMAKE_SOURCE_DIR}/src/algos)
    # a short run in every `ctest` of this build: the seed corpus, then mutations, seed fixed
    add_test(NAME fuzz_${p} COMMAND fuzz-${p} --seconds ${LTS_FUZZ_SECONDS} --seed 1 --quiet
             --dict ${CMAKE_SOURCE_DIR}/tests/fuzz/dict/${p}.dict --artifacts ${CMAKE_BINARY_DIR}
             ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/${p})
    set_tests_properties(fuzz_${p} PROPERTIES TIMEOUT 120 LABELS fuzz)
  endforeach()
  # The driver's own test: planted bugs must fail the run and save the input (tests/fuzz/selftest.sh).
  lts_program(fuzz-selftest SOURCES ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_selftest.c $<TARGET_OBJECTS:lts-fuzz-driver>
              INCLUDES ${CMAKE_SOURCE_DIR}/tests/fuzz OPTIONS -fsanitize-coverage=trace-pc DIR fuzz)
  add_test(NAME fuzz_driver_selftest COMMAND ${CMAKE_SOURCE_DIR}/tests/fuzz/selftest.sh $<TARGET_FILE:fuzz-selftest>
           ${CMAKE_BINARY_DIR}/fuzz-selftest)
  set_tests_properties(fuzz_driver_selftest PROPERTIES TIMEOUT 120 LABELS fuzz)
  target_link_libraries(fuzz-tune PRIVATE latscope MPI::MPI_C)
  target_compile_definitions(fuzz-tune PRIVATE LTS_GIT_SHA="${LTS_GIT_SHA}")
endif()
