# SPDX-License-Identifier: MIT
# The tools' C++ dependencies, linked statically into the tool executables.
#
# Measured in the lab (issue 15, docs/performance.md "Process start"): under
# emulation the dynamic loader is most of a short run. qp-connect linked
# libprotobuf.so, libcrypto.so and libstdc++.so (three large symbol tables):
# its loader took 274M cycles before main against 64M linked statically, and
# every provider library libibverbs dlopens while opening a device is
# resolved against each object already loaded, so the device open got
# faster too. Libraries (static parts, libqpconnect.so, the CMake package)
# keep linking the shared ones.
#
# qpc_dep_protobuf and qpc_dep_crypto: link these instead of
# protobuf::libprotobuf-lite and OpenSSL::Crypto. Everything links Protobuf's
# lite runtime: the full one registers descriptor.proto and its JSON support's
# types before main, most of a one-pair connect's static initialization
# (docs/performance.md); the codec's JSON form uses its own schema tables
# (oob/src/codec/schema.h). Only the build-time qpc_schema_gen links the full one. An executable with the property QPC_STATIC_DEPS set
# (qpc_tool_link()) gets the archives; everything else the shared library.
# $<TARGET_PROPERTY:QPC_STATIC_DEPS> is read on the target being linked.
option(QPCONNECT_STATIC_TOOL_DEPS
       "Link the tools' Protobuf, libcrypto and C++ runtime statically (faster start)" ON)

# Position-independent tool executables (Debian's default, and ASLR for the
# programs that parse a peer's messages). OFF links them -no-pie: no relative
# relocations to apply at start (qp-connect: 25,475 -> 1,705, minor page faults
# 298 -> 185), which the lab measured as a faster N = 1 connect
# (docs/performance.md); the price is a fixed load address.
option(QPCONNECT_TOOLS_PIE "Build the tools as position-independent executables" ON)

set(QPC_STATIC_ARCHIVES_FOUND OFF)
if(QPCONNECT_STATIC_TOOL_DEPS AND NOT QPCONNECT_SANITIZE)
  find_library(QPC_PROTOBUF_ARCHIVE NAMES libprotobuf-lite.a)
  find_library(QPC_CRYPTO_ARCHIVE NAMES libcrypto.a)
  if(QPC_PROTOBUF_ARCHIVE AND QPC_CRYPTO_ARCHIVE)
    set(QPC_STATIC_ARCHIVES_FOUND ON)
  else()
    message(STATUS "qpconnect: libprotobuf-lite.a/libcrypto.a not found; tools link them shared")
  endif()
endif()

# qpc_dep(NAME SHARED_TARGET ARCHIVE EXTRA...): the INTERFACE target qpc_dep_NAME.
function(qpc_dep name shared archive)
  add_library(qpc_dep_${name} INTERFACE)
  if(QPC_STATIC_ARCHIVES_FOUND)
    set(static "$<BOOL:$<TARGET_PROPERTY:QPC_STATIC_DEPS>>")
    target_link_libraries(qpc_dep_${name} INTERFACE
      "$<$<NOT:${static}>:${shared}>"
      "$<BUILD_INTERFACE:$<${static}:${archive};${ARGN}>>")
    # Headers and definitions come from the shared target either way.
    target_include_directories(qpc_dep_${name} SYSTEM INTERFACE
      $<TARGET_PROPERTY:${shared},INTERFACE_INCLUDE_DIRECTORIES>)
  else()
    target_link_libraries(qpc_dep_${name} INTERFACE ${shared})
  endif()
endfunction()

qpc_dep(protobuf protobuf::libprotobuf-lite "${QPC_PROTOBUF_ARCHIVE}" Threads::Threads)
qpc_dep(crypto OpenSSL::Crypto "${QPC_CRYPTO_ARCHIVE}" ${CMAKE_DL_LIBS} Threads::Threads)

# qpc_tool_link(TARGET): a tool executable: the archives above and the
# static C++ runtime. Not for programs that load C++ shared libraries of their
# own (libmpi's dependencies, libqpconnect.so): two runtimes in one process.
function(qpc_tool_link target)
  if(NOT QPCONNECT_TOOLS_PIE)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_link_options(${target} PRIVATE -no-pie)
  endif()
  if(QPC_STATIC_ARCHIVES_FOUND)
    set_target_properties(${target} PROPERTIES QPC_STATIC_DEPS ON)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  endif()
endfunction()
