// Which CPU packages (sockets) a step holds whole on this node, the only case
// where a package's RAPL energy is the step's own: a package shared with
// another job holds that job's energy too, and no share of it would be right.
//
// The rule uses only what slurmstepd already knows, no libslurm call:
//   - the step's CPU count on the node (SLURM_CPUS_ON_NODE), and
//   - the CPUs the step may run on (its affinity mask);
// the step holds a package when the two agree (the mask is the step's own
// allocation, not a whole node left unconfined by TaskPlugin=task/none) and
// the mask covers every online CPU of that package (sysfs topology).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "slurm/gpu_selection.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::slurm {

// The online CPUs of each package, by physical_package_id.
using PackageCpus = std::map<unsigned, std::set<unsigned>>;

// The packages held whole, or why none are.
struct PackageHolding {
    std::vector<unsigned> packages;  // ascending; empty: see reason
    bool whole_node = false;         // every package of the node (then its DRAM is the step's too)
    std::string reason;              // why none are held; empty when some are
};

// <sysfs_root>/devices/system/cpu/cpu<N>/topology/physical_package_id of every
// online CPU ("/sys" on a node; a generated tree in tests).
[[nodiscard]] Result<PackageCpus> read_package_cpus(const std::string& sysfs_root);

// The CPUs this process may run on (sched_getaffinity).
[[nodiscard]] std::set<unsigned> allowed_cpus();

// SLURM_CPUS_ON_NODE, else SLURM_JOB_CPUS_PER_NODE when it gives every node
// the same count ("8" or "8(x2)"); nullopt when neither says.
[[nodiscard]] std::optional<unsigned> slurm_cpus_on_node(const EnvironmentLookup& lookup);

// The rule above.
[[nodiscard]] PackageHolding whole_packages(const PackageCpus& topology, const std::set<unsigned>& allowed,
                                            std::optional<unsigned> slurm_cpus);

// read_package_cpus, allowed_cpus and slurm_cpus_on_node put together.
[[nodiscard]] PackageHolding held_packages(const std::string& sysfs_root, const EnvironmentLookup& lookup);

}  // namespace zeus::slurm
