# The allocator of quiesce's own executables (the quiesce command, the benchmarks, the tests): tcmalloc
# from gperftools (Debian: libgoogle-perftools-dev), or the C library's malloc. A campaign builds and tears
# down a whole simulated stack per case, and glibc's malloc hands the heap's top back to the kernel after
# each case and takes it again with fresh zeroed pages in the next; tcmalloc keeps it (docs/allocator.md has
# the measurements). Libraries never link it: a runtime that uses quiesce through find_package(quiesce)
# keeps its own allocator.
#
# QUIESCE_ALLOCATOR=tcmalloc (the default) or system, the default of the portable HIL bundle, which must
# not need the shared library on the GPU host. The libFuzzer target never links quiesce_allocator: its
# sanitizers replace malloc.
if(QUIESCE_PORTABLE)
  set(quiesce_allocator_default system)
else()
  set(quiesce_allocator_default tcmalloc)
endif()
set(QUIESCE_ALLOCATOR ${quiesce_allocator_default} CACHE STRING "Allocator of quiesce's executables: tcmalloc or system")
set_property(CACHE QUIESCE_ALLOCATOR PROPERTY STRINGS tcmalloc system)

add_library(quiesce_allocator INTERFACE)
if(QUIESCE_ALLOCATOR STREQUAL "tcmalloc")
  pkg_check_modules(TCMALLOC IMPORTED_TARGET libtcmalloc_minimal)
  if(NOT TCMALLOC_FOUND)
    message(FATAL_ERROR "QUIESCE_ALLOCATOR=tcmalloc needs libtcmalloc_minimal (Debian: libgoogle-perftools-dev; "
                        "./dev installs it), or configure with -DQUIESCE_ALLOCATOR=system")
  endif()
  # Nothing calls into tcmalloc by name, so a linker that drops unused shared libraries would drop it.
  target_link_libraries(quiesce_allocator INTERFACE "-Wl,--push-state,--no-as-needed" PkgConfig::TCMALLOC
                                                    "-Wl,--pop-state")
  target_compile_definitions(quiesce_allocator INTERFACE QUIESCE_ALLOCATOR_NAME="tcmalloc")
elseif(QUIESCE_ALLOCATOR STREQUAL "system")
  target_compile_definitions(quiesce_allocator INTERFACE QUIESCE_ALLOCATOR_NAME="system")
else()
  message(FATAL_ERROR "QUIESCE_ALLOCATOR is '${QUIESCE_ALLOCATOR}'; it must be tcmalloc or system")
endif()
message(STATUS "quiesce executables' allocator: ${QUIESCE_ALLOCATOR}")
