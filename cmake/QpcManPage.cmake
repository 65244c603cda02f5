# SPDX-License-Identifier: MIT
# qpc_man_page(tool "one-line description"): man page <tool>.1 generated after
# the tool is built, by help2man from `tool --help` and `tool --version`, so
# the page cannot drift from the help text. Installed under share/man/man1
# with QPCONNECT_INSTALL; with tests, `man_<tool>` (label unit) checks that the
# page carries every option --help lists. Without help2man (tools/dev/deps.sh
# installs it) there are no man pages, and configure says so once.
find_program(QPC_HELP2MAN help2man)
# A warning where the tests would check the pages; a status line for a build
# without tests (tools/dev/main.sh, which installs no help2man).
if(NOT QPC_HELP2MAN)
  if(QPCONNECT_BUILD_TESTS)
    message(WARNING "help2man not found: the tools' man pages are not built (tools/dev/deps.sh)")
  else()
    message(STATUS "help2man not found: the tools' man pages are not built")
  endif()
endif()

function(qpc_man_page tool description)
  if(NOT QPC_HELP2MAN)
    return()
  endif()
  set(page ${CMAKE_CURRENT_BINARY_DIR}/${tool}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${QPC_HELP2MAN} --no-info --section=1 --name=${description} --output=${page}
            $<TARGET_FILE:${tool}>
    DEPENDS ${tool}
    COMMENT "Generating ${tool}.1 from ${tool} --help and --version"
    VERBATIM)
  add_custom_target(${tool}_man ALL DEPENDS ${page})
  if(QPCONNECT_INSTALL)
    install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tools)
  endif()
  if(QPCONNECT_BUILD_TESTS)
    add_test(NAME man_${tool}
             COMMAND ${PROJECT_SOURCE_DIR}/tests/package/man_page_test.sh $<TARGET_FILE:${tool}>
                     ${page})
    set_tests_properties(man_${tool} PROPERTIES LABELS unit TIMEOUT 60)
  endif()
endfunction()
