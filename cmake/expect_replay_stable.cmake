# Replays SCENARIO twice with `COMMAND replay --check`, each time into a fresh
# base directory under WORK_DIR, and succeeds only if both runs pass their
# expectations and print the same output byte for byte, and leave the same
# files (by name) in their base directories: docs/replay.md's promise.
foreach(run 1 2)
  set(base "${WORK_DIR}/${run}")
  file(REMOVE_RECURSE "${base}")
  file(MAKE_DIRECTORY "${base}")
  execute_process(COMMAND ${COMMAND} replay --check --base-dir "${base}" ${SCENARIO}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${run} exited with ${rc}\nstdout: ${out}\nstderr: ${err}")
  endif()
  # Kept in variables of their own: an output's ";" would split a CMake list.
  set(out_${run} "${out}")
  file(GLOB_RECURSE files LIST_DIRECTORIES true RELATIVE "${base}" "${base}/*")
  list(SORT files)
  string(JOIN "\n" tree_${run} ${files})
  file(REMOVE_RECURSE "${base}")
endforeach()
if(NOT out_1 STREQUAL out_2)
  file(WRITE "${WORK_DIR}/first.out" "${out_1}")
  file(WRITE "${WORK_DIR}/second.out" "${out_2}")
  message(FATAL_ERROR "the two runs printed different outputs: ${WORK_DIR}/first.out and second.out")
endif()
if(NOT tree_1 STREQUAL tree_2)
  message(FATAL_ERROR "the two runs left different files:\n${tree_1}\n--\n${tree_2}")
endif()
message(STATUS "the same output twice (${SCENARIO})")
