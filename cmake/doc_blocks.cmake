# Reads the fenced code blocks of a Markdown page, with the marker comment that
# may stand on the lines just before a block's opening fence. Shared by the
# scripts that compile the pages' C++ snippets, check the examples they show
# and compare the examples' output with the output they show.
#
# The markers (HTML comments, so the rendered page does not show them):
#   <!-- snippet: function -->      a cpp block compiled as a function body
#   <!-- snippet: namespace -->     a cpp block compiled at namespace scope (the default)
#   <!-- snippet: continue -->      a cpp block that goes on from the page's previous one
#                                   (same namespace or function: it uses its names)
#   <!-- snippet: skip: REASON -->  a cpp block not compiled; the reason is required
#   <!-- snippet: example FILE -->  a cpp block that is FILE (relative to the source root),
#                                   verbatim; FILE itself is built, so it is not compiled here
#   <!-- output: FILE -->           a block that is what the program built from FILE prints
# A snippet marker may span lines: what follows its first line, up to `-->`, is
# hidden setup code compiled before the snippet at namespace scope (declarations
# the page assumes, such as a user's function the snippet calls).

# doc_pop_line(TEXT_VAR LINE_VAR): moves the first line of TEXT_VAR (without
# its newline) into LINE_VAR.
function(doc_pop_line text_var line_var)
  string(FIND "${${text_var}}" "\n" nl)
  if(nl EQUAL -1)
    set(${line_var} "${${text_var}}" PARENT_SCOPE)
    set(${text_var} "" PARENT_SCOPE)
  else()
    string(SUBSTRING "${${text_var}}" 0 ${nl} line)
    math(EXPR next "${nl} + 1")
    string(SUBSTRING "${${text_var}}" ${next} -1 rest)
    set(${line_var} "${line}" PARENT_SCOPE)
    set(${text_var} "${rest}" PARENT_SCOPE)
  endif()
endfunction()

# doc_blocks(PAGE PREFIX): sets, in the caller's scope,
#   ${PREFIX}_COUNT                 the number of fenced blocks
#   ${PREFIX}_<i>_LANG              the fence's info string (e.g. cpp, text)
#   ${PREFIX}_<i>_LINE              the page line of the block's first code line
#   ${PREFIX}_<i>_CODE              the block's text (each line ends with a newline)
#   ${PREFIX}_<i>_MARKER            the marker comment's first line without `<!--`/`-->`
#                                   (e.g. "snippet: function"), or empty
#   ${PREFIX}_<i>_SETUP             the marker's further lines (hidden setup code)
#   ${PREFIX}_<i>_SETUP_LINE        the page line where that setup code starts
# Lines are kept in plain variables, never in CMake lists, so that code with
# semicolons and brackets survives.
function(doc_blocks page prefix)
  file(READ "${page}" text)
  set(count 0)
  set(line_no 0)
  set(in_block FALSE)
  # The comment being read, and the one that ended on the previous line.
  set(in_comment FALSE)
  set(comment_first "")
  set(comment_rest "")
  set(comment_rest_line 0)
  set(pending_marker "")
  set(pending_setup "")
  set(pending_setup_line 0)
  while(NOT text STREQUAL "")
    doc_pop_line(text line)
    math(EXPR line_no "${line_no} + 1")

    if(in_block)
      if(line MATCHES "^[ ]*```[ ]*$")
        set(in_block FALSE)
        set(${prefix}_${count}_CODE "${code}" PARENT_SCOPE)
      else()
        string(APPEND code "${line}\n")
      endif()
      continue()
    endif()

    if(line MATCHES "^[ ]*```([A-Za-z0-9_+-]*)")
      math(EXPR count "${count} + 1")
      math(EXPR first_line "${line_no} + 1")
      set(${prefix}_${count}_LANG "${CMAKE_MATCH_1}" PARENT_SCOPE)
      set(${prefix}_${count}_LINE "${first_line}" PARENT_SCOPE)
      set(${prefix}_${count}_MARKER "${pending_marker}" PARENT_SCOPE)
      set(${prefix}_${count}_SETUP "${pending_setup}" PARENT_SCOPE)
      set(${prefix}_${count}_SETUP_LINE "${pending_setup_line}" PARENT_SCOPE)
      set(in_block TRUE)
      set(code "")
      set(pending_marker "")
      set(pending_setup "")
      continue()
    endif()

    # A marker counts only on the line right before a fence.
    set(pending_marker "")
    set(pending_setup "")
    if(in_comment)
      if(line MATCHES "^(.*)-->[ ]*$")
        set(in_comment FALSE)
        string(APPEND comment_rest "${CMAKE_MATCH_1}")
        set(pending_marker "${comment_first}")
        set(pending_setup "${comment_rest}")
        set(pending_setup_line ${comment_rest_line})
      else()
        string(APPEND comment_rest "${line}\n")
      endif()
    elseif(line MATCHES "^[ ]*<!--[ ]*((snippet|output):.*)$")
      set(body "${CMAKE_MATCH_1}")
      if(body MATCHES "^(.*[^ ])[ ]*-->[ ]*$")
        set(pending_marker "${CMAKE_MATCH_1}")
        set(pending_setup_line 0)
      else()
        string(STRIP "${body}" comment_first)
        set(comment_rest "")
        math(EXPR comment_rest_line "${line_no} + 1")
        set(in_comment TRUE)
      endif()
    endif()
  endwhile()
  if(in_block)
    message(FATAL_ERROR "${page}: a code block opened at line ${first_line} is never closed")
  endif()
  set(${prefix}_COUNT ${count} PARENT_SCOPE)
endfunction()

# doc_marker(MARKER KIND_VAR ARG_VAR): splits "snippet: skip: reason" into
# KIND "snippet:skip" and ARG "reason"; "output: FILE" into "output" and FILE.
function(doc_marker marker kind_var arg_var)
  set(kind "")
  set(arg "")
  if(marker MATCHES "^snippet:[ ]*([a-z]+)[: ]*(.*)$")
    set(kind "snippet:${CMAKE_MATCH_1}")
    set(arg "${CMAKE_MATCH_2}")
  elseif(marker MATCHES "^output:[ ]*(.*)$")
    set(kind "output")
    set(arg "${CMAKE_MATCH_1}")
  endif()
  string(STRIP "${arg}" arg)
  set(${kind_var} "${kind}" PARENT_SCOPE)
  set(${arg_var} "${arg}" PARENT_SCOPE)
endfunction()
