// Shared by the binding files of zeus_native._core: how a zeus::Error becomes
// the original's Python exception, and the per-area bind functions.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <utility>

#include "gil.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::python {

namespace nb = nanobind;

// Which family of the original's exceptions an error belongs to
// (zeus_native/_errors.py maps code + family to a class).
enum class ErrorFamily { Gpu, Cpu, Soc, Value, Runtime };

// The error's text as Python users read it (the CLI's and C++'s spellings
// replaced: zeus_native._errors.python_spelling).
std::string python_text(const Error& error);

// Raises the Python exception for `error` (message and fix in its text).
[[noreturn]] void raise_error(const Error& error, ErrorFamily family);

template <class T>
T unwrap(Result<T>&& result, ErrorFamily family) {
    if (!result) raise_error(result.error(), family);
    return std::move(result).value();
}
inline void check(const Status& status, ErrorFamily family) {
    if (!status) raise_error(status.error(), family);
}

void bind_devices(nb::module_& m);
void bind_monitors(nb::module_& m);
void bind_optimizer(nb::module_& m);
void bind_profile(nb::module_& m);
void bind_carbon(nb::module_& m);
void bind_perseus(nb::module_& m);
void bind_batch_size(nb::module_& m);
void bind_metrics(nb::module_& m);
void bind_reports(nb::module_& m);
void bind_counters(nb::module_& m);
void bind_zeusd_client(nb::module_& m);
void bind_power_stream(nb::module_& m);
void bind_attribution(nb::module_& m);

}  // namespace zeus::python
