// `magnetoc check`: compile, build (fast path), run each data set's input_K.pb, compare with its
// output_K.pb.
//
// Data sets are folders as in ONNX's backend tests and the model zoo (test_data_set_N with
// input_K.pb / output_K.pb). Input K is the model's K-th graph input that is not an initializer
// (or the input its TensorProto names). Inputs whose values decide output shapes are bound as
// constants (the package is compiled for those values); inputs with symbolic dimensions get
// their shape from the data. Data sets that need the same bindings and shapes share one build.
// With --dynamic, the package keeps the named dimensions symbolic: every data set runs on the one
// build, each input's shape from its data given to the runner (--dims: the package's
// set_input_dims, which refuses a shape outside the declared ranges with its message), and the
// outputs compared at the shapes the package reports.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>

#include "magneto/codegen/gpu_emitter.h"
#include "magneto/driver/build.h"
#include "magneto/driver/commands.h"
#include "magneto/driver/compare.h"
#include "magneto/frontend/onnx_import.h"

namespace magneto {
namespace driver {
namespace fs = std::filesystem;

namespace {

struct DataFile {
  int index;
  std::string path;
};

// input_K.pb or output_K.pb files of a folder, by K.
std::vector<DataFile> listData(const std::string& dir, const std::string& prefix) {
  std::vector<DataFile> files;
  std::regex re(prefix + "_([0-9]+)\\.pb");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    std::string f = e.path().filename().string();
    if (std::regex_match(f, m, re)) files.push_back({std::stoi(m[1].str()), e.path().string()});
  }
  std::sort(files.begin(), files.end(),
            [](const DataFile& a, const DataFile& b) { return a.index < b.index; });
  return files;
}

struct DataSet {
  std::string dir;
  std::map<std::string, Tensor> inputs;  // by model input name
  std::vector<Tensor> outputs;
  std::string key;                       // bindings + shapes: data sets with equal keys share a build
  std::map<std::string, Tensor> bindings;
  std::map<std::string, Dims> shapes;
  std::map<std::string, std::vector<TensorType>> sequences;  // sequence inputs' element types
  std::map<std::string, OptionalInput> optionals;            // what optional inputs hold
};

Expected<DataSet> loadDataSet(const std::string& dir, const std::vector<OnnxModelInput>& declared,
                              const std::vector<bool>& sequenceOutputs,
                              const std::vector<bool>& optionalOutputs,
                              const std::set<std::string>& shapeInputs,
                              const CompileOptions& base, const Reporter& rep) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return badInput("--data {}: no such folder (expected a test_data_set_N folder with "
                    "input_K.pb and output_K.pb files)",
                    dir);
  DataSet ds;
  ds.dir = dir;
  std::vector<DataFile> ins = listData(dir, "input"), outs = listData(dir, "output");
  if (outs.empty()) return badInput("--data {}: no output_K.pb files to compare with", dir);
  // The tensors a sequence or optional input holds, as package inputs (each NAME[K], or NAME for
  // an optional's one tensor), their types into `types` and the data set's build key.
  auto addHeld = [&ds](const std::string& name, const std::string& key, const std::vector<Tensor>& held,
                       bool perElement, std::vector<TensorType>& types) {
    ds.key += key + ":";
    for (size_t k = 0; k < held.size(); ++k) {
      types.push_back(held[k].type());
      ds.key += " " + held[k].type().str();
      ds.inputs[perElement ? sequenceElementName(name, k) : name] = held[k];
    }
    ds.key += ";";
  };
  for (const DataFile& f : ins) {
    std::string pbName;
    const OnnxModelInput* decl =
        f.index >= 0 && f.index < static_cast<int>(declared.size()) ? &declared[f.index] : nullptr;
    // A sequence input (SequenceProto): one package input per element, NAME[K]; its length and
    // element types are compiled in (ImportOptions::sequenceInputs).
    if (decl && decl->sequence) {
      MG_ASSIGN_OR_RETURN(std::vector<Tensor> elems, readSequenceProtoFile(f.path, &pbName));
      addHeld(decl->name, "sequence " + decl->name, elems, true, ds.sequences[decl->name]);
      continue;
    }
    // An optional input (OptionalProto): what it holds is compiled in (ImportOptions::
    // optionalInputs); a tensor is the package input NAME, a sequence's elements NAME[K].
    if (decl && decl->optional) {
      MG_ASSIGN_OR_RETURN(OptionalData od, readOptionalProtoFile(f.path, &pbName));
      OptionalInput& in = ds.optionals[decl->name];
      in.kind = od.kind;
      addHeld(decl->name, fmt::format("optional {} {}", decl->name, static_cast<int>(od.kind)), od.values,
              od.kind == OptionalInput::Kind::kSequence, in.types);
      continue;
    }
    MG_ASSIGN_OR_RETURN(Tensor t, readTensorProtoFile(f.path, &pbName));
    std::string name;
    for (const OnnxModelInput& d : declared)
      if (!pbName.empty() && d.name == pbName) name = pbName;
    if (name.empty()) {
      if (f.index < 0 || f.index >= static_cast<int>(declared.size()))
        return badInput("{}: the model has {} inputs, so there is no input {} for this file", f.path,
                        declared.size(), f.index);
      name = declared[f.index].name;
    }
    ds.inputs[name] = t;
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    const DataFile& f = outs[i];
    if (f.index != static_cast<int>(i))
      return badInput("--data {}: output files are not numbered 0..N-1 (missing output_{}.pb)", dir,
                      i);
    // An optional output: the package's outputs of what it holds in its place (none, NAME, or
    // NAME[K]).
    if (i < optionalOutputs.size() && optionalOutputs[i]) {
      MG_ASSIGN_OR_RETURN(OptionalData od, readOptionalProtoFile(f.path));
      for (Tensor& t : od.values) ds.outputs.push_back(std::move(t));
      continue;
    }
    // A sequence output: the package's outputs NAME[0], NAME[1], ... in its place.
    if (i < sequenceOutputs.size() && sequenceOutputs[i]) {
      MG_ASSIGN_OR_RETURN(std::vector<Tensor> elems, readSequenceProtoFile(f.path));
      for (Tensor& t : elems) ds.outputs.push_back(std::move(t));
      continue;
    }
    MG_ASSIGN_OR_RETURN(Tensor t, readTensorProtoFile(f.path));
    ds.outputs.push_back(t);
  }
  for (const OnnxModelInput& d : declared) {
    auto it = ds.inputs.find(d.name);
    if (it == ds.inputs.end()) continue;
    if (shapeInputs.count(d.name)) {
      ds.bindings[d.name] = it->second;
      ds.key += fmt::format("bind {} {} {:x};", d.name, it->second.type().str(), it->second.checksum());
    } else if (!d.staticShape && !base.shapes.count(d.name) && base.dynamic.empty()) {
      ds.shapes[d.name] = it->second.dims();
      ds.key += fmt::format("shape {} {};", d.name, dimsStr(it->second.dims()));
    }
  }
  for (const auto& [name, t] : ds.bindings)
    rep.progress(fmt::format("binding input '{}' to its value in the data ({}): it decides a shape "
                             "(an output's, or one the compile needs), so the package is compiled "
                             "for that value",
                             name, t.type().str()));
  return ds;
}

std::string fmtErr(double v) { return fmt::format("{:.3g}", v); }

// The exit status the race check's runs end with when ThreadSanitizer reported (TSAN_OPTIONS).
constexpr int kRaceExit = 66;

// The inputs of a data set as one string (names, types, contents' checksums): data sets with equal
// fingerprints and builds get the same outputs from a run, so the runner runs once for them.
std::string inputsFingerprint(const DataSet& ds) {
  std::string f;
  for (const auto& [name, t] : ds.inputs) f += fmt::format("{} {} {:x};", name, t.type().str(), t.checksum());
  return f;
}

struct RunOutcome {
  int failed = 0;      // outputs (or lines) that failed
  bool ran = false;    // the runner ran to the end and wrote its outputs into the work folder
};

// The runner's "output K dims=AxB" lines (printed when given --dims) as one line per output,
// in order, for output_dims.txt.
std::string outputDimsLines(const std::string& runnerOutput, size_t outputs) {
  std::vector<std::string> dims(outputs);
  std::regex re("output ([0-9]+) dims=([0-9x]*)");
  size_t pos = 0;
  while (pos < runnerOutput.size()) {
    size_t nl = runnerOutput.find('\n', pos);
    if (nl == std::string::npos) nl = runnerOutput.size();
    std::smatch m;
    const std::string line = runnerOutput.substr(pos, nl - pos);
    if (std::regex_match(line, m, re) && std::stoul(m[1].str()) < outputs) dims[std::stoul(m[1].str())] = m[2].str();
    pos = nl + 1;
  }
  std::string text;
  for (const std::string& d : dims) text += d + "\n";
  return text;
}

// Runs the runner on a data set's inputs, its outputs written into `work`; prints what failed
// (races, the run itself).
Expected<RunOutcome> runInputs(const DataSet& ds, const CompileResult& built, const std::string& runner,
                               const std::string& work, const CheckOptions& o, const std::string& order) {
  const Graph& g = *built.graph;
  auto inName = [&](size_t i) {
    return built.inputNames.size() == g.inputs().size() ? built.inputNames[i] : g.inputs()[i]->name();
  };
  RunOutcome out;
  int& failed = out.failed;
  std::vector<std::string> cmd = {runner, "--quiet", "--threads", std::to_string(o.threads)};
  // The emulation's thread and block order (runtime/gpu/mg_emu_context.h, MG_EMU_ORDER).
  if (!order.empty()) cmd.insert(cmd.begin(), {"env", "MG_EMU_ORDER=" + order});
  // The race check: every report, then exit status kRaceExit (the runner's own failures keep
  // theirs).
  if (o.racecheck)
    cmd.insert(cmd.begin(), {"env", fmt::format("TSAN_OPTIONS=exitcode={}:halt_on_error=0:report_signal_unsafe=0",
                                                kRaceExit)});
  if (o.compile.weightsFile)
    cmd.insert(cmd.end(), {"--weights", built.outDir + "/" + built.name + "_weights.bin"});
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* in = g.inputs()[i];
    auto it = ds.inputs.find(inName(i));
    if (it == ds.inputs.end()) {
      std::printf("input %s: no input_K.pb in the data set [FAIL]\n", inName(i).c_str());
      return RunOutcome{1, false};
    }
    // ONNX's test data stores bfloat16 tensors as uint16 (numpy has no bfloat16): same bits.
    Tensor data = it->second;
    if (in->dtype() == DType::kBF16 && data.dtype() == DType::kU16 && data.dims() == in->dims() &&
        data.hasData())
      data = Tensor(in->type(), std::vector<uint8_t>(data.bytes(), data.bytes() + data.byteSize()));
    // A dynamic package takes the data's shape (the package checks it against the declared
    // ranges); element type and rank must match all the same.
    const bool dynamic = !g.symbols().empty();
    if (dynamic ? data.dtype() != in->dtype() || data.type().rank() != in->type().rank()
                : data.type() != in->type()) {
      std::printf("input %s: the data holds %s but the compiled model expects %s [FAIL]\n",
                  inName(i).c_str(), data.type().str().c_str(), in->type().str().c_str());
      return RunOutcome{1, false};
    }
    std::string path = work + "/input_" + std::to_string(i) + ".bin";
    const Tensor& t = data;
    MG_RETURN_IF_ERROR(writeFile(path, std::string(reinterpret_cast<const char*>(t.bytes()), t.byteSize())));
    cmd.insert(cmd.end(), {"--input", path});
    if (dynamic) cmd.insert(cmd.end(), {"--dims", fmt::format("{}={}", i, dimsStr(data.dims()))});
  }
  for (size_t k = 0; k < g.outputs().size(); ++k)
    cmd.insert(cmd.end(), {"--output", work + "/output_" + std::to_string(k) + ".bin"});
  MG_ASSIGN_OR_RETURN(ProcessResult r, runProcess(cmd));
  // clang 14's ThreadSanitizer runtime can fail to map its shadow memory under some random
  // address-space layouts ("FATAL: ThreadSanitizer: unexpected memory mapping"): the sanitizer's
  // own failure, not a finding, so the run is repeated once with the layout fixed (setarch -R).
  if (o.racecheck && r.output.find("FATAL: ThreadSanitizer") != std::string::npos) {
    std::printf("note: ThreadSanitizer's runtime failed to start; running again without address-space "
                "randomization (setarch -R)\n");
    std::vector<std::string> again = {"setarch", "-R"};
    again.insert(again.end(), cmd.begin(), cmd.end());
    MG_ASSIGN_OR_RETURN(r, runProcess(again));
  }
  if (o.racecheck && r.output.find("WARNING: ThreadSanitizer:") != std::string::npos) {
    std::printf("%s", summarizeRaceReports(r.output).c_str());
    ++failed;
    if (r.exitCode == kRaceExit) r.exitCode = 0;  // the outputs are still compared
  }
  if (r.exitCode != 0) {
    std::printf("run: the compiled model failed [FAIL]\n%s", tailLines(r.output, 10).c_str());
    return RunOutcome{failed + 1, false};
  }
  if (!g.symbols().empty())  // --dynamic, or data-dependent extents
    MG_RETURN_IF_ERROR(writeFile(work + "/output_dims.txt", outputDimsLines(r.output, g.outputs().size())));
  out.ran = true;
  return out;
}

// Runs one data set through a built runner (or, when `run` is false, takes the outputs an earlier
// run on the same inputs left in `work`); prints one line per output.
Expected<RunOutcome> runDataSet(const DataSet& ds, const CompileResult& built, const std::string& runner,
                                const std::string& work, const CheckOptions& o, const std::string& order,
                                bool run) {
  const Graph& g = *built.graph;
  auto outName = [&](size_t k) {
    return built.outputNames.size() == g.outputs().size() ? built.outputNames[k] : g.outputs()[k]->name();
  };
  RunOutcome out;
  int& failed = out.failed;
  if (run) {
    MG_ASSIGN_OR_RETURN(RunOutcome ran, runInputs(ds, built, runner, work, o, order));
    if (!ran.ran) return ran;
    out = ran;
  }
  if (ds.outputs.size() != g.outputs().size()) {
    std::printf("outputs: the model has %zu outputs but the data set has %zu output_K.pb files [FAIL]\n",
                g.outputs().size(), ds.outputs.size());
    ++failed;
  }
  size_t n = std::min(ds.outputs.size(), g.outputs().size());
  // A dynamic package's outputs have the shapes it reported for this run.
  std::vector<Dims> runDims;
  if (!g.symbols().empty()) {
    MG_ASSIGN_OR_RETURN(std::string text, readFile(work + "/output_dims.txt"));
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) nl = text.size();
      Dims d;
      const std::string line = text.substr(pos, nl - pos);
      for (size_t a = 0; a < line.size();) {
        size_t x = line.find('x', a);
        if (x == std::string::npos) x = line.size();
        d.push_back(std::stoll(line.substr(a, x - a)));
        a = x + 1;
      }
      runDims.push_back(d);
      pos = nl + 1;
    }
  }
  std::vector<std::optional<Tensor>> gots(n);
  auto atolOf = [&](size_t k) {
    auto own = o.outputAtol.find(outName(k));
    return own == o.outputAtol.end() ? o.atol : own->second;
  };
  for (size_t k = 0; k < n; ++k) {
    const Value* v = g.outputs()[k];
    MG_ASSIGN_OR_RETURN(std::string raw, readFile(work + "/output_" + std::to_string(k) + ".bin"));
    TensorType type = v->type();
    if (k < runDims.size() && runDims[k].size() == type.dims.size()) type.dims = runDims[k];
    auto want = checkedByteSize(type);
    if (!runDims.empty() && (!want.ok() || static_cast<size_t>(want.value()) != raw.size())) {
      std::printf("output %s: the run wrote %zu bytes, not those of %s, the shape the package reported [FAIL]\n",
                  outName(k).c_str(), raw.size(), type.str().c_str());
      ++failed;
      continue;
    }
    gots[k] = Tensor(type, std::vector<uint8_t>(raw.begin(), raw.end()));
  }
  // --unordered-rows: each group's rows are paired with the expected rows in any order first.
  std::vector<int64_t> movedRows(n, -1);
  for (const std::vector<std::string>& group : o.unorderedRows) {
    std::vector<size_t> ks;
    for (const std::string& name : group)
      for (size_t k = 0; k < n; ++k)
        if (outName(k) == name && gots[k]) ks.push_back(k);
    if (ks.size() != group.size()) continue;  // an output missing: reported below
    std::vector<const Tensor*> gt, et;
    std::vector<double> rt, at;
    for (size_t k : ks) {
      gt.push_back(&*gots[k]);
      et.push_back(&ds.outputs[k]);
      rt.push_back(o.rtol);
      at.push_back(atolOf(k));
    }
    int64_t moved = 0;
    std::vector<int64_t> perm = matchRows(gt, et, rt, at, &moved);
    if (perm.empty()) continue;  // row counts differ: the comparison reports the shapes
    for (size_t k : ks) {
      gots[k] = permuteRows(*gots[k], perm);
      movedRows[k] = moved;
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (!gots[k]) continue;
    const Tensor& got = *gots[k];
    Comparison c = compareTensors(got, ds.outputs[k], o.rtol, atolOf(k));
    if (!c.problem.empty()) {
      std::printf("output %s: %s [FAIL]\n", outName(k).c_str(), c.problem.c_str());
      ++failed;
      continue;
    }
    std::string line = fmt::format("output {}: max_abs_err={} max_rel_err={} {}", outName(k),
                                   fmtErr(c.maxAbsErr), fmtErr(c.maxRelErr), c.ok ? "ok" : "FAIL");
    if (!c.ok)
      line += fmt::format(" ({} of {} elements out of tolerance; first at {}: got {} expected {})",
                          c.mismatches, got.numel(), c.firstBad, c.firstGot, c.firstExpected);
    if (movedRows[k] >= 0)
      line += fmt::format(" (rows matched in any order: {} of {} paired out of place)", movedRows[k],
                          got.dims().empty() ? 0 : got.dims()[0]);
    std::printf("%s\n", line.c_str());
    if (!c.ok) ++failed;
  }
  std::fflush(stdout);
  return out;
}

}  // namespace

std::string summarizeRaceReports(const std::string& output) {
  constexpr int kShown = 5;
  std::string out;
  int reports = 0, shown = 0;
  bool frameNext = false, inReport = false;
  size_t pos = 0;
  while (pos < output.size()) {
    size_t end = output.find('\n', pos);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("WARNING: ThreadSanitizer:", 0) == 0) {
      ++reports;
      inReport = shown < kShown;
      if (inReport) {
        ++shown;
        out += "race check: " + line.substr(9) + "\n";
      }
      continue;
    }
    if (line.rfind("SUMMARY: ThreadSanitizer:", 0) == 0 || line.rfind("=====", 0) == 0) {
      inReport = false;
      continue;
    }
    if (!inReport) continue;
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    std::string t = line.substr(first);
    if (frameNext && t.rfind("#0 ", 0) == 0) {
      // "#0 FUNCTION FILE:LINE:COL (module+0x...) (BuildId: ...)": the module part is noise.
      const size_t mod = t.find("+0x");
      if (mod != std::string::npos) {
        const size_t open = t.rfind(" (", mod);
        if (open != std::string::npos) t.resize(open);
      }
      out += "      " + t + "\n";
      frameNext = false;
    } else if (t.rfind("Read of", 0) == 0 || t.rfind("Write of", 0) == 0 || t.rfind("Previous", 0) == 0 ||
               t.rfind("Atomic", 0) == 0) {
      out += "    " + t + "\n";
      frameNext = true;
    } else if (t.rfind("Thread T", 0) == 0 && t.find('\'') != std::string::npos) {
      out += "    " + t.substr(0, t.find(" created by")) + "\n";
    }
  }
  if (reports == 0) return "";
  out += fmt::format("race check: {} data race report(s) between emulated GPU threads{} [FAIL]\n", reports,
                     reports > shown ? fmt::format(" ({} shown)", shown) : "");
  return out;
}

namespace {

// Whether the package built from `g` reads no run-time input: no node uses a graph input and no
// output is one, so every output is a constant.
bool foldedToConstants(const Graph& g) {
  for (const Value* in : g.inputs()) {
    if (!in->uses().empty()) return false;
    for (const Value* out : g.outputs())
      if (out == in) return false;
  }
  return true;
}

}  // namespace

Expected<CheckStatus> checkModel(const CheckOptions& o) {
  Reporter rep(o.compile.common.verbosity);
  MG_RETURN_IF_ERROR(checkTarget(o.compile.target));
  if (o.emulate && o.compile.target == "cpu") rep.detail("--emulate has no effect for --target cpu");
  if (o.dataDirs.empty())
    return badInput("no data: add --data DIR (a test_data_set_N folder with input_K.pb and "
                    "output_K.pb files)");
  if (!(o.rtol >= 0) || !(o.atol >= 0)) return badInput("--rtol and --atol must be >= 0");
  if (!o.outputAtol.empty()) {
    MG_ASSIGN_OR_RETURN(std::vector<std::string> names, onnxModelOutputNames(o.compile.model));
    for (const auto& [name, atol] : o.outputAtol)
      if (std::find(names.begin(), names.end(), name) == names.end())
        return badInput("--atol {}={}: the model has no output '{}' (its outputs: {})", name, atol, name,
                        fmt::join(names, ", "));
  }
  if (!o.unorderedRows.empty()) {
    MG_ASSIGN_OR_RETURN(std::vector<std::string> names, onnxModelOutputNames(o.compile.model));
    for (const auto& group : o.unorderedRows)
      for (const std::string& name : group)
        if (std::find(names.begin(), names.end(), name) == names.end())
          return badInput("--unordered-rows {}: the model has no output '{}' (its outputs: {})",
                          fmt::join(group, ","), name, fmt::join(names, ", "));
  }
  if (o.threads < 1) return badInput("--threads must be at least 1");
  if (o.racecheck && (!o.emulate || o.compile.target == "cpu"))
    return badInput("--racecheck checks the CPU emulation of the GPU code: use it with --target cuda "
                    "or hip and --emulate");

  MG_ASSIGN_OR_RETURN(std::vector<OnnxModelInput> declared, onnxModelInputs(o.compile.model));
  // The cpu target computes data-dependent extents at run time (docs/DYNAMIC_SHAPES.md): their
  // deciding inputs stay run-time inputs there; cuda/hip compute NonZero's and Compress's and
  // need the others bound.
  MG_ASSIGN_OR_RETURN(std::vector<std::string> sdi,
                      shapeDeterminingInputs(o.compile.model, o.compile.target != "cpu",
                                             gpuDataExtentOps()));
  std::set<std::string> shapeInputs(sdi.begin(), sdi.end());
  MG_ASSIGN_OR_RETURN(std::vector<bool> sequenceOutputs, onnxModelSequenceOutputs(o.compile.model));
  MG_ASSIGN_OR_RETURN(std::vector<bool> optionalOutputs, onnxModelOptionalOutputs(o.compile.model));

  std::vector<DataSet> sets;
  for (const std::string& d : o.dataDirs) {
    MG_ASSIGN_OR_RETURN(DataSet ds,
                        loadDataSet(d, declared, sequenceOutputs, optionalOutputs, shapeInputs,
                                    o.compile, rep));
    sets.push_back(std::move(ds));
  }

  std::string work = o.workDir;
  bool temporary = work.empty();
  if (temporary) {
    MG_ASSIGN_OR_RETURN(work, makeTempDir("magneto-check-"));
  } else {
    std::error_code ec;
    fs::create_directories(work, ec);
    if (ec) return badInput("--work-dir {}: cannot create it: {}", work, ec.message());
  }
  struct Built {
    std::string key, runner;
    CompileResult result;
  };
  std::vector<Built> builds;
  std::set<std::string> bound;  // inputs bound at compile time in any data set
  bool folded = false;           // some build reads no run-time input
  std::map<std::string, std::string> ranOn;  // build key | inputs | order -> the run folder
  int failedOutputs = 0, totalOutputs = 0;
  Status error;
  for (size_t i = 0; i < sets.size() && error.ok(); ++i) {
    const DataSet& ds = sets[i];
    Built* b = nullptr;
    for (Built& x : builds)
      if (x.key == ds.key) b = &x;
    if (!b) {
      CompileOptions co = o.compile;
      co.outDir = work + "/package_" + std::to_string(builds.size());
      co.build = false;
      co.bindings = ds.bindings;
      for (const auto& [name, dims] : ds.shapes) co.shapes[name] = dims;
      co.sequenceInputs = ds.sequences;
      co.optionalInputs = ds.optionals;
      auto r = compileModel(co);
      if (!r.ok()) {
        error = r.status();
        break;
      }
      auto runner = buildPackageRunner(r->outDir, r->name, co.target, o.emulate, !co.weightsFile,
                                       co.arch, rep, o.racecheck);
      if (!runner.ok()) {
        error = runner.status();
        break;
      }
      builds.push_back({ds.key, runner.value(), std::move(r.value())});
      b = &builds.back();
      for (const auto& [name, t] : ds.bindings) bound.insert(name);
      if (!ds.bindings.empty() && b->result.graph && foldedToConstants(*b->result.graph))
        folded = true;
    }
    if (sets.size() > 1) std::printf("data set %s:\n", ds.dir.c_str());
    std::vector<std::string> orders = o.emulate && !o.emulateOrders.empty() ? o.emulateOrders
                                                                            : std::vector<std::string>{""};
    const std::string inputs = b->key + "|" + inputsFingerprint(ds);
    for (size_t oi = 0; oi < orders.size(); ++oi) {
      const std::string& order = orders[oi];
      // A second reference for the same inputs (the zoo's test_data_set_ort beside PyTorch's
      // test_data_set_0) is compared with the first run's outputs: same build, same inputs, same
      // order give the same bytes, and under --racecheck a run costs seconds.
      const std::string runKey = inputs + "|" + order;
      auto earlier = ranOn.find(runKey);
      const bool run = earlier == ranOn.end();
      // One folder per data set and order: a later data set may read any earlier order's outputs.
      std::string runDir = run ? fmt::format("{}/run_{}_{}", work, i, oi) : earlier->second;
      if (run) {
        std::error_code ec;
        fs::create_directories(runDir, ec);
        rep.progress("running on " + ds.dir + (order.empty() ? "" : " (emulation order " + order + ")"));
      } else {
        rep.progress("the inputs of " + ds.dir + " were run above: comparing that run's outputs");
      }
      if (orders.size() > 1 || !order.empty()) std::printf("emulation order %s:\n", order.c_str());
      auto outcome = runDataSet(ds, b->result, b->runner, runDir, o, order, run);
      if (!outcome.ok()) {
        error = outcome.status();
        break;
      }
      if (outcome->ran) ranOn[runKey] = runDir;
      failedOutputs += outcome->failed;
      totalOutputs += static_cast<int>(std::max(ds.outputs.size(), b->result.graph->outputs().size()));
    }
    if (!error.ok()) break;
  }
  if (temporary && o.compile.common.verbosity < 2) {
    std::error_code ec;
    fs::remove_all(work, ec);
  } else {
    rep.progress("work folder kept: " + work);
  }
  if (!error.ok()) return error;
  // The inputs bound at compile time are named on the result line: what ran is the model for
  // those values, not the model.
  const std::string boundList = fmt::format("{}", fmt::join(bound, ", "));
  const std::string boundNote = bound.empty() ? "" : " (bound at compile time: " + boundList + ")";
  if (failedOutputs != 0) {
    std::printf("check: FAIL: %d of %d output(s) out of tolerance or mismatched (rtol=%g atol=%g)%s\n",
                failedOutputs, totalOutputs, o.rtol, o.atol, boundNote.c_str());
    return CheckStatus::kFail;
  }
  if (folded) {
    std::printf("check: FOLDED: the model folded to a constant once inputs %s were bound: this check "
                "tests only constant folding (%d output(s) in %zu data set(s) matched within rtol=%g "
                "atol=%g; not a pass)\n",
                boundList.c_str(), totalOutputs, sets.size(), o.rtol, o.atol);
    return CheckStatus::kFolded;
  }
  std::printf("check: PASS: %d output(s) in %zu data set(s) within rtol=%g atol=%g%s\n", totalOutputs,
              sets.size(), o.rtol, o.atol, boundNote.c_str());
  return CheckStatus::kPass;
}

}  // namespace driver
}  // namespace magneto
