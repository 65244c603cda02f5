# Installs the libraries, headers and the qpconnect CMake package
# (find_package(qpconnect) -> qpconnect::core, qpconnect::qpconnect, qpconnect::oob).
include(CMakePackageConfigHelpers)
set(QPC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/qpconnect)
set(QPC_EXPORTED qpconnect_core qpconnect)
if(TARGET qpconnect_oob)
  list(APPEND QPC_EXPORTED qpconnect_oob)
endif()
install(TARGETS ${QPC_EXPORTED} EXPORT qpconnectTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY qpconnect/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY oob/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT qpconnectTargets NAMESPACE qpconnect:: DESTINATION ${QPC_CMAKE_DIR})
configure_package_config_file(cmake/qpconnectConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/qpconnectConfig.cmake INSTALL_DESTINATION ${QPC_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/qpconnectConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/qpconnectConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/qpconnectConfigVersion.cmake DESTINATION ${QPC_CMAKE_DIR})
