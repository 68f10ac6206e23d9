# Sourced by scripts/build.sh, build-wheel.sh and fuzz.sh: ccache where
# present, so that rebuilds, worktrees and CI reruns reuse objects. Sets
# ZEUS_CCACHE_DEFINES (CMake -D arguments; empty without ccache).
# - Paths relative to the clone and no build directory in the hash: a fresh
#   clone elsewhere (CI's) finds the objects of the last one.
# - Depend mode: a miss is compiled once, without a separate preprocessor run
#   to hash (about 13% less on a cold cache; hits are the same).
# Each can be overridden from the environment.
ZEUS_CCACHE_DEFINES=()
if command -v ccache >/dev/null 2>&1; then
  ZEUS_CCACHE_DEFINES=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
  export CCACHE_DEPEND="${CCACHE_DEPEND:-1}"
fi
