#include "zeus/attribution/pods.hpp"

#include <algorithm>
#include <cctype>

namespace zeus::attribution {
namespace {

bool is_hex_or_dash(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c)) || c == '-';
    });
}

bool is_digits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// [domain:]bus:device.function, all hex.
bool is_pci_address(std::string_view text) {
    const std::size_t colons = static_cast<std::size_t>(std::count(text.begin(), text.end(), ':'));
    if (colons < 1 || colons > 2 || text.find('.') == std::string_view::npos) return false;
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'; });
}

bool equal_ignoring_case(std::string_view a, std::string_view b) { return lower(a) == lower(b); }

bool covers(const auto& allocated, const std::set<std::size_t>& seen_on) {
    return allocated.anywhere ||
           std::includes(allocated.gpus.begin(), allocated.gpus.end(), seen_on.begin(), seen_on.end());
}

// Owners (pod UIDs, container ids), each seen on some GPUs, matched to
// targets (pods, containers) by their allocated GPUs. An owner's candidates
// are the targets whose GPUs cover every GPU it was seen on; an owner with a
// single candidate gets it, and that target is no longer a candidate of the
// others (two live pods never share a UID). Two owners left with the same
// single candidate get nothing: one of them is a pod without an allocation
// (a privileged pod that sees every GPU), and which one cannot be told.
template <class Target, class Allocated>
std::map<std::string, Target> forced_matches(const std::map<std::string, std::set<std::size_t>>& seen_on,
                                             const std::map<Target, Allocated>& targets) {
    std::map<std::string, std::set<Target>> candidates;
    for (const auto& [owner, gpus] : seen_on) {
        auto& mine = candidates[owner];
        for (const auto& [target, allocated] : targets) {
            if (covers(allocated, gpus)) mine.insert(target);
        }
    }
    std::map<std::string, Target> matched;
    for (bool progress = true; progress;) {
        progress = false;
        std::map<Target, int> single_choice_of;
        for (const auto& [owner, mine] : candidates) {
            if (mine.size() == 1) ++single_choice_of[*mine.begin()];
        }
        for (auto it = candidates.begin(); it != candidates.end(); ++it) {
            if (it->second.size() != 1 || single_choice_of[*it->second.begin()] != 1) continue;
            const Target target = *it->second.begin();
            matched.emplace(it->first, target);
            candidates.erase(it);
            for (auto& [owner, mine] : candidates) mine.erase(target);
            progress = true;
            break;
        }
    }
    return matched;
}

}  // namespace

bool is_gpu_resource(std::string_view name) {
    return name == "nvidia.com/gpu" || name == "nvidia.com/gpu.shared" || name.starts_with("nvidia.com/mig-") ||
           name == "amd.com/gpu";
}

std::string normalized_pci_address(std::string_view address) {
    std::string text = lower(address);
    // Two colons: a domain first. Drop its leading zeros (NVML writes 8 digits, sysfs 4).
    if (std::count(text.begin(), text.end(), ':') == 2) {
        const std::size_t end = text.find(':');
        std::size_t zeros = 0;
        while (zeros + 1 < end && text[zeros] == '0') ++zeros;
        text.erase(0, zeros);
    } else {
        text.insert(0, "0:");
    }
    return text;
}

Result<GpuDeviceId> parse_gpu_device_id(std::string_view id) {
    std::string_view rest = id;
    // A time-sliced replica: the GPU's id, "::", the replica's number.
    GpuDeviceId out;
    if (const std::size_t at = rest.rfind("::"); at != std::string_view::npos && is_digits(rest.substr(at + 2))) {
        rest = rest.substr(0, at);
        out.replica = true;
    }
    if (rest.starts_with("MIG-GPU-")) {
        // MIG-GPU-<uuid>/<gi>/<ci>: the parent's UUID inside.
        const std::size_t slash = rest.find('/');
        const std::string_view parent = rest.substr(4, slash == std::string_view::npos ? slash : slash - 4);
        if (slash != std::string_view::npos && is_hex_or_dash(parent.substr(4))) {
            out.gpu = parent;
            out.mig_uuid = rest;
            return out;
        }
    } else if (rest.starts_with("MIG-") && is_hex_or_dash(rest.substr(4))) {
        out.mig_uuid = rest;
        return out;
    } else if (rest.starts_with("GPU-") && is_hex_or_dash(rest.substr(4))) {
        out.gpu = rest;
        return out;
    } else if (is_pci_address(rest)) {
        out.gpu = normalized_pci_address(rest);
        return out;
    }
    return Error{
        ErrorCode::InvalidArgument,
        "device id '" + std::string(id) + "' is no GPU id: neither GPU-<uuid>[::<n>], MIG-<uuid> nor a PCI address",
        "check the GPU device plugin's configuration; the id is left out of pod names"};
}

PodNamer::PodNamer(std::vector<GpuIds> gpus) : gpus_(std::move(gpus)) {}

Result<PodNamer::Resolved> PodNamer::gpus_of(std::string_view device_id) const {
    auto parsed = parse_gpu_device_id(device_id);
    if (!parsed) return parsed.error();
    Resolved out;
    for (const GpuIds& gpu : gpus_) {
        const bool same =
            parsed->gpu.empty()
                ? std::find(gpu.mig_uuids.begin(), gpu.mig_uuids.end(), parsed->mig_uuid) != gpu.mig_uuids.end()
                : equal_ignoring_case(parsed->gpu, gpu.uuid) ||
                      (!gpu.pci_bus_id.empty() && parsed->gpu == normalized_pci_address(gpu.pci_bus_id));
        if (same) out.gpus.insert(gpu.gpu);
    }
    // A GPU UUID of no GPU here is another GPU's (not attributed, e.g. left
    // out by --gpus); a MIG instance of no listed GPU may be on any.
    out.anywhere = parsed->gpu.empty() && out.gpus.empty();
    out.whole = parsed->mig_uuid.empty() && !parsed->replica;
    return out;
}

std::map<std::size_t, GpuHolder> PodNamer::holders(const std::vector<ContainerAllocation>& allocations) const {
    // Per GPU: the containers with any device on it, and whether each has it whole.
    std::map<std::size_t, std::vector<std::pair<const ContainerAllocation*, bool>>> on_gpu;
    for (const ContainerAllocation& allocation : allocations) {
        for (const std::string& id : allocation.device_ids) {
            auto resolved = gpus_of(id);
            if (!resolved) continue;  // counted by learn()
            for (std::size_t gpu : resolved->gpus) on_gpu[gpu].emplace_back(&allocation, resolved->whole);
        }
    }
    std::map<std::size_t, GpuHolder> out;
    for (const auto& [gpu, containers] : on_gpu) {
        if (containers.size() != 1 || !containers[0].second) continue;
        const ContainerAllocation& holder = *containers[0].first;
        GpuHolder& h = out[gpu];
        h.pod = {holder.pod_namespace, holder.pod_name};
        h.container_name = holder.container_name;
        // The UID, when exactly one live UID has this name (a restarted pod of a StatefulSet has two).
        int uids = 0;
        for (const auto& [uid, pod] : pods_) {
            if (pod == h.pod && ++uids == 1) h.pod_uid = uid;
        }
        if (uids != 1) h.pod_uid.clear();
    }
    return out;
}

bool PodNamer::needs_names(const std::set<PodSighting>& sightings) const {
    return std::any_of(sightings.begin(), sightings.end(), [&](const PodSighting& s) {
        return !pods_.contains(s.pod_uid) || (!s.container_id.empty() && !containers_.contains(s.container_id));
    });
}

std::vector<Error> PodNamer::learn(const std::vector<ContainerAllocation>& allocations,
                                   const std::set<PodSighting>& sightings) {
    std::vector<Error> errors;
    std::map<PodName, Resolved> pods;
    std::map<std::pair<PodName, std::string>, Resolved> containers;
    for (const ContainerAllocation& allocation : allocations) {
        const PodName pod{allocation.pod_namespace, allocation.pod_name};
        Resolved& of_pod = pods[pod];
        Resolved& of_container = containers[{pod, allocation.container_name}];
        for (const std::string& id : allocation.device_ids) {
            auto resolved = gpus_of(id);
            if (!resolved) {
                errors.push_back(resolved.error());
                continue;
            }
            for (Resolved* into : {&of_pod, &of_container}) {
                into->gpus.insert(resolved->gpus.begin(), resolved->gpus.end());
                into->anywhere = into->anywhere || resolved->anywhere;
            }
        }
    }
    name_pods(pods, sightings);
    name_containers(containers, sightings);
    return errors;
}

void PodNamer::name_pods(const std::map<PodName, Resolved>& pods, const std::set<PodSighting>& sightings) {
    std::map<std::string, std::set<std::size_t>> unnamed;
    std::map<PodName, Resolved> free = pods;
    for (const PodSighting& sighting : sightings) {
        if (auto it = pods_.find(sighting.pod_uid); it != pods_.end()) {
            free.erase(it->second);  // a live pod keeps its name: no other UID can have it
        } else {
            unnamed[sighting.pod_uid].insert(sighting.gpu);
        }
    }
    for (auto& [uid, pod] : forced_matches(unnamed, free)) pods_.emplace(uid, pod);
}

void PodNamer::name_containers(const std::map<std::pair<PodName, std::string>, Resolved>& containers,
                               const std::set<PodSighting>& sightings) {
    // Per named pod: its unnamed containers' GPUs, and its containers not taken by a live one.
    std::map<PodName, std::map<std::string, std::set<std::size_t>>> unnamed;
    std::map<PodName, std::set<std::string>> taken;
    for (const PodSighting& sighting : sightings) {
        const PodName* pod = this->pod(sighting.pod_uid);
        if (pod == nullptr || sighting.container_id.empty()) continue;
        if (const std::string* name = container(sighting.container_id)) {
            taken[*pod].insert(*name);
        } else {
            unnamed[*pod][sighting.container_id].insert(sighting.gpu);
        }
    }
    for (const auto& [pod, seen_on] : unnamed) {
        std::map<std::string, Resolved> free;
        for (const auto& [key, allocated] : containers) {
            if (key.first == pod && !taken[pod].contains(key.second)) free.emplace(key.second, allocated);
        }
        for (auto& [id, name] : forced_matches(seen_on, free)) containers_.emplace(id, name);
    }
}

void PodNamer::retain(const std::set<std::string>& live_pod_uids, const std::set<std::string>& live_container_ids) {
    std::erase_if(pods_, [&](const auto& entry) { return !live_pod_uids.contains(entry.first); });
    std::erase_if(containers_, [&](const auto& entry) { return !live_container_ids.contains(entry.first); });
}

const PodName* PodNamer::pod(std::string_view pod_uid) const {
    auto it = pods_.find(pod_uid);
    return it == pods_.end() ? nullptr : &it->second;
}

const std::string* PodNamer::container(std::string_view container_id) const {
    auto it = containers_.find(container_id);
    return it == containers_.end() ? nullptr : &it->second;
}

}  // namespace zeus::attribution
