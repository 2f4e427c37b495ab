// Textual IR parser; the grammar is in include/magneto/ir/text.h. Errors carry line:column.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "magneto/ir/op_schema.h"
#include "magneto/ir/text.h"

namespace magneto {
namespace {

enum class Tok { kEnd, kIdent, kValue, kNumber, kString, kPunct };

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
      if (isIdent("input")) {
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
    auto n = checkedNumel(t.dims);
    if (!n.ok()) return fail(n.status().message());
    return t;
  }

  Status defineName(const std::string& name) {
    if (g_->findValue(name)) return fail(fmt::format("value %{} is defined twice", name));
    return Status::success();
  }

  Status parseInput() {
    MG_RETURN_IF_ERROR(fill());
    MG_ASSIGN_OR_RETURN(std::string name, valueName());
    MG_RETURN_IF_ERROR(defineName(name));
    MG_RETURN_IF_ERROR(expectPunct(":"));
    MG_ASSIGN_OR_RETURN(TensorType t, type());
    g_->addInput(name, t);
    return Status::success();
  }

  // dense<[...]> | splat<x> | random<seed> | blob<0x...>
  Expected<Tensor> tensorBody(const TensorType& t) {
    if (tok_.kind != Tok::kIdent) return fail("expected dense<...>, splat<...>, random<...> or blob<...>");
    std::string kind = tok_.text;
    MG_RETURN_IF_ERROR(fill());
    MG_RETURN_IF_ERROR(expectPunct("<"));
    Tensor out;
    if (kind == "dense" || kind == "splat") {
      std::vector<double> vals;
      if (kind == "dense") {
        MG_RETURN_IF_ERROR(expectPunct("["));
        while (!isPunct("]")) {
          MG_ASSIGN_OR_RETURN(double v, number());
          vals.push_back(v);
          if (isPunct(",")) MG_RETURN_IF_ERROR(fill());
        }
        MG_RETURN_IF_ERROR(fill());
        if (static_cast<int64_t>(vals.size()) != t.numel())
          return fail(fmt::format("dense<> has {} values for type {}", vals.size(), t.str()));
      } else {
        MG_ASSIGN_OR_RETURN(double v, number());
        vals.assign(static_cast<size_t>(t.numel()), v);
      }
      out = Tensor::zeros(t);
      auto* p = const_cast<uint8_t*>(out.bytes());
      for (size_t i = 0; i < vals.size(); ++i) {
        double v = vals[i];
        switch (t.dtype) {
          case DType::kF32: reinterpret_cast<float*>(p)[i] = static_cast<float>(v); break;
          case DType::kF64: reinterpret_cast<double*>(p)[i] = v; break;
          case DType::kI64: reinterpret_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
          case DType::kI32: reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
          case DType::kI8: reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
          case DType::kU8: reinterpret_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
          case DType::kBool: p[i] = v != 0; break;
          default: return fail("dense<> supports f32, f64, i64, i32, i8, u8 and bool");
        }
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
    };
    std::vector<Result> results;
    Token start = tok_;
    for (;;) {
      MG_ASSIGN_OR_RETURN(std::string name, valueName());
      MG_RETURN_IF_ERROR(defineName(name));
      Result r{name, std::nullopt};
      if (isPunct(":")) {
        MG_RETURN_IF_ERROR(fill());
        MG_ASSIGN_OR_RETURN(TensorType t, type());
        r.type = t;
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
    for (size_t i = 0; i < results.size(); ++i)
      MG_CHECK(n->output(i)->name() == results[i].name, "name clash for %{}", results[i].name);
    bool anyMissing = false;
    for (auto& r : results) anyMissing |= !r.type.has_value();
    if (anyMissing) {
      Status s = inferNode(*n);
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
