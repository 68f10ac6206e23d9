// Internal error type of the simulator core. The C API maps Status onto
// zeusSimStatus_t; the NVML layer onto nvmlReturn_t. Exceptions never cross
// the extern "C" boundary.
#pragma once

#include <stdexcept>
#include <string>

namespace zeus::sim {

enum class Status { kOk = 0, kInvalidArgument = 1, kNotFound = 2, kConfig = 3, kState = 4, kUnsupported = 5 };

class SimError : public std::runtime_error {
 public:
  SimError(Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

}  // namespace zeus::sim
