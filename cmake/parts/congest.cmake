# latscope-congest (seed 004 §5.1 Algorithm 3): background load between rank pairs with
# exponential inter-message gaps from MT19937-64. Its own executable, not a latscope-bench
# command: it runs alongside the program being measured, for a duration or until a signal.
# The program is apps/latscope_congest.c; src/congest holds the generator and its random numbers.
add_executable(latscope-congest ${CMAKE_SOURCE_DIR}/apps/latscope_congest.c ${CMAKE_SOURCE_DIR}/src/congest/congest.c
               ${CMAKE_SOURCE_DIR}/src/congest/mt64.c)
target_include_directories(latscope-congest PRIVATE ${CMAKE_SOURCE_DIR}/src/congest ${CMAKE_SOURCE_DIR}/src/include)
target_link_libraries(latscope-congest PRIVATE latscope ${LIBM})
target_compile_definitions(latscope-congest PRIVATE _GNU_SOURCE)
target_compile_options(latscope-congest PRIVATE -Wall -Wextra -Wno-unused-parameter)
set_target_properties(latscope-congest PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
install(TARGETS latscope-congest RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
