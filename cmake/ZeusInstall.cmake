# `cmake --install` puts headers, libzeus, the programs, the simulator and a
# CMake package config in place, so that another project can find_package(zeus).
include(CMakePackageConfigHelpers)

# Components are the Debian packages (cmake/ZeusPackaging.cmake): libzeus,
# libzeus-dev, zeus (CLI + simulator), zeusd, zeus-exporter.
install(TARGETS zeus_lib EXPORT zeusTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT libzeus NAMELINK_COMPONENT libzeus-dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT libzeus-dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT libzeus
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/zeus DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT libzeus-dev)
install(FILES ${PROJECT_BINARY_DIR}/include/zeus/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/zeus
  COMPONENT libzeus-dev)

install(EXPORT zeusTargets NAMESPACE zeus:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zeus COMPONENT libzeus-dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/zeusConfig.cmake.in
  ${PROJECT_BINARY_DIR}/zeusConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zeus)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/zeusConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/zeusConfig.cmake ${PROJECT_BINARY_DIR}/zeusConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zeus COMPONENT libzeus-dev)

# Service files (units, defaults, tmpfiles, sysusers, udev) and each package's
# copyright and changelog, with the install prefix filled in at install time
# (docs/deploy.md has where each goes), and the Debian packages
# (scripts/build-packages.sh). A source tree without packaging/ (the Python
# sdist) builds and installs without them.
if(EXISTS ${PROJECT_SOURCE_DIR}/packaging/debian)
  set(ZEUS_PACKAGE_COMPONENTS libzeus libzeus-dev zeus zeusd zeus-exporter)
  # The Slurm SPANK plugin, where spank.h was found (src/slurm/).
  if(TARGET zeus_slurm)
    list(APPEND ZEUS_PACKAGE_COMPONENTS zeus-native-slurm)
  endif()
  foreach(component IN LISTS ZEUS_PACKAGE_COMPONENTS)
    install(CODE "
      set(ZEUS_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
      set(ZEUS_STAGE_DIR \"${PROJECT_BINARY_DIR}/packaging-staged\")
      set(ZEUS_COMPONENT ${component})
      set(ZEUS_BINDIR_REL \"${CMAKE_INSTALL_BINDIR}\")
      set(ZEUS_SBINDIR_REL \"${CMAKE_INSTALL_SBINDIR}\")
      set(ZEUS_VERSION ${PROJECT_VERSION})
      set(ZEUS_SLURM_PLUGIN_DIR_REL \"${ZEUS_SLURM_PLUGIN_DIR}\")
      include(\"${PROJECT_SOURCE_DIR}/cmake/ZeusInstallServiceFiles.cmake\")"
      COMPONENT ${component})
  endforeach()
  include(${PROJECT_SOURCE_DIR}/cmake/ZeusPackaging.cmake)
endif()
