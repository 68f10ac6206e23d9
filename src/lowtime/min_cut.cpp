#include "min_cut.hpp"

// GCC 12 at -O2 reports a false maybe-uninitialized on the edge iterators
// Boost's Boykov-Kolmogorov constructor declares and assigns through tie().
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#include <boost/property_map/property_map.hpp>
#include <boost/range/iterator_range.hpp>

#include <vector>

namespace zeus::lowtime::detail {

namespace {

// Compressed sparse rows: one allocation per array instead of one per edge
// (adjacency_list's stored edge properties are heap-allocated), which was a
// third of each frontier point at 16x128. Built by a stable counting sort on
// the source, so every vertex lists its out-edges in insertion order, as
// adjacency_list did: Boykov-Kolmogorov visits them in the same order and
// finds the same flow.
using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, std::size_t>;
using Capacity = FlowUnits;
using Edge = boost::graph_traits<Graph>::edge_descriptor;

// A flow network whose every edge has a partner in the other direction (the
// reverse Boost's max flows need); both may carry capacity.
class FlowNetwork {
public:
    explicit FlowNetwork(std::size_t nodes) : nodes_(nodes) {}

    // Returns the forward edge's index.
    std::size_t add_pair(std::size_t u, std::size_t v, Capacity forward_capacity, Capacity backward_capacity) {
        const std::size_t index = capacity_.size();
        ends_.emplace_back(u, v);
        ends_.emplace_back(v, u);
        capacity_.push_back(forward_capacity);
        capacity_.push_back(backward_capacity);
        return index;
    }

    void max_flow(std::size_t source, std::size_t sink) {
        std::vector<std::size_t> order(ends_.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        const Graph graph(boost::edges_are_unsorted_multi_pass, ends_.begin(), ends_.end(), order.begin(), nodes_);
        // Edge i as added sits at row position at_[i].
        const std::size_t m = ends_.size();
        at_.assign(m, 0);
        std::vector<Capacity> capacity(m);
        std::vector<Edge> edge(m);
        for (const Edge e : boost::make_iterator_range(boost::edges(graph))) {
            const std::size_t position = boost::get(boost::edge_index, graph, e);
            at_[graph[e]] = position;
            capacity[position] = capacity_[graph[e]];
            edge[graph[e]] = e;
        }
        std::vector<Edge> reverse(m);
        for (std::size_t i = 0; i < m; ++i) reverse[at_[i]] = edge[i ^ 1];
        residual_.assign(m, 0);
        const auto n = boost::num_vertices(graph);
        std::vector<Edge> predecessor(n);
        std::vector<boost::default_color_type> color(n);
        std::vector<long> distance(n);
        const auto edge_index = boost::get(boost::edge_index, graph);
        const auto vertex_index = boost::get(boost::vertex_index, graph);
        boost::boykov_kolmogorov_max_flow(
            graph, boost::make_iterator_property_map(capacity.begin(), edge_index),
            boost::make_iterator_property_map(residual_.begin(), edge_index),
            boost::make_iterator_property_map(reverse.begin(), edge_index),
            boost::make_iterator_property_map(predecessor.begin(), vertex_index),
            boost::make_iterator_property_map(color.begin(), vertex_index),
            boost::make_iterator_property_map(distance.begin(), vertex_index), vertex_index, source, sink);
    }

    // Net flow along the forward edge of the pair at `index`.
    [[nodiscard]] Capacity net_flow(std::size_t index) const { return capacity_[index] - residual_[at_[index]]; }
    [[nodiscard]] Capacity capacity(std::size_t index) const { return capacity_[index]; }

private:
    std::size_t nodes_;
    std::vector<std::pair<std::size_t, std::size_t>> ends_;
    std::vector<Capacity> capacity_;  // by edge as added
    std::vector<std::size_t> at_;     // edge as added -> row position
    std::vector<Capacity> residual_;  // by row position
};

}  // namespace

std::optional<std::vector<bool>> find_min_cut(std::size_t node_count, const std::vector<BoundedArc>& arcs,
                                              std::size_t source, std::size_t sink) {
    // Phase 1: a feasible flow. Capacities ub - lb, each node's lower bounds
    // supplied from s* and drained to t*, sink -> source unbounded.
    const std::size_t s_star = node_count;
    const std::size_t t_star = node_count + 1;
    FlowNetwork feasibility(node_count + 2);
    std::vector<Capacity> lb_in(node_count, 0), lb_out(node_count, 0);
    std::vector<std::size_t> arc_edge(arcs.size());
    Capacity total_lb = 0;
    for (std::size_t i = 0; i < arcs.size(); ++i) {
        // A lower bound above the upper one (a per-quantum cost step beyond
        // the 10000 "infinite" capacity) has no feasible flow at all.
        if (arcs[i].lb > arcs[i].ub) return std::nullopt;
        arc_edge[i] = feasibility.add_pair(arcs[i].from, arcs[i].to, arcs[i].ub - arcs[i].lb, 0);
        lb_in[arcs[i].to] += arcs[i].lb;
        lb_out[arcs[i].from] += arcs[i].lb;
        total_lb += arcs[i].lb;
    }
    std::vector<std::size_t> demand_edges;
    for (std::size_t u = 0; u < node_count; ++u) {
        if (lb_in[u] != 0) demand_edges.push_back(feasibility.add_pair(s_star, u, lb_in[u], 0));
        if (lb_out[u] != 0) demand_edges.push_back(feasibility.add_pair(u, t_star, lb_out[u], 0));
    }
    // "Infinite": no more than every lower bound can ever pass through it.
    feasibility.add_pair(sink, source, 2 * total_lb + 1, 0);
    feasibility.max_flow(s_star, t_star);
    for (std::size_t e : demand_edges)
        if (feasibility.net_flow(e) != feasibility.capacity(e)) return std::nullopt;
    std::vector<Capacity> flow(arcs.size());
    for (std::size_t i = 0; i < arcs.size(); ++i) flow[i] = feasibility.net_flow(arc_edge[i]) + arcs[i].lb;

    // Phase 2: maximise the feasible flow from source to sink in its residual
    // network (forward ub - flow, backward flow - lb).
    FlowNetwork residual(node_count);
    for (std::size_t i = 0; i < arcs.size(); ++i)
        arc_edge[i] = residual.add_pair(arcs[i].from, arcs[i].to, arcs[i].ub - flow[i], flow[i] - arcs[i].lb);
    residual.max_flow(source, sink);
    for (std::size_t i = 0; i < arcs.size(); ++i) flow[i] += residual.net_flow(arc_edge[i]);

    // The source side: reachable from the source through residual capacity
    // (depth first; lowtime stops when it pops the sink, which a maximum flow
    // leaves unreachable).
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> out(node_count);  // (arc, forward?)
    for (std::size_t i = 0; i < arcs.size(); ++i) {
        out[arcs[i].from].emplace_back(i, 1);
        out[arcs[i].to].emplace_back(i, 0);
    }
    std::vector<bool> in_source_side(node_count, false);
    std::vector<std::size_t> stack{source};
    while (!stack.empty()) {
        const std::size_t u = stack.back();
        stack.pop_back();
        in_source_side[u] = true;
        if (u == sink) break;
        for (const auto& [i, forward] : out[u]) {
            const std::size_t v = forward ? arcs[i].to : arcs[i].from;
            const Capacity room = forward ? arcs[i].ub - flow[i] : flow[i] - arcs[i].lb;
            if (!in_source_side[v] && room > 0) stack.push_back(v);
        }
    }
    return in_source_side;
}

}  // namespace zeus::lowtime::detail
