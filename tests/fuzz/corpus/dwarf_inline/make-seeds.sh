#!/bin/sh
# Seeds of dwarf_inline_fuzz: debuginfo files (objcopy --only-keep-debug) of small programs with
# inlined code, built by this machine's gcc 12 (-O2 -g, DWARF 5):
#   inline-shared-c.debug  src/workloads/inline_shared.c and a main calling it (C: a helper
#                          inlined into two functions, an alias, a recursion inlined into itself)
#   inline-chain-cpp.debug the C++ program below (an always_inline chain two deep)
# Run from this directory: sh make-seeds.sh
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'int vperf_workload_inline_shared(unsigned long, int);\nint main(int c, char** v) { (void)v; return vperf_workload_inline_shared(1, c > 1); }\n' > "$work/main.c"
gcc -O2 -g ../../../../src/workloads/inline_shared.c "$work/main.c" -o "$work/inline-shared"
objcopy --only-keep-debug "$work/inline-shared" inline-shared-c.debug
cat > "$work/chain.cpp" <<'CPP'
static inline __attribute__((always_inline)) unsigned long inner(unsigned long h) { for (int i = 0; i < 100; ++i) h = h * 31 + i; return h; }
static inline __attribute__((always_inline)) unsigned long middle(unsigned long h) { return inner(h) ^ inner(h + 1); }
__attribute__((noinline)) unsigned long outer(unsigned long h) { return middle(h) + 1; }
int main(int argc, char**) { return static_cast<int>(outer(static_cast<unsigned long>(argc))); }
CPP
g++ -O2 -g "$work/chain.cpp" -o "$work/chain"
objcopy --only-keep-debug "$work/chain" inline-chain-cpp.debug
