// Package templates: finding the template and runtime folders, and rendering template text.
//
// Generated packages are rendered from files kept in the repository (codegen/templates/TARGET/),
// never from string literals in the generator, so that a person can read and change what a
// package looks like in one place. The syntax is a small subset of Mustache:
//   {{KEY}}                 replaced by the value of KEY (an unknown key is an error)
//   {{#KEY}} ... {{/KEY}}   kept when KEY is set to a value other than "" or "0"
//   {{^KEY}} ... {{/KEY}}   kept when KEY is "" or "0"
// A section tag alone on its line removes the whole line, so sections do not leave blank lines.
// Keys are [A-Z][A-Z0-9_]*; any other "{{" (C++ aggregate initializers) is copied as is.
//
// Where templates and the runtime come from, first match wins:
//   1. $MAGNETO_HOME: an install prefix (share/magneto/...) or a source tree (codegen/templates,
//      runtime/)
//   2. the install prefix of the running executable: BIN/../share/magneto/{templates,runtime}
//   3. the source tree the compiler was built from (MAGNETO_SOURCE_DIR)
#pragma once

#include <map>
#include <string>
#include <vector>

#include "magneto/support/status.h"

namespace magneto {

using TemplateVars = std::map<std::string, std::string>;

// Renders `text`; `what` names the template in errors.
Expected<std::string> renderTemplate(const std::string& text, const TemplateVars& vars,
                                     const std::string& what);

// The folder holding TARGET's templates (e.g. .../codegen/templates/cpu).
Expected<std::string> templateDir(const std::string& target);
// The folder holding TARGET's runtime sources (e.g. .../runtime/cpu).
Expected<std::string> runtimeDir(const std::string& target);

// Reads and renders TARGET's template FILE.
Expected<std::string> renderTemplateFile(const std::string& target, const std::string& file,
                                         const TemplateVars& vars);

// One source file of a target's runtime: `rel`, its path in a package's runtime/ folder; `path`,
// where it is read from.
struct RuntimeFile {
  std::string rel;
  std::string path;
};
// TARGET's runtime as a package carries it: the host-and-device headers of runtime/common (flat,
// beside the target's own files) and the sources (*.h, *.cpp, *.cuh) of runtime/TARGET and its
// subfolders, sorted by `rel`. A name in both folders is an error.
Expected<std::vector<RuntimeFile>> runtimeSources(const std::string& target);
// The folder of runtime/common (what a runtime compile adds with -I).
Expected<std::string> runtimeCommonDir();

}  // namespace magneto
