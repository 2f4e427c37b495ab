// Node attributes: a sorted map from name to a typed value, so iteration (and so printing and
// code generation) is deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "magneto/ir/tensor.h"

namespace magneto {

class Attribute {
 public:
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor };
  using Storage = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>, Tensor>;

  Attribute() : v_(int64_t{0}) {}
  Attribute(int64_t v) : v_(v) {}                       // NOLINT
  Attribute(int v) : v_(int64_t{v}) {}                  // NOLINT
  Attribute(double v) : v_(v) {}                        // NOLINT
  Attribute(std::string v) : v_(std::move(v)) {}        // NOLINT
  Attribute(const char* v) : v_(std::string(v)) {}      // NOLINT
  Attribute(std::vector<int64_t> v) : v_(std::move(v)) {}       // NOLINT
  Attribute(std::vector<double> v) : v_(std::move(v)) {}        // NOLINT
  Attribute(std::vector<std::string> v) : v_(std::move(v)) {}   // NOLINT
  Attribute(Tensor v) : v_(std::move(v)) {}             // NOLINT

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  int64_t i() const { return std::get<int64_t>(v_); }
  double f() const { return std::get<double>(v_); }
  const std::string& s() const { return std::get<std::string>(v_); }
  const std::vector<int64_t>& ints() const { return std::get<std::vector<int64_t>>(v_); }
  const std::vector<double>& floats() const { return std::get<std::vector<double>>(v_); }
  const std::vector<std::string>& strings() const {
    return std::get<std::vector<std::string>>(v_);
  }
  const Tensor& tensor() const { return std::get<Tensor>(v_); }
  bool operator==(const Attribute& o) const;
  bool operator!=(const Attribute& o) const { return !(*this == o); }

 private:
  Storage v_;
};

const char* attrKindName(Attribute::Kind k);

class AttrMap {
 public:
  bool has(const std::string& name) const { return m_.count(name) != 0; }
  const Attribute* find(const std::string& name) const;
  void set(const std::string& name, Attribute a) { m_[name] = std::move(a); }
  void erase(const std::string& name) { m_.erase(name); }
  size_t size() const { return m_.size(); }
  bool empty() const { return m_.empty(); }
  auto begin() const { return m_.begin(); }
  auto end() const { return m_.end(); }
  bool operator==(const AttrMap& o) const { return m_ == o.m_; }

  // Typed getters with defaults. A present attribute of the wrong kind is a verifier error; these
  // getters return the default in that case, so callers after verification may rely on them.
  int64_t getInt(const std::string& name, int64_t def) const;
  double getFloat(const std::string& name, double def) const;
  std::string getString(const std::string& name, const std::string& def) const;
  std::vector<int64_t> getInts(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<double> getFloats(const std::string& name, std::vector<double> def = {}) const;
  std::vector<std::string> getStrings(const std::string& name,
                                      std::vector<std::string> def = {}) const;

 private:
  std::map<std::string, Attribute> m_;
};

}  // namespace magneto
