// zeus_native.monitor.power_streaming's native half: ZeusdPowerStream.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "zeus/device/zeusd_power_stream.hpp"

namespace zeus::python {

namespace {

using Source = std::tuple<std::optional<std::string>, std::optional<std::string>, std::optional<std::string>,
                          std::string, std::optional<std::vector<unsigned>>, std::optional<std::vector<unsigned>>>;

Result<ZeusdStreamSource> source_of(const Source& s) {
    const auto& [socket_path, host_port, token, key, gpu_ids, cpu_ids] = s;
    ZeusdStreamSource source;
    if (socket_path) {
        source.config = ZeusdConfig::unix_socket(*socket_path, token);
    } else {
        auto config = parse_zeusd_host_port(host_port.value_or(""), "host_port");
        if (!config) return config.error();
        source.config = std::move(config).value();
        source.config.token = token;
    }
    source.key = key;
    source.gpu_ids = gpu_ids;
    source.cpu_ids = cpu_ids;
    return source;
}

using Started = std::tuple<std::unique_ptr<ZeusdPowerStream>, std::string, std::string>;

Started failed(const Error& error) { return {nullptr, std::string(to_string(error.code)), error.describe()}; }

}  // namespace

void bind_power_stream(nb::module_& m) {
    nb::class_<ZeusdPowerStream>(m, "ZeusdPowerStream",
                                 "The latest GPU and CPU power of many zeusd instances, streamed (SSE) by native "
                                 "threads.")
        .def_static(
            "start",
            [](const std::vector<Source>& servers, double reconnect_delay_s) -> Started {
                // (stream or None, error code, message): the caller picks the original's exception.
                std::vector<ZeusdStreamSource> sources;
                for (const auto& s : servers) {
                    auto source = source_of(s);
                    if (!source) return failed(source.error());
                    sources.push_back(std::move(source).value());
                }
                auto started = [&] {
                    ReleasedGil release;
                    return ZeusdPowerStream::start(
                        std::move(sources), std::chrono::milliseconds(static_cast<long>(reconnect_delay_s * 1e3)));
                }();
                if (!started) return failed(started.error());
                return Started{std::move(started).value(), std::string(), std::string()};
            },
            nb::arg("servers"), nb::arg("reconnect_delay_s"),
            "servers: (socket_path, host_port, token, key, gpu_ids, cpu_ids) each.")
        .def(
            "latest",
            [](const ZeusdPowerStream& s) {
                std::map<std::string, std::tuple<double, std::map<unsigned, double>,
                                                 std::map<unsigned, std::pair<double, std::optional<double>>>>>
                    out;
                for (const auto& [key, p] : s.latest()) {
                    std::map<unsigned, std::pair<double, std::optional<double>>> cpus;
                    for (const auto& [id, c] : p.cpu_w) cpus[id] = {c.cpu_w, c.dram_w};
                    out[key] = {p.timestamp_s, p.gpu_w, std::move(cpus)};
                }
                return out;
            },
            "{key: (timestamp_s, {gpu: W}, {cpu: (cpu W, dram W or None)})}.")
        .def_prop_ro("clock_offsets_s", &ZeusdPowerStream::clock_offsets_s)
        .def_prop_ro("stream_count", &ZeusdPowerStream::stream_count)
        .def(
            "wait_for_update",
            [](const ZeusdPowerStream& s, std::uint64_t seen, double timeout_s) {
                ReleasedGil release;
                return s.wait_for_update(seen, std::chrono::milliseconds(static_cast<long>(timeout_s * 1e3)));
            },
            nb::arg("seen"), nb::arg("timeout_s"), "Readings received so far, once past `seen` or after timeout_s.")
        .def_prop_ro("stopped", &ZeusdPowerStream::stopped)
        .def("take_warnings", &ZeusdPowerStream::take_warnings)
        .def(
            "stop",
            [](ZeusdPowerStream& s) {
                ReleasedGil release;
                s.stop();
            },
            "End every stream and join its thread (idempotent).");
}

}  // namespace zeus::python
