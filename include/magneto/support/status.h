// Status and Expected<T>: how every error caused by the input travels through the compiler.
// Internal invariants use MG_CHECK instead, which prints and aborts (see internalError).
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace magneto {

// Exit codes of magnetoc follow these values (docs/USER_GUIDE.md).
enum class ErrorCode { kOk = 0, kBadInput = 1, kUnsupported = 2, kInternal = 3, kToolFailed = 4 };

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status success() { return {}; }
  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes context ("node 'conv1' (Conv): ") to the message, keeping the code.
  Status withContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + message_);
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

template <typename... Args>
Status badInput(fmt::format_string<Args...> f, Args&&... args) {
  return Status(ErrorCode::kBadInput, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status unsupported(fmt::format_string<Args...> f, Args&&... args) {
  return Status(ErrorCode::kUnsupported, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status internalStatus(fmt::format_string<Args...> f, Args&&... args) {
  return Status(ErrorCode::kInternal, fmt::format(f, std::forward<Args>(args)...));
}

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(Status status) : v_(std::move(status)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<1>(v_);
  }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  T& operator*() { return value(); }

 private:
  std::variant<T, Status> v_;
};

[[noreturn]] void internalError(const char* file, int line, const std::string& what);

}  // namespace magneto

#define MG_CONCAT_INNER(a, b) a##b
#define MG_CONCAT(a, b) MG_CONCAT_INNER(a, b)

#define MG_RETURN_IF_ERROR(expr)               \
  do {                                         \
    ::magneto::Status mg_status_ = (expr);     \
    if (!mg_status_.ok()) return mg_status_;   \
  } while (0)

#define MG_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

#define MG_ASSIGN_OR_RETURN(lhs, expr) \
  MG_ASSIGN_OR_RETURN_IMPL(MG_CONCAT(mg_expected_, __LINE__), lhs, expr)

// Internal invariant: a failure is a compiler bug, not a user error.
#define MG_CHECK(cond, ...)                                                              \
  do {                                                                                   \
    if (!(cond))                                                                         \
      ::magneto::internalError(__FILE__, __LINE__,                                       \
                               std::string("check failed: " #cond ". ") +                \
                                   ::fmt::format(__VA_ARGS__));                          \
  } while (0)
