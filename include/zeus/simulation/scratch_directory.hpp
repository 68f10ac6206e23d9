// A private temporary directory, removed with everything in it when the
// object goes: for simulator state and configuration that only one run uses.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "zeus/platform/error.hpp"

namespace zeus::simulation {

class ScratchDirectory {
  public:
    // `prefix` names the directory in TMPDIR: "<prefix>-XXXXXX".
    static Result<ScratchDirectory> create(const std::string& prefix);
    ScratchDirectory(ScratchDirectory&& other) noexcept : path_(std::exchange(other.path_, {})) {}
    ScratchDirectory(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(ScratchDirectory&&) = delete;
    ~ScratchDirectory();
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  private:
    explicit ScratchDirectory(std::filesystem::path path) : path_(std::move(path)) {}
    std::filesystem::path path_;
};

// `zeus run --simulate` (or ZEUS_SIMULATE=1): the command must run on the
// GPUs this process measures. Without a ZEUS_SIM_STATE the simulator's
// state is private to each process, so the command would load an idle GPU
// of its own; this gives both a state file (as `zeus demo` does), and makes
// the command a simulator client too: ZEUS_SIMULATE=1 for Zeus, and the
// simulator's directory first on LD_LIBRARY_PATH for any NVML client. Set
// before the GPUs are opened; the command inherits the environment.
class SimulatorSharedWithChildren {
  public:
    [[nodiscard]] static Result<SimulatorSharedWithChildren> arrange(const std::optional<std::string>& library);

  private:
    SimulatorSharedWithChildren() = default;
    std::optional<ScratchDirectory> scratch_;  // holds the state file when this process chose it
};

}  // namespace zeus::simulation
