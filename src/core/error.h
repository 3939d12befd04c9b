#pragma once
// Errors, the vperf way (see docs/design.md):
//  - recoverable failures travel as Result<T>, which carries an Error (message + errno);
//  - a failure that ends the program is a UserError, thrown and caught only in main(),
//    printed as one line: "vperf: error: WHAT (hint: WHAT TO DO)".
#include <cerrno>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace vperf {

// perf's own words for a failure that scripts grep at the start of a line (perf 6.1's
// probe_vfs_getname.sh skips when "^Failed to find the path for the kernel" is printed): an
// error whose message starts with one is printed as perf prints it, with nothing before it.
inline constexpr std::string_view kNoKernelPathMessage = "Failed to find the path for the kernel";
// perf 6.1's daemon.sh checks that a second daemon over one base prints "failed:" first.
inline constexpr std::string_view kDaemonOwnedMessage = "failed: another vperf daemon";
inline bool printed_as_perf_prints(std::string_view message) {
  return message.starts_with(kNoKernelPathMessage) || message.starts_with(kDaemonOwnedMessage);
}

struct Error {
  std::string message;
  int errno_value = 0;  // 0 when the failure did not come from a syscall
  // What to do about it, when the code that failed knows (a library deep down knows that a
  // libvirt domain needs a guest agent; the command's UserError shows it). Often empty.
  std::string hint = {};

  static Error from_errno(std::string what, int err = errno) { return Error{std::move(what), err}; }
  // "open /dev/cpu/0/msr: No such file or directory"
  std::string describe() const;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { check(); return std::get<0>(v_); }
  T& value() & { check(); return std::get<0>(v_); }
  T&& value() && { check(); return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const Error& error() const { return std::get<1>(v_); }
  T value_or(T fallback) const { return ok() ? std::get<0>(v_) : std::move(fallback); }

 private:
  void check() const {
    if (!ok()) throw std::logic_error("Result::value() on error: " + std::get<1>(v_).describe());
  }
  std::variant<T, Error> v_;
};

// A step that yields nothing but can fail (write, ioctl, seek): `return {};` on success.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    if (ok()) throw std::logic_error("Result<void>::error() on success");
    return *error_;
  }

 private:
  std::optional<Error> error_;
};

// Propagates a failed Result's Error from the enclosing function (whose Result type may
// differ); on success execution continues:
//   VPERF_TRY(writer.flush());                    // the value, if any, is dropped
//   VPERF_TRY(uint64_t nr, reader.u64("nr"));     // assigns the value to a new or existing lhs
#define VPERF_TRY(...) VPERF_TRY_PICK(__VA_ARGS__, VPERF_TRY_ASSIGN, VPERF_TRY_CHECK, )(__VA_ARGS__)
#define VPERF_TRY_PICK(first, second, name, ...) name
#define VPERF_TRY_CHECK(expr)                                                  \
  do {                                                                         \
    if (auto&& vperf_try_result = (expr); !vperf_try_result.ok()) {            \
      return vperf_try_result.error();                                         \
    }                                                                          \
  } while (false)
#define VPERF_TRY_ASSIGN(lhs, expr) VPERF_TRY_ASSIGN_AS(lhs, expr, VPERF_TRY_CAT(vperf_try_, __COUNTER__))
#define VPERF_TRY_ASSIGN_AS(lhs, expr, result)          \
  auto result = (expr);                                 \
  if (!result.ok()) return result.error();              \
  lhs = std::move(result).value()
#define VPERF_TRY_CAT2(a, b) a##b
#define VPERF_TRY_CAT(a, b) VPERF_TRY_CAT2(a, b)

// An error that ends the command. exit_code 1 = runtime failure, 2 = usage error.
class UserError : public std::runtime_error {
 public:
  UserError(std::string what, std::string hint, int exit_code = 1)
      : std::runtime_error(std::move(what)), hint_(std::move(hint)), exit_code_(exit_code) {}
  const std::string& hint() const { return hint_; }
  int exit_code() const { return exit_code_; }

 private:
  std::string hint_;
  int exit_code_;
};

// The UserError that ends the command with `error`: its description and its hint.
inline UserError user_error(const Error& error) { return UserError(error.describe(), error.hint); }

// A usage error: bad arguments, unknown event names, malformed input strings.
inline UserError usage_error(std::string what, std::string hint) {
  return UserError(std::move(what), std::move(hint), 2);
}

}  // namespace vperf
