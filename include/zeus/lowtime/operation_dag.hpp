// The computation as an activity-on-node DAG: each operation has its options
// and cost model; edges are "must finish before". A dummy source and sink
// (zero duration, no cost) are always nodes 0 and 1 and are wired to every
// operation without predecessors/successors when the DAG is finalized, so a
// caller can never make a costly operation the source (lowtime's CPM would
// silently ignore its duration).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "zeus/lowtime/cost_model.hpp"
#include "zeus/lowtime/execution_option.hpp"

namespace zeus::lowtime {

// What operations of one kind share (lowtime's OperationSpec).
struct OperationSpec {
    CandidateExecutionOptions options;
    std::shared_ptr<const CostModel> cost_model;
};

class OperationDag {
public:
    static constexpr std::size_t kSource = 0;
    static constexpr std::size_t kSink = 1;

    OperationDag();

    // Returns the node id. Throws std::invalid_argument for a null spec/model.
    std::size_t add_operation(std::shared_ptr<const OperationSpec> spec, std::string name = {});
    // Throws std::invalid_argument for unknown ids, self loops, edges into the
    // source or out of the sink.
    void add_dependency(std::size_t before, std::size_t after);

    [[nodiscard]] std::size_t node_count() const { return specs_.size(); }
    [[nodiscard]] std::size_t edge_count() const { return edges_.size(); }  // after finalize(): with source/sink edges
    [[nodiscard]] bool is_dummy(std::size_t node) const { return specs_[node] == nullptr; }
    [[nodiscard]] const OperationSpec& spec(std::size_t node) const { return *specs_[node]; }
    [[nodiscard]] const std::string& name(std::size_t node) const { return names_[node]; }
    [[nodiscard]] const std::vector<std::pair<std::size_t, std::size_t>>& edges() const { return edges_; }

    // Connects the source/sink and checks the DAG (acyclic, at least one
    // operation, one unit_time). Idempotent. Throws std::invalid_argument.
    void finalize();
    [[nodiscard]] bool finalized() const { return finalized_; }

private:
    std::vector<std::shared_ptr<const OperationSpec>> specs_;  // nullptr: dummy
    std::vector<std::string> names_;
    std::vector<std::pair<std::size_t, std::size_t>> edges_;
    bool finalized_ = false;
};

// The activity-on-arc form lowtime solves on: AON node v becomes the arc
// 2v -> 2v+1 carrying v's operation, and AON edge (u, v) the dummy arc
// 2u+1 -> 2v. So 2|V| nodes and |E|+|V| arcs.
struct AoaArc {
    std::size_t from = 0;
    std::size_t to = 0;
    std::size_t operation = 0;  // AON node id; dummy arcs carry kNoOperation
    static constexpr std::size_t kNoOperation = static_cast<std::size_t>(-1);
};

struct AoaDag {
    std::size_t node_count = 0;
    std::size_t source = 0;
    std::size_t sink = 0;
    std::vector<AoaArc> arcs;
};

// Requires a finalized DAG.
[[nodiscard]] AoaDag to_activity_on_arc(const OperationDag& dag);

}  // namespace zeus::lowtime
