# Every dependency comes from Debian 12 packages (scripts/install-deps.sh installs them).
# Recipes follow shared/research/deps-probe.md.

find_package(Threads REQUIRED)

# protobuf 3.21 ships no CMake config: CMake's FindProtobuf module gives protobuf::libprotobuf,
# protobuf::protoc and protobuf_generate().
find_package(Protobuf 3.21 REQUIRED)
# gRPC 1.51: gRPC::grpc++, gRPC::grpc++_reflection, gRPC::grpc_cpp_plugin.
find_package(gRPC 1.51 CONFIG REQUIRED)

find_package(Eigen3 3.4 CONFIG REQUIRED)
find_package(TBB 2021 CONFIG REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)

# libmujoco 2.2.2. Debian's mujocoConfig.cmake lists /usr/include/libqhull_r/ as an interface
# include directory without depending on libqhull-dev, and pulls in OpenGL; MuJoCo's public
# headers need neither, so locate the library directly.
find_path(MUJOCO_INCLUDE_DIR mujoco/mujoco.h REQUIRED)
find_library(MUJOCO_LIBRARY NAMES mujoco REQUIRED)
if(NOT TARGET alsim::mujoco)
  add_library(alsim::mujoco INTERFACE IMPORTED)
  target_include_directories(alsim::mujoco INTERFACE ${MUJOCO_INCLUDE_DIR})
  target_link_libraries(alsim::mujoco INTERFACE ${MUJOCO_LIBRARY})
endif()

# libccd 2.1 (GJK/MPR for the convex narrowphase), the build libmujoco links. Located directly
# like MuJoCo, for one imported target whatever Debian's config or .pc files name it. Debian builds
# it in double precision (ccd/config.h: CCD_DOUBLE); engine/collision/convex_pairs.cc asserts so.
find_path(CCD_INCLUDE_DIR ccd/ccd.h REQUIRED)
find_library(CCD_LIBRARY NAMES ccd REQUIRED)
if(NOT TARGET alsim::ccd)
  add_library(alsim::ccd INTERFACE IMPORTED)
  target_include_directories(alsim::ccd INTERFACE ${CCD_INCLUDE_DIR})
  target_link_libraries(alsim::ccd INTERFACE ${CCD_LIBRARY})
endif()

# tinyxml2 9, the XML parser libmujoco 2.2.2 links: the importer's checks of scene text read it as
# MuJoCo will. tinyxml2::tinyxml2.
find_package(tinyxml2 9 CONFIG REQUIRED)

# CHOLMOD (SuiteSparse 5.12) has neither a CMake config nor a .pc file on Debian 12.
find_path(CHOLMOD_INCLUDE_DIR cholmod.h PATH_SUFFIXES suitesparse REQUIRED)
find_library(CHOLMOD_LIBRARY cholmod REQUIRED)
find_library(SUITESPARSECONFIG_LIBRARY suitesparseconfig REQUIRED)
if(NOT TARGET SuiteSparse::CHOLMOD)
  add_library(SuiteSparse::CHOLMOD INTERFACE IMPORTED)
  target_include_directories(SuiteSparse::CHOLMOD INTERFACE ${CHOLMOD_INCLUDE_DIR})
  target_link_libraries(SuiteSparse::CHOLMOD INTERFACE ${CHOLMOD_LIBRARY} ${SUITESPARSECONFIG_LIBRARY})
endif()

if(ALSIM_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(ALSIM_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()

# Interpreter with Debian's python3-grpcio (the pyenv python3 on PATH does not see it).
set(ALSIM_PYTHON /usr/bin/python3 CACHE FILEPATH "Python interpreter with grpcio, grpc_tools and numpy")
