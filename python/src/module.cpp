// zeus_native._core: the native half of the zeus_native package. The Python
// modules next to it give the original Zeus's names and argument checks.
#include "bindings.hpp"

NB_MODULE(_core, m) {
    m.doc() = "Native core of zeus_native: devices, energy windows, timelines, optimizer, profiler (libzeus).";
    // Objects still referenced from module globals at interpreter exit are
    // released by the OS; their threads were joined by the atexit hooks.
    nanobind::set_leak_warnings(false);
    zeus::python::bind_devices(m);
    zeus::python::bind_monitors(m);
    zeus::python::bind_optimizer(m);
    zeus::python::bind_profile(m);
    zeus::python::bind_carbon(m);
    zeus::python::bind_perseus(m);
    zeus::python::bind_batch_size(m);
    zeus::python::bind_metrics(m);
    zeus::python::bind_reports(m);
    zeus::python::bind_counters(m);
    zeus::python::bind_zeusd_client(m);
    zeus::python::bind_power_stream(m);
    zeus::python::bind_attribution(m);
    m.def("_close_native_gate", &zeus::python::close_native_gate,
          "Interpreter exit, after every package thread is joined: other threads that would take the GIL back "
          "from a native call wait for the process to end instead (python/src/gil.hpp).");
}
