// Runtime core: attribute parsing, kernel lookup (the thread pool: mg_threadpool.cpp).
#include "mg_runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mg_kernels.h"

namespace mgrt {

size_t dtypeSize(int32_t dtype) {
  switch (dtype) {
    case kF32: case kI32: case kU32: return 4;
    case kU8: case kI8: case kBool: return 1;
    case kU16: case kI16: case kF16: case kBF16: return 2;
    case kI64: case kF64: case kU64: return 8;
    default: return 0;
  }
}

void pitchedStrides(const Tensor& t, int64_t* strides) {
  int64_t s = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= i == t.pitchAxis ? t.pitch : t.dims[i];
  }
}

bool readsPitched(const char* op, int operand, const Tensor& t) {
  if (!t.pitched()) return true;
  if (std::strcmp(op, "MatMul") == 0)
    return (operand == 0 || operand == 1) && t.dtype == kF32 && t.rank >= 3 && t.pitchAxis == t.rank - 2;
  if (std::strcmp(op, "Transpose") == 0) {
    const size_t esz = dtypeSize(t.dtype);
    return operand == 0 && t.dtype != kStr && (esz == 1 || esz == 2 || esz == 4 || esz == 8);
  }
  return false;
}

Tensor densify(const Tensor& t, std::vector<unsigned char>& buf) {
  if (!t.pitched()) return t;
  Tensor d = t;
  d.pitchAxis = -1;
  d.pitch = 0;
  const size_t esz = dtypeSize(t.dtype);
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < t.pitchAxis; ++k) outer *= t.dims[k];
  for (int k = t.pitchAxis + 1; k < t.rank; ++k) inner *= t.dims[k];
  const int64_t rows = t.dims[t.pitchAxis];
  buf.resize(std::max<size_t>(1, static_cast<size_t>(outer * rows * inner) * esz));
  const unsigned char* src = static_cast<const unsigned char*>(t.data);
  const size_t run = static_cast<size_t>(rows * inner) * esz;
  for (int64_t o = 0; o < outer; ++o)
    if (run) std::memcpy(buf.data() + o * run, src + static_cast<size_t>(o * t.pitch * inner) * esz, run);
  d.data = buf.data();
  return d;
}

Attrs::Attrs(const char* spec) {
  std::string s = spec ? spec : "";
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(';', pos);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = item.find('=');
    if (eq == std::string::npos || item.size() < eq + 3 || item[eq + 2] != ':') continue;
    Entry e;
    e.name = item.substr(0, eq);
    e.type = item[eq + 1];
    std::string v = item.substr(eq + 3);
    if (e.type == 's') {
      e.sv.push_back(v);
    } else {
      char sep = e.type == 'S' ? '|' : ',';
      size_t p = 0;
      while (p <= v.size() && !v.empty()) {
        size_t q = v.find(sep, p);
        if (q == std::string::npos) q = v.size();
        std::string tok = v.substr(p, q - p);
        if (e.type == 'i') e.iv.push_back(std::strtoll(tok.c_str(), nullptr, 10));
        else if (e.type == 'f') e.fv.push_back(std::strtof(tok.c_str(), nullptr));
        else e.sv.push_back(tok);
        p = q + 1;
      }
    }
    entries_.push_back(std::move(e));
  }
}

const Attrs::Entry* Attrs::find(const char* name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}
bool Attrs::has(const char* name) const { return find(name) != nullptr; }
int64_t Attrs::i(const char* name, int64_t def) const {
  const Entry* e = find(name);
  if (!e) return def;
  if (!e->iv.empty()) return e->iv[0];
  if (!e->fv.empty()) return static_cast<int64_t>(e->fv[0]);
  return def;
}
float Attrs::f(const char* name, float def) const {
  const Entry* e = find(name);
  if (!e) return def;
  if (!e->fv.empty()) return e->fv[0];
  if (!e->iv.empty()) return static_cast<float>(e->iv[0]);
  return def;
}
std::string Attrs::s(const char* name, const char* def) const {
  const Entry* e = find(name);
  return e && !e->sv.empty() ? e->sv[0] : std::string(def);
}
std::vector<int64_t> Attrs::ints(const char* name) const {
  const Entry* e = find(name);
  return e ? e->iv : std::vector<int64_t>{};
}
std::vector<float> Attrs::floats(const char* name) const {
  const Entry* e = find(name);
  if (!e) return {};
  if (!e->fv.empty() || e->iv.empty()) return e->fv;
  return std::vector<float>(e->iv.begin(), e->iv.end());
}
std::vector<std::string> Attrs::strings(const char* name) const {
  const Entry* e = find(name);
  return e ? e->sv : std::vector<std::string>{};
}

int Ctx::fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(error, sizeof(error), fmt, ap);
  va_end(ap);
  return 1;
}

// ---- kernel lookup ----------------------------------------------------------------------------

namespace {
const KernelEntry* const* familyTables() {
  static const KernelEntry* tables[] = {elementwiseKernels(), reductionKernels(), tensorKernels(),
                                        nnKernels(), recurrentKernels(), lossKernels(),
                                        selectKernels(), visionKernels(), quantizeKernels(),
                                        signalKernels(), randomKernels(), fusedKernels(), nullptr};
  return tables;
}
KernelFn lookup(const KernelEntry* t, const char* op) {
  for (; t && t->op; ++t)
    if (std::strcmp(t->op, op) == 0) return t->fn;
  return nullptr;
}
}  // namespace

KernelFn findKernel(const char* op) {
  for (const KernelEntry* const* t = familyTables(); *t; ++t)
    if (KernelFn f = lookup(*t, op)) return f;
  return nullptr;
}

KernelFn findFastKernel(const char* op) { return lookup(fastKernels(), op); }

Act parseAct(const std::string& n) {
  const acts::ActInfo* a = acts::find(n.c_str());
  return a ? static_cast<Act>(a->code) : Act::kNone;
}

Epilogue Epilogue::fromAttrs(const Attrs& a) {
  Epilogue e;
  e.act = parseAct(a.s("mg_act", ""));
  e.alpha = a.f("mg_alpha", 0.f);
  e.beta = a.f("mg_beta", 0.f);
  return e;
}

}  // namespace mgrt
