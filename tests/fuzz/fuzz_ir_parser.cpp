// libFuzzer target: the textual IR parser (include/magneto/ir/text.h).
//
// Oracle: besides crashes and sanitizer reports: an error (from the parser or from the verifier,
// which checks what the parser does not, such as written result types against shape inference)
// must have a message and the code of bad input or not supported; a graph that parses prints;
// a graph that also verifies round-trips: print(parse(print(g))) == print(g), text.h's promise.
//
// Run: fuzz_ir_parser tests/fuzz/corpus_ir -max_total_time=60
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"

namespace {

// Inputs are IR text; longer ones only slow the fuzzer down without reaching new code.
constexpr size_t kMaxInputBytes = 1 << 16;

[[noreturn]] void fuzzFailure(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_ir_parser: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void checkError(const magneto::Status& s) {
  if (s.message().empty()) fuzzFailure("an error without a message", "");
  if (s.code() != magneto::ErrorCode::kBadInput && s.code() != magneto::ErrorCode::kUnsupported)
    fuzzFailure("an error that is not bad input or unsupported", s.message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInputBytes) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  auto g = magneto::parseGraph(text, "fuzz.mlir");
  if (!g.ok()) {
    checkError(g.status());
    return 0;
  }
  std::string printed = magneto::printGraph(**g);
  if (magneto::Status v = magneto::verifyGraph(**g); !v.ok()) {
    checkError(v);
    return 0;
  }
  auto again = magneto::parseGraph(printed, "printed.mlir");
  if (!again.ok())
    fuzzFailure("printed IR does not parse", again.status().message() + "\n" + printed);
  std::string reprinted = magneto::printGraph(**again);
  if (reprinted != printed)
    fuzzFailure("print(parse(print(g))) != print(g)", printed + "\n----\n" + reprinted);
  return 0;
}
