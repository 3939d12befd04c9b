# Cross-compiling vperf for arm64 on a Debian x86-64 host, with Debian's cross compiler
# (g++-aarch64-linux-gnu) and the arm64 libraries installed through multiarch
# (dpkg --add-architecture arm64; libdw-dev:arm64 ...; scripts/install-deps.sh --arm64):
#
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#
# Multiarch keeps arm64's libraries in /usr/lib/aarch64-linux-gnu and its headers in /usr/include
# (shared) and /usr/include/aarch64-linux-gnu, so no sysroot is needed: the compiler searches
# those for its target, and pkg-config is pointed at arm64's .pc files only.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
# Programs (perl, the host's tools) are the build machine's; libraries and headers the target's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
