# Fails when a documentation page no longer shows an example file as it is.
# DOC: the page; FILES: the example files (a ;-list) that must appear in it verbatim.
file(READ "${DOC}" doc)
foreach(f IN LISTS FILES)
  file(READ "${f}" code)
  string(FIND "${doc}" "${code}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "${DOC} does not show ${f} as it is now: update the page")
  endif()
endforeach()
message(STATUS "${DOC} shows: ${FILES}")
