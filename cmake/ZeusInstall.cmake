# `cmake --install` puts headers, libzeus, the programs, the simulator and a
# CMake package config in place, so that another project can find_package(zeus).
include(CMakePackageConfigHelpers)

install(TARGETS zeus_lib EXPORT zeusTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/zeus DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/zeus/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/zeus)

install(EXPORT zeusTargets NAMESPACE zeus:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zeus)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/zeusConfig.cmake.in
  ${PROJECT_BINARY_DIR}/zeusConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zeus)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/zeusConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/zeusConfig.cmake ${PROJECT_BINARY_DIR}/zeusConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zeus)

# zeusd's service files (docs/zeusd.md): systemd reads <prefix>/lib/systemd/system.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/zeusd.service DESTINATION lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/tmpfiles.d/zeusd.conf DESTINATION lib/tmpfiles.d)
