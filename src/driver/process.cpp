// Shared plumbing of the magnetoc commands (see include/magneto/driver/process.h).
#include "magneto/driver/process.h"

#include "magneto/support/strings.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "magneto/ir/tensor.h"

namespace magneto {
namespace driver {
namespace fs = std::filesystem;

void Reporter::progress(const std::string& line) const {
  if (verbosity_ >= 1) std::fprintf(stderr, "magnetoc: %s\n", line.c_str());
}
void Reporter::detail(const std::string& line) const {
  if (verbosity_ >= 2) std::fprintf(stderr, "magnetoc: %s\n", line.c_str());
}

Expected<ProcessResult> runProcess(const std::vector<std::string>& argv, const std::string& cwd,
                                   const LineSink& onLine) {
  if (argv.empty()) return internalStatus("runProcess: empty command");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) return Status(ErrorCode::kToolFailed, "cannot create a pipe");
  // The child only calls async-signal-safe functions between fork and exec.
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Status(ErrorCode::kToolFailed, fmt::format("cannot start {}: fork failed", argv[0]));
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[1]);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execvp(args[0], args.data());
    const char msg[] = "exec failed\n";
    ssize_t ignored = ::write(2, msg, sizeof(msg) - 1);
    (void)ignored;
    ::_exit(127);
  }
  ::close(fds[1]);
  ProcessResult r;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n > 0) {
      size_t before = r.output.size();
      r.output.append(buf, static_cast<size_t>(n));
      if (onLine) {  // complete lines only: a line split across reads is seen once, whole
        size_t lineStart = r.output.rfind('\n', before == 0 ? 0 : before - 1);
        lineStart = (before == 0 || lineStart == std::string::npos) ? 0 : lineStart + 1;
        for (size_t nl; (nl = r.output.find('\n', lineStart)) != std::string::npos; lineStart = nl + 1)
          if (nl >= before) onLine(r.output.substr(lineStart, nl - lineStart));
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) r.exitCode = 128 + WTERMSIG(status);
  if (r.exitCode == 127 && r.output.find("exec failed") != std::string::npos && r.output.size() < 64)
    return Status(ErrorCode::kToolFailed,
                  fmt::format("cannot run '{}': not found (is it installed and on PATH?)", argv[0]));
  return r;
}

std::string tailLines(const std::string& text, int lines) {
  size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;
  size_t pos = end;
  int n = 0;
  while (pos > 0) {
    size_t nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) {
      pos = 0;
      break;
    }
    if (++n == lines) {
      pos = nl + 1;
      break;
    }
    pos = nl;
  }
  return text.substr(pos, end - pos) + "\n";
}

std::string commandLine(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    bool plain = !a.empty() && a.find_first_of(" \t\"'$\\") == std::string::npos;
    s += (s.empty() ? "" : " ") + (plain ? a : "'" + a + "'");
  }
  return s;
}

Expected<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return badInput("cannot read {}", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status writeFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return badInput("cannot write {}", path);
  return Status::success();
}

uint64_t hashString(const std::string& s, uint64_t seed) {
  return fnv1a64(reinterpret_cast<const uint8_t*>(s.data()), s.size(), seed);
}

std::string hashHex(uint64_t h) { return fmt::format("{:016x}", h); }

Expected<std::string> cacheDir() {
  std::string dir;
  if (const char* d = std::getenv("MAGNETO_CACHE_DIR"); d && *d) dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::string(x) + "/magneto";
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.cache/magneto";
  else dir = "/tmp/magneto-cache-" + std::to_string(::getuid());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return badInput("cannot create the cache folder {}: {} (set MAGNETO_CACHE_DIR)", dir, ec.message());
  // Absolute, since builds run inside the package folder (a relative MAGNETO_CACHE_DIR made the
  // precompiled header's -I point nowhere there).
  fs::path abs = fs::absolute(dir, ec);
  return ec ? dir : abs.lexically_normal().string();
}

Expected<std::string> makeTempDir(const std::string& prefix, const std::string& parent) {
  std::string base = parent;
  if (base.empty()) {
    const char* t = std::getenv("TMPDIR");
    base = t && *t ? t : "/tmp";
  }
  std::string pattern = base + "/" + prefix + "XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    return badInput("cannot create a temporary folder in {}: {}", base, std::strerror(errno));
  return std::string(buf.data());
}

bool inPath(const std::string& tool) {
  const char* path = std::getenv("PATH");
  for (const std::string& dir : splitList(path ? path : "", ':'))
    if (::access((dir + "/" + tool).c_str(), X_OK) == 0) return true;
  return false;
}

std::string cxxCompiler() {
  const char* c = std::getenv("CXX");
  return c && *c ? c : "c++";
}

}  // namespace driver
}  // namespace magneto
