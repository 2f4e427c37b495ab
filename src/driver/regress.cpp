// `magnetoc regress` (see include/magneto/driver/regress.h). Cases run as child `magnetoc check`
// processes under coreutils' `timeout`, so one model that crashes or hangs fails alone.
#include "magneto/driver/regress.h"

#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "magneto/driver/process.h"

namespace magneto {
namespace driver {
namespace fs = std::filesystem;

namespace {

constexpr int kMaxDepth = 8;  // folders below DIR searched for model folders

struct CaseResult {
  bool done = false;
  bool passed = false;
  int exitCode = 0;
  double seconds = 0;
  std::string summary;  // what the one-line report says after PASS/FAIL
  std::string output;   // the check's whole output (JUnit system-out)
};

// The path of this executable, so that cases run the same magnetoc.
std::string selfExe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "magnetoc";
  buf[n] = '\0';
  return buf;
}

// meta.json's "tolerance": {"rtol": R, "atol": A}. models/export.py writes it; a missing file or
// key leaves the value alone. A tiny scan, not a JSON parser: it reads numbers after the keys
// inside the "tolerance" object only.
void readTolerance(const std::string& folder, double& rtol, double& atol) {
  auto text = readFile(folder + "/meta.json");
  if (!text.ok()) return;
  const std::string& s = text.value();
  size_t t = s.find("\"tolerance\"");
  if (t == std::string::npos) return;
  size_t open = s.find('{', t), close = s.find('}', t);
  if (open == std::string::npos || close == std::string::npos || open > close) return;
  std::string obj = s.substr(open, close - open);
  auto number = [&](const char* key, double& out) {
    size_t k = obj.find(key);
    if (k == std::string::npos) return;
    size_t colon = obj.find(':', k);
    if (colon == std::string::npos) return;
    char* end = nullptr;
    double v = std::strtod(obj.c_str() + colon + 1, &end);
    if (end != obj.c_str() + colon + 1 && v >= 0) out = v;
  };
  number("\"rtol\"", rtol);
  number("\"atol\"", atol);
}

std::string describeExit(int code) {
  switch (code) {
    case 1: return "out of tolerance or bad input";
    case 2: return "not supported";
    case 3: return "internal error";
    case 4: return "a tool failed";
    case 5: return "folded to a constant once inputs were bound (tests only constant folding)";
    case 124: return "timed out";
    case 137: return "killed after timing out";
    default: break;
  }
  if (code > 128) return "crashed (signal " + std::to_string(code - 128) + ")";
  return "exit status " + std::to_string(code);
}

// PASS: "K outputs, max_abs_err=E"; FAIL: the reason and check's first failing line.
std::string summarize(const std::string& out, bool passed, int code) {
  int outputs = 0;
  double worst = 0;
  std::string firstBad;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t eol = out.find('\n', pos);
    if (eol == std::string::npos) eol = out.size();
    std::string line = out.substr(pos, eol - pos);
    pos = eol + 1;
    size_t m = line.find("max_abs_err=");
    if (line.rfind("output ", 0) == 0 && m != std::string::npos) {
      ++outputs;
      worst = std::max(worst, std::strtod(line.c_str() + m + 12, nullptr));
    }
    if (firstBad.empty() && (line.find("[FAIL]") != std::string::npos ||
                             line.rfind("check: FOLDED", 0) == 0 ||
                             line.find(" FAIL") != std::string::npos ||
                             line.find("error:") != std::string::npos))
      firstBad = line;
  }
  if (passed) return fmt::format("{} output(s), max_abs_err={:.3g}", outputs, worst);
  std::string s = describeExit(code);
  if (!firstBad.empty()) s += ": " + firstBad;
  return s;
}

std::string xmlEscape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default:
        // XML 1.0 forbids most control characters even when escaped.
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') o += '?';
        else o += static_cast<char>(c);
    }
  }
  return o;
}

Status writeJunit(const std::string& path, const RegressOptions& o,
                  const std::vector<RegressCase>& cases, const std::vector<CaseResult>& res,
                  const std::vector<std::string>& skipped, double total) {
  int failures = 0;
  for (const CaseResult& r : res) failures += r.passed ? 0 : 1;
  std::string suite = "magneto.regress." + o.target + (o.emulate ? ".emulate" : "") +
                      (o.parallelOpt ? "" : ".no-parallel-opt");
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format("<testsuites tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                   cases.size() + skipped.size(), failures, skipped.size(), total);
  x += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" "
                   "time=\"{:.3f}\">\n",
                   xmlEscape(suite), cases.size() + skipped.size(), failures, skipped.size(), total);
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseResult& r = res[i];
    x += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">\n",
                     xmlEscape(suite), xmlEscape(cases[i].name), r.seconds);
    if (!r.passed)
      x += fmt::format("      <failure message=\"{}\"/>\n", xmlEscape(r.summary));
    x += "      <system-out>" + xmlEscape(tailLines(r.output, 200)) + "</system-out>\n";
    x += "    </testcase>\n";
  }
  for (const std::string& s : skipped)
    x += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"><skipped "
                     "message=\"model.onnx without a test_data_set_* folder\"/></testcase>\n",
                     xmlEscape(suite), xmlEscape(s));
  x += "  </testsuite>\n</testsuites>\n";
  return writeFile(path, x);
}

}  // namespace

Expected<std::vector<RegressCase>> findRegressCases(const std::string& dir,
                                                   std::vector<std::string>* skipped) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status(ErrorCode::kBadInput,
                  fmt::format("{}: not a folder (regress expects a folder of model folders, each "
                              "with model.onnx and test_data_set_*)",
                              dir));
  fs::path root = fs::absolute(dir, ec);
  std::vector<RegressCase> cases;
  // Symlinked model folders count (a zoo assembled from links); the depth cap keeps a link cycle
  // from recursing forever.
  auto it = fs::recursive_directory_iterator(
      root, fs::directory_options::skip_permission_denied | fs::directory_options::follow_directory_symlink, ec);
  if (ec) return Status(ErrorCode::kBadInput, fmt::format("{}: cannot list: {}", dir, ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status(ErrorCode::kBadInput, fmt::format("{}: cannot list: {}", dir, ec.message()));
    if (it.depth() >= kMaxDepth) it.disable_recursion_pending();
    const fs::directory_entry& e = *it;
    if (e.path().filename() != "model.onnx" || !e.is_regular_file(ec)) continue;
    RegressCase c;
    c.folder = e.path().parent_path().string();
    std::string rel = fs::relative(e.path().parent_path(), root, ec).string();
    c.name = rel.empty() || rel == "." ? e.path().parent_path().filename().string() : rel;
    for (const auto& d : fs::directory_iterator(c.folder, ec))
      if (d.is_directory() && d.path().filename().string().rfind("test_data_set_", 0) == 0)
        c.dataSets.push_back(d.path().string());
    std::sort(c.dataSets.begin(), c.dataSets.end());
    if (c.dataSets.empty()) {
      if (skipped) skipped->push_back(c.name);
      continue;
    }
    cases.push_back(std::move(c));
  }
  std::sort(cases.begin(), cases.end(),
            [](const RegressCase& a, const RegressCase& b) { return a.name < b.name; });
  if (skipped) std::sort(skipped->begin(), skipped->end());
  return cases;
}

Expected<bool> regressModels(const RegressOptions& o) {
  std::vector<std::string> skipped;
  MG_ASSIGN_OR_RETURN(std::vector<RegressCase> cases, findRegressCases(o.dir, &skipped));
  if (cases.empty())
    return Status(ErrorCode::kBadInput,
                  fmt::format("{}: no model folders found (a model folder holds model.onnx and at "
                              "least one test_data_set_* folder){}",
                              o.dir, skipped.empty() ? "" : fmt::format("; {} model(s) without test data", skipped.size())));
  Reporter rep(o.verbosity);
  const std::string exe = selfExe();
  const int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(cases.size())));
  rep.progress(fmt::format("regress: {} model(s) under {}, target {}{}{}, {} at a time", cases.size(),
                           o.dir, o.target, o.emulate ? " (emulated)" : "",
                           o.parallelOpt ? "" : ", --no-parallel-opt", jobs));

  size_t width = 0;
  for (const RegressCase& c : cases) width = std::max(width, c.name.size());
  std::vector<CaseResult> res(cases.size());
  std::mutex mu;
  size_t printed = 0;
  std::atomic<size_t> next{0};
  auto start = std::chrono::steady_clock::now();

  auto runCase = [&](size_t i) {
    const RegressCase& c = cases[i];
    double rtol = 1e-3, atol = 1e-4;
    readTolerance(c.folder, rtol, atol);
    if (o.rtol >= 0) rtol = o.rtol;
    if (o.atol >= 0) atol = o.atol;
    std::vector<std::string> argv;
    if (o.timeoutSeconds > 0)
      argv = {"timeout", "-k", "10", std::to_string(o.timeoutSeconds)};
    argv.insert(argv.end(), {exe, "check", c.folder + "/model.onnx"});
    for (const std::string& d : c.dataSets) argv.insert(argv.end(), {"--data", d});
    argv.insert(argv.end(), {"--target", o.target, "--rtol", fmt::format("{}", rtol), "--atol",
                             fmt::format("{}", atol), "--threads", std::to_string(o.threads), "-q"});
    if (!o.arch.empty()) argv.insert(argv.end(), {"--arch", o.arch});
    if (o.emulate) argv.push_back("--emulate");
    if (o.emulate && !o.emulateOrders.empty()) {
      std::string list;
      for (const std::string& ord : o.emulateOrders) list += (list.empty() ? "" : ",") + ord;
      argv.insert(argv.end(), {"--emulate-order", list});
    }
    if (o.racecheck) argv.push_back("--racecheck");
    if (!o.parallelOpt) argv.push_back("--no-parallel-opt");
    for (const DimSymbol& sym : o.dynamic) {
      argv.insert(argv.end(), {"--dynamic", fmt::format("{}={}..{}", sym.name, sym.lo, sym.hi)});
      if (!sym.opt.empty()) argv.insert(argv.end(), {"--opt", fmt::format("{}={}", sym.name, fmt::join(sym.opt, ","))});
    }
    rep.detail(commandLine(argv));
    auto t0 = std::chrono::steady_clock::now();
    auto pr = runProcess(argv);
    CaseResult r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!pr.ok()) {
      r.exitCode = 4;
      r.output = pr.status().message();
    } else {
      r.exitCode = pr->exitCode;
      r.output = pr->output;
    }
    r.passed = r.exitCode == 0;
    r.summary = summarize(r.output, r.passed, r.exitCode);
    r.done = true;
    std::lock_guard<std::mutex> lock(mu);
    res[i] = std::move(r);
    // Lines come out in folder order whatever the order of completion.
    while (printed < res.size() && res[printed].done) {
      const CaseResult& p = res[printed];
      std::printf("%s %-*s %6.1f s  %s\n", p.passed ? "PASS" : "FAIL", static_cast<int>(width),
                  cases[printed].name.c_str(), p.seconds, p.summary.c_str());
      std::fflush(stdout);
      ++printed;
    }
  };

  std::vector<std::thread> pool;
  for (int j = 0; j < jobs; ++j)
    pool.emplace_back([&] {
      for (size_t i = next++; i < cases.size(); i = next++) runCase(i);
    });
  for (std::thread& t : pool) t.join();
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  int passed = 0, failed = 0;
  for (const CaseResult& r : res) (r.passed ? passed : failed) += 1;
  for (const std::string& s : skipped)
    std::printf("SKIP %-*s  no test_data_set_* folder\n", static_cast<int>(width), s.c_str());
  if (failed) {
    std::printf("failed:");
    for (size_t i = 0; i < cases.size(); ++i)
      if (!res[i].passed) std::printf(" %s", cases[i].name.c_str());
    std::printf("\n");
  }
  if (!o.junitPath.empty()) {
    MG_RETURN_IF_ERROR(writeJunit(o.junitPath, o, cases, res, skipped, total));
    rep.progress("wrote JUnit XML to " + o.junitPath);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0;
}

}  // namespace driver
}  // namespace magneto
