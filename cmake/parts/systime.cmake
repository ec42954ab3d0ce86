# liblatscope_systime.so (docs/budget.md "Inside the MPI call"): an LD_PRELOAD
# interposer on libc's socket, read/write and polling calls. Self-contained (no liblatscope, no
# MPI): it is preloaded into every process of a launch, the launcher's included, and into plain
# programs. Only lts_systime_* and the wrapped libc names are exported.
find_package(Threads REQUIRED)
add_library(latscope_systime SHARED ${CMAKE_SOURCE_DIR}/src/systime/systime.c)
target_include_directories(latscope_systime PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(latscope_systime PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
target_compile_definitions(latscope_systime PRIVATE _GNU_SOURCE)
target_compile_options(latscope_systime PRIVATE -Wall -Wextra -Wno-unused-parameter -fvisibility=hidden)
set_target_properties(latscope_systime PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
                      OUTPUT_NAME latscope_systime)
install(TARGETS latscope_systime LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# The test programs of tests/python/test_systime.py: a plain program with a known number of
# write() calls, and an MPI ping-pong that counts only its timed loop (lts_systime_start/stop).
lts_program(systime-writes SOURCES ${CMAKE_SOURCE_DIR}/tests/c/systime_writes.c LIBS ${CMAKE_DL_LIBS}
            INCLUDES ${CMAKE_SOURCE_DIR}/include)
lts_program(systime-pingpong SOURCES ${CMAKE_SOURCE_DIR}/tests/c/systime_pingpong.c
            LIBS MPI::MPI_C ${CMAKE_DL_LIBS} INCLUDES ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/bench)
