# The LogGOPS simulator (issue 16, docs/sim.md): liblatscope_sim (src/sim, pure C, no MPI) and
# its program latscope-sim (apps/latscope_sim.c). The delay tables and the per-rank random
# streams are the injector's own code (src/inject/table.c, linked here, not copied), so the same
# table and seed give the same per-rank draws as liblatscope_inject.so. src/sim/*.c: the core
# (engine.c), its executors (exec_prog.c, exec_window.c, exec_goal.c), the end of a run they share
# (report.c), GOAL parsing (goal.c), the generated schedules (programs.c), OS-noise traces (noise.c);
# engine_internal.h is theirs, not installed.
file(GLOB LTS_SIM_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/sim/*.c)
add_library(latscope_sim STATIC ${LTS_SIM_SOURCES} ${CMAKE_SOURCE_DIR}/src/inject/table.c)
target_include_directories(latscope_sim PUBLIC ${CMAKE_SOURCE_DIR}/src/sim ${CMAKE_SOURCE_DIR}/src/inject
                           ${CMAKE_SOURCE_DIR}/src/include ${CMAKE_SOURCE_DIR}/include)
target_compile_definitions(latscope_sim PRIVATE _GNU_SOURCE)
target_compile_options(latscope_sim PRIVATE -O3 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
target_link_libraries(latscope_sim PUBLIC ${LIBM})
set_target_properties(latscope_sim PROPERTIES POSITION_INDEPENDENT_CODE ON)

add_executable(latscope-sim ${CMAKE_SOURCE_DIR}/apps/latscope_sim.c)
target_link_libraries(latscope-sim PRIVATE latscope_sim)
target_compile_definitions(latscope-sim PRIVATE _GNU_SOURCE)
target_compile_options(latscope-sim PRIVATE -Wall -Wextra -Wno-unused-parameter)
set_target_properties(latscope-sim PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
install(TARGETS latscope-sim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
