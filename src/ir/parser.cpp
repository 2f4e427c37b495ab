// Textual IR parser; the grammar is in include/magneto/ir/text.h. Errors carry line:column.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "magneto/ir/op_schema.h"
#include "magneto/ir/symbolic.h"
#include "magneto/ir/text.h"

namespace magneto {
namespace {

enum class Tok { kEnd, kIdent, kValue, kNumber, kString, kPunct };

// Constants written as dense<>, splat<> or random<> are materialized while parsing; bigger ones
// can only be blob<> (a checksum, no data), so that a short text cannot demand gigabytes.
constexpr int64_t kMaxTextConstantBytes = int64_t{1} << 28;

template <typename T>
void storeAs(uint8_t* p, size_t i, T v) {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

// Stores the literal `text` (a number, nan, inf, -inf) as element i of a `dt` buffer. Integer
// types take integer literals exactly (int64 values past 2^53 survive) or integral floats; a
// value outside the type's range is an error, never a wrapped or undefined conversion.
Status storeLiteral(DType dt, const std::string& text, uint8_t* p, size_t i) {
  if (dt == DType::kF32 || dt == DType::kF64) {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (*end) return badInput("bad number '{}'", text);
    if (dt == DType::kF32) storeAs<float>(p, i, static_cast<float>(v));
    else storeAs<double>(p, i, v);
    return Status::success();
  }
  long double lo = 0, hi = 0;  // the type's range
  switch (dt) {
    case DType::kI8: lo = -128, hi = 127; break;
    case DType::kU8: lo = 0, hi = 255; break;
    case DType::kI16: lo = -32768, hi = 32767; break;
    case DType::kU16: lo = 0, hi = 65535; break;
    case DType::kI32: lo = -2147483648.0L, hi = 2147483647.0L; break;
    case DType::kU32: lo = 0, hi = 4294967295.0L; break;
    case DType::kI64: lo = -9223372036854775808.0L, hi = 9223372036854775807.0L; break;
    case DType::kU64: lo = 0, hi = 18446744073709551615.0L; break;
    case DType::kBool: lo = 0, hi = 1; break;
    default:
      return unsupported("dense<> and splat<> do not support {} (use random<> or blob<>)",
                         dtypeName(dt));
  }
  // Exact integers first: strtoll/strtoull of the whole text.
  char* end = nullptr;
  errno = 0;
  bool negative = !text.empty() && text[0] == '-';
  long long s = 0;
  unsigned long long u = 0;
  if (negative) s = std::strtoll(text.c_str(), &end, 10);
  else u = std::strtoull(text.c_str(), &end, 10);
  bool exact = !text.empty() && *end == '\0' && errno == 0;
  long double v = negative ? static_cast<long double>(s) : static_cast<long double>(u);
  if (!exact) {  // an integral float ("2.0", "1e3"), or out of 64-bit range
    double d = std::strtod(text.c_str(), &end);
    if (*end || !(d == std::floor(d)))
      return badInput("'{}' is not an integer ({})", text, dtypeName(dt));
    v = d;
  }
  if (v < lo || v > hi)
    return badInput("{} is out of range for {} [{}, {}]", text, dtypeName(dt),
                    static_cast<double>(lo), static_cast<double>(hi));
  switch (dt) {
    case DType::kI8: storeAs<int8_t>(p, i, static_cast<int8_t>(v)); break;
    case DType::kU8: storeAs<uint8_t>(p, i, static_cast<uint8_t>(v)); break;
    case DType::kI16: storeAs<int16_t>(p, i, static_cast<int16_t>(v)); break;
    case DType::kU16: storeAs<uint16_t>(p, i, static_cast<uint16_t>(v)); break;
    case DType::kI32: storeAs<int32_t>(p, i, static_cast<int32_t>(v)); break;
    case DType::kU32: storeAs<uint32_t>(p, i, static_cast<uint32_t>(v)); break;
    case DType::kI64:  // exact: in range, so a positive value fits in int64
      storeAs<int64_t>(p, i, !exact ? static_cast<int64_t>(v)
                             : negative ? static_cast<int64_t>(s)
                                        : static_cast<int64_t>(u));
      break;
    case DType::kU64:  // exact and in range: not negative
      storeAs<uint64_t>(p, i, exact ? static_cast<uint64_t>(u) : static_cast<uint64_t>(v));
      break;
    default: p[i] = v != 0; break;  // bool
  }
  return Status::success();
}

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // identifier, value name (without %), number text, unescaped string, punct
  int line = 1, col = 1;
};

class Lexer {
 public:
  explicit Lexer(const std::string& s) : s_(s) {}

  Expected<Token> next() {
    skipSpace();
    Token t;
    t.line = line_;
    t.col = col_;
    if (pos_ >= s_.size()) return t;
    char c = s_[pos_];
    if (c == '%') {
      advance();
      t.kind = Tok::kValue;
      if (peekChar() == '"') {
        MG_ASSIGN_OR_RETURN(t.text, readString());
      } else {
        t.text = readWhile([](char ch) { return std::isalnum((unsigned char)ch) || ch == '_' || ch == '.'; });
        if (t.text.empty()) return err(t, "expected a value name after '%'");
      }
      return t;
    }
    if (c == '"') {
      t.kind = Tok::kString;
      MG_ASSIGN_OR_RETURN(t.text, readString());
      return t;
    }
    if (std::isdigit((unsigned char)c) || c == '-' || c == '+' ||
        (c == '.' && pos_ + 1 < s_.size() && std::isdigit((unsigned char)s_[pos_ + 1]))) {
      t.kind = Tok::kNumber;
      t.text = readWhile([](char ch) {
        return std::isalnum((unsigned char)ch) || ch == '.' || ch == '-' || ch == '+';
      });
      return t;
    }
    if (std::isalpha((unsigned char)c) || c == '_') {
      t.kind = Tok::kIdent;
      t.text = readWhile([](char ch) { return std::isalnum((unsigned char)ch) || ch == '_' || ch == '.'; });
      return t;
    }
    if (std::strchr("{}()[],=:<>#@", c)) {
      advance();
      t.kind = Tok::kPunct;
      t.text = std::string(1, c);
      return t;
    }
    return err(t, fmt::format("unexpected character '{}'", c));
  }

  // The text between '[' and its matching ']' (a symbolic shape: "[N, floor((T+1)/2)]"), split at
  // the commas outside parentheses; the lexer continues after the ']'.
  Expected<std::vector<std::string>> bracketList(int line, int col) {
    skipSpace();
    Token t;
    t.line = line;
    t.col = col;
    if (pos_ >= s_.size() || s_[pos_] != '[') return err(t, "expected '[' after 'as'");
    advance();
    std::vector<std::string> out(1);
    int depth = 0;
    for (;;) {
      if (pos_ >= s_.size() || s_[pos_] == '\n') return err(t, "unterminated symbolic shape");
      char c = s_[pos_];
      advance();
      if (c == ']' && depth == 0) break;
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (c == ',' && depth == 0) out.emplace_back();
      else out.back() += c;
    }
    if (out.size() == 1 && out[0].find_first_not_of(" ") == std::string::npos) out.clear();
    return out;
  }

  Status err(const Token& t, const std::string& msg) const {
    return badInput("{}:{}: {}", t.line, t.col, msg);
  }

 private:
  char peekChar() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void advance() {
    if (s_[pos_] == '\n') ++line_, col_ = 1;
    else ++col_;
    ++pos_;
  }
  void skipSpace() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '#' && pos_ + 1 < s_.size() && s_[pos_ + 1] == ' ') {  // "# comment"
        while (pos_ < s_.size() && s_[pos_] != '\n') advance();
      } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n') advance();
      } else if (std::isspace((unsigned char)c)) {
        advance();
      } else {
        break;
      }
    }
  }
  template <typename F>
  std::string readWhile(F f) {
    size_t start = pos_;
    while (pos_ < s_.size() && f(s_[pos_])) advance();
    return s_.substr(start, pos_ - start);
  }
  Expected<std::string> readString() {
    Token at;
    at.line = line_, at.col = col_;
    advance();  // opening quote
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_];
      advance();
      if (c == '\\' && pos_ < s_.size()) {
        char e = s_[pos_];
        advance();
        if (e == 'n') out += '\n';
        else if (e == 'x' && pos_ + 1 < s_.size()) {
          out += static_cast<char>(std::strtol(s_.substr(pos_, 2).c_str(), nullptr, 16));
          advance(), advance();
        } else out += e;
      } else {
        out += c;
      }
    }
    if (pos_ >= s_.size()) return err(at, "unterminated string");
    advance();
    return out;
  }

  const std::string& s_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

class Parser {
 public:
  Parser(const std::string& text, const std::string& source) : lex_(text), source_(source) {}

  Expected<std::unique_ptr<Graph>> parse() {
    MG_RETURN_IF_ERROR(fill());
    MG_RETURN_IF_ERROR(expectIdent("graph"));
    MG_RETURN_IF_ERROR(expectPunct("@"));
    if (tok_.kind != Tok::kIdent && tok_.kind != Tok::kString) return fail("expected graph name");
    g_ = std::make_unique<Graph>();
    g_->setName(tok_.text);
    MG_RETURN_IF_ERROR(fill());
    MG_RETURN_IF_ERROR(expectPunct("{"));
    bool sawOutput = false;
    while (!isPunct("}")) {
      if (tok_.kind == Tok::kEnd) return fail("unexpected end of input: missing '}'");
      if (isIdent("symbol")) {
        MG_RETURN_IF_ERROR(parseSymbol());
      } else if (isIdent("input")) {
        MG_RETURN_IF_ERROR(parseInput());
      } else if (isIdent("const")) {
        MG_RETURN_IF_ERROR(parseConst());
      } else if (isIdent("parallel")) {
        MG_RETURN_IF_ERROR(parseGroup());
      } else if (isIdent("output")) {
        MG_RETURN_IF_ERROR(parseOutputs());
        sawOutput = true;
      } else {
        MG_RETURN_IF_ERROR(parseNode(-1));
      }
    }
    MG_RETURN_IF_ERROR(fill());
    if (tok_.kind != Tok::kEnd) return fail("text after the end of the graph");
    if (!sawOutput) return fail("graph has no 'output' line");
    return std::move(g_);
  }

 private:
  Status fill() {
    auto t = lex_.next();
    if (!t.ok()) return t.status().withContext(source_ + ":");
    tok_ = std::move(t).value();
    return Status::success();
  }
  bool isPunct(const char* p) const { return tok_.kind == Tok::kPunct && tok_.text == p; }
  bool isIdent(const char* p) const { return tok_.kind == Tok::kIdent && tok_.text == p; }
  Status fail(const std::string& msg) const {
    return badInput("{}:{}:{}: {} (at '{}')", source_, tok_.line, tok_.col, msg, tok_.text);
  }
  Status expectPunct(const char* p) {
    if (!isPunct(p)) return fail(fmt::format("expected '{}'", p));
    return fill();
  }
  Status expectIdent(const char* p) {
    if (!isIdent(p)) return fail(fmt::format("expected '{}'", p));
    return fill();
  }
  Expected<std::string> valueName() {
    if (tok_.kind != Tok::kValue) return fail("expected a %value");
    std::string n = tok_.text;
    MG_RETURN_IF_ERROR(fill());
    return n;
  }
  Expected<int64_t> integer() {
    if (tok_.kind != Tok::kNumber) return fail("expected an integer");
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(tok_.text.c_str(), &end, 0);
    if (*end || errno) return fail("bad integer");
    MG_RETURN_IF_ERROR(fill());
    return static_cast<int64_t>(v);
  }
  Expected<double> number() {
    std::string text = tok_.text;
    if (tok_.kind == Tok::kIdent && (text == "nan" || text == "inf")) {
      MG_RETURN_IF_ERROR(fill());
      return text == "nan" ? NAN : INFINITY;
    }
    if (tok_.kind != Tok::kNumber) return fail("expected a number");
    if (text == "-inf") {
      MG_RETURN_IF_ERROR(fill());
      return -INFINITY;
    }
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (*end) return fail("bad number");
    MG_RETURN_IF_ERROR(fill());
    return v;
  }

  Expected<TensorType> type() {
    if (tok_.kind != Tok::kIdent) return fail("expected an element type such as f32");
    auto dt = parseDType(tok_.text);
    if (!dt) return fail("unknown element type");
    TensorType t;
    t.dtype = *dt;
    MG_RETURN_IF_ERROR(fill());
    MG_RETURN_IF_ERROR(expectPunct("["));
    while (!isPunct("]")) {
      MG_ASSIGN_OR_RETURN(int64_t d, integer());
      if (d < 0) return fail("negative dimension");
      t.dims.push_back(d);
      if (isPunct(",")) MG_RETURN_IF_ERROR(fill());
    }
    MG_RETURN_IF_ERROR(fill());
    auto n = checkedByteSize(t);
    if (!n.ok()) return fail(n.status().message());
    return t;
  }

  Status defineName(const std::string& name) {
    if (g_->findValue(name)) return fail(fmt::format("value %{} is defined twice", name));
    return Status::success();
  }

  // After a type: "as [N, 3, floor((T+1)/2)]", or nothing (a static shape).
  Expected<std::vector<DimExpr>> symbolicDims(const TensorType& t) {
    std::vector<DimExpr> out;
    if (!isIdent("as")) return out;
    MG_ASSIGN_OR_RETURN(std::vector<std::string> items, lex_.bracketList(tok_.line, tok_.col));
    if (static_cast<int>(items.size()) != t.rank())
      return fail(fmt::format("symbolic shape has {} dims, the type {}", items.size(), t.rank()));
    for (const std::string& it : items) {
      auto e = DimExpr::parse(it);
      if (!e.ok()) return fail(e.status().message());
      for (const std::string& sym : e->symbols())
        if (!g_->findSymbol(sym)) return fail("symbol '" + sym + "' is not declared");
      out.push_back(*e);
    }
    MG_RETURN_IF_ERROR(fill());
    return out;
  }

  // symbol NAME [lo, hi] [opt [v, ...]] [data]
  Status parseSymbol() {
    MG_RETURN_IF_ERROR(fill());
    if (tok_.kind != Tok::kIdent && tok_.kind != Tok::kString) return fail("expected a symbol name");
    DimSymbol sym;
    sym.name = tok_.text;
    if (g_->findSymbol(sym.name)) return fail("symbol '" + sym.name + "' declared twice");
    MG_RETURN_IF_ERROR(fill());
    MG_RETURN_IF_ERROR(expectPunct("["));
    MG_ASSIGN_OR_RETURN(sym.lo, integer());
    MG_RETURN_IF_ERROR(expectPunct(","));
    MG_ASSIGN_OR_RETURN(sym.hi, integer());
    MG_RETURN_IF_ERROR(expectPunct("]"));
    if (sym.lo < 0 || sym.lo > sym.hi) return fail("symbol range must satisfy 0 <= lo <= hi");
    if (isIdent("opt")) {
      MG_RETURN_IF_ERROR(fill());
      MG_RETURN_IF_ERROR(expectPunct("["));
      while (!isPunct("]")) {
        MG_ASSIGN_OR_RETURN(int64_t v, integer());
        if (v < sym.lo || v > sym.hi) return fail("opt value outside the symbol's range");
        sym.opt.push_back(v);
        if (isPunct(",")) MG_RETURN_IF_ERROR(fill());
        else if (!isPunct("]")) return fail("expected ',' or ']'");
      }
      MG_RETURN_IF_ERROR(fill());
    }
    if (isIdent("data")) {
      sym.data = true;
      MG_RETURN_IF_ERROR(fill());
    }
    g_->symbols().push_back(sym);
    return Status::success();
  }

  Status parseInput() {
    MG_RETURN_IF_ERROR(fill());
    MG_ASSIGN_OR_RETURN(std::string name, valueName());
    MG_RETURN_IF_ERROR(defineName(name));
    MG_RETURN_IF_ERROR(expectPunct(":"));
    MG_ASSIGN_OR_RETURN(TensorType t, type());
    MG_ASSIGN_OR_RETURN(std::vector<DimExpr> sym, symbolicDims(t));
    g_->addInput(name, t)->setSymDims(std::move(sym));
    return Status::success();
  }

  // dense<[...]> | splat<x> | random<seed> | blob<0x...>
  Expected<Tensor> tensorBody(const TensorType& t) {
    if (tok_.kind != Tok::kIdent) return fail("expected dense<...>, splat<...>, random<...> or blob<...>");
    std::string kind = tok_.text;
    MG_RETURN_IF_ERROR(fill());
    MG_RETURN_IF_ERROR(expectPunct("<"));
    Tensor out;
    if (kind == "dense" || kind == "splat" || kind == "random") {
      MG_ASSIGN_OR_RETURN(int64_t bytes, checkedByteSize(t));
      if (bytes > kMaxTextConstantBytes)
        return fail(fmt::format("{} is {} bytes, too large for {}<> (at most 2^28); write it as "
                                "blob<...>",
                                t.str(), bytes, kind));
    }
    if (kind == "dense" || kind == "splat") {
      out = Tensor::zeros(t);
      auto* p = const_cast<uint8_t*>(out.bytes());
      const size_t n = static_cast<size_t>(t.numel());
      size_t count = 0;
      auto literal = [&](size_t i) -> Status {
        std::string text = tok_.text;
        if (!(tok_.kind == Tok::kNumber ||
              (tok_.kind == Tok::kIdent && (text == "nan" || text == "inf"))))
          return fail("expected a number");
        if (Status s = storeLiteral(t.dtype, text, p, i); !s.ok())
          return fail(s.message());
        return fill();
      };
      if (kind == "dense") {
        MG_RETURN_IF_ERROR(expectPunct("["));
        while (!isPunct("]")) {
          if (count >= n)
            return fail(fmt::format("dense<> has more than {} values for type {}", n, t.str()));
          MG_RETURN_IF_ERROR(literal(count++));
          if (isPunct(",")) MG_RETURN_IF_ERROR(fill());
        }
        MG_RETURN_IF_ERROR(fill());
        if (count != n)
          return fail(fmt::format("dense<> has {} values for type {}", count, t.str()));
      } else if (n == 0) {  // a splat of nothing: the value is still checked
        std::vector<uint8_t> one(std::max<size_t>(dtypeSize(t.dtype), 1));
        std::string text = tok_.text;
        if (Status s = storeLiteral(t.dtype, text, one.data(), 0); !s.ok())
          return fail(s.message());
        MG_RETURN_IF_ERROR(fill());
      } else {
        MG_RETURN_IF_ERROR(literal(0));
        const size_t esz = dtypeSize(t.dtype);
        for (size_t i = 1; i < n; ++i) std::memcpy(p + i * esz, p, esz);
      }
    } else if (kind == "random") {
      MG_ASSIGN_OR_RETURN(int64_t seed, integer());
      out = randomTensor(t, static_cast<uint64_t>(seed));
    } else if (kind == "blob") {
      if (tok_.kind != Tok::kNumber) return fail("expected a checksum");
      uint64_t sum = std::strtoull(tok_.text.c_str(), nullptr, 16);
      MG_RETURN_IF_ERROR(fill());
      out = Tensor::opaque(t, sum);
    } else {
      return fail("unknown constant form '" + kind + "'");
    }
    MG_RETURN_IF_ERROR(expectPunct(">"));
    return out;
  }

  Status parseConst() {
    MG_RETURN_IF_ERROR(fill());
    MG_ASSIGN_OR_RETURN(std::string name, valueName());
    MG_RETURN_IF_ERROR(defineName(name));
    MG_RETURN_IF_ERROR(expectPunct(":"));
    MG_ASSIGN_OR_RETURN(TensorType t, type());
    MG_RETURN_IF_ERROR(expectPunct("="));
    MG_ASSIGN_OR_RETURN(Tensor body, tensorBody(t));
    g_->addConstant(name, std::move(body));
    return Status::success();
  }

  Expected<Attribute> attribute() {
    if (tok_.kind == Tok::kString) {
      std::string s = tok_.text;
      MG_RETURN_IF_ERROR(fill());
      return Attribute(s);
    }
    if (isIdent("tensor")) {
      MG_RETURN_IF_ERROR(fill());
      MG_RETURN_IF_ERROR(expectPunct("<"));
      MG_ASSIGN_OR_RETURN(TensorType t, type());
      MG_RETURN_IF_ERROR(expectPunct(","));
      MG_ASSIGN_OR_RETURN(Tensor body, tensorBody(t));
      MG_RETURN_IF_ERROR(expectPunct(">"));
      return Attribute(body);
    }
    if (isPunct("[")) {
      MG_RETURN_IF_ERROR(fill());
      if (isPunct("]")) {
        MG_RETURN_IF_ERROR(fill());
        if (isPunct(":")) {
          MG_RETURN_IF_ERROR(fill());
          bool f = isIdent("f");
          if (!f && !isIdent("s")) return fail("expected ':f' or ':s' after an empty list");
          MG_RETURN_IF_ERROR(fill());
          return f ? Attribute(std::vector<double>{}) : Attribute(std::vector<std::string>{});
        }
        return Attribute(std::vector<int64_t>{});
      }
      if (tok_.kind == Tok::kString) {
        std::vector<std::string> v;
        while (!isPunct("]")) {
          if (tok_.kind != Tok::kString) return fail("expected a string");
          v.push_back(tok_.text);
          MG_RETURN_IF_ERROR(fill());
          if (isPunct(",")) MG_RETURN_IF_ERROR(fill());
        }
        MG_RETURN_IF_ERROR(fill());
        return Attribute(v);
      }
      std::vector<std::string> texts;
      bool anyFloat = false;
      while (!isPunct("]")) {
        if (tok_.kind != Tok::kNumber && !(tok_.kind == Tok::kIdent && (tok_.text == "nan" || tok_.text == "inf")))
          return fail("expected a number");
        if (tok_.text.find_first_of(".enai") != std::string::npos && tok_.text.rfind("0x", 0) != 0) anyFloat = true;
        texts.push_back(tok_.text);
        MG_RETURN_IF_ERROR(fill());
        if (isPunct(",")) MG_RETURN_IF_ERROR(fill());
      }
      MG_RETURN_IF_ERROR(fill());
      if (anyFloat) {
        std::vector<double> v;
        for (auto& s : texts) v.push_back(s == "nan" ? NAN : s == "inf" ? INFINITY : s == "-inf" ? -INFINITY : std::strtod(s.c_str(), nullptr));
        return Attribute(v);
      }
      std::vector<int64_t> v;
      for (auto& s : texts) v.push_back(std::strtoll(s.c_str(), nullptr, 0));
      return Attribute(v);
    }
    std::string text = tok_.text;
    bool isF = tok_.kind == Tok::kIdent || text.find_first_of(".enai") != std::string::npos;
    if (isF) {
      MG_ASSIGN_OR_RETURN(double d, number());
      return Attribute(d);
    }
    MG_ASSIGN_OR_RETURN(int64_t i, integer());
    return Attribute(i);
  }

  Status parseNode(int group) {
    struct Result {
      std::string name;
      std::optional<TensorType> type;
      std::vector<DimExpr> sym;
    };
    std::vector<Result> results;
    Token start = tok_;
    for (;;) {
      MG_ASSIGN_OR_RETURN(std::string name, valueName());
      MG_RETURN_IF_ERROR(defineName(name));
      for (const Result& other : results)  // "%d, %d = ..." (found by fuzz_ir_parser)
        if (other.name == name) return fail(fmt::format("value %{} is defined twice", name));
      Result r{name, std::nullopt, {}};
      if (isPunct(":")) {
        MG_RETURN_IF_ERROR(fill());
        MG_ASSIGN_OR_RETURN(TensorType t, type());
        r.type = t;
        MG_ASSIGN_OR_RETURN(r.sym, symbolicDims(t));
      }
      results.push_back(r);
      if (!isPunct(",")) break;
      MG_RETURN_IF_ERROR(fill());
    }
    MG_RETURN_IF_ERROR(expectPunct("="));
    if (tok_.kind != Tok::kIdent) return fail("expected an op name");
    std::string kind = tok_.text;
    if (!OpRegistry::instance().find(kind)) return fail("unknown op '" + kind + "'");
    MG_RETURN_IF_ERROR(fill());
    MG_RETURN_IF_ERROR(expectPunct("("));
    std::vector<Value*> operands;
    while (!isPunct(")")) {
      if (isIdent("_")) {
        operands.push_back(nullptr);
        MG_RETURN_IF_ERROR(fill());
      } else {
        MG_ASSIGN_OR_RETURN(std::string name, valueName());
        Value* v = g_->findValue(name);
        if (!v) return fail("use of undefined value %" + name);
        operands.push_back(v);
      }
      if (isPunct(",")) MG_RETURN_IF_ERROR(fill());
      else if (!isPunct(")")) return fail("expected ',' or ')'");
    }
    MG_RETURN_IF_ERROR(fill());
    AttrMap attrs;
    if (isPunct("{")) {
      MG_RETURN_IF_ERROR(fill());
      while (!isPunct("}")) {
        if (tok_.kind != Tok::kIdent && tok_.kind != Tok::kString) return fail("expected an attribute name");
        std::string key = tok_.text;
        MG_RETURN_IF_ERROR(fill());
        MG_RETURN_IF_ERROR(expectPunct("="));
        MG_ASSIGN_OR_RETURN(Attribute a, attribute());
        attrs.set(key, a);
        if (isPunct(",")) MG_RETURN_IF_ERROR(fill());
        else if (!isPunct("}")) return fail("expected ',' or '}'");
      }
      MG_RETURN_IF_ERROR(fill());
    }
    std::string nodeName;
    if (isIdent("loc")) {
      MG_RETURN_IF_ERROR(fill());
      MG_RETURN_IF_ERROR(expectPunct("("));
      if (tok_.kind != Tok::kString) return fail("expected a string in loc(...)");
      nodeName = tok_.text;
      MG_RETURN_IF_ERROR(fill());
      MG_RETURN_IF_ERROR(expectPunct(")"));
    }
    std::vector<TensorType> types;
    std::vector<std::string> names;
    for (auto& r : results) {
      types.push_back(r.type.value_or(TensorType{}));
      names.push_back(r.name);
    }
    Node* n = g_->createNode(kind, operands, types, attrs, nodeName, nullptr, names);
    n->setGroup(group);
    for (size_t i = 0; i < results.size(); ++i) {
      MG_CHECK(n->output(i)->name() == results[i].name, "name clash for %{}", results[i].name);
      n->output(i)->setSymDims(results[i].sym);
    }
    bool anyMissing = false;
    for (auto& r : results) anyMissing |= !r.type.has_value();
    if (anyMissing) {
      // A data-dependent extent of an untyped result gets a data symbol, as on import
      // (docs/DYNAMIC_SHAPES.md, "Data-dependent extents").
      std::vector<DataDim> dataDims;
      Status s = inferNode(*n, &dataDims);
      if (s.ok()) s = declareDataSymbols(*g_, n, dataDims);
      if (!s.ok())
        return badInput("{}:{}:{}: {}", source_, start.line, start.col, s.message());
    }
    return Status::success();
  }

  Status parseGroup() {
    MG_RETURN_IF_ERROR(fill());
    MG_RETURN_IF_ERROR(expectPunct("#"));
    MG_ASSIGN_OR_RETURN(int64_t id, integer());
    ParallelGroup pg;
    if (tok_.kind != Tok::kString) return fail("expected the group's strategy string");
    pg.strategy = tok_.text;
    MG_RETURN_IF_ERROR(fill());
    if (tok_.kind == Tok::kString) {
      pg.reason = tok_.text;
      MG_RETURN_IF_ERROR(fill());
    }
    if (g_->groups().count(static_cast<int>(id))) return fail("parallel group defined twice");
    g_->groups()[static_cast<int>(id)] = pg;
    MG_RETURN_IF_ERROR(expectPunct("{"));
    while (!isPunct("}")) {
      if (tok_.kind == Tok::kEnd) return fail("unexpected end of input in a parallel group");
      MG_RETURN_IF_ERROR(parseNode(static_cast<int>(id)));
    }
    return fill();
  }

  Status parseOutputs() {
    MG_RETURN_IF_ERROR(fill());
    for (;;) {
      MG_ASSIGN_OR_RETURN(std::string name, valueName());
      Value* v = g_->findValue(name);
      if (!v) return fail("output of undefined value %" + name);
      g_->addOutput(v);
      if (!isPunct(",")) break;
      MG_RETURN_IF_ERROR(fill());
    }
    return Status::success();
  }

  Lexer lex_;
  std::string source_;
  Token tok_;
  std::unique_ptr<Graph> g_;
};

}  // namespace

Expected<std::unique_ptr<Graph>> parseGraph(const std::string& text, const std::string& source) {
  Parser p(text, source);
  return p.parse();
}

Tensor randomTensor(const TensorType& type, uint64_t seed) {
  Tensor t = Tensor::zeros(type);
  auto* p = const_cast<uint8_t*>(t.bytes());
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  auto next = [&s]() {  // splitmix64
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (int64_t i = 0; i < type.numel(); ++i) {
    uint64_t r = next();
    double u = static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
    int64_t k = static_cast<int64_t>(r % 9) - 4;
    switch (type.dtype) {
      case DType::kF32: reinterpret_cast<float*>(p)[i] = static_cast<float>(u); break;
      case DType::kF64: reinterpret_cast<double*>(p)[i] = u; break;
      case DType::kI64: reinterpret_cast<int64_t*>(p)[i] = k; break;
      case DType::kI32: reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(k); break;
      case DType::kI8: reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(k); break;
      case DType::kU8: p[i] = static_cast<uint8_t>(k + 4); break;
      case DType::kBool: p[i] = r & 1; break;
      default: break;
    }
  }
  return t;
}

}  // namespace magneto
