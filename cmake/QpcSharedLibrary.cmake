# SPDX-License-Identifier: MIT
# qpc_add_shared_library(target OUTPUT_NAME name PARTS part...): one shared
# library, lib<name>.so.<QPC_SOVERSION> (the SONAME: cmake/QpcVersion.cmake), linked
# from the object files of the static PARTS. The parts stay as they are (the
# tools and tests link them); they are compiled as position-independent code so
# the same objects serve both.
#
# From each part the shared library takes:
#   - its objects, and those of OBJECT libraries it embeds with $<TARGET_OBJECTS>;
#   - its include directories and compile features, as its own interface;
#   - its links: PUBLIC ones stay public (consumers see them), PRIVATE ones
#     become private links of the shared library. Links between parts are
#     dropped: their objects are inside.
# So a new part brings its dependencies along. Call after every part is defined
# (the properties are read when this runs).
function(qpc_add_shared_library target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "OUTPUT_NAME" "PARTS")
  add_library(${target} SHARED)
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${arg_OUTPUT_NAME}
    VERSION ${PROJECT_VERSION}
    SOVERSION ${QPC_SOVERSION})
  set(public "")
  set(private "")
  foreach(part IN LISTS arg_PARTS)
    set_target_properties(${part} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${part}>)
    get_target_property(sources ${part} SOURCES)
    foreach(source IN LISTS sources)
      if(source MATCHES "^\\$<TARGET_OBJECTS:(.+)>$")
        set_target_properties(${CMAKE_MATCH_1} PROPERTIES POSITION_INDEPENDENT_CODE ON)
        target_sources(${target} PRIVATE ${source})
      endif()
    endforeach()
    foreach(property INTERFACE_INCLUDE_DIRECTORIES INTERFACE_COMPILE_FEATURES)
      get_target_property(values ${part} ${property})
      if(values)
        set_property(TARGET ${target} APPEND PROPERTY ${property} ${values})
      endif()
    endforeach()
    get_target_property(interface ${part} INTERFACE_LINK_LIBRARIES)
    foreach(lib IN LISTS interface)
      if(lib AND NOT lib MATCHES "^\\$<LINK_ONLY:")
        list(APPEND public ${lib})
      endif()
    endforeach()
    get_target_property(all ${part} LINK_LIBRARIES)
    if(all)
      list(APPEND private ${all})
    endif()
  endforeach()
  list(REMOVE_ITEM public ${arg_PARTS})
  list(REMOVE_ITEM private ${arg_PARTS} ${public})
  list(REMOVE_DUPLICATES public)
  list(REMOVE_DUPLICATES private)
  foreach(property INTERFACE_INCLUDE_DIRECTORIES INTERFACE_COMPILE_FEATURES)
    get_target_property(values ${target} ${property})
    list(REMOVE_DUPLICATES values)
    set_target_properties(${target} PROPERTIES ${property} "${values}")
  endforeach()
  target_link_libraries(${target} PUBLIC ${public} PRIVATE ${private})
  # Every symbol resolved at link time, so a missing dependency fails here and
  # not in a consumer (sanitizer runtimes are the consumer's to provide).
  if(NOT QPCONNECT_SANITIZE AND NOT QPCONNECT_BUILD_FUZZERS)
    target_link_options(${target} PRIVATE LINKER:--no-undefined)
  endif()
  qpc_set_warnings(${target})
endfunction()
