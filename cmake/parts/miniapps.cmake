# The mini-app suite (docs/miniapps.md): build/bin/latscope-<app> from
# miniapps/<app>.c and the common part miniapps/miniapp.c. One line per app below; a list, not a
# glob, so an app file that is still being written does not break everyone's build.
add_library(lts_miniapp_common STATIC ${CMAKE_SOURCE_DIR}/miniapps/miniapp.c)
target_include_directories(lts_miniapp_common PUBLIC ${CMAKE_SOURCE_DIR}/miniapps)
target_link_libraries(lts_miniapp_common PUBLIC MPI::MPI_C ${LIBM})
target_compile_definitions(lts_miniapp_common PUBLIC _GNU_SOURCE)
target_compile_options(lts_miniapp_common PUBLIC -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)

function(lts_miniapp app)
  lts_program(latscope-${app} SOURCES ${CMAKE_SOURCE_DIR}/miniapps/${app}.c LIBS lts_miniapp_common INSTALL)
endfunction()

lts_miniapp(cg)
lts_miniapp(lu)
lts_miniapp(is)
lts_miniapp(ft)
lts_miniapp(ep)
lts_miniapp(mg)
