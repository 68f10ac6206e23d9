#include "zeus/simulation/scratch_directory.hpp"

#include <stdlib.h>

#include <cstdlib>
#include <optional>

#include "zeus/device/gpus.hpp"

namespace zeus::simulation {

Result<ScratchDirectory> ScratchDirectory::create(const std::string& prefix) {
    std::error_code ec;
    std::string pattern = (std::filesystem::temp_directory_path(ec) / (prefix + "-XXXXXX")).string();
    if (ec || ::mkdtemp(pattern.data()) == nullptr) {
        return Error{ErrorCode::OperatingSystem, "cannot create a temporary directory for the simulator",
                     "set TMPDIR to a writable directory", 0};
    }
    return ScratchDirectory(pattern);
}

ScratchDirectory::~ScratchDirectory() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

Result<SimulatorSharedWithChildren> SimulatorSharedWithChildren::arrange(const std::optional<std::string>& library) {
    SimulatorSharedWithChildren shared;
    const char* state = std::getenv("ZEUS_SIM_STATE");  // NOLINT(concurrency-mt-unsafe): before any thread
    if (state == nullptr || *state == '\0') {
        auto scratch = ScratchDirectory::create("zeus-run");
        if (!scratch) return scratch.error();
        ::setenv("ZEUS_SIM_STATE", (scratch->path() / "sim.state").c_str(), 1);
        shared.scratch_.emplace(std::move(scratch).value());
    }
    ::setenv("ZEUS_SIMULATE", "1", 1);
    if (auto found = locate_simulator_library(library)) {
        const std::string dir = std::filesystem::path(*found).parent_path().string();
        const char* path = std::getenv("LD_LIBRARY_PATH");  // NOLINT(concurrency-mt-unsafe)
        const std::string joined = path == nullptr || *path == '\0' ? dir : dir + ":" + path;
        ::setenv("LD_LIBRARY_PATH", joined.c_str(), 1);
    }
    return shared;
}

}  // namespace zeus::simulation
