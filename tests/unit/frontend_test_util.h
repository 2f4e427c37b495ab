// Shared by the frontend unit tests (frontend_test.cpp, frontend_control_flow_test.cpp,
// frontend_normalize_test.cpp): the test models' folder (tests/data/frontend, made by
// make_models.py), skipping until an op family lands, error checks and a scratch folder.
// Inline, so that the tests' unity build (one translation unit) sees one definition.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <initializer_list>
#include <string>

#include "magneto/frontend/onnx_import.h"
#include "magneto/interp/interpreter.h"
#include "magneto/ir/op_schema.h"

namespace magneto {
namespace frontend_test {

namespace fs = std::filesystem;

inline const std::string kDir = std::string(MAGNETO_SOURCE_DIR) + "/tests/data/frontend/";

inline std::string model(const std::string& name) { return kDir + name; }

// Empty when every op is registered, else the first missing one.
inline std::string missingOp(std::initializer_list<const char*> ops, bool needKernels = false) {
  for (const char* op : ops) {
    if (!OpRegistry::instance().find(op)) return op;
    if (needKernels && !hasReferenceKernel(op)) return std::string(op) + " (reference kernel)";
  }
  return "";
}

#define SKIP_UNLESS_OPS(...)                                                              \
  do {                                                                                    \
    std::string missing_ = ::magneto::frontend_test::missingOp(__VA_ARGS__);              \
    if (!missing_.empty()) GTEST_SKIP() << "op " << missing_ << " is not registered yet"; \
  } while (0)

inline Status importStatus(const std::string& name, const ImportOptions& opts = {},
                           ImportInfo* info = nullptr) {
  auto g = importOnnx(model(name), opts, info);
  return g.ok() ? Status::success() : g.status();
}

inline void expectError(const Status& s, ErrorCode code, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(s.ok()) << "expected an error";
  EXPECT_EQ(static_cast<int>(s.code()), static_cast<int>(code)) << s.message();
  for (const auto& p : parts) EXPECT_NE(s.message().find(p), std::string::npos)
                                  << "missing '" << p << "' in: " << s.message();
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("mg_frontend_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static int& counter() {
    static int c = 0;
    return c;
  }
};

}  // namespace frontend_test
}  // namespace magneto
