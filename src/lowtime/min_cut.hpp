// The minimum cut with flow lower bounds of one Phillips-Dessouky iteration
// (lowtime's find_min_cut), over Boost.Graph's Boykov-Kolmogorov max flow.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace zeus::lowtime::detail {

struct BoundedArc {
    std::size_t from = 0;
    std::size_t to = 0;
    double lb = 0.0;
    double ub = 0.0;
};

// Returns, per node, whether it is on the source side of the cut; empty when
// no flow meets the lower bounds (phase 1 leaves an s*/t* arc unsaturated by
// more than 1e-6). Nodes are 0..node_count-1.
[[nodiscard]] std::optional<std::vector<bool>> find_min_cut(std::size_t node_count, const std::vector<BoundedArc>& arcs,
                                                            std::size_t source, std::size_t sink);

}  // namespace zeus::lowtime::detail
