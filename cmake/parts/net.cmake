# latscope-net (docs/network.md): the UDP messaging layer (src/net/udp.c), the barrier rows on it
# (src/net/barrier.c) and the program that measures them across the emulated cluster.
lts_program(latscope-net SOURCES ${CMAKE_SOURCE_DIR}/apps/latscope_net.c ${CMAKE_SOURCE_DIR}/src/net/udp.c
            ${CMAKE_SOURCE_DIR}/src/net/barrier.c LIBS latscope m INSTALL)

# The rows' schedules checked without a network (P = 1..64): matched sends and waits, no rank done
# before every rank arrived.
lts_program(test_net_sched SOURCES ${CMAKE_SOURCE_DIR}/tests/c/test_net_sched.c ${CMAKE_SOURCE_DIR}/src/net/barrier.c
            ${CMAKE_SOURCE_DIR}/src/net/udp.c LIBS latscope DIR tests TEST)
