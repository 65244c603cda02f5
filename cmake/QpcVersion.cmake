# SPDX-License-Identifier: MIT
# The version policy, in one place (docs/packaging.md, "Versions"). From
# project(VERSION):
#   QPC_SOVERSION          the SONAME suffix of libqpconnect.so and libqpcm.so:
#                          "0.<minor>" while the major is 0 (no ABI promise
#                          between 0.x minors, so each minor is its own ABI),
#                          "<major>" from 1.0 on.
#   QPC_PACKAGE_COMPAT     the CMake package's version compatibility, the same
#                          promise: SameMinorVersion for 0.x, SameMajorVersion after.
#   QPC_DEB_LIB_PACKAGE    the Debian package of the shared library, named after
#                          its SONAME (Debian policy 8.1): libqpconnect0.1.
# and the configured header <qpconnect/version_numbers.h> (version_numbers.h.in),
# which LibraryVersion(), the tools' --version and the C API's
# qpc_version_string() read.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(QPC_SOVERSION 0.${PROJECT_VERSION_MINOR})
  set(QPC_PACKAGE_COMPAT SameMinorVersion)
else()
  set(QPC_SOVERSION ${PROJECT_VERSION_MAJOR})
  set(QPC_PACKAGE_COMPAT SameMajorVersion)
endif()
set(QPC_DEB_LIB_PACKAGE libqpconnect${QPC_SOVERSION})
set(QPC_VERSION_INCLUDE_DIR ${PROJECT_BINARY_DIR}/generated/include)
configure_file(${PROJECT_SOURCE_DIR}/cmake/version_numbers.h.in
               ${QPC_VERSION_INCLUDE_DIR}/qpconnect/version_numbers.h @ONLY)
