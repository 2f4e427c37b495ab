// Helpers shared by the unit tests: parse textual IR (verified), look values up, and run a graph
// through shape inference, the verifier and the reference interpreter.
#pragma once

#include <gtest/gtest.h>

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

}  // namespace magneto::testing

// Runs a graph text; fails the test (with the error) when it does not run.
#define RUN_OK(var, ...)                                            \
  auto var##_r = ::magneto::testing::runText(__VA_ARGS__);          \
  ASSERT_TRUE(var##_r.ok()) << var##_r.status().message();          \
  auto& var = var##_r.value()
