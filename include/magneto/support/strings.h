// Small string helpers every layer may use (header-only, like the rest of support/).
#pragma once

#include <string>
#include <vector>

namespace magneto {

// The non-empty items of a `sep`-separated list, in order: "a,,b," -> {"a", "b"}. For pass
// pipelines ("fold,dce"), $PATH ("/usr/bin:/bin") and the like.
inline std::vector<std::string> splitList(const std::string& text, char sep) {
  std::vector<std::string> items;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(sep, pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) items.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return items;
}

}  // namespace magneto
