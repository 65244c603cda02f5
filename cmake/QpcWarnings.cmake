# SPDX-License-Identifier: MIT
# qpc_set_warnings(target): the project's warning set (and sanitizers) on one target.
function(qpc_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
    -Wconversion -Wsign-conversion -Wimplicit-fallthrough)
  if(QPCONNECT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(QPCONNECT_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${QPCONNECT_SANITIZE} -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${QPCONNECT_SANITIZE})
  endif()
endfunction()
