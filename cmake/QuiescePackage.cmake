# The exported CMake package: find_package(quiesce) gives quiesce::core, quiesce::sim, quiesce::faults,
# quiesce::properties (whatever this build has), for users who bring their own runtime (examples/).
include(CMakePackageConfigHelpers)
set(QUIESCE_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/quiesce")
configure_package_config_file("${CMAKE_CURRENT_SOURCE_DIR}/cmake/quiesceConfig.cmake.in"
                              "${CMAKE_CURRENT_BINARY_DIR}/quiesceConfig.cmake" INSTALL_DESTINATION "${QUIESCE_CMAKE_DIR}")
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/quiesceConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(EXPORT quiesceTargets NAMESPACE quiesce:: DESTINATION "${QUIESCE_CMAKE_DIR}")
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/quiesceConfig.cmake" "${CMAKE_CURRENT_BINARY_DIR}/quiesceConfigVersion.cmake"
        DESTINATION "${QUIESCE_CMAKE_DIR}")
