# The LogGOPS simulator (docs/sim.md): liblatscope_sim (src/sim, pure C, no MPI) and
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
# Link-time optimisation of the library: the executors' event loops call across its files into the
# core and into the program ranks (exec_window.c into exec_prog.c once per event); one translation
# unit had those calls inlined, and without LTO the split engine ran 5-7 % more instructions per
# event (bench/sim_scale.py; counted by callgrind). A toolchain without LTO builds the same program,
# that much slower.
include(CheckIPOSupported)
check_ipo_supported(RESULT LTS_SIM_IPO OUTPUT LTS_SIM_IPO_WHY LANGUAGES C)
if(LTS_SIM_IPO)
  set_target_properties(latscope_sim PROPERTIES INTERPROCEDURAL_OPTIMIZATION ON)
else()
  message(STATUS "latscope_sim: no link-time optimisation (${LTS_SIM_IPO_WHY})")
endif()

lts_program(latscope-sim SOURCES ${CMAKE_SOURCE_DIR}/apps/latscope_sim.c LIBS latscope_sim)
if(LTS_SIM_IPO)
  # the link compiles the library's code: at its -O3, the program itself not taken in (with it, or at
  # the build type's -O2, the GOAL parser's helpers were inlined less: 7 % more instructions)
  target_link_options(latscope-sim PRIVATE ${CMAKE_C_COMPILE_OPTIONS_IPO} -O3)
endif()
install(TARGETS latscope-sim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
