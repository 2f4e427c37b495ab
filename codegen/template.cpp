// Template rendering and the search for templates and runtime sources (see template.h).
#include "magneto/codegen/template.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace magneto {
namespace fs = std::filesystem;

namespace {

struct Tag {
  size_t begin = 0, end = 0;  // [begin, end) covers "{{...}}"
  char sigil = 0;             // 0, '#', '^', '/'
  std::string key;
};

bool isKey(const std::string& k) {
  if (k.empty() || !std::isupper(static_cast<unsigned char>(k[0]))) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
           c == '_';
  });
}

// The next tag at or after pos, or false.
bool nextTag(const std::string& text, size_t pos, Tag& tag) {
  for (;;) {
    size_t b = text.find("{{", pos);
    if (b == std::string::npos) return false;
    size_t e = text.find("}}", b + 2);
    if (e == std::string::npos) return false;
    std::string inner = text.substr(b + 2, e - b - 2);
    char sigil = 0;
    if (!inner.empty() && (inner[0] == '#' || inner[0] == '^' || inner[0] == '/')) {
      sigil = inner[0];
      inner = inner.substr(1);
    }
    if (isKey(inner)) {
      tag = Tag{b, e + 2, sigil, inner};
      return true;
    }
    pos = b + 1;  // "${{{NAME}}": the key may start one brace later
  }
}

// Widens a section tag to its whole line when nothing else is on that line.
void standalone(const std::string& text, Tag& tag) {
  size_t ls = tag.begin;
  while (ls > 0 && (text[ls - 1] == ' ' || text[ls - 1] == '\t')) --ls;
  if (ls > 0 && text[ls - 1] != '\n') return;
  size_t le = tag.end;
  while (le < text.size() && (text[le] == ' ' || text[le] == '\t')) ++le;
  if (le < text.size() && text[le] != '\n') return;
  tag.begin = ls;
  tag.end = le < text.size() ? le + 1 : le;
}

bool truthy(const TemplateVars& vars, const std::string& key) {
  auto it = vars.find(key);
  return it != vars.end() && !it->second.empty() && it->second != "0";
}

Status renderRange(const std::string& text, size_t pos, size_t end, const TemplateVars& vars,
                   const std::string& what, std::string& out) {
  Tag tag;
  while (pos < end && nextTag(text, pos, tag) && tag.begin < end) {
    if (tag.sigil == 0) {
      auto it = vars.find(tag.key);
      if (it == vars.end()) return internalStatus("template {}: no value for {{{{{}}}}}", what, tag.key);
      // A value that is a block of whole lines (ends with a newline) replaces its tag's line, so
      // an empty table leaves no blank line behind.
      Tag line = tag;
      if (it->second.empty() || it->second.back() == '\n') standalone(text, line);
      bool whole = line.begin != tag.begin || line.end != tag.end;
      out.append(text, pos, (whole ? line.begin : tag.begin) - pos);
      out += it->second;
      pos = whole ? line.end : tag.end;
      continue;
    }
    if (tag.sigil == '/')
      return internalStatus("template {}: {{{{/{}}}}} closes no section", what, tag.key);
    Tag open = tag;
    standalone(text, open);
    out.append(text, pos, open.begin - pos);
    // Find the matching close tag (same key; sections of the same key do not nest).
    Tag close;
    size_t p = open.end;
    bool found = false;
    while (nextTag(text, p, close) && close.begin < end) {
      if (close.sigil == '/' && close.key == tag.key) {
        found = true;
        break;
      }
      p = close.end;
    }
    if (!found) return internalStatus("template {}: section {} is not closed", what, tag.key);
    size_t bodyEnd = close.begin;
    standalone(text, close);
    if (close.begin < bodyEnd) bodyEnd = close.begin;
    bool keep = truthy(vars, tag.key) == (tag.sigil == '#');
    if (keep) MG_RETURN_IF_ERROR(renderRange(text, open.end, bodyEnd, vars, what, out));
    pos = close.end;
  }
  if (pos < end) out.append(text, pos, end - pos);
  return Status::success();
}

std::string selfExeDir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.parent_path().string();
}

// Candidate roots: (folder of templates, folder of runtimes) per search location.
std::vector<std::pair<fs::path, fs::path>> candidates() {
  std::vector<std::pair<fs::path, fs::path>> c;
  if (const char* home = std::getenv("MAGNETO_HOME"); home && *home) {
    fs::path h(home);
    c.push_back({h / "share/magneto/templates", h / "share/magneto/runtime"});
    c.push_back({h / "codegen/templates", h / "runtime"});
  }
  std::string exe = selfExeDir();
  if (!exe.empty())
    c.push_back({fs::path(exe) / "../share/magneto/templates", fs::path(exe) / "../share/magneto/runtime"});
#ifdef MAGNETO_SOURCE_DIR
  c.push_back({fs::path(MAGNETO_SOURCE_DIR) / "codegen/templates", fs::path(MAGNETO_SOURCE_DIR) / "runtime"});
#endif
  return c;
}

Expected<std::string> findDir(const std::string& target, bool runtime) {
  std::string tried;
  for (const auto& [t, r] : candidates()) {
    fs::path d = (runtime ? r : t) / target;
    std::error_code ec;
    if (fs::is_directory(d, ec)) return fs::weakly_canonical(d, ec).string();
    tried += "\n  " + d.lexically_normal().string();
  }
  return badInput("cannot find the {} for target '{}'; looked in:{}\nSet MAGNETO_HOME to the "
                  "install prefix (or source tree) of Magneto.",
                  runtime ? "runtime sources" : "package templates", target, tried);
}

}  // namespace

Expected<std::string> renderTemplate(const std::string& text, const TemplateVars& vars,
                                     const std::string& what) {
  std::string out;
  out.reserve(text.size() * 2);
  MG_RETURN_IF_ERROR(renderRange(text, 0, text.size(), vars, what, out));
  return out;
}

Expected<std::string> templateDir(const std::string& target) { return findDir(target, false); }
Expected<std::string> runtimeDir(const std::string& target) { return findDir(target, true); }

Expected<std::string> renderTemplateFile(const std::string& target, const std::string& file,
                                         const TemplateVars& vars) {
  MG_ASSIGN_OR_RETURN(std::string dir, templateDir(target));
  std::ifstream in(fs::path(dir) / file, std::ios::binary);
  if (!in) return badInput("cannot read template {}/{}", dir, file);
  std::stringstream ss;
  ss << in.rdbuf();
  return renderTemplate(ss.str(), vars, file);
}

namespace {

// Source files (*.h, *.cpp, *.cuh) of `dir` and its subfolders, relative to `dir`.
Status listSources(const std::string& dir, const std::string& relPrefix, std::vector<RuntimeFile>& out) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::string ext = it->path().extension().string();
    if (it->is_regular_file() && (ext == ".h" || ext == ".cpp" || ext == ".cuh"))
      out.push_back({relPrefix + fs::relative(it->path(), dir, ec).string(), it->path().string()});
  }
  if (ec) return badInput("cannot list runtime sources in {}: {}", dir, ec.message());
  return Status::success();
}

}  // namespace

Expected<std::string> runtimeCommonDir() { return findDir("common", true); }

Expected<std::vector<RuntimeFile>> runtimeSources(const std::string& target) {
  MG_ASSIGN_OR_RETURN(std::string dir, runtimeDir(target));
  MG_ASSIGN_OR_RETURN(std::string common, runtimeCommonDir());
  std::vector<RuntimeFile> files;
  MG_RETURN_IF_ERROR(listSources(common, "", files));
  size_t nCommon = files.size();
  MG_RETURN_IF_ERROR(listSources(dir, "", files));
  if (files.size() == nCommon) return badInput("no runtime sources in {}", dir);
  std::sort(files.begin(), files.end(),
            [](const RuntimeFile& a, const RuntimeFile& b) { return a.rel < b.rel; });
  for (size_t i = 1; i < files.size(); ++i)
    if (files[i].rel == files[i - 1].rel)
      return internalStatus("runtime file {} is both in {} and in {}", files[i].rel, common, dir);
  return files;
}

}  // namespace magneto
