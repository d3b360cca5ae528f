// Errors as values. The library never throws across its boundary, never exits and never prints:
// every fallible function returns a Status or an Expected<T> whose message names the node or
// tensor involved and, where one exists, a hint for the fix.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace memopt {

/// Error categories; the CLI maps them to its documented exit codes.
enum class ErrorCode {
  kOk = 0,
  kInvalidInput = 1,  ///< bad model, bad config, unresolvable data: exit 1
  kUsage = 2,         ///< bad command-line value (malformed --dims, unknown dim name): exit 2
  kBudgetNotMet = 3,  ///< a budget or CI gate was not met: exit 3
  kNoDevice = 4,      ///< no usable GPU: exit 4
  kVerifyFailed = 5,  ///< a rewritten graph computes something else: exit 5
  kUnsupported = 6,   ///< an op or data type this build does not handle: exit 1
  kInternal = 7,      ///< a bug in memopt: exit 1
};

class Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Returns a copy whose message is prefixed with `context + ": "`.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status InvalidInput(std::string message) { return {ErrorCode::kInvalidInput, std::move(message)}; }
inline Status UsageError(std::string message) { return {ErrorCode::kUsage, std::move(message)}; }
inline Status Unsupported(std::string message) { return {ErrorCode::kUnsupported, std::move(message)}; }
inline Status InternalError(std::string message) { return {ErrorCode::kInternal, std::move(message)}; }

/// A value or the Status that explains why there is none.
template <typename T>
class Expected {
 public:
  Expected(T value) : data_(std::move(value)) {}          // NOLINT: implicit by design
  Expected(Status status) : data_(std::move(status)) {}   // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(data_);
  }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace memopt

#define MEMOPT_CONCAT_INNER_(a, b) a##b
#define MEMOPT_CONCAT_(a, b) MEMOPT_CONCAT_INNER_(a, b)

#define MEMOPT_RETURN_IF_ERROR(expr)                  \
  do {                                                \
    ::memopt::Status memopt_status_ = (expr);         \
    if (!memopt_status_.ok()) return memopt_status_;  \
  } while (0)

#define MEMOPT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

/// `MEMOPT_ASSIGN_OR_RETURN(auto x, Foo());` declares x from an Expected or returns its error.
#define MEMOPT_ASSIGN_OR_RETURN(lhs, expr) \
  MEMOPT_ASSIGN_OR_RETURN_IMPL_(MEMOPT_CONCAT_(memopt_expected_, __LINE__), lhs, expr)

/// Internal invariant check: a failure is a memopt bug, reported with file:line.
#define MEMOPT_CHECK(cond)                                                                    \
  do {                                                                                        \
    if (!(cond)) ::memopt::internal::CheckFailed(#cond, __FILE__, __LINE__);                  \
  } while (0)

namespace memopt::internal {
[[noreturn]] void CheckFailed(const char* cond, const char* file, int line);
}
