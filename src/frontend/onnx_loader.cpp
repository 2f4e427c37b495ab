// Loading an ONNX model before any graph is built.
//
//   parse (proto_file.cpp: a missing, empty, oversized or non-protobuf file is an error naming it)
//   -> find the default-domain opset; refuse nodes from other domains (com.microsoft, ai.onnx.ml)
//      and subgraphs except the bodies of If, Loop and Scan (specialised by the importer,
//      onnx_control_flow.cpp), whose nodes get the same checks
//   -> sort the nodes, subgraphs included (onnx_topo_sort.cpp: the checker would reject an
//      unsorted graph)
//   -> opset < 7: ONNX's version converter upgrades to 7, so the importer only knows opsets 7..23
//   -> opset <= 17: ONNX's checker (libonnx 1.12 knows opsets up to 17 and IR version 8)
//   -> opset 18..23: imported with our own table, unchecked (noted in ImportInfo); opsets 22 and
//      23 changed no signature of an op Magneto had (they add element types: bfloat16, float8,
//      float4e2m1, which schemas refuse naming the node) and add Attention, RotaryEmbedding and
//      RMSNormalization (src/ops/nn_ops_attention.cpp)
//
// libonnx reports problems by exceptions; none may escape, so every call into it is wrapped and the
// exception becomes a Status. Its shape inference and version converter are not hardened against
// malformed models (fuzzing found a division by zero on strides of 0 and null dereferences), so
// the upgrade of old opsets runs in a child process: a crash there is an error, not our crash.
#include "onnx_loader.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "onnx_topo_sort.h"
#include "proto_file.h"
#include "tensor_proto.h"

namespace magneto {
namespace frontend {

namespace {

bool isDefaultDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// The subgraph attributes the importer specialises (onnx_control_flow.cpp).
bool isSpecialisedSubgraph(const onnx::NodeProto& n, const std::string& attr) {
  const std::string& op = n.op_type();
  return (op == "If" && (attr == "then_branch" || attr == "else_branch")) ||
         ((op == "Loop" || op == "Scan" || op == "SequenceMap") && attr == "body");
}

// Every node of `g` and of its subgraphs is in the default domain, and only If, Loop, Scan and
// SequenceMap (onnx_sequence.cpp) carry subgraphs. `where` describes the enclosing node(s) for nested nodes (" in the body of
// node 'l' (Loop)"), empty at the top level.
Status checkDomainsAndSubgraphs(const onnx::GraphProto& g, const std::string& path,
                                const std::string& where) {
  const auto& nodes = g.node();
  for (int i = 0; i < nodes.size(); ++i) {
    const std::string desc = describeOnnxNode(nodes[i], i) + where;
    if (!isDefaultDomain(nodes[i].domain()))
      return unsupported(
          "{}: {} is in domain '{}', which Magneto does not support (only the default ONNX "
          "domain)",
          path, desc, nodes[i].domain());
    for (const auto& a : nodes[i].attribute()) {
      const bool graph = a.type() == onnx::AttributeProto::GRAPH ||
                         a.type() == onnx::AttributeProto::GRAPHS || a.has_g() ||
                         a.graphs_size() > 0;
      if (!graph) continue;
      if (!isSpecialisedSubgraph(nodes[i], a.name()) || !a.has_g() || a.graphs_size() > 0)
        return unsupported(
            "{}: {} has subgraph attribute '{}': control flow other than If, Loop, Scan and "
            "SequenceMap is not supported",
            path, desc, a.name());
      MG_RETURN_IF_ERROR(checkDomainsAndSubgraphs(
          a.g(), path, fmt::format(" in subgraph '{}' of {}", a.name(), desc)));
    }
  }
  return Status::success();
}

bool hasExternalData(const onnx::GraphProto& g) {
  for (const auto& t : g.initializer())
    if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) return true;
  return false;
}

Status runOnnxChecker(const LoadedModel& m) {
  try {
    // With external data the checker must know the model's folder, which only the path overload
    // sets (it parses the file again; only models with external data pay for that).
    if (hasExternalData(m.model.graph()))
      onnx::checker::check_model(m.path);
    else
      onnx::checker::check_model(m.model);
  } catch (const onnx::checker::ValidationError& e) {
    return badInput("{}: ONNX checker rejected the model: {}", m.path, e.what());
  } catch (const std::exception& e) {
    return badInput("{}: ONNX checker failed: {}", m.path, e.what());
  }
  return Status::success();
}

bool writeAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

// In the child: infer shapes (some adapters, Gemm 6 -> 7, need intermediate shapes; failures
// are not fatal, the converter reports what it lacks), then convert. The answer on `fd` is a
// status byte ('M' model, 'E' exception message) and the payload.
[[noreturn]] void convertInChild(onnx::ModelProto model, int target, int fd) {
  // A crash here must end this process by its signal, so the parent can name it; handlers
  // inherited from the parent (a sanitizer's, a fuzzer's) would report it as theirs.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
  std::string answer;
  try {
    try {
      onnx::shape_inference::InferShapes(model);
    } catch (const std::exception&) {
    }
    onnx::ModelProto converted = onnx::version_conversion::ConvertVersion(model, target);
    answer = "M" + converted.SerializeAsString();
  } catch (const std::exception& e) {
    answer = std::string("E") + e.what();
  } catch (...) {
    answer = "Eunknown exception";
  }
  _exit(writeAll(fd, answer) ? 0 : 1);
}

// Upgrades `model` to opset `target` with ONNX's version converter, in a child process.
Status upgradeOpset(onnx::ModelProto& model, int target, const std::string& path, int64_t opset) {
  auto failed = [&](const std::string& why) {
    return unsupported("{}: cannot upgrade opset {} to {} with ONNX's version converter: {}", path,
                       opset, target, why);
  };
  int fds[2];
  if (::pipe(fds) != 0) return failed(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return failed(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    convertInChild(model, target, fds[1]);
  }
  ::close(fds[1]);
  std::string answer;
  char buf[1 << 16];
  for (;;) {
    ssize_t r = ::read(fds[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    answer.append(buf, static_cast<size_t>(r));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    return failed(fmt::format("it crashed on this model (signal {}, {}); the model is malformed "
                              "or uses what the converter cannot handle",
                              WTERMSIG(status), strsignal(WTERMSIG(status))));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || answer.empty())
    return failed(fmt::format("it failed on this model (exit status {})",
                              WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  if (answer[0] == 'E') return failed(answer.substr(1));
  onnx::ModelProto converted;
  if (answer[0] != 'M' || !converted.ParseFromString(answer.substr(1)))
    return failed("its result does not parse");
  model = std::move(converted);
  return Status::success();
}

}  // namespace

std::string onnxNodeName(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? fmt::format("{}_{}", n.op_type(), index) : n.name();
}

std::string describeOnnxNode(const onnx::NodeProto& n, int index) {
  return fmt::format("node '{}' ({})", onnxNodeName(n, index), n.op_type());
}

namespace {

// Everything after parsing: opset, domains, order, external locations, conversion, checker.
Expected<std::unique_ptr<LoadedModel>> finishLoad(std::unique_ptr<LoadedModel> m,
                                                  ImportInfo* info, bool runChecker) {
  const std::string& path = m->path;
  onnx::ModelProto& model = m->model;
  if (!model.has_graph())
    return badInput("{}: not a valid ONNX model (it has no graph)", path);

  ImportInfo local;
  ImportInfo& inf = info ? *info : local;
  inf.irVersion = model.ir_version();
  inf.producer = model.producer_name();
  if (!model.producer_version().empty()) inf.producer += " " + model.producer_version();

  int64_t opset = -1;
  for (const auto& imp : model.opset_import())
    if (isDefaultDomain(imp.domain())) opset = imp.version();

  MG_RETURN_IF_ERROR(checkDomainsAndSubgraphs(model.graph(), path, ""));
  if (opset < 0) {
    if (model.ir_version() >= 3)
      return badInput("{}: the model declares no opset for the default ONNX domain", path);
    // IR versions 1 and 2 predate opset_import: their ops are opset 1.
    opset = 1;
    auto* imp = model.add_opset_import();
    imp->set_domain("");
    imp->set_version(1);
    inf.notes.push_back("no opset_import (IR version < 3): assumed opset 1");
  }
  inf.opsetVersion = opset;
  if (opset > kMaxOpset)
    return unsupported("{}: opset {} is newer than Magneto supports (max {})", path, opset,
                       kMaxOpset);
  if (opset < 1) return badInput("{}: invalid opset version {}", path, opset);
  if (model.graph().sparse_initializer_size() > 0)
    return unsupported("{}: sparse initializers are not supported", path);
  MG_RETURN_IF_ERROR(sortOnnxNodes(*model.mutable_graph(), path));
  // Before ONNX's checker touches external files: refuse locations outside the model's folder.
  for (const auto& t : model.graph().initializer()) {
    Status s = checkExternalLocation(t, m->dir, "initializer '" + t.name() + "'");
    if (!s.ok()) return s.withContext(path + ": ");
  }

  if (opset < kMinNativeOpset) {
    if (runChecker) MG_RETURN_IF_ERROR(runOnnxChecker(*m));
    MG_RETURN_IF_ERROR(upgradeOpset(model, static_cast<int>(kMinNativeOpset), path, opset));
    m->sourceOpset = opset;
    opset = kMinNativeOpset;
    inf.versionConverted = true;
    inf.notes.push_back(
        fmt::format("upgraded opset {} to {} with ONNX's version converter", inf.opsetVersion,
                    kMinNativeOpset));
  }
  m->opset = opset;

  if (!runChecker) return m;
  if (opset > kMaxCheckedOpset) {
    inf.notes.push_back(fmt::format(
        "opset {} is newer than libonnx's checker knows ({}): imported unchecked", opset,
        kMaxCheckedOpset));
  } else if (model.ir_version() > onnx::Version::IR_VERSION) {
    inf.notes.push_back(fmt::format(
        "IR version {} is newer than libonnx's checker knows ({}): imported unchecked",
        model.ir_version(), static_cast<int>(onnx::Version::IR_VERSION)));
  } else if (!inf.versionConverted) {
    MG_RETURN_IF_ERROR(runOnnxChecker(*m));
    inf.checkerRan = true;
  } else {
    inf.checkerRan = true;  // checked before conversion
  }
  return m;
}

}  // namespace

Expected<std::unique_ptr<LoadedModel>> loadOnnxModel(const std::string& path, ImportInfo* info,
                                                     bool runChecker) {
  auto m = std::make_unique<LoadedModel>();
  m->path = path;
  m->dir = std::filesystem::path(path).parent_path().string();
  if (m->dir.empty()) m->dir = ".";
  MG_RETURN_IF_ERROR(readProtoFile(path, m->model, "ONNX model"));
  return finishLoad(std::move(m), info, runChecker);
}

Expected<std::unique_ptr<LoadedModel>> loadOnnxModelFromMemory(const void* data, size_t size,
                                                               const std::string& name,
                                                               ImportInfo* info,
                                                               bool runChecker) {
  auto m = std::make_unique<LoadedModel>();
  m->path = name;  // m->dir stays empty: external data is refused
  MG_RETURN_IF_ERROR(parseProtoBytes(data, size, name, m->model, "ONNX model"));
  return finishLoad(std::move(m), info, runChecker);
}

}  // namespace frontend
}  // namespace magneto
