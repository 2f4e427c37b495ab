// Pass interface, registry and pipeline runner.
//
// A pass is a named rewrite of a Graph: run() returns whether it changed anything, or an error
// caused by the input. Options come from the PassContext, never from globals. Printing the IR
// around passes (--print-ir-after=NAME, --print-ir-after-all) and verification after each pass are
// done by the pipeline runner, not by passes.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"
#include "magneto/target/device_profile.h"

namespace magneto {

struct PassContext {
  std::string target = "cpu";        // cpu | cuda | hip
  std::string device = "host";       // device profile name for the cost model
  bool parallelOpt = true;           // --no-parallel-opt turns the parallel passes off
  bool verifyEach = false;           // run the verifier after every pass
  std::set<std::string> printAfter;  // pass names; "*" prints after all
  std::set<std::string> debugOnly;   // -debug-only=PASS: trace lines of these passes to stderr
  std::function<void(const std::string&)> out;  // where IR dumps go (stderr by default)
  std::function<void(const std::string&)> log;  // where trace() lines go (stderr by default)
  // Free-form decisions a pass records for `magnetoc report` (JSON text fragments by pass).
  std::vector<std::string> notes;

  bool debug(const std::string& pass) const { return debugOnly.count(pass) || debugOnly.count("*"); }
  // The one logger of pass decisions: "[pass] line" to `log` (stderr when unset), only when
  // -debug-only names the pass (or "*").
  void trace(const std::string& pass, const std::string& line) const;
  // The device profile of `device` ("host" when empty), read from devices/ once per context and
  // shared by every pass that prices with the cost model.
  Expected<const DeviceProfile*> profile();

 private:
  std::shared_ptr<DeviceProfile> profile_;
  std::string profileName_;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual const char* name() const = 0;
  virtual const char* summary() const = 0;
  virtual Expected<bool> run(Graph& g, PassContext& ctx) = 0;
};

using PassFactory = std::function<std::unique_ptr<Pass>()>;

struct PassInfo {
  std::string name;
  std::string summary;
  PassFactory make;
};

// Every pass, in one list (passes/registry.cpp).
const std::vector<PassInfo>& allPasses();
std::unique_ptr<Pass> createPass(const std::string& name);

// Comma-separated pass names -> passes, or an error naming the unknown one.
Expected<std::vector<std::unique_ptr<Pass>>> parsePipeline(const std::string& list);

// The default pipeline for a target: one list with per-target edits.
std::string defaultPipeline(const std::string& target, bool parallelOpt);

// Runs passes in order with instrumentation (printing, verification).
Status runPipeline(Graph& g, std::vector<std::unique_ptr<Pass>>& passes, PassContext& ctx);

}  // namespace magneto
