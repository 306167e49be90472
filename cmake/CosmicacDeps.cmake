# Third-party dependencies, all from Debian packages (packaging/install-deps).
# In the static release build, libmount/libblkid/libfdisk/libcurl/libsystemd come
# from COSMICAC_STATIC_PREFIX (built from Debian's source packages by
# packaging/static-deps), because Debian ships no usable static archives of them.
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Boost 1.83 REQUIRED CONFIG)   # header-only parts: process v2, asio, system::result

if(COSMICAC_STATIC)
  if(NOT COSMICAC_STATIC_PREFIX)
    message(FATAL_ERROR "COSMICAC_STATIC needs -DCOSMICAC_STATIC_PREFIX=<dir from packaging/static-deps>")
  endif()
  list(TRANSFORM COSMICAC_STATIC_PREFIX APPEND "/lib/pkgconfig" OUTPUT_VARIABLE static_pc_dirs)
  string(REPLACE ";" ":" static_pc_dirs "${static_pc_dirs}")
  set(ENV{PKG_CONFIG_PATH} "${static_pc_dirs}")
  set(ENV{PKG_CONFIG_LIBDIR} "${static_pc_dirs}")
endif()

# cosmicac_pkg(<target> <pkg-config module>): an interface target for the module,
# linked statically (with its private dependencies) in the static build.
function(cosmicac_pkg target module)
  string(MAKE_C_IDENTIFIER "PC_${target}" var)
  if(COSMICAC_STATIC)
    # pkg_check_modules caches its answer; the static prefix changes with the
    # static-deps key, so ask pkg-config again on every configure.
    unset(__pkg_config_checked_${var} CACHE)
  endif()
  pkg_check_modules(${var} REQUIRED ${module})
  add_library(${target} INTERFACE)
  if(COSMICAC_STATIC)
    target_include_directories(${target} SYSTEM INTERFACE ${${var}_STATIC_INCLUDE_DIRS})
    target_link_directories(${target} INTERFACE ${${var}_STATIC_LIBRARY_DIRS})
    target_link_libraries(${target} INTERFACE ${${var}_STATIC_LIBRARIES})
  else()
    target_include_directories(${target} SYSTEM INTERFACE ${${var}_INCLUDE_DIRS})
    target_link_directories(${target} INTERFACE ${${var}_LIBRARY_DIRS})
    target_link_libraries(${target} INTERFACE ${${var}_LIBRARIES})
  endif()
endfunction()

cosmicac_pkg(dep_blkid    blkid)
cosmicac_pkg(dep_mount    mount)
cosmicac_pkg(dep_fdisk    fdisk)
cosmicac_pkg(dep_curl     libcurl)
cosmicac_pkg(dep_systemd  libsystemd)

add_library(dep_boost INTERFACE)
target_link_libraries(dep_boost INTERFACE Boost::headers)

add_library(dep_json INTERFACE)
target_link_libraries(dep_json INTERFACE nlohmann_json::nlohmann_json)

# spdlog + fmt: compiled libraries in the dev build, header-only in the static one
# (Debian ships neither as a static archive).
add_library(dep_spdlog INTERFACE)
if(COSMICAC_STATIC)
  find_path(SPDLOG_INCLUDE spdlog/spdlog.h REQUIRED)
  target_include_directories(dep_spdlog SYSTEM INTERFACE ${SPDLOG_INCLUDE})
else()
  find_package(fmt REQUIRED)
  find_package(spdlog REQUIRED)
  target_link_libraries(dep_spdlog INTERFACE spdlog::spdlog fmt::fmt)
endif()
