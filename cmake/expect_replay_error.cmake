# Runs `COMMAND replay SCENARIO` and succeeds only if it exits with 2 and its
# error output contains PATTERN.
execute_process(COMMAND ${COMMAND} replay ${SCENARIO} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit status 2, got ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
string(FIND "${err}" "${PATTERN}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "the error lacks \"${PATTERN}\": ${err}")
endif()
message(STATUS "failed as expected: ${err}")
