// zeus_native.metric's native half: the original's pushed metrics
// (EnergyHistogram, EnergyCumulativeCounter, PowerGauge) over
// zeus/metrics/pushed_metrics.hpp. Their window threads push without the
// GIL; a warning (a gateway that is down, a value outside the buckets)
// takes the GIL only to hand the text to Python's `warnings`.
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <memory>
#include <utility>

#include "bindings.hpp"
#include "devices.hpp"
#include "zeus/metrics/pushed_metrics.hpp"

namespace zeus::python {

namespace {

using metrics::EnergyCumulativeCounter;
using metrics::EnergyHistogram;
using metrics::PowerGauge;

// Called from the user's thread or a window's thread, never with the GIL
// held by a thread that waits for it: every call into the native object
// below releases the GIL first.
void warn_in_python(const std::string& message) {
    AcquiredGil gil;
    // Level 2: the user's line that called begin_window/end_window (a window
    // thread's push has no Python frame).
    if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 2) < 0) {
        // -W error turns a warning into an exception; a push that fails
        // must still not end the training loop, so it is reported instead.
        nb::python_error error;
        error.discard_as_unraisable("zeus_native.metric");
    }
}

// CPU indices are checked here, for the original's CPU errors; what the
// native open then rejects is a ValueError for an argument (buckets, period,
// URL, job) and the GPU error ZeusMonitor raises otherwise (an unknown GPU).
void check_cpu_indices(nb::handle cpus, const std::vector<unsigned>& cpu_indices) {
    if (cpu_indices.empty()) return;
    if (cpus.is_none()) {
        raise_error(Error{ErrorCode::NotFound, "no CPU package with RAPL energy counters was found",
                          "pass cpu_indices=[] on a machine without RAPL (python -m zeus_native.show_env lists "
                          "what is found)",
                          0},
                    ErrorFamily::Cpu);
    }
    const auto& cpu_set = nb::cast<const CpuSet&>(cpus);
    for (unsigned i : cpu_indices) (void)cpu_set.cpu(DeviceIndex{i, {}});
}

template <class T>
std::unique_ptr<T> opened(Result<std::unique_ptr<T>>&& result) {
    if (!result) {
        const bool argument = result.error().code == ErrorCode::InvalidArgument;
        raise_error(result.error(), argument ? ErrorFamily::Value : ErrorFamily::Gpu);
    }
    return std::move(result).value();
}

// A native metric and the device sets it reads, kept alive with it. The
// native object is destroyed without the GIL: it joins its window threads,
// whose last push may warn.
template <class Native>
struct PushedMetric {
    nb::object gpus_owner;
    nb::object cpus_owner;
    std::unique_ptr<Native> native;

    PushedMetric(nb::object gpus, nb::object cpus, std::unique_ptr<Native> metric)
        : gpus_owner(std::move(gpus)), cpus_owner(std::move(cpus)), native(std::move(metric)) {}
    PushedMetric(const PushedMetric&) = delete;
    PushedMetric& operator=(const PushedMetric&) = delete;
    ~PushedMetric() { close(); }

    void close() {
        std::unique_ptr<Native> closing = std::move(native);
        ReleasedGil release;
        closing.reset();
    }
    void begin(std::string_view name, bool sync_execution) {
        Status status = [&] {
            ReleasedGil release;
            return live().begin_window(name, sync_execution);
        }();
        check(status, ErrorFamily::Value);
    }
    void end(std::string_view name, bool sync_execution) {
        Status status = [&] {
            ReleasedGil release;
            return live().end_window(name, sync_execution);
        }();
        check(status, ErrorFamily::Value);
    }
    Native& live() {
        if (!native) {
            raise_error(Error{ErrorCode::InvalidState, "this metric was closed", "create a new one", 0},
                        ErrorFamily::Value);
        }
        return *native;
    }
};

using HistogramObject = PushedMetric<EnergyHistogram>;
using CounterObject = PushedMetric<EnergyCumulativeCounter>;
using GaugeObject = PushedMetric<PowerGauge>;

const Cpus* cpus_of(nb::handle cpus) { return cpus.is_none() ? nullptr : &nb::cast<const CpuSet&>(cpus).cpus; }
const Gpus& gpus_of(nb::handle gpus) { return nb::cast<const GpuSet&>(gpus).gpus; }

template <class Object>
void bind_windows(nb::class_<Object>& cls, bool default_sync) {
    cls.def("begin_window", &Object::begin, nb::arg("name"), nb::arg("sync_execution") = default_sync,
            "Begins the window `name`.")
        .def("end_window", &Object::end, nb::arg("name"), nb::arg("sync_execution") = default_sync,
             "Ends the window `name` and pushes. ValueError when it is not open.")
        .def("close", &Object::close, "Ends every open window (each pushes its last values) and frees the metric.");
}

}  // namespace

void bind_metrics(nb::module_& m) {
    nb::class_<HistogramObject> histogram(
        m, "EnergyHistogram", "Energy per window and device as Pushgateway histograms (wrapped by zeus_native.metric).");
    histogram.def(
        "__init__",
        [](HistogramObject* self, nb::object gpus, nb::object cpus, std::vector<unsigned> cpu_indices,
           std::vector<unsigned> gpu_indices, const std::string& url, const std::string& job,
           std::vector<double> gpu_buckets, std::vector<double> cpu_buckets, std::vector<double> dram_buckets) {
            check_cpu_indices(cpus, cpu_indices);
            auto result = [&] {
                ReleasedGil release;
                return EnergyHistogram::open(gpus_of(gpus), cpus_of(cpus), std::move(cpu_indices),
                                             std::move(gpu_indices), url, job, std::move(gpu_buckets),
                                             std::move(cpu_buckets), std::move(dram_buckets), warn_in_python);
            }();
            new (self) HistogramObject(gpus, cpus, opened(std::move(result)));
        },
        nb::arg("gpus"), nb::arg("cpus").none(), nb::arg("cpu_indices"), nb::arg("gpu_indices"),
        nb::arg("pushgateway_url"), nb::arg("job"), nb::arg("gpu_bucket_range"), nb::arg("cpu_bucket_range"),
        nb::arg("dram_bucket_range"));
    bind_windows(histogram, true);

    nb::class_<CounterObject> counter(
        m, "EnergyCumulativeCounter",
        "Energy of open windows as Pushgateway counters, pushed by a thread per window (wrapped by zeus_native.metric).");
    counter.def(
        "__init__",
        [](CounterObject* self, nb::object gpus, nb::object cpus, std::vector<unsigned> cpu_indices,
           std::vector<unsigned> gpu_indices, double update_period, const std::string& url, const std::string& job) {
            check_cpu_indices(cpus, cpu_indices);
            auto result = [&] {
                ReleasedGil release;
                return EnergyCumulativeCounter::open(gpus_of(gpus), cpus_of(cpus), std::move(cpu_indices),
                                                     std::move(gpu_indices), std::chrono::duration<double>(update_period),
                                                     url, job, warn_in_python);
            }();
            new (self) CounterObject(gpus, cpus, opened(std::move(result)));
        },
        nb::arg("gpus"), nb::arg("cpus").none(), nb::arg("cpu_indices"), nb::arg("gpu_indices"),
        nb::arg("update_period"), nb::arg("pushgateway_url"), nb::arg("job"));
    bind_windows(counter, false);

    nb::class_<GaugeObject> gauge(
        m, "PowerGauge", "GPU power of open windows as a Pushgateway gauge (wrapped by zeus_native.metric).");
    gauge.def(
        "__init__",
        [](GaugeObject* self, nb::object gpus, std::vector<unsigned> gpu_indices, double update_period,
           const std::string& url, const std::string& job) {
            auto result = [&] {
                ReleasedGil release;
                return PowerGauge::open(gpus_of(gpus), std::move(gpu_indices),
                                        std::chrono::duration<double>(update_period), url, job, warn_in_python);
            }();
            new (self) GaugeObject(gpus, nb::none(), opened(std::move(result)));
        },
        nb::arg("gpus"), nb::arg("gpu_indices"), nb::arg("update_period"), nb::arg("pushgateway_url"), nb::arg("job"));
    bind_windows(gauge, false);
}

}  // namespace zeus::python
