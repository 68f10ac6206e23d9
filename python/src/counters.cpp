// A wrapping energy counter file watched by the native counter sampler, for
// the original's RaplWraparoundTracker: a thread (joined by stop() or the
// destructor), not the original's polling process.
#include <nanobind/stl/string.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "bindings.hpp"
#include "zeus/device/counter_sampler.hpp"

namespace zeus::python {

namespace {

Result<std::uint64_t> read_counter_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return Error{errno == EACCES ? ErrorCode::NoPermission : ErrorCode::NotFound,
                     fmt::format("cannot read {}: {}", path, std::strerror(errno)),
                     "check that the file exists and is readable (RAPL files need root or zeusd)", 0};
    }
    std::uint64_t value = 0;
    if (!(in >> value)) {
        return Error{ErrorCode::InvalidState, fmt::format("{} does not hold an unsigned number", path),
                     "point the tracker at a counter file such as intel-rapl:0/energy_uj", 0};
    }
    return value;
}

struct WrapTracker {
    std::shared_ptr<AccumulatedCounter> counter;
    std::unique_ptr<CounterSampler> sampler;

    WrapTracker(const std::string& path, double max_energy_uj) {
        if (!(max_energy_uj >= 1)) {
            raise_error(
                Error{ErrorCode::InvalidArgument, fmt::format("max_energy_uj {} is not a counter range", max_energy_uj),
                      "pass the zone's max_energy_range_uj (at least 1)", 0},
                ErrorFamily::Value);
        }
        // The counter wraps past max_energy_range_uj, to 0: its range is one more.
        CounterSpec spec{path, static_cast<std::uint64_t>(max_energy_uj) + 1, 1e-6, Watts(1000.0)};
        counter = std::make_shared<AccumulatedCounter>(std::move(spec), [path] { return read_counter_file(path); });
        unwrap(counter->read(), ErrorFamily::Value);
        sampler = std::make_unique<CounterSampler>(std::vector{counter});
    }
};

}  // namespace

void bind_counters(nb::module_& m) {
    nb::class_<WrapTracker>(m, "CounterWrapTracker",
                            "A wrapping energy counter file (µJ) read by a native thread often enough to see every "
                            "wrap at up to 1000 W.")
        .def(
            "__init__",
            // With the GIL held: an error is raised from here, and the first read is one small file.
            [](WrapTracker* self, const std::string& path, double max_energy_uj) {
                new (self) WrapTracker(path, max_energy_uj);
            },
            nb::arg("path"), nb::arg("max_energy_uj"))
        .def_prop_ro(
            "wraps", [](const WrapTracker& t) { return t.counter->stats().wraps; },
            "Wraparounds seen since the tracker started.")
        .def_prop_ro(
            "period_s", [](const WrapTracker& t) { return std::chrono::duration<double>(t.sampler->period()).count(); },
            "Seconds between the thread's reads.")
        .def(
            "stop",
            [](WrapTracker& t) {
                ReleasedGil release;
                t.sampler->stop();
            },
            "Join the reading thread (idempotent); wraps stays at its last count.");
}

}  // namespace zeus::python
