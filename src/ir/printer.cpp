// Textual IR printer; the grammar is in include/magneto/ir/text.h.
#include <cmath>
#include <cstdio>

#include "magneto/ir/text.h"

namespace magneto {
namespace {

bool isPlainName(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02x}", c);
    else out += c;
  }
  return out + "\"";
}

std::string valueRef(const Value* v) {
  if (!v) return "_";
  return "%" + (isPlainName(v->name()) ? v->name() : quote(v->name()));
}

std::string fmtFloat(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{:.9g}", d);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

template <typename T, typename F>
std::string joinList(const std::vector<T>& v, F f) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + f(v[i]);
  return s + "]";
}

std::string tensorBody(const Tensor& t, int64_t inlineLimit) {
  if (t.hasData() && t.numel() <= inlineLimit &&
      (isFloat(t.dtype()) ? t.dtype() == DType::kF32 || t.dtype() == DType::kF64
                          : t.dtype() != DType::kString)) {
    std::string s = "dense<[";
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (i) s += ", ";
      s += isFloat(t.dtype()) ? fmtFloat(t.floatAt(i)) : std::to_string(t.intAt(i));
    }
    return s + "]>";
  }
  return fmt::format("blob<0x{:016x}>", t.checksum());
}

std::string attrStr(const Attribute& a) {
  using K = Attribute::Kind;
  switch (a.kind()) {
    case K::kInt: return std::to_string(a.i());
    case K::kFloat: return fmtFloat(a.f());
    case K::kString: return quote(a.s());
    case K::kInts:
      return joinList(a.ints(), [](int64_t x) { return std::to_string(x); });
    case K::kFloats:
      return a.floats().empty() ? "[]:f" : joinList(a.floats(), fmtFloat);
    case K::kStrings:
      return a.strings().empty() ? "[]:s" : joinList(a.strings(), quote);
    case K::kTensor:
      return "tensor<" + a.tensor().type().str() + ", " + tensorBody(a.tensor(), 1 << 20) + ">";
  }
  return "?";
}

// "f32[32,3,8,8]", followed by " as [N,3,8,8]" for a value with a symbolic shape.
std::string printTypeWithSymDims(const Value* v) {
  std::string s = v->type().str();
  if (!v->isSymbolic()) return s;
  s += " as [";
  for (int i = 0; i < v->rank(); ++i) s += (i ? "," : "") + v->symDims()[i].str();
  return s + "]";
}

}  // namespace

std::string printNode(const Node& n) {
  std::string s;
  for (size_t i = 0; i < n.numOutputs(); ++i)
    s += (i ? ", " : "") + valueRef(n.output(i)) + " : " + printTypeWithSymDims(n.output(i));
  s += " = " + n.kind() + "(";
  for (size_t i = 0; i < n.numInputs(); ++i) s += (i ? ", " : "") + valueRef(n.input(i));
  s += ")";
  if (!n.attrs().empty()) {
    s += " {";
    bool first = true;
    for (const auto& [k, v] : n.attrs()) {
      s += (first ? "" : ", ") + (isPlainName(k) ? k : quote(k)) + " = " + attrStr(v);
      first = false;
    }
    s += "}";
  }
  if (!n.name().empty()) s += " loc(" + quote(n.name()) + ")";
  return s;
}

std::string printGraph(const Graph& g, const PrintOptions& opts) {
  std::string s = "graph @" + (isPlainName(g.name()) ? g.name() : quote(g.name())) + " {\n";
  for (const DimSymbol& sym : g.symbols()) {
    s += "  symbol " + (isPlainName(sym.name) ? sym.name : quote(sym.name)) +
         fmt::format(" [{}, {}]", sym.lo, sym.hi);
    if (!sym.opt.empty())
      s += " opt " + joinList(sym.opt, [](int64_t x) { return std::to_string(x); });
    if (sym.data) s += " data";
    s += "\n";
  }
  for (const Value* v : g.inputs()) s += "  input " + valueRef(v) + " : " + printTypeWithSymDims(v) + "\n";
  for (const Value* v : g.values()) {
    if (!v->isConstant()) continue;
    s += "  const " + valueRef(v) + " : " + v->type().str() + " = " +
         tensorBody(v->constant(), opts.inlineConstantLimit) + "\n";
  }
  int openGroup = -1;
  for (const Node* n : g.nodes()) {
    if (n->group() != openGroup) {
      if (openGroup >= 0) s += "  }\n";
      openGroup = n->group();
      if (openGroup >= 0) {
        auto it = g.groups().find(openGroup);
        std::string strategy = it != g.groups().end() ? it->second.strategy : "";
        std::string reason = it != g.groups().end() ? it->second.reason : "";
        s += fmt::format("  parallel #{} {} {} {{\n", openGroup, quote(strategy), quote(reason));
      }
    }
    s += (openGroup >= 0 ? "    " : "  ") + printNode(*n) + "\n";
  }
  if (openGroup >= 0) s += "  }\n";
  s += "  output ";
  for (size_t i = 0; i < g.outputs().size(); ++i) s += (i ? ", " : "") + valueRef(g.outputs()[i]);
  return s + "\n}\n";
}

}  // namespace magneto
