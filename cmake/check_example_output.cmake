# Runs an example and compares what it prints with the output its documentation
# page shows: the block marked `<!-- output: EXAMPLE -->` (see doc_blocks.cmake).
# PROGRAM: the built example; EXAMPLE: its source, relative to ROOT (the source
# root); DOCS: the documentation folder (searched recursively).
include(${CMAKE_CURRENT_LIST_DIR}/doc_blocks.cmake)

file(GLOB_RECURSE pages "${DOCS}/*.md")
set(found "")
foreach(page IN LISTS pages)
  file(RELATIVE_PATH rel "${ROOT}" "${page}")
  doc_blocks("${page}" b)
  if(b_COUNT EQUAL 0)
    continue()
  endif()
  foreach(i RANGE 1 ${b_COUNT})
    doc_marker("${b_${i}_MARKER}" kind file)
    if(kind STREQUAL "output" AND file STREQUAL EXAMPLE)
      if(NOT found STREQUAL "")
        message(FATAL_ERROR "${EXAMPLE}: its output is shown twice, at ${found} and ${rel}:${b_${i}_LINE}")
      endif()
      set(found "${rel}:${b_${i}_LINE}")
      set(expected "${b_${i}_CODE}")
    endif()
  endforeach()
endforeach()
if(found STREQUAL "")
  message(FATAL_ERROR "${EXAMPLE}: no page under docs/ shows its output; add a block marked <!-- output: ${EXAMPLE} -->")
endif()

execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE status OUTPUT_VARIABLE actual ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${EXAMPLE}: the program failed (${status}):\n${actual}${errors}")
endif()
if(NOT actual STREQUAL expected)
  message(FATAL_ERROR "${EXAMPLE}: the output shown at ${found} is not what the program prints.\n"
                      "-- shown:\n${expected}-- printed:\n${actual}-- end")
endif()
message(STATUS "${EXAMPLE} prints what ${found} shows")
