// What the magnetoc commands share: progress reporting, running external tools (the C++
// compiler, cmake, a package's runner), files, hashing and cache folders.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "magneto/support/status.h"

namespace magneto {
namespace driver {

// Progress and diagnostics on stderr: -q silences progress, -v adds detail (commands run).
class Reporter {
 public:
  explicit Reporter(int verbosity = 1) : verbosity_(verbosity) {}
  int verbosity() const { return verbosity_; }
  void progress(const std::string& line) const;  // shown unless -q
  void detail(const std::string& line) const;    // shown with -v
  void note(const std::string& line) const { progress(line); }

 private:
  int verbosity_;
};

struct ProcessResult {
  int exitCode = -1;   // the tool's exit status; 128+N when killed by signal N
  std::string output;  // stdout and stderr together
};

// Runs argv[0] (searched in PATH) in `cwd` (empty: the current folder) and collects its output.
// An error only when the tool cannot be started at all. `onLine`, when given, sees each line of
// output as it arrives (for progress lines while a long build runs).
using LineSink = std::function<void(const std::string&)>;
Expected<ProcessResult> runProcess(const std::vector<std::string>& argv, const std::string& cwd = "",
                                   const LineSink& onLine = nullptr);

// The last `lines` lines of `text`.
std::string tailLines(const std::string& text, int lines);
// argv as a shell-like command line, for messages.
std::string commandLine(const std::vector<std::string>& argv);

Expected<std::string> readFile(const std::string& path);
Status writeFile(const std::string& path, const std::string& content);

// FNV-1a 64 of a string (chained with `seed`), as 16 hex digits via hashHex.
uint64_t hashString(const std::string& s, uint64_t seed = 0xcbf29ce484222325ull);
std::string hashHex(uint64_t h);

// The cache folder: $MAGNETO_CACHE_DIR, else $XDG_CACHE_HOME/magneto, else ~/.cache/magneto,
// else /tmp/magneto-cache-UID. Created when missing.
Expected<std::string> cacheDir();
// A fresh private folder under `parent` (the system temp folder when empty).
Expected<std::string> makeTempDir(const std::string& prefix, const std::string& parent = "");

// The C++ compiler for fast builds: $CXX, else c++.
std::string cxxCompiler();
// Whether an executable named `tool` is in one of $PATH's folders.
bool inPath(const std::string& tool);

}  // namespace driver
}  // namespace magneto
