# Run by `cmake --install` (and by CPack when it builds the Debian packages):
# installs the service files of one component with the install prefix filled
# in, so that a unit's ExecStart= names the zeusd or zeus that was installed.
# Set before include(): ZEUS_SOURCE_DIR, ZEUS_STAGE_DIR, ZEUS_COMPONENT,
# ZEUS_BINDIR_REL, ZEUS_SBINDIR_REL, ZEUS_VERSION, ZEUS_SLURM_PLUGIN_DIR_REL.
#
# Prefix /usr (the Debian packages): units in /lib/systemd/system, as Debian 12
# and its lintian expect, configuration in /etc. Another prefix P: P/lib/...,
# P/etc (systemd also reads /usr/local/lib/systemd/system).
set(_prefix "${CMAKE_INSTALL_PREFIX}")
if(_prefix STREQUAL "/usr")
  set(_unitdir "/lib/systemd/system")
  set(_udevdir "/lib/udev/rules.d")
  set(_etc "/etc")
else()
  set(_unitdir "${_prefix}/lib/systemd/system")
  set(_udevdir "${_prefix}/lib/udev/rules.d")
  set(_etc "${_prefix}/etc")
endif()
set(ZEUS_BINDIR "${_prefix}/${ZEUS_BINDIR_REL}")
set(ZEUS_SBINDIR "${_prefix}/${ZEUS_SBINDIR_REL}")
set(ZEUS_DEFAULTDIR "${_etc}/default")
set(_packaging "${ZEUS_SOURCE_DIR}/packaging")
set(_stage "${ZEUS_STAGE_DIR}/${ZEUS_COMPONENT}")
file(MAKE_DIRECTORY "${_stage}")

# Copies SOURCE to DESTINATION/NAME, through configure_file when CONFIGURE is given.
function(zeus_install_file source destination name)
  cmake_parse_arguments(arg "CONFIGURE" "" "" ${ARGN})
  set(staged "${_stage}/${name}")
  if(arg_CONFIGURE)
    configure_file("${source}" "${staged}" @ONLY)
  else()
    configure_file("${source}" "${staged}" COPYONLY)
  endif()
  file(INSTALL DESTINATION "${destination}" TYPE FILE FILES "${staged}")
endfunction()

if(ZEUS_COMPONENT STREQUAL "zeusd")
  zeus_install_file("${_packaging}/systemd/zeusd.service.in" "${_unitdir}" zeusd.service CONFIGURE)
  zeus_install_file("${_packaging}/tmpfiles.d/zeusd.conf" "${_prefix}/lib/tmpfiles.d" zeusd.conf)
  zeus_install_file("${_packaging}/sysusers.d/zeus.conf" "${_prefix}/lib/sysusers.d" zeusd.conf)
  zeus_install_file("${_packaging}/default/zeusd" "${_etc}/default" zeusd)
  zeus_install_file("${_packaging}/zeusd/gpu-command-overrides.toml" "${_etc}/zeusd" gpu-command-overrides.toml)
elseif(ZEUS_COMPONENT STREQUAL "zeus-exporter")
  zeus_install_file("${_packaging}/systemd/zeus-exporter.service.in" "${_unitdir}" zeus-exporter.service CONFIGURE)
  zeus_install_file("${_packaging}/sysusers.d/zeus.conf" "${_prefix}/lib/sysusers.d" zeus-exporter.conf)
  zeus_install_file("${_packaging}/tmpfiles.d/zeus-rapl.conf" "${_prefix}/lib/tmpfiles.d" zeus-rapl.conf)
  zeus_install_file("${_packaging}/udev/99-zeus-rapl.rules" "${_udevdir}" 99-zeus-rapl.rules)
  zeus_install_file("${_packaging}/default/zeus-exporter" "${_etc}/default" zeus-exporter)
elseif(ZEUS_COMPONENT STREQUAL "zeus-native-slurm")
  # Debian's /etc/slurm/plugstack.conf includes plugstack.conf.d/*.conf.
  set(ZEUS_SLURM_PLUGIN "${_prefix}/${ZEUS_SLURM_PLUGIN_DIR_REL}/zeus_slurm.so")
  zeus_install_file("${_packaging}/slurm/zeus-slurm.conf.in" "${_etc}/slurm/plugstack.conf.d" zeus-slurm.conf CONFIGURE)
  zeus_install_file("${ZEUS_SOURCE_DIR}/docs/slurm.md" "${_prefix}/share/doc/zeus-native-slurm" README.md)
endif()

# Debian's per-package documents: copyright and a compressed changelog.
set(_docdir "${_prefix}/share/doc/${ZEUS_COMPONENT}")
zeus_install_file("${_packaging}/debian/copyright" "${_docdir}" copyright)
configure_file("${_packaging}/debian/changelog.in" "${_stage}/changelog" @ONLY)
execute_process(COMMAND gzip -9nf "${_stage}/changelog" RESULT_VARIABLE _gzip)
if(NOT _gzip EQUAL 0)
  message(FATAL_ERROR "gzip of ${_stage}/changelog failed (${_gzip})")
endif()
file(INSTALL DESTINATION "${_docdir}" TYPE FILE FILES "${_stage}/changelog.gz")
