// zeus_native.utils.zeusd's native half: the zeusd client (zeus/device/zeusd_client.hpp)
// for the original's ZeusdClient. Values come back in the daemon's units (mJ,
// mW, µJ, ms); the Python class shapes them into the original's dataclasses.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <Python.h>

#include <chrono>
#include <memory>

#include "bindings.hpp"
#include "zeus/device/zeusd_client.hpp"

namespace zeus::python {

namespace {

using Ids = std::vector<unsigned>;

// A failure of the connection itself (daemon down, socket missing or not
// ours, timeout) rather than an answer of the daemon: the original's client
// reports those as "cannot reach", refusals as ZeusdError.
bool unreachable(const Error& error) {
    if (error.code == ErrorCode::Unavailable || error.code == ErrorCode::Timeout) return true;
    return error.code == ErrorCode::NoPermission && error.vendor_code != 401 && error.vendor_code != 403;
}

[[noreturn]] void raise_zeusd(const Error& error) {
    nb::object cls = unreachable(error) ? nb::module_::import_("zeus_native.utils.zeusd").attr("ZeusdConnectionError")
                                        : nb::module_::import_("zeus_native.device.exception").attr("ZeusdError");
    PyErr_SetString(cls.ptr(), python_text(error).c_str());
    throw nb::python_error();
}

template <class T>
T value_or_raise(Result<T>&& result) {
    if (!result) raise_zeusd(result.error());
    return std::move(result).value();
}

// {id: quantity} as {id: count in the quantity's unit}.
template <class Quantity>
std::map<unsigned, std::int64_t> counts(const std::map<unsigned, Quantity>& by_id) {
    std::map<unsigned, std::int64_t> out;
    for (const auto& [id, q] : by_id) out[id] = q.count();
    return out;
}

std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// One connection shared by the Python threads that use this client (the
// HTTP client takes the requests in turn); calls run without the GIL.
class Client {
  public:
    explicit Client(std::shared_ptr<ZeusdClient> client) : client_(std::move(client)) {}

    const ZeusdClient& native() const { return *client_; }

    // Runs `call(client)` without the GIL; raises its error.
    template <class Call>
    auto released(Call&& call) {
        auto result = [&] {
            ReleasedGil release;
            return call(*client_);
        }();
        if constexpr (std::is_same_v<decltype(result), Status>) {
            if (!result) raise_zeusd(result.error());
        } else {
            return value_or_raise(std::move(result));
        }
    }

  private:
    std::shared_ptr<ZeusdClient> client_;
};

// (client, false, "") or (None, unreachable, why).
using Connected = std::tuple<std::unique_ptr<Client>, bool, std::string>;

Connected connect(const std::optional<std::string>& socket_path, const std::optional<std::string>& host_port,
                  const std::optional<std::string>& token) {
    ZeusdConfig config;
    if (socket_path) {
        config = ZeusdConfig::unix_socket(*socket_path, token);
    } else {
        auto parsed = parse_zeusd_host_port(host_port.value_or(""), "host_port");
        if (!parsed) return {nullptr, false, python_text(parsed.error())};
        config = std::move(parsed).value();
        config.token = token;
    }
    auto connected = [&] {
        ReleasedGil release;
        return ZeusdClient::connect(std::move(config));
    }();
    if (!connected) return {nullptr, unreachable(connected.error()), python_text(connected.error())};
    return {std::make_unique<Client>(std::move(connected).value()), false, std::string()};
}

ZeusdRequirements requirements(bool read_gpu, bool control_gpu, bool read_cpu, Ids gpu_ids, Ids cpu_ids) {
    return ZeusdRequirements{read_gpu, control_gpu, read_cpu, std::move(gpu_ids), std::move(cpu_ids)};
}

}  // namespace

void bind_zeusd_client(nb::module_& m) {
    nb::class_<Client>(m, "ZeusdClient",
                       "A connection to zeusd (GET /discover, then /auth/whoami when the daemon requires a token); "
                       "the original's ZeusdClient in zeus_native.utils.zeusd wraps it.")
        .def_static(
            "connect", &connect, nb::arg("socket_path").none(), nb::arg("host_port").none(), nb::arg("token").none(),
            "(client, False, '') or (None, whether it could not be reached, why): the socket path, else host:port.")
        .def_prop_ro("endpoint", [](const Client& c) { return c.native().config().endpoint(); })
        .def_prop_ro(
            "gpus",
            [](const Client& c) {
                std::vector<std::pair<unsigned, std::string>> out;
                for (const auto& g : c.native().discovery().gpus) out.emplace_back(g.id, g.name);
                return out;
            },
            "[(id, name)] from /discover.")
        .def_prop_ro(
            "cpus",
            [](const Client& c) {
                std::vector<std::pair<unsigned, bool>> out;
                for (const auto& p : c.native().discovery().cpus) out.emplace_back(p.id, p.dram_available);
                return out;
            },
            "[(id, dram_available)] from /discover.")
        .def_prop_ro("enabled_api_groups", [](const Client& c) { return c.native().discovery().enabled_api_groups; })
        .def_prop_ro("auth_required", [](const Client& c) { return c.native().auth_required(); })
        .def_prop_ro(
            "auth_error",
            [](const Client& c) -> std::optional<std::pair<std::string, int>> {
                const auto& e = c.native().auth_error();
                if (!e) return std::nullopt;
                return std::pair{python_text(*e), e->vendor_code};
            },
            "(why, HTTP status or 0) when the daemon requires a token and none was given or it was refused.")
        .def_prop_ro(
            "identity",
            [](const Client& c)
                -> std::optional<std::tuple<std::string, std::vector<std::string>, std::optional<std::int64_t>>> {
                const auto& who = c.native().identity();
                if (!who) return std::nullopt;
                std::optional<std::int64_t> exp;
                if (who->expires) {
                    exp = std::chrono::duration_cast<std::chrono::seconds>(who->expires->time_since_epoch()).count();
                }
                return std::tuple{who->sub, who->scopes, exp};
            },
            "(sub, scopes, exp in Unix seconds or None) of the accepted token.")
        .def(
            "can",
            [](const Client& c, std::string_view group) {
                for (auto g : {ZeusdApiGroup::GpuControl, ZeusdApiGroup::GpuRead, ZeusdApiGroup::CpuRead}) {
                    if (to_string(g) == group) return c.native().can(g);
                }
                return false;
            },
            nb::arg("api_group"),
            "Whether the group (\"gpu-read\", ...) is enabled and, with auth, the token has its scope.")
        .def(
            "require_fix",
            [](const Client& c, bool read_gpu, bool control_gpu, bool read_cpu, Ids gpu_ids,
               Ids cpu_ids) -> std::optional<std::string> {
                auto status = c.native().require(
                    requirements(read_gpu, control_gpu, read_cpu, std::move(gpu_ids), std::move(cpu_ids)));
                if (status) return std::nullopt;
                return python_text(Error{status.error().code, status.error().hint, {}, 0});
            },
            nb::arg("read_gpu"), nb::arg("control_gpu"), nb::arg("read_cpu"), nb::arg("gpu_ids"), nb::arg("cpu_ids"),
            "None when the daemon offers all of it, else how to get what is missing.")
        .def(
            "gpu_energy",
            [](Client& c, Ids ids) { return counts(c.released([&](ZeusdClient& z) { return z.gpu_energy(ids); })); },
            nb::arg("gpu_ids"), "{id: mJ}, cumulative.")
        .def(
            "gpu_power",
            [](Client& c, Ids ids) {
                const auto power = c.released([&](ZeusdClient& z) { return z.gpu_power(ids); });
                return std::pair{unix_ms(power.timestamp), counts(power.power)};
            },
            nb::arg("gpu_ids"), "(timestamp_ms, {id: mW}); [] for every GPU.")
        .def(
            "power_limit",
            [](Client& c, Ids ids) { return counts(c.released([&](ZeusdClient& z) { return z.power_limit(ids); })); },
            nb::arg("gpu_ids"), "{id: mW}; [] for every GPU.")
        .def(
            "power_limit_constraints",
            [](Client& c, Ids ids) {
                std::map<unsigned, std::pair<std::int64_t, std::int64_t>> out;
                for (const auto& [id, r] : c.released([&](ZeusdClient& z) { return z.power_limit_constraints(ids); })) {
                    out[id] = {r.first.count(), r.second.count()};
                }
                return out;
            },
            nb::arg("gpu_ids"), "{id: (min mW, max mW)}; [] for every GPU.")
        .def(
            "persistence_mode",
            [](Client& c, Ids ids) { return c.released([&](ZeusdClient& z) { return z.persistence_mode(ids); }); },
            nb::arg("gpu_ids"), "{id: enabled}; [] for every GPU.")
        .def(
            "set_power_limit",
            [](Client& c, Ids ids, std::int64_t mw, bool block) {
                c.released([&](ZeusdClient& z) { return z.set_power_limit(ids, Milliwatts(mw), block); });
            },
            nb::arg("gpu_ids"), nb::arg("power_limit_mw"), nb::arg("block"))
        .def(
            "set_persistence_mode",
            [](Client& c, Ids ids, bool enabled, bool block) {
                c.released([&](ZeusdClient& z) { return z.set_persistence_mode(ids, enabled, block); });
            },
            nb::arg("gpu_ids"), nb::arg("enabled"), nb::arg("block"))
        .def(
            "set_gpu_locked_clocks",
            [](Client& c, Ids ids, std::int64_t min, std::int64_t max, bool block) {
                c.released([&](ZeusdClient& z) {
                    return z.set_gpu_locked_clocks(ids, Megahertz(min), Megahertz(max), block);
                });
            },
            nb::arg("gpu_ids"), nb::arg("min_clock_mhz"), nb::arg("max_clock_mhz"), nb::arg("block"))
        .def(
            "reset_gpu_locked_clocks",
            [](Client& c, Ids ids, bool block) {
                c.released([&](ZeusdClient& z) { return z.reset_gpu_locked_clocks(ids, block); });
            },
            nb::arg("gpu_ids"), nb::arg("block"))
        .def(
            "set_mem_locked_clocks",
            [](Client& c, Ids ids, std::int64_t min, std::int64_t max, bool block) {
                c.released([&](ZeusdClient& z) {
                    return z.set_memory_locked_clocks(ids, Megahertz(min), Megahertz(max), block);
                });
            },
            nb::arg("gpu_ids"), nb::arg("min_clock_mhz"), nb::arg("max_clock_mhz"), nb::arg("block"))
        .def(
            "reset_mem_locked_clocks",
            [](Client& c, Ids ids, bool block) {
                c.released([&](ZeusdClient& z) { return z.reset_memory_locked_clocks(ids, block); });
            },
            nb::arg("gpu_ids"), nb::arg("block"))
        .def(
            "cpu_energy",
            [](Client& c, Ids ids, bool cpu, bool dram) {
                std::map<unsigned, std::pair<std::optional<std::int64_t>, std::optional<std::int64_t>>> out;
                for (const auto& [id, e] : c.released([&](ZeusdClient& z) { return z.cpu_energy(ids, cpu, dram); })) {
                    out[id] = {e.cpu ? std::optional(e.cpu->count()) : std::nullopt,
                               e.dram ? std::optional(e.dram->count()) : std::nullopt};
                }
                return out;
            },
            nb::arg("cpu_ids"), nb::arg("cpu"), nb::arg("dram"), "{id: (cpu µJ or None, dram µJ or None)}.")
        .def(
            "cpu_power",
            [](Client& c, Ids ids) {
                const auto power = c.released([&](ZeusdClient& z) { return z.cpu_power(ids); });
                std::map<unsigned, std::pair<std::int64_t, std::optional<std::int64_t>>> mw;
                for (const auto& [id, p] : power.power) {
                    mw[id] = {p.cpu.count(), p.dram ? std::optional(p.dram->count()) : std::nullopt};
                }
                return std::pair{unix_ms(power.timestamp), mw};
            },
            nb::arg("cpu_ids"), "(timestamp_ms, {id: (cpu mW, dram mW or None)}); [] for every package.")
        .def(
            "time_ms", [](Client& c) { return unix_ms(c.released([](ZeusdClient& z) { return z.time(); })); },
            "The daemon's wall clock (GET /time), Unix milliseconds.");
}

}  // namespace zeus::python
