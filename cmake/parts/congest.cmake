# latscope-congest (seed 004 §5.1 Algorithm 3): background load between rank pairs with
# exponential inter-message gaps from MT19937-64. Its own executable, not a latscope-bench
# command: it runs alongside the program being measured, for a duration or until a signal.
# The program is apps/latscope_congest.c; src/congest holds the generator and its random numbers.
lts_program(latscope-congest SOURCES ${CMAKE_SOURCE_DIR}/apps/latscope_congest.c ${CMAKE_SOURCE_DIR}/src/congest/congest.c
            ${CMAKE_SOURCE_DIR}/src/congest/mt64.c LIBS latscope ${LIBM} INCLUDES ${CMAKE_SOURCE_DIR}/src/congest ${CMAKE_SOURCE_DIR}/src/include
            INSTALL)
