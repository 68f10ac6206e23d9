#include <Python.h>

#include <nanobind/stl/string.h>

#include "bindings.hpp"

namespace zeus::python {

namespace {
const char* family_name(ErrorFamily family) {
    switch (family) {
        case ErrorFamily::Gpu: return "gpu";
        case ErrorFamily::Cpu: return "cpu";
        case ErrorFamily::Soc: return "soc";
        case ErrorFamily::Value: return "value";
        case ErrorFamily::Runtime: return "runtime";
    }
    return "runtime";
}
}  // namespace

std::string python_text(const Error& error) {
    return nb::cast<std::string>(nb::module_::import_("zeus_native._errors").attr("python_spelling")(error.describe()));
}

void raise_error(const Error& error, ErrorFamily family) {
    // Imported on the error path only: the hierarchy lives in Python so that
    // the classes are the same objects users import and catch.
    nb::object exc = nb::module_::import_("zeus_native._errors")
                         .attr("native_error")(std::string(to_string(error.code)), error.describe(),
                                               family_name(family));
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    throw nb::python_error();
}

}  // namespace zeus::python
