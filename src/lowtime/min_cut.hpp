// The minimum cut with flow lower bounds of one Phillips-Dessouky iteration
// (lowtime's find_min_cut), over Boost.Graph's Boykov-Kolmogorov max flow.
//
// Capacities are exact integers: lowtime rounds every bound down to a
// multiple of its FP_ERROR (1e-6) before the flow, so counting in those units
// loses nothing, and the flow, its saturation test and the residual network
// carry no floating-point residue that could move the cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace zeus::lowtime::detail {

using FlowUnits = std::int64_t;  // multiples of lowtime's FP_ERROR (1e-6)

struct BoundedArc {
    std::size_t from = 0;
    std::size_t to = 0;
    FlowUnits lb = 0;
    FlowUnits ub = 0;
};

// Returns, per node, whether it is on the source side of the cut; empty when
// no flow meets the lower bounds. Nodes are 0..node_count-1.
[[nodiscard]] std::optional<std::vector<bool>> find_min_cut(std::size_t node_count, const std::vector<BoundedArc>& arcs,
                                                            std::size_t source, std::size_t sink);

}  // namespace zeus::lowtime::detail
