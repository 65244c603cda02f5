# SPDX-License-Identifier: MIT
# tools_link_lite_runtime: the tool executable BIN carries Protobuf's lite
# runtime only (cmake/QpcStaticDeps.cmake). The full runtime registers
# descriptor.proto and its JSON support's types before main in every process:
# most of a one-pair connect's static initialization (docs/performance.md).
#   cmake -DBIN=path/to/qp-connect -P lite_runtime_check.cmake
if(NOT EXISTS "${BIN}")
  message(FATAL_ERROR "no executable at BIN=${BIN}")
endif()
execute_process(COMMAND readelf -d "${BIN}" OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${BIN} failed (${rc})")
endif()
if(dynamic MATCHES "libprotobuf\\.so")
  message(FATAL_ERROR "${BIN} needs libprotobuf.so, the full runtime")
endif()
execute_process(COMMAND nm -C --defined-only "${BIN}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT symbols MATCHES "[ \n]main\n")
  message(FATAL_ERROR "nm found no symbol table in ${BIN}: cannot tell what it links")
endif()
# Types of the full runtime only (libprotobuf-lite has none of them).
foreach(full_only "google::protobuf::DescriptorPool::" "google::protobuf::Reflection::"
                  "google::protobuf::FileDescriptorProto::" "google::protobuf::util::JsonStringToMessage")
  if(symbols MATCHES "${full_only}")
    message(FATAL_ERROR "${BIN} defines ${full_only}...: it links the full Protobuf runtime")
  endif()
endforeach()
message(STATUS "${BIN}: Protobuf's lite runtime only")
