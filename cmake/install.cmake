# SPDX-License-Identifier: Apache-2.0
# `cmake --install` puts the headers, libkjit, the CLI and a package config in place, so an app
# does find_package(kjit) and links kjit::kjit.
include(CMakePackageConfigHelpers)

install(TARGETS kjit EXPORT kjitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY runtime/include/kjit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET kjit_cli)
  install(TARGETS kjit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT kjitTargets NAMESPACE kjit:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kjit)
configure_package_config_file(cmake/kjitConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/kjitConfig.cmake"
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kjit)
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/kjitConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/kjitConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/kjitConfigVersion.cmake"
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kjit)
