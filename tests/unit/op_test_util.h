// Helpers shared by the unit tests (the one header of them): parse textual IR (verified), look
// values up, run a graph through shape inference, the verifier and the reference interpreter, and
// read results back.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "magneto/interp/interpreter.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"

namespace magneto::testing {

inline Expected<std::map<std::string, Tensor>> runText(
    const std::string& text, const std::map<std::string, Tensor>& inputs = {}) {
  MG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, parseGraph(text));
  MG_RETURN_IF_ERROR(inferShapes(*g));
  MG_RETURN_IF_ERROR(verifyGraph(*g));
  return interpret(*g, inputs);
}

// Parses and verifies a graph; a failure fails the test and returns null.
inline std::unique_ptr<Graph> parseVerified(const std::string& text) {
  auto g = parseGraph(text, "test");
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return nullptr;
  Status s = verifyGraph(*g.value());
  EXPECT_TRUE(s.ok()) << s.message();
  return std::move(g).value();
}

// The value named `name`; a missing one fails the test and returns null.
inline const Value* valueNamed(const Graph& g, const std::string& name) {
  const Value* v = g.findValue(name);
  EXPECT_NE(v, nullptr) << name;
  return v;
}

// Shape inference of a one-graph text: the error message, or "" on success.
inline std::string inferError(const std::string& text) {
  auto g = parseGraph(text);
  if (!g.ok()) return g.status().message();
  Status s = inferShapes(*g.value());
  return s.ok() ? std::string() : s.message();
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  std::vector<T> v(static_cast<size_t>(t.numel()));
  if (!v.empty()) std::memcpy(v.data(), t.bytes(), v.size() * sizeof(T));
  return v;
}

// Values as doubles (any dtype), for expectNear.
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.floatAt(i));
  return v;
}

// Parses, verifies and runs a graph on `inputs` (by name); returns the outputs by name. A failure
// fails the test (with the error) and returns no outputs.
inline std::map<std::string, Tensor> evalText(const std::string& text,
                                              const std::map<std::string, Tensor>& inputs = {}) {
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return {};
  Status v = verifyGraph(*g.value());
  EXPECT_TRUE(v.ok()) << v.message();
  auto r = interpret(*g.value(), inputs);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : std::map<std::string, Tensor>{};
}

inline void expectNear(const std::vector<double>& got, const std::vector<double>& want,
                       double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// Whether scripts/test.sh asked that everything scripts/setup.sh installs be present
// (MAGNETO_REQUIRE_TOOLS=1): a missing tool or data set then fails a test instead of skipping it.
inline bool requireTools() {
  const char* e = std::getenv("MAGNETO_REQUIRE_TOOLS");
  return e && std::string(e) == "1";
}

}  // namespace magneto::testing

// Skips the test when `installed` is false (`what`: what is missing), or fails it under
// MAGNETO_REQUIRE_TOOLS=1 (scripts/test.sh, CI), where setup.sh has installed it.
#define MG_SKIP_UNLESS_INSTALLED(installed, what)                                            \
  do {                                                                                       \
    if (!(installed)) {                                                                      \
      if (::magneto::testing::requireTools())                                                \
        FAIL() << (what) << " is missing though scripts/setup.sh installs it";               \
      GTEST_SKIP() << (what) << " is not installed (scripts/setup.sh installs it)";          \
    }                                                                                        \
  } while (0)

// Runs a graph text; fails the test (with the error) when it does not run.
#define RUN_OK(var, ...)                                            \
  auto var##_r = ::magneto::testing::runText(__VA_ARGS__);          \
  ASSERT_TRUE(var##_r.ok()) << var##_r.status().message();          \
  auto& var = var##_r.value()
