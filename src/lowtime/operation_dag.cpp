#include "zeus/lowtime/operation_dag.hpp"

#include <set>
#include <stdexcept>
#include <string>

namespace zeus::lowtime {

OperationDag::OperationDag() {
    specs_.resize(2);
    names_ = {"source", "sink"};
}

std::size_t OperationDag::add_operation(std::shared_ptr<const OperationSpec> spec, std::string name) {
    if (finalized_) throw std::invalid_argument("cannot add an operation to a finalized DAG");
    if (!spec || !spec->cost_model) throw std::invalid_argument("an operation needs a spec with a cost model");
    specs_.push_back(std::move(spec));
    names_.push_back(std::move(name));
    return specs_.size() - 1;
}

void OperationDag::add_dependency(std::size_t before, std::size_t after) {
    if (finalized_) throw std::invalid_argument("cannot add a dependency to a finalized DAG");
    if (before >= specs_.size() || after >= specs_.size())
        throw std::invalid_argument("dependency names an unknown node");
    if (before == after) throw std::invalid_argument("an operation cannot depend on itself");
    if (after == kSource || before == kSink)
        throw std::invalid_argument("nothing may run before the source or after the sink");
    edges_.emplace_back(before, after);
}

void OperationDag::finalize() {
    if (finalized_) return;
    const std::size_t n = specs_.size();
    if (n == 2) throw std::invalid_argument("the DAG has no operations");
    std::set<std::pair<std::size_t, std::size_t>> unique(edges_.begin(), edges_.end());
    edges_.assign(unique.begin(), unique.end());
    std::vector<std::size_t> indegree(n, 0), outdegree(n, 0);
    for (const auto& [u, v] : edges_) {
        ++outdegree[u];
        ++indegree[v];
    }
    for (std::size_t v = 2; v < n; ++v)
        if (indegree[v] == 0) edges_.emplace_back(kSource, v);
    for (std::size_t v = 2; v < n; ++v)
        if (outdegree[v] == 0) edges_.emplace_back(v, kSink);
    // Kahn's algorithm: every node must be ordered, or there is a cycle.
    std::vector<std::vector<std::size_t>> out(n);
    std::fill(indegree.begin(), indegree.end(), 0);
    for (const auto& [u, v] : edges_) {
        out[u].push_back(v);
        ++indegree[v];
    }
    std::vector<std::size_t> ready{kSource};
    std::size_t ordered = 0;
    while (!ready.empty()) {
        const std::size_t u = ready.back();
        ready.pop_back();
        ++ordered;
        for (std::size_t v : out[u])
            if (--indegree[v] == 0) ready.push_back(v);
    }
    if (ordered != n) throw std::invalid_argument("the operation graph has a cycle");
    const double unit_time = specs_[2]->options.unit_time();
    for (std::size_t v = 3; v < n; ++v)
        if (specs_[v]->options.unit_time() != unit_time)
            throw std::invalid_argument("all operations must share one unit_time (operation '" + names_[v] + "' differs)");
    finalized_ = true;
}

AoaDag to_activity_on_arc(const OperationDag& dag) {
    if (!dag.finalized()) throw std::invalid_argument("finalize() the DAG before converting it");
    AoaDag aoa;
    aoa.node_count = 2 * dag.node_count();
    aoa.source = 2 * OperationDag::kSource;
    aoa.sink = 2 * OperationDag::kSink + 1;
    aoa.arcs.reserve(dag.node_count() + dag.edge_count());
    for (std::size_t v = 0; v < dag.node_count(); ++v)
        aoa.arcs.push_back({2 * v, 2 * v + 1, dag.is_dummy(v) ? AoaArc::kNoOperation : v});
    for (const auto& [u, v] : dag.edges()) aoa.arcs.push_back({2 * u + 1, 2 * v, AoaArc::kNoOperation});
    return aoa;
}

}  // namespace zeus::lowtime
