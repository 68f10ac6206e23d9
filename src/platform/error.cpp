#include "zeus/platform/error.hpp"

#include "zeus/platform/utf8.hpp"

namespace zeus {

std::string_view to_string(ErrorCode code) {
    switch (code) {
        case ErrorCode::NotSupported: return "not supported";
        case ErrorCode::NoPermission: return "no permission";
        case ErrorCode::InvalidArgument: return "invalid argument";
        case ErrorCode::NotFound: return "not found";
        case ErrorCode::Uninitialized: return "uninitialized";
        case ErrorCode::AlreadyInitialized: return "already initialized";
        case ErrorCode::InsufficientSize: return "insufficient size";
        case ErrorCode::InsufficientPower: return "insufficient power";
        case ErrorCode::DriverNotLoaded: return "driver not loaded";
        case ErrorCode::Timeout: return "timeout";
        case ErrorCode::IrqIssue: return "interrupt issue";
        case ErrorCode::LibraryNotFound: return "library not found";
        case ErrorCode::FunctionNotFound: return "function not found";
        case ErrorCode::CorruptedInfoRom: return "corrupted infoROM";
        case ErrorCode::GpuLost: return "GPU is lost";
        case ErrorCode::ResetRequired: return "reset required";
        case ErrorCode::OperatingSystem: return "operating system error";
        case ErrorCode::LibRmVersionMismatch: return "library/driver version mismatch";
        case ErrorCode::InUse: return "in use";
        case ErrorCode::Memory: return "out of memory";
        case ErrorCode::NoData: return "no data";
        case ErrorCode::NotReady: return "not ready";
        case ErrorCode::InvalidState: return "invalid state";
        case ErrorCode::InvalidConfig: return "invalid configuration";
        case ErrorCode::Unavailable: return "unavailable";
        case ErrorCode::Unknown: return "unknown error";
    }
    return "unknown error";
}

std::string Error::describe() const {
    // A message quotes what the user gave (an argument, a variable, a file's
    // line): escaped, so that it cannot drive a terminal, break a log line's
    // UTF-8 or a Python str.
    if (hint.empty()) return terminal_safe_lines(message);
    return terminal_safe_lines(message + " (" + hint + ")");
}

ZeusError::ZeusError(Error error) : std::runtime_error(error.describe()), error_(std::move(error)) {}

}  // namespace zeus
