# Builds TARGET in BUILD_DIR and succeeds only if the build fails with every
# pattern of PATTERNS (a ;-list) in the compiler's output.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(result EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but it must not")
endif()
foreach(pattern IN LISTS PATTERNS)
  string(FIND "${all}" "${pattern}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "${TARGET}: the compiler's output lacks \"${pattern}\":\n${all}")
  endif()
endforeach()
message(STATUS "${TARGET} failed to compile as expected, naming: ${PATTERNS}")
