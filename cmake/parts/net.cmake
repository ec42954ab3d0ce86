# latscope-net (docs/network.md): the UDP messaging layer (src/net/udp.c), the barrier rows on it
# (src/net/barrier.c) and the program that measures them across the emulated cluster.
add_executable(latscope-net ${CMAKE_SOURCE_DIR}/apps/latscope_net.c ${CMAKE_SOURCE_DIR}/src/net/udp.c
               ${CMAKE_SOURCE_DIR}/src/net/barrier.c)
target_link_libraries(latscope-net PRIVATE latscope m)
target_compile_definitions(latscope-net PRIVATE _GNU_SOURCE)
target_compile_options(latscope-net PRIVATE -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
set_target_properties(latscope-net PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
install(TARGETS latscope-net RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The rows' schedules checked without a network (P = 1..64): matched sends and waits, no rank done
# before every rank arrived.
add_executable(test_net_sched ${CMAKE_SOURCE_DIR}/tests/c/test_net_sched.c ${CMAKE_SOURCE_DIR}/src/net/barrier.c
               ${CMAKE_SOURCE_DIR}/src/net/udp.c)
target_link_libraries(test_net_sched PRIVATE latscope)
target_compile_definitions(test_net_sched PRIVATE _GNU_SOURCE)
add_test(NAME test_net_sched COMMAND test_net_sched)
