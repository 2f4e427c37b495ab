// magneto-opt: textual IR in, named passes, textual IR out. The driver of the golden tests.
//
//   magneto-opt FILE|- --passes=fold,dce [--print-ir-after-all] [--print-ir-after=PASS]
//               [--no-verify] [--check-equivalence[=SEED]] [--debug-only=PASS]
//
// --check-equivalence runs the reference interpreter on seeded random inputs before and after
// the passes and fails when any output differs by more than 1e-4 (relative) / 1e-5 (absolute).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "magneto/interp/interpreter.h"
#include "magneto/ir/symbolic.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"
#include "magneto/passes/pass.h"

using namespace magneto;

static int usage() {
  std::fprintf(stderr,
               "usage: magneto-opt FILE|- [--passes=LIST] [--print-ir-after-all] "
               "[--print-ir-after=PASS] [--no-verify] [--check-equivalence[=SEED]] "
               "[--debug-only=PASS] [--device=PROFILE] [--target=cpu|cuda|hip] [--list-passes]\n");
  return 1;
}

static bool compare(const Tensor& a, const Tensor& b, std::string& why) {
  if (a.type() != b.type()) {
    why = "type " + a.type().str() + " vs " + b.type().str();
    return false;
  }
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.floatAt(i), y = b.floatAt(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::fabs(x - y) > 1e-5 + 1e-4 * std::fabs(y)) {
      why = fmt::format("element {}: {} vs {}", i, x, y);
      return false;
    }
  }
  return true;
}

int main(int argc, char** argv) {
  std::string file, passes;
  bool verify = true, listPasses = false;
  int64_t equivSeed = -1;
  PassContext ctx;
  ctx.out = [](const std::string& s) { std::fputs(s.c_str(), stdout); };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--passes=", 0) == 0) passes = a.substr(9);
    else if (a == "--print-ir-after-all") ctx.printAfter.insert("*");
    else if (a.rfind("--print-ir-after=", 0) == 0) ctx.printAfter.insert(a.substr(17));
    else if (a == "--no-verify") verify = false;
    else if (a == "--check-equivalence") equivSeed = 1;
    else if (a.rfind("--check-equivalence=", 0) == 0) equivSeed = std::stoll(a.substr(20));
    else if (a.rfind("--debug-only=", 0) == 0) ctx.debugOnly.insert(a.substr(13));
    else if (a.rfind("--device=", 0) == 0) ctx.device = a.substr(9);  // cost model profile
    else if (a.rfind("--target=", 0) == 0) ctx.target = a.substr(9);  // target limits (target_limits.h)
    else if (a == "--list-passes") listPasses = true;
    else if (a == "--help" || a == "-h") return usage(), 0;
    else if (a[0] == '-' && a != "-") return usage();
    else file = a;
  }
  if (listPasses) {
    for (const PassInfo& p : allPasses()) std::printf("%-24s %s\n", p.name.c_str(), p.summary.c_str());
    return 0;
  }
  if (file.empty()) return usage();
  std::stringstream ss;
  if (file == "-") {
    ss << std::cin.rdbuf();
  } else {
    std::ifstream in(file);
    if (!in) {
      std::fprintf(stderr, "magneto-opt: cannot open '%s'\n", file.c_str());
      return 1;
    }
    ss << in.rdbuf();
  }
  auto parsed = parseGraph(ss.str(), file);
  if (!parsed.ok()) {
    std::fprintf(stderr, "magneto-opt: %s\n", parsed.status().message().c_str());
    return static_cast<int>(parsed.status().code());
  }
  std::unique_ptr<Graph> g = std::move(parsed).value();
  // Dynamic dimensions: symbolic shapes fitted and verified before and after the passes.
  if (Status sy = inferSymbolicShapes(*g); !sy.ok()) {
    std::fprintf(stderr, "magneto-opt: %s: %s\n", file.c_str(), sy.message().c_str());
    return static_cast<int>(sy.code());
  }
  ctx.verifyEach = verify;
  if (verify) {
    Status s = verifyGraph(*g);
    if (!s.ok()) {
      std::fprintf(stderr, "magneto-opt: %s: invalid input IR: %s\n", file.c_str(), s.message().c_str());
      return 1;
    }
  }
  std::map<std::string, Tensor> inputs, before;
  std::vector<std::string> outputOrder;  // graph outputs by position, before the passes
  if (equivSeed >= 0) {
    uint64_t seed = static_cast<uint64_t>(equivSeed);
    for (Value* in : g->inputs()) inputs[in->name()] = randomTensor(in->type(), seed++);
    auto r = interpret(*g, inputs);
    if (!r.ok()) {
      std::fprintf(stderr, "magneto-opt: interpreting the input: %s\n", r.status().message().c_str());
      return 1;
    }
    before = std::move(r).value();
    for (Value* o : g->outputs()) outputOrder.push_back(o->name());
  }
  auto pipeline = parsePipeline(passes);
  if (!pipeline.ok()) {
    std::fprintf(stderr, "magneto-opt: %s\n", pipeline.status().message().c_str());
    return 1;
  }
  Status s = runPipeline(*g, pipeline.value(), ctx);
  if (s.ok()) s = inferSymbolicShapes(*g).withContext("after the passes: ");
  if (!s.ok()) {
    std::fprintf(stderr, "magneto-opt: %s\n", s.message().c_str());
    return static_cast<int>(s.code());
  }
  if (ctx.printAfter.empty()) std::fputs(printGraph(*g).c_str(), stdout);
  if (equivSeed >= 0) {
    auto after = interpret(*g, inputs);
    if (!after.ok()) {
      std::fprintf(stderr, "magneto-opt: interpreting the result: %s\n", after.status().message().c_str());
      return 1;
    }
    std::vector<Value*> outs = g->outputs();
    if (outs.size() != outputOrder.size()) {
      std::fprintf(stderr, "magneto-opt: the passes changed the number of graph outputs\n");
      return 1;
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      // Outputs keep their position; names may change when a pass replaces an output value.
      const Tensor& a = after.value().at(outs[k]->name());
      std::string why;
      if (!compare(a, before.at(outputOrder[k]), why)) {
        std::fprintf(stderr, "magneto-opt: output %zu ('%s') differs after the passes: %s\n", k,
                     outputOrder[k].c_str(), why.c_str());
        return 1;
      }
    }
    std::fprintf(stderr, "magneto-opt: equivalent on seeded inputs (%zu outputs)\n", before.size());
  }
  return 0;
}
