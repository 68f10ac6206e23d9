// Errors as values. Every failure carries a code (what kind), a message (what
// happened, with the vendor's own words where there are any) and a hint (what
// the user can do about it). Result<T> is "a T or an Error"; value() throws
// ZeusError for call sites that prefer exceptions.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace zeus {

enum class ErrorCode {
    NotSupported,      // the device or driver cannot do this
    NoPermission,      // needs privileges the process lacks
    InvalidArgument,   // a value the device rejected, or a bad user input
    NotFound,          // no such device, window, file...
    Uninitialized,
    AlreadyInitialized,
    InsufficientSize,
    InsufficientPower,
    DriverNotLoaded,
    Timeout,
    IrqIssue,
    LibraryNotFound,   // the vendor library could not be loaded
    FunctionNotFound,  // the vendor library lacks a symbol we need
    CorruptedInfoRom,
    GpuLost,
    ResetRequired,
    OperatingSystem,
    LibRmVersionMismatch,
    InUse,
    Memory,
    NoData,
    NotReady,
    InvalidState,
    InvalidConfig,     // a user-supplied configuration (env var, file, flag) is malformed
    Unavailable,       // the thing exists but cannot be used now (e.g. failed GPU)
    Unknown,
};

[[nodiscard]] std::string_view to_string(ErrorCode code);

struct Error {
    ErrorCode code = ErrorCode::Unknown;
    std::string message;
    std::string hint;     // how to fix it; empty when there is nothing to suggest
    int vendor_code = 0;  // the vendor library's own return code, 0 when none

    // "message (hint)" for logs and CLI output.
    [[nodiscard]] std::string describe() const;
};

class ZeusError : public std::runtime_error {
  public:
    explicit ZeusError(Error error);
    [[nodiscard]] const Error& error() const noexcept { return error_; }
    [[nodiscard]] ErrorCode code() const noexcept { return error_.code; }

  private:
    Error error_;
};

template <class T>
class [[nodiscard]] Result {
  public:
    Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
    Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

    [[nodiscard]] bool ok() const noexcept { return state_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    [[nodiscard]] const T& value() const& {
        if (!ok()) throw ZeusError(std::get<1>(state_));
        return std::get<0>(state_);
    }
    [[nodiscard]] T& value() & {
        if (!ok()) throw ZeusError(std::get<1>(state_));
        return std::get<0>(state_);
    }
    [[nodiscard]] T&& value() && {
        if (!ok()) throw ZeusError(std::get<1>(state_));
        return std::get<0>(std::move(state_));
    }
    [[nodiscard]] const T& operator*() const& { return value(); }
    [[nodiscard]] const T* operator->() const { return &value(); }

    template <class U>
    [[nodiscard]] T value_or(U&& fallback) const& {
        return ok() ? std::get<0>(state_) : static_cast<T>(std::forward<U>(fallback));
    }

    // Precondition: !ok().
    [[nodiscard]] const Error& error() const& { return std::get<1>(state_); }

  private:
    std::variant<T, Error> state_;
};

// Result of an operation that returns nothing on success.
template <>
class [[nodiscard]] Result<void> {
  public:
    Result() = default;
    Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

    [[nodiscard]] bool ok() const noexcept { return ok_; }
    explicit operator bool() const noexcept { return ok_; }
    void value() const {
        if (!ok_) throw ZeusError(error_);
    }
    [[nodiscard]] const Error& error() const& { return error_; }

  private:
    Error error_;
    bool ok_ = true;
};

using Status = Result<void>;

}  // namespace zeus
