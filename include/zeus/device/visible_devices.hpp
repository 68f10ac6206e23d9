// CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES: which physical GPUs a framework
// sees, and in which order. Zeus indices are positions in that list, as in
// CUDA, so `gpu 0` in Zeus is `cuda:0` in PyTorch.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus {

struct DeviceOrdinal {
    long value = 0;
    bool operator==(const DeviceOrdinal&) const = default;
};
struct DeviceUuidPrefix {
    std::string prefix;  // as written, starting with "GPU-"
    bool operator==(const DeviceUuidPrefix&) const = default;
};
using VisibleDeviceEntry = std::variant<DeviceOrdinal, DeviceUuidPrefix>;

// Parses the variable's value. nullopt in = unset = every GPU (nullopt out);
// "" = no GPU. Syntax errors and MIG entries are InvalidConfig errors whose
// message quotes the offending entry and says how to fix it.
[[nodiscard]] Result<std::optional<std::vector<VisibleDeviceEntry>>> parse_visible_devices(
    std::optional<std::string_view> value, std::string_view variable = "CUDA_VISIBLE_DEVICES");

struct PhysicalGpu {
    unsigned index = 0;
    std::string uuid;  // "GPU-..."; empty when it could not be read
};

struct VisibleDeviceSelection {
    std::vector<unsigned> physical_indices;  // position = visible index
    std::vector<std::string> warnings;       // e.g. entries CUDA would ignore
};

// Resolves the entries against the GPUs present, as CUDA does: an entry that
// names no GPU (out of range, negative, unknown or ambiguous UUID prefix)
// hides itself and every entry after it, and a GPU listed twice hides every
// GPU. Both are reported as warnings, except the "-1" idiom for "no GPU".
[[nodiscard]] Result<VisibleDeviceSelection> resolve_visible_devices(std::optional<std::string_view> value,
                                                                     std::span<const PhysicalGpu> gpus,
                                                                     std::string_view variable = "CUDA_VISIBLE_DEVICES");

}  // namespace zeus
