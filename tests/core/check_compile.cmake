# Runs the C++ compiler on one file in syntax-only mode and checks the outcome.
#   -DCOMPILER=... -DINCLUDE_DIR=... -DSOURCE=... -DEXPECT=pass|fail [-DDIAGNOSTIC_REGEX=...]
# EXPECT=fail passes only when the compiler rejects the file AND its diagnostic matches DIAGNOSTIC_REGEX,
# so a file that fails for an unrelated reason (a typo, a missing header) does not count as a pass.
foreach(required COMPILER INCLUDE_DIR SOURCE EXPECT)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "check_compile.cmake needs -D${required}=...; it was not given.")
  endif()
endforeach()

execute_process(
  COMMAND "${COMPILER}" -std=c++20 -fsyntax-only "-I${INCLUDE_DIR}" "${SOURCE}"
  RESULT_VARIABLE compile_status
  OUTPUT_VARIABLE compile_output
  ERROR_VARIABLE compile_output)

if(EXPECT STREQUAL "pass")
  if(NOT compile_status EQUAL 0)
    message(FATAL_ERROR "${SOURCE} was expected to compile but the compiler exited with ${compile_status}:\n"
                        "${compile_output}")
  endif()
  message(STATUS "${SOURCE} compiled, as expected.")
elseif(EXPECT STREQUAL "fail")
  if(compile_status EQUAL 0)
    message(FATAL_ERROR "${SOURCE} compiled, but it must be rejected: the guarded constructor is reachable.")
  endif()
  if(DEFINED DIAGNOSTIC_REGEX AND NOT compile_output MATCHES "${DIAGNOSTIC_REGEX}")
    message(FATAL_ERROR "${SOURCE} was rejected, but not for the expected reason (no match for "
                        "'${DIAGNOSTIC_REGEX}'):\n${compile_output}")
  endif()
  message(STATUS "${SOURCE} was rejected for the expected reason.")
else()
  message(FATAL_ERROR "EXPECT must be 'pass' or 'fail', not '${EXPECT}'.")
endif()
