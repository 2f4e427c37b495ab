// Helpers for the NN and recurrent op tests: parse textual IR (result types inferred), run it on
// the reference interpreter, read results back as doubles.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "magneto/interp/interpreter.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"

namespace magneto {
namespace nntest {

// Parses and runs a graph whose inputs are all constants; returns the outputs by name.
inline std::map<std::string, Tensor> runText(const std::string& text) {
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return {};
  Status v = verifyGraph(*g.value());
  EXPECT_TRUE(v.ok()) << v.message();
  auto r = interpret(*g.value(), {});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : std::map<std::string, Tensor>{};
}

// The error that parsing (and so shape inference) gives; "" when it succeeds.
inline std::string inferError(const std::string& text) {
  auto g = parseGraph(text);
  return g.ok() ? std::string() : g.status().message();
}

inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.floatAt(i));
  return v;
}

inline void expectNear(const std::vector<double>& got, const std::vector<double>& want,
                       double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

}  // namespace nntest
}  // namespace magneto
