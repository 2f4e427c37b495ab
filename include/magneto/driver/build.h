// Building generated packages.
//
// Two ways, with the same sources:
//   - buildWithCmake: the package's own CMakeLists.txt, exactly what a user runs
//     (`magnetoc compile --build`).
//   - buildRunnerFast: what `check` and `bench` use, because CI runs about a thousand checks. The
//     runtime (the big part: every kernel) is compiled once into a static library cached under
//     the cache folder, keyed by a hash of the runtime sources, the compiler and its flags; each
//     package then needs one direct compiler call for its small generated file and its runner.
//     The cache entry is built in a temporary folder and renamed into place, so parallel checks
//     never see a half-built library.
#pragma once

#include <string>

#include "magneto/driver/process.h"
#include "magneto/support/status.h"

namespace magneto {
namespace driver {

// cmake -S DIR -B DIR/build -DCMAKE_BUILD_TYPE=Release && cmake --build DIR/build -j2. On failure
// (ErrorCode::kToolFailed) the message holds the tail of the log.
Status buildWithCmake(const std::string& dir, const Reporter& rep);

// The cached runtime library for `target` ("cpu"), built on first use. `arch` is the -march
// value ("" means native).
Expected<std::string> cachedRuntimeLibrary(const std::string& target, const std::string& arch,
                                           const Reporter& rep);

// Builds DIR/build-fast/NAME_runner against the cached runtime; returns the runner's path.
Expected<std::string> buildRunnerFast(const std::string& dir, const std::string& name,
                                      bool embeddedWeights, const std::string& arch,
                                      const Reporter& rep);

// Builds DIR/libNAME.so, the shared library NAME.py loads, against the cached runtime (the
// fast path's flags, -fPIC): `magnetoc compile --shared`. The runtime's symbols stay inside the
// library (--exclude-libs): only the NAME_* functions are exported. Returns the library's path.
Expected<std::string> buildSharedFast(const std::string& dir, const std::string& name,
                                      bool embeddedWeights, const std::string& arch,
                                      const Reporter& rep);

// Builds DIR/build-emu/NAME_runner from a GPU package (NAME.cu or NAME.hip) with the host C++
// compiler and MG_GPU_EMULATE: the package's kernels run on the CPU emulation of runtime/gpu.
// racecheck: with clang++ and ThreadSanitizer instead, into DIR/build-race (the emulation's race
// check, runtime/gpu/mg_emu_context.h); an error when clang++ is not in PATH.
Expected<std::string> buildEmulatedRunner(const std::string& dir, const std::string& name,
                                          const std::string& sourceExt, bool embeddedWeights,
                                          const Reporter& rep, bool racecheck = false);

// The runner of a compiled package, built the way its target needs: cpu -> buildRunnerFast;
// cuda/hip with `emulate` -> buildEmulatedRunner; cuda/hip on a real GPU -> the package's own
// CMake (nvcc or hipcc), DIR/build/NAME_runner.
Expected<std::string> buildPackageRunner(const std::string& dir, const std::string& name,
                                         const std::string& target, bool emulate,
                                         bool embeddedWeights, const std::string& arch,
                                         const Reporter& rep, bool racecheck = false);

// The hash of the runtime sources and fast-build flags (part of bench's cache key).
Expected<std::string> runtimeKey(const std::string& target, const std::string& arch);

}  // namespace driver
}  // namespace magneto
