# `cmake --install`: the public headers (with the generated version.hpp), the library, the CLI and
# the CMake package opkit (opkitConfig.cmake, its version file and the exported targets), so that
# another project can `find_package(opkit REQUIRED)` and link opkit::opkit (tests/consumer/).
include(CMakePackageConfigHelpers)

set(OPKIT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/opkit" CACHE STRING "Where opkitConfig.cmake is installed")

install(DIRECTORY include/opkit "${PROJECT_BINARY_DIR}/include/opkit" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
set_target_properties(opkit_public_headers PROPERTIES EXPORT_NAME headers)
set(exported opkit opkit_public_headers)
if(TARGET opkit_mpi)
  list(APPEND exported opkit_mpi)
endif()
install(TARGETS ${exported} EXPORT opkitTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
if(TARGET opkit_cli)
  install(TARGETS opkit_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()
install(EXPORT opkitTargets NAMESPACE opkit:: DESTINATION "${OPKIT_INSTALL_CMAKEDIR}")

# What the package needs to find again: the static library carries its dependencies as link-only.
configure_package_config_file(cmake/opkitConfig.cmake.in "${PROJECT_BINARY_DIR}/opkitConfig.cmake"
  INSTALL_DESTINATION "${OPKIT_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/opkitConfigVersion.cmake" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/opkitConfig.cmake" "${PROJECT_BINARY_DIR}/opkitConfigVersion.cmake"
  DESTINATION "${OPKIT_INSTALL_CMAKEDIR}")
