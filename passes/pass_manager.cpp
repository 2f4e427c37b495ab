// Pipeline parsing and the pass runner with its instrumentation (IR printing, verification).
#include <cstdio>

#include "magneto/ir/symbolic.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"
#include "magneto/passes/pass.h"
#include "magneto/support/strings.h"

namespace magneto {

std::unique_ptr<Pass> createPass(const std::string& name) {
  for (const PassInfo& p : allPasses())
    if (p.name == name) return p.make();
  return nullptr;
}

Expected<std::vector<std::unique_ptr<Pass>>> parsePipeline(const std::string& list) {
  std::vector<std::unique_ptr<Pass>> out;
  for (const std::string& name : splitList(list, ',')) {
    auto p = createPass(name);
    if (!p) {
      std::string known;
      for (const PassInfo& i : allPasses()) known += (known.empty() ? "" : ", ") + i.name;
      return badInput("unknown pass '{}' (known passes: {})", name, known);
    }
    out.push_back(std::move(p));
  }
  return out;
}

void PassContext::trace(const std::string& pass, const std::string& line) const {
  if (!debug(pass)) return;
  std::string s = "[" + pass + "] " + line + "\n";
  if (log) log(s);
  else std::fputs(s.c_str(), stderr);
}

Expected<const DeviceProfile*> PassContext::profile() {
  std::string name = device.empty() ? "host" : device;
  if (!profile_ || profileName_ != name) {
    MG_ASSIGN_OR_RETURN(DeviceProfile p, loadDeviceProfile(name));
    profile_ = std::make_shared<DeviceProfile>(std::move(p));
    profileName_ = name;
  }
  return profile_.get();
}

Status runPipeline(Graph& g, std::vector<std::unique_ptr<Pass>>& passes, PassContext& ctx) {
  auto emit = [&](const std::string& s) {
    if (ctx.out) ctx.out(s);
    else std::fputs(s.c_str(), stderr);
  };
  for (auto& p : passes) {
    auto changed = p->run(g, ctx);
    if (!changed.ok()) return changed.status().withContext(std::string("pass ") + p->name() + ": ");
    // Dynamic dimensions: the next pass sees the symbolic shapes of the values this one made
    // (fitted only; the whole graph is verified once after the pipeline).
    if (!g.symbols().empty() && *changed)
      for (Node* n : g.nodes()) {
        Status s = inferSymbolicNode(g, n);
        if (!s.ok()) return s.withContext(std::string("after pass ") + p->name() + ": ");
      }
    if (ctx.verifyEach) {
      Status v = verifyGraph(g);
      if (!v.ok())
        return internalStatus("the IR is invalid after pass '{}': {}\n{}", p->name(), v.message(),
                              printGraph(g));
    }
    if (ctx.printAfter.count(p->name()) || ctx.printAfter.count("*"))
      emit(fmt::format("// -----// IR after {}{} //----- //\n{}", p->name(),
                       *changed ? "" : " (no change)", printGraph(g)));
  }
  return Status::success();
}

}  // namespace magneto
