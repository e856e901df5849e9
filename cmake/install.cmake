# The install tree and the Debian package (included by the top CMakeLists.txt).
#
# `cmake --install build --prefix P` lays out a relocatable tree; hwemu finds its parts relative
# to its own file (/proc/self/exe: ../lib/hwemu), so the tree works wherever it is moved:
#   P/bin/hwemu
#   P/lib/hwemu/              libhwemu-shim.so, libhwemu-nvml.so, libhwemu-amdsmi.so, libhwemu-rocmsmi.so,
#                             fakesmi (private to hwemu)
#   P/share/hwemu/profiles/   the builtin profiles (built in too: a reference to extend in --profiles-dir)
#   P/share/hwemu/specs/      the example specs (smoke.yaml is the embedded default)
#   P/share/doc/hwemu/        README.md and docs/
#   P/share/man/man1/         hwemu.1.gz and hwemu-<command>.1.gz
#   P/share/bash-completion/completions/hwemu
# The man pages and the completion are made at build time from hwemu's own --help texts
# (cmake/manpages.py), so they cannot disagree with them.
#
# `cpack -G DEB` (in the build tree) makes hwemu_<version>_<arch>.deb of the same tree under /usr,
# its Depends computed by dpkg-shlibdeps. tests/cli/test_install.sh and test_package.sh check both.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(HWEMU_GENERATED ${CMAKE_BINARY_DIR}/generated)
add_custom_command(
  OUTPUT ${HWEMU_GENERATED}/manpages.stamp
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${HWEMU_GENERATED}/man1 ${HWEMU_GENERATED}/completions
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/cmake/manpages.py $<TARGET_FILE:hwemu> ${HWEMU_GENERATED}
  COMMAND ${CMAKE_COMMAND} -E touch ${HWEMU_GENERATED}/manpages.stamp
  DEPENDS hwemu ${CMAKE_SOURCE_DIR}/cmake/manpages.py
  COMMENT "Man pages and bash completion from hwemu's --help texts"
  VERBATIM)
add_custom_target(manpages ALL DEPENDS ${HWEMU_GENERATED}/manpages.stamp)

install(TARGETS hwemu RUNTIME DESTINATION bin)
install(TARGETS hwemu-shim hwemu-audit hwemu-nvml hwemu-amdsmi hwemu-rocmsmi LIBRARY DESTINATION lib/hwemu)
install(TARGETS fakesmi RUNTIME DESTINATION lib/hwemu)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/profiles/ DESTINATION share/hwemu/profiles FILES_MATCHING PATTERN "*.yaml"
        PATTERN README.md)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/specs/ DESTINATION share/hwemu/specs FILES_MATCHING PATTERN "*.yaml")
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION share/doc/hwemu)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION share/doc/hwemu/docs FILES_MATCHING PATTERN "*.md")
install(DIRECTORY ${HWEMU_GENERATED}/man1 DESTINATION share/man)
install(FILES ${HWEMU_GENERATED}/completions/hwemu DESTINATION share/bash-completion/completions)

set(HWEMU_PACKAGE_CONTACT "hwemu maintainers <hwemu@localhost>" CACHE STRING
    "The Debian package's Maintainer field (cpack -G DEB)")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hwemu)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${HWEMU_PACKAGE_CONTACT})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "emulated power and frequency hardware of cluster nodes for energy-management agents")
set(CPACK_PACKAGE_DESCRIPTION "hwemu emulates the power and frequency hardware (powercap/RAPL, cpufreq,
hwmon, GPU tools and NVML) of hundreds or thousands of cluster nodes on one
machine, so that power cappers, energy exporters and energy-aware schedulers
run unmodified against them.")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)
include(CPack)
