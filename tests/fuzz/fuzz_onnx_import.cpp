// libFuzzer target: bytes -> ModelProto -> Magneto's graph, through the same loader and importer
// as `magnetoc compile` (parse, opset and domain checks, sort, ONNX's checker and version
// converter, initializers, attribute conversion, shape inference and folding on import), from
// memory: no file is read or written.
//
// Oracle: besides crashes and sanitizer reports, an imported graph must pass the IR verifier and
// print; an error must have a message and a code of bad input or not supported (an internal error
// code is a Magneto bug, like a crash).
//
// Build: cmake -DMAGNETO_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang (see
// docs/RELIABILITY.md); run: fuzz_onnx_import tests/fuzz/corpus_onnx -max_total_time=60
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "magneto/frontend/onnx_import.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"

namespace {

[[noreturn]] void fuzzFailure(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_onnx_import: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  magneto::ImportOptions opts;
  // A mutated Loop can fold a 16 MiB tensor in each of 1024 iterations: hundreds of MiB through
  // instrumented kernels take minutes, which libFuzzer reports as a timeout. 1 MiB of folding
  // keeps each input fast; past it nodes stay nodes, as in a normal import past its budget.
  opts.foldBudgetBytes = 1 << 20;
  auto g = magneto::importOnnxFromMemory(data, size, "fuzz.onnx", opts);
  if (!g.ok()) {
    const magneto::Status& s = g.status();
    if (s.message().empty()) fuzzFailure("an error without a message", "");
    if (s.code() != magneto::ErrorCode::kBadInput && s.code() != magneto::ErrorCode::kUnsupported)
      fuzzFailure("an error that is not bad input or unsupported", s.message());
    return 0;
  }
  magneto::Status v = magneto::verifyGraph(**g);
  std::string text = magneto::printGraph(**g);
  if (!v.ok()) fuzzFailure("the imported graph fails the verifier", v.message() + "\n" + text);
  return 0;
}
