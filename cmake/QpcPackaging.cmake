# SPDX-License-Identifier: MIT
# Debian packages with CPack, from the install rules' components
# (docs/packaging.md, "Debian packages"): `cpack` in the build directory writes
#   qpconnect-tools   (tools)  every tool in bin, its man page, libqptrace (qp-trace's library)
#   libqpconnect0.1   (libs)   libqpconnect.so.<version> and its SONAME link
#   libqpconnect-dev  (dev)    headers, static parts, libqpconnect.so, the CMake package, qpconnect.pc
#   libqpcm           (qpcm)   libqpcm.so.<version>, its links and compat/librdmacm.so.1
# The library package is named after the SONAME (Debian policy 8.1), so two
# 0.x minors install side by side; libqpcm is not linked against (qp-cm
# preloads it from LIBDIR/qpconnect, by its unversioned name) and one copy
# serves qp-cm, so its package name carries no version. Run-time Depends come
# from dpkg-shlibdeps; the -dev package's build-time ones are named here.
# The packages install under /usr: the libraries in /usr/${CMAKE_INSTALL_LIBDIR}
# (configure with -DCMAKE_INSTALL_PREFIX=/usr for Debian's lib/<multiarch>).
# Included by cmake/QpcInstall.cmake, after every install rule is declared.
set(QPC_DEB_COMPONENTS libs dev qpcm)
if(QPCONNECT_BUILD_TOOLS)
  list(APPEND QPC_DEB_COMPONENTS tools)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME qpconnect)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The qpconnect authors")
set(CPACK_PACKAGE_CONTACT "The qpconnect authors")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${QPC_DEB_COMPONENTS})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <name>_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)  # DEPENDS below -> "Depends: pkg (= version)"
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

set(CPACK_DEBIAN_LIBS_PACKAGE_NAME ${QPC_DEB_LIB_PACKAGE})
set(CPACK_DEBIAN_LIBS_PACKAGE_SECTION libs)
# A shlibs file, so that a package built against libqpconnect gets its Depends
# from dpkg-shlibdeps (CPack 3.25 has no per-package switch: libqpcm gets one too).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_LIBS_DESCRIPTION
    "connect RDMA queue pairs by hand - shared library\n\
libqpconnect connects RDMA queue pairs (RC, UC, UD) over an out-of-band\n\
exchange, validating both endpoints before any modify. C and C++ APIs.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libqpconnect-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS libs)
# What the CMake package's find_dependency() calls and qpconnect.pc's Requires name.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libibverbs-dev, libibumad-dev, libmnl-dev, libprotobuf-dev, libssl-dev, libboost-dev, pkgconf | pkg-config")
if(QPC_PACKAGE_NEEDS_MPI)  # qpconnect::mesh_mpi: the package then finds MPI
  string(APPEND CPACK_DEBIAN_DEV_PACKAGE_DEPENDS ", libopenmpi-dev")
endif()
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "connect RDMA queue pairs by hand - development files\n\
Headers, static libraries, the CMake package (find_package(qpconnect)) and\n\
the pkg-config file (qpconnect.pc) of libqpconnect.")

set(CPACK_DEBIAN_QPCM_PACKAGE_NAME libqpcm)
set(CPACK_DEBIAN_QPCM_PACKAGE_SECTION net)
set(CPACK_COMPONENT_QPCM_DESCRIPTION
    "librdmacm API over qpconnect's out-of-band exchange\n\
libqpcm runs unmodified rdma_cm programs without IPoIB or the kernel CM;\n\
qp-cm (qpconnect-tools) starts them with it. compat/librdmacm.so.1 links to\n\
it for programs started with LD_LIBRARY_PATH.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME qpconnect-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION net)
set(CPACK_COMPONENT_TOOLS_DEPENDS qpcm)  # qp-cm runs programs with libqpcm
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "connect RDMA queue pairs by hand - tools\n\
qp-connect, qp-validate, qp-info, qp-trace, qp-inspect, qp-cm and qp-mesh:\n\
connect, validate, trace and inspect RDMA queue pairs, with their man pages.")
include(CPack)
