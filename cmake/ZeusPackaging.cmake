# Debian packages for Debian 12 with CPack (scripts/build-packages.sh runs
# `cpack` on an existing build tree: nothing is compiled again). Why CPack and
# not debhelper: the CI's -Werror tree already holds every binary; CPack
# installs its components into staging trees, strips them, runs
# dpkg-shlibdeps for Depends and writes the .debs, in seconds. debhelper would
# configure and compile the project a third time (20-40 minutes on 2 cores).
# docs/deploy.md lists the packages and what each holds.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME zeus)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "Zeus native")
set(CPACK_PACKAGE_CONTACT "Zeus native maintainers <zeus-native@users.noreply.github.com>")
# Empty: each package's description (below) starts with its own synopsis,
# which CPack would otherwise precede with this one.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "")
set(CPACK_PACKAGE_FILE_NAME zeus-${PROJECT_VERSION})
# Install as a Debian package installs: prefix /usr, absolute /etc and /lib
# destinations honoured (DESTDIR), binaries stripped.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# Only the packages' components: the Python extension's and the tests' are left out.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${ZEUS_PACKAGE_COMPONENTS})
set(CPACK_COMPONENTS_GROUPING IGNORE)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/ml-energy/zeus")
# Depends: from the binaries (dpkg-shlibdeps), plus the packages of this
# project they need (component dependencies, "= version").
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Where dpkg-shlibdeps finds libzeus.so.0 (packaged alongside, not installed):
# the dependency on it comes from the component dependencies below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/lib)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

foreach(component IN LISTS CPACK_COMPONENTS_ALL)
  string(TOUPPER ${component} upper)
  set(CPACK_DEBIAN_${upper}_PACKAGE_NAME ${component})
endforeach()
set(CPACK_COMPONENT_LIBZEUS_DESCRIPTION
  "Zeus energy measurement library\nlibzeus measures the energy and power of NVIDIA GPUs (NVML), CPUs\n(RAPL) and the zeusd daemon: energy windows, power timelines and\ncounters that never go back.")
set(CPACK_COMPONENT_LIBZEUS-DEV_DESCRIPTION
  "Zeus energy measurement library (development files)\nHeaders and the CMake package for find_package(zeus), and the GPU\nsimulator's C header.")
set(CPACK_COMPONENT_LIBZEUS-DEV_DEPENDS libzeus)
set(CPACK_DEBIAN_LIBZEUS-DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_LIBZEUS_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_ZEUS_DESCRIPTION
  "Measure and optimize the energy of GPU workloads\nThe zeus command: energy and power of commands and GPUs, power-limit and\nbatch-size optimizers, the Perseus planner and servers, the Prometheus\nexporter, and a GPU simulator (zeus-sim, --simulate) to try it without a GPU.")
set(CPACK_COMPONENT_ZEUS_DEPENDS libzeus)
set(CPACK_COMPONENT_ZEUSD_DESCRIPTION
  "Zeus energy daemon\nzeusd gives unprivileged users GPU control and RAPL energy readings over a\nUnix socket or TCP, with the original Zeus daemon's HTTP API.")
set(CPACK_COMPONENT_ZEUSD_DEPENDS libzeus)
set(CPACK_DEBIAN_ZEUSD_PACKAGE_SECTION admin)
set(CPACK_COMPONENT_ZEUS-EXPORTER_DESCRIPTION
  "Zeus Prometheus exporter service\nRuns `zeus exporter` as a systemd service: GPU and CPU energy, power,\ntemperature and clocks for Prometheus on port 9466.")
set(CPACK_COMPONENT_ZEUS-EXPORTER_DEPENDS zeus)
set(CPACK_DEBIAN_ZEUS-EXPORTER_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_ZEUS-EXPORTER_PACKAGE_SECTION admin)

# The Slurm SPANK plugin: Slurm loads only plugins built for its own
# major.minor (plugin_version), so the Slurm it was built against.
set(CPACK_COMPONENT_ZEUS-NATIVE-SLURM_DESCRIPTION
  "Zeus GPU energy of Slurm jobs (SPANK plugin)\nzeus_slurm.so records each Slurm job's and step's GPU energy on every node,\nread through zeusd from the counters of exactly the job's GPUs: a JSON record\nper node in /var/spool/zeus-slurm and a line in the job's stderr.")
set(CPACK_COMPONENT_ZEUS-NATIVE-SLURM_DEPENDS libzeus)
set(CPACK_DEBIAN_ZEUS-NATIVE-SLURM_PACKAGE_DEPENDS "slurmd (>= 22.05~), slurmd (<< 22.06~)")
set(CPACK_DEBIAN_ZEUS-NATIVE-SLURM_PACKAGE_RECOMMENDS "zeusd")
set(CPACK_DEBIAN_ZEUS-NATIVE-SLURM_PACKAGE_SECTION admin)

# Maintainer scripts and conffiles, one folder per package.
set(_debian_out ${PROJECT_BINARY_DIR}/packaging/debian)
function(zeus_service_scripts package service sysusers tmpfiles purge_dirs)
  set(PACKAGE ${package})
  set(SERVICE ${service})
  set(SYSUSERS ${sysusers})
  set(TMPFILES "${tmpfiles}")
  set(PURGE_DIRS "${purge_dirs}")
  foreach(script IN ITEMS postinst prerm postrm)
    configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/service.${script}.in
      ${_debian_out}/${package}/${script} @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
      GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  endforeach()
endfunction()
zeus_service_scripts(zeusd zeusd.service zeusd.conf zeusd.conf /run/zeusd)
file(WRITE ${_debian_out}/zeusd/conffiles "/etc/default/zeusd\n/etc/zeusd/gpu-command-overrides.toml\n")
zeus_service_scripts(zeus-exporter zeus-exporter.service zeus-exporter.conf zeus-rapl.conf "")
file(WRITE ${_debian_out}/zeus-exporter/conffiles "/etc/default/zeus-exporter\n")
set(CPACK_DEBIAN_ZEUSD_PACKAGE_CONTROL_EXTRA
  ${_debian_out}/zeusd/postinst ${_debian_out}/zeusd/prerm ${_debian_out}/zeusd/postrm ${_debian_out}/zeusd/conffiles)
file(WRITE ${_debian_out}/zeus-native-slurm/conffiles "/etc/slurm/plugstack.conf.d/zeus-slurm.conf\n")
set(CPACK_DEBIAN_ZEUS-NATIVE-SLURM_PACKAGE_CONTROL_EXTRA ${_debian_out}/zeus-native-slurm/conffiles)
set(CPACK_DEBIAN_ZEUS-EXPORTER_PACKAGE_CONTROL_EXTRA
  ${_debian_out}/zeus-exporter/postinst ${_debian_out}/zeus-exporter/prerm ${_debian_out}/zeus-exporter/postrm
  ${_debian_out}/zeus-exporter/conffiles)
# libzeus's shlibs (CPack generates them only for every package at once,
# which would advertise the simulator's libnvidia-ml.so.1 too) and the
# ldconfig trigger.
file(WRITE ${_debian_out}/libzeus/shlibs "libzeus ${PROJECT_VERSION_MAJOR} libzeus (>= ${PROJECT_VERSION})\n")
set(CPACK_DEBIAN_LIBZEUS_PACKAGE_CONTROL_EXTRA ${_debian_out}/libzeus/shlibs ${PROJECT_SOURCE_DIR}/packaging/debian/libzeus/triggers)

# cpack builds the `preinstall` target first, which would otherwise build
# every test and benchmark; the packages need only their own targets, which
# scripts/build-packages.sh builds. (`cmake --install` never builds.)
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
include(CPack)
