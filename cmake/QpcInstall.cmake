# SPDX-License-Identifier: MIT
# Installs the libraries, headers, the qpconnect CMake package
# (find_package(qpconnect) -> qpconnect::shared, and the static qpconnect::core,
# qpconnect::qpconnect, qpconnect::oob, qpconnect::sa, qpconnect::observe,
# qpconnect::mesh and, built with MPI, qpconnect::mesh_mpi) and the pkg-config file qpconnect.pc
# (the shared library). docs/packaging.md.
#
# Every rule names its install component, one per Debian package
# (cmake/QpcPackaging.cmake): `libs` the shared library, `dev` what a program
# builds against, `tools` the tools with their man pages and libqptrace,
# `qpcm` libqpcm and its compat link.
include(CMakePackageConfigHelpers)
set(QPC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/qpconnect)
set(QPC_EXPORTED qpconnect_core qpconnect qpconnect_shared)
# The static parts name these in their link interface (cmake/QpcStaticDeps.cmake):
# installed, they are protobuf::libprotobuf-lite and OpenSSL::Crypto.
list(APPEND QPC_EXPORTED qpc_dep_protobuf qpc_dep_crypto)
if(TARGET qpconnect_oob)
  list(APPEND QPC_EXPORTED qpconnect_oob)
endif()
# SA PathRecords (qpconnect::sa), observation (qpconnect::observe: traces,
# snapshots and dumps, the trace and live judges) and the mesh (qpconnect::mesh,
# and qpconnect::mesh_mpi when MPI was found: the package then finds MPI too).
list(APPEND QPC_EXPORTED qpconnect_sa qpconnect_observe qpconnect_mesh)
set(QPC_PACKAGE_NEEDS_MPI OFF)
if(TARGET qpconnect_mesh_mpi)
  list(APPEND QPC_EXPORTED qpconnect_mesh_mpi)
  set(QPC_PACKAGE_NEEDS_MPI ON)
endif()
# The shared library's file and SONAME link are `libs`; its libqpconnect.so
# link (what -lqpconnect finds) and the static parts are `dev`.
install(TARGETS ${QPC_EXPORTED} EXPORT qpconnectTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT libs NAMELINK_COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY qpconnect/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(DIRECTORY oob/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(DIRECTORY mesh/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(FILES ${QPC_VERSION_INCLUDE_DIR}/qpconnect/version_numbers.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/qpconnect COMPONENT dev)
install(EXPORT qpconnectTargets NAMESPACE qpconnect:: DESTINATION ${QPC_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(cmake/qpconnectConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/qpconnectConfig.cmake INSTALL_DESTINATION ${QPC_CMAKE_DIR})
# find_package(qpconnect X.Y) accepts this build only where the SONAME makes
# the same promise: the same 0.x minor, or from 1.0 the same major
# (QPC_PACKAGE_COMPAT, cmake/QpcVersion.cmake).
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/qpconnectConfigVersion.cmake
  COMPATIBILITY ${QPC_PACKAGE_COMPAT})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/qpconnectConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/qpconnectConfigVersion.cmake DESTINATION ${QPC_CMAKE_DIR}
  COMPONENT dev)

# qpconnect.pc. Paths are relative to the file's own directory (${pcfiledir}),
# so `cmake --install --prefix DIR` and a moved tree both work (unless
# CMAKE_INSTALL_LIBDIR is absolute).
set(QPC_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(QPC_PC_PREFIX ${CMAKE_INSTALL_PREFIX})
  set(QPC_PC_LIBDIR ${CMAKE_INSTALL_LIBDIR})
else()
  file(RELATIVE_PATH up /p/${QPC_PC_DIR} /p)
  string(REGEX REPLACE "/$" "" up "${up}")
  set(QPC_PC_PREFIX "\${pcfiledir}/${up}")
  set(QPC_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(QPC_PC_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
else()
  set(QPC_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# The shared library's private links, as pkg-config modules: PkgConfig::IBUMAD, PkgConfig::LIBMNL,
# protobuf::libprotobuf-lite, OpenSSL::Crypto (Boost is header-only). A static link
# (pkg-config --static) also needs the static parts, later parts first as they
# use earlier ones, and the C++ runtime.
set(QPC_PC_REQUIRES_PRIVATE "libibumad libmnl protobuf-lite libcrypto")
set(QPC_PC_LIBS_PRIVATE "")
foreach(part IN LISTS QPC_SHARED_PARTS)
  get_target_property(type ${part} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    get_target_property(name ${part} OUTPUT_NAME)
    if(NOT name)
      set(name ${part})
    endif()
    string(PREPEND QPC_PC_LIBS_PRIVATE "-l${name} ")
  endif()
endforeach()
string(APPEND QPC_PC_LIBS_PRIVATE "-lstdc++ ${CMAKE_THREAD_LIBS_INIT}")
string(STRIP "${QPC_PC_LIBS_PRIVATE}" QPC_PC_LIBS_PRIVATE)
configure_file(cmake/qpconnect.pc.in ${CMAKE_CURRENT_BINARY_DIR}/qpconnect.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/qpconnect.pc DESTINATION ${QPC_PC_DIR} COMPONENT dev)

# The license and notices travel with every install: a whole install gets them
# once in share/doc/qpconnect (component `doc`, in no package); each Debian
# package gets its own copy in share/doc/<package> (Debian policy 12.5), with
# the license also as `copyright`, installed only when its component is
# (EXCLUDE_FROM_ALL; QPC_DEB_PACKAGES in cmake/QpcPackaging.cmake).
set(QPC_DOC_FILES LICENSE NOTICE SECURITY.md CHANGELOG.md)
install(FILES ${QPC_DOC_FILES} DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT doc)
include(cmake/QpcPackaging.cmake)
foreach(component IN LISTS QPC_DEB_COMPONENTS)
  string(TOUPPER ${component} upper)
  set(dir ${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_${upper}_PACKAGE_NAME})
  install(FILES ${QPC_DOC_FILES} DESTINATION ${dir} COMPONENT ${component} EXCLUDE_FROM_ALL)
  install(FILES LICENSE DESTINATION ${dir} RENAME copyright COMPONENT ${component}
          EXCLUDE_FROM_ALL)
endforeach()
