# One interface target carries the project's warning flags; every quiesce target links it.
add_library(quiesce_warnings INTERFACE)
target_compile_options(quiesce_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                                  -Wold-style-cast -Wcast-align -Woverloaded-virtual
                                                  -Wimplicit-fallthrough)
if(QUIESCE_WERROR)
  target_compile_options(quiesce_warnings INTERFACE -Werror)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # g++ 12 reports false positives for std::variant moves at -O2 (GCC bug 105562/107138).
  target_compile_options(quiesce_warnings INTERFACE -Wno-maybe-uninitialized)
endif()
if(QUIESCE_PORTABLE)
  add_link_options(-static-libstdc++ -static-libgcc)
endif()
