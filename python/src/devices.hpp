// The device sets behind zeus_native.device.get_gpus/get_cpus/get_soc.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <optional>
#include <string>

#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/device/soc.hpp"

namespace zeus::python {

// A device index as Python passes it: any integer (int, numpy integer), however
// large. One past 64 bits is out of range like any other, not a TypeError.
struct DeviceIndex {
    long long value = 0;
    std::string beyond_64_bits;  // the number's text when it does not fit `value`

    std::string text() const { return beyond_64_bits.empty() ? std::to_string(value) : beyond_64_bits; }
    // The position in a list of `count` devices, or nullopt when out of range.
    std::optional<std::size_t> position(std::size_t count) const {
        if (!beyond_64_bits.empty() || value < 0 || static_cast<unsigned long long>(value) >= count)
            return std::nullopt;
        return static_cast<std::size_t>(value);
    }
};

// Whether a GPU passes a timeline's gpu_index filter (None: every GPU; an index
// that is no GPU selects none, as the original's filter does).
inline bool selected(const std::optional<DeviceIndex>& filter, unsigned gpu) {
    return !filter || (filter->beyond_64_bits.empty() && filter->value == static_cast<long long>(gpu));
}

}  // namespace zeus::python

namespace nanobind::detail {

template <>
struct type_caster<zeus::python::DeviceIndex> {
    NB_TYPE_CASTER(zeus::python::DeviceIndex, const_name("int"))

    bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
        if (PyFloat_Check(src.ptr()) || !PyIndex_Check(src.ptr())) return false;
        PyObject* number = PyNumber_Index(src.ptr());
        if (number == nullptr) {
            PyErr_Clear();
            return false;
        }
        int overflow = 0;
        value.value = PyLong_AsLongLongAndOverflow(number, &overflow);
        value.beyond_64_bits.clear();
        if (overflow != 0) {
            PyObject* text = PyObject_Str(number);
            const char* utf8 = text != nullptr ? PyUnicode_AsUTF8AndSize(text, nullptr) : nullptr;
            if (utf8 != nullptr) value.beyond_64_bits = utf8;
            Py_XDECREF(text);
            if (value.beyond_64_bits.empty()) value.beyond_64_bits = overflow > 0 ? "(beyond 2**63)" : "(below -2**63)";
        }
        Py_DECREF(number);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return false;
        }
        return true;
    }

    static handle from_cpp(const zeus::python::DeviceIndex& index, rv_policy, cleanup_list*) noexcept {
        return PyLong_FromLongLong(index.value);
    }
};

}  // namespace nanobind::detail

namespace zeus::python {

struct GpuSet {
    Gpus gpus;
    GpuOptions options;               // what the set was opened with
    std::optional<Error> open_error;  // why there are no GPUs (options or backend)
    Gpu& gpu(const DeviceIndex& index) const;  // raises the original's error for an unknown index
};

struct CpuSet {
    Cpus cpus;
    std::optional<Error> open_error;
    Cpu& cpu(const DeviceIndex& index) const;
};

struct SocSet {
    std::unique_ptr<Soc> soc;
};

}  // namespace zeus::python
