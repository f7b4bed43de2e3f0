# quiesce_test(NAME name LABELS a b SOURCES ... LIBS ...): one GoogleTest executable, discovered at test
# time, every case labelled. A GTEST_SKIP shows as "skipped" in ctest, with its reason in the log.
function(quiesce_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "LABELS;SOURCES;LIBS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main quiesce_warnings
                                              quiesce_allocator)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  gtest_discover_tests(${ARG_NAME} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
                                  SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endfunction()
