// zeus_native.monitor.carbon / .price: carbon-intensity and price providers
// and the CarbonEmissionMonitor / EnergyCostMonitor over a ZeusMonitor's
// native EnergyMonitor (include/zeus/carbon/). Times cross as Unix seconds.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>

#include <fmt/format.h>

#include "bindings.hpp"
#include "monitors.hpp"
#include "selector.hpp"
#include "zeus/carbon/carbon_aware_power_limit.hpp"
#include "zeus/carbon/carbon_emission_monitor.hpp"
#include "zeus/carbon/electricity_maps.hpp"
#include "zeus/carbon/energy_cost_monitor.hpp"
#include "zeus/carbon/intensity_file.hpp"
#include "zeus/carbon/openei.hpp"
#include "zeus/carbon/price_file.hpp"

namespace zeus::python {

namespace {

using carbon::ChargeProvenance;
using carbon::HourlyRate;
using carbon::UtcTime;

double unix_of(UtcTime t) { return static_cast<double>(t.time_since_epoch().count()); }

// (hour, per_kwh, data_time, estimated), times in Unix seconds.
using RateTuple = std::tuple<double, double, double, bool>;
std::vector<RateTuple> rate_tuples(const std::vector<HourlyRate>& rates) {
    std::vector<RateTuple> out;
    for (const auto& r : rates) out.emplace_back(unix_of(r.hour), r.per_kwh, unix_of(r.data_time), r.estimated);
    return out;
}
std::vector<UtcTime> hours_of(const std::vector<double>& unix) {
    std::vector<UtcTime> hours;
    for (double u : unix) hours.push_back(carbon::hour_floor(std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(u)))));
    return hours;
}

struct IntensitySource {
    std::shared_ptr<carbon::CarbonIntensityProvider> provider;
};

// A provider written in Python (a subclass of the original's abstract
// CarbonIntensityProvider): asked through its _python_intensities(hours),
// which calls the user's get_recent/get_current_carbon_intensity. Called
// from the monitor's hourly thread and from windows without the GIL, so it
// takes the GIL itself; it owns its reference by hand, released under the GIL.
class PythonIntensityProvider final : public carbon::CarbonIntensityProvider {
  public:
    explicit PythonIntensityProvider(nb::handle user) : user_(user.ptr()) {
        Py_INCREF(user_);
        name_ = nb::cast<std::string>(
            nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(user_))).attr("__name__")));
        nb::object zone = nb::getattr(user, "zone", nb::none());
        zone_ = zone.is_none() ? std::string() : nb::cast<std::string>(nb::str(zone));
    }
    PythonIntensityProvider(const PythonIntensityProvider&) = delete;
    PythonIntensityProvider& operator=(const PythonIntensityProvider&) = delete;
    ~PythonIntensityProvider() override {
        if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing to release into
        AcquiredGil gil;
        Py_DECREF(user_);
    }

    [[nodiscard]] std::string provider() const override { return "python " + name_; }
    [[nodiscard]] std::string zone() const override { return zone_; }

    [[nodiscard]] Result<std::vector<HourlyRate>> intensities(const std::vector<UtcTime>& hours) override {
        AcquiredGil gil;
        try {
            nb::list asked;
            for (auto h : hours) asked.append(unix_of(h));
            std::vector<HourlyRate> out;
            const auto now = std::chrono::system_clock::now();
            for (nb::handle row : nb::handle(user_).attr("_python_intensities")(asked)) {
                const auto [hour, value] = nb::cast<std::tuple<double, double>>(row);
                HourlyRate rate;
                rate.hour = hours_of({hour}).front();
                rate.per_kwh = value;
                rate.data_time = std::chrono::time_point_cast<UtcTime::duration>(now);
                out.push_back(rate);
            }
            return out;
        } catch (nb::python_error& e) {
            return Error{ErrorCode::Unavailable, fmt::format("the carbon-intensity provider {} raised: {}", name_,
                                                             e.what()),
                         "fix the provider's get_recent_carbon_intensity / get_current_carbon_intensity", 0};
        } catch (const std::exception& e) {
            return Error{ErrorCode::Unavailable,
                         fmt::format("the carbon-intensity provider {} answered something other than "
                                     "{{datetime: gCO2eq/kWh}} ({})",
                                     name_, e.what()),
                         "return a dict of timezone-aware datetimes to floats from get_recent_carbon_intensity", 0};
        }
    }

  private:
    PyObject* user_;
    std::string name_;
    std::string zone_;
};
struct PriceSource {
    std::shared_ptr<carbon::ElectricityPriceProvider> provider;
};

nb::dict provenance_dict(const ChargeProvenance& p) {
    nb::dict d;
    d["provider"] = p.provider;
    d["zone"] = p.zone;
    d["unit"] = p.unit;
    d["available"] = p.available();
    d["unavailable_reason"] = p.available() ? nb::none() : nb::cast(p.unavailable_reason);
    d["fallback_used"] = p.fallback_used;
    d["estimated"] = p.estimated;
    d["warnings"] = p.warnings;
    nb::list hours;
    for (const auto& h : p.hours) {
        nb::dict o;
        o["hour"] = unix_of(h.hour);
        o["seconds"] = h.time.count();
        o["energy"] = h.energy.count();
        o["per_kwh"] = h.rate ? nb::cast(h.rate->per_kwh) : nb::none();
        o["data_time"] = h.rate ? nb::cast(unix_of(h.rate->data_time)) : nb::none();
        o["estimated"] = h.rate ? nb::cast(h.rate->estimated) : nb::none();
        o["fallback"] = h.fallback;
        o["fallback_reason"] = h.fallback ? nb::cast(h.fallback_reason) : nb::none();
        o["amount"] = h.rate ? nb::cast(h.amount) : nb::none();
        hours.append(o);
    }
    d["hours"] = hours;
    return d;
}

nb::object amounts(const std::optional<std::map<unsigned, double>>& m, bool present) {
    if (!m || !present) return nb::none();
    return nb::cast(*m);
}

carbon::HourlyMonitorOptions monitor_options(EnergyWindows& energy, double poll_interval_s,
                                             std::optional<double> fallback, int max_gap_hours) {
    carbon::HourlyMonitorOptions o;
    o.poll_interval = std::chrono::milliseconds(static_cast<long long>(poll_interval_s * 1000));
    o.fallback_per_kwh = fallback;
    o.max_gap_hours = max_gap_hours;
    o.clock = carbon::window_clock(energy.gpus());
    return o;
}

// The carbon or cost monitor with the ZeusMonitor it charges windows of.
template <class Monitor>
struct ChargedWindows {
    nb::object energy_owner;
    nb::object provider_owner;
    std::unique_ptr<Monitor> monitor;

    EnergyWindows& energy() { return nb::cast<EnergyWindows&>(energy_owner); }
    Monitor& live() {
        if (!monitor) {
            raise_error(Error{ErrorCode::InvalidState, "this monitor was stopped at interpreter exit",
                              "use monitors before the interpreter exits", 0},
                        ErrorFamily::Runtime);
        }
        return *monitor;
    }
    // Without the GIL: the hourly thread may be waiting for it (a Python provider).
    ~ChargedWindows() { stop_threads(); }

    // Joins the hourly thread (interpreter exit): the native monitor goes.
    void stop_threads() {
        std::unique_ptr<Monitor> closing = std::move(monitor);
        ReleasedGil release;
        closing.reset();
    }
    void begin(std::string_view key, bool sync_execution) {
        EnergyWindows& e = energy();
        Monitor& native = live();
        if (sync_execution && !e.sync.is_none()) e.sync(e.gpu_index_list);
        Status status;
        {
            ReleasedGil release;
            status = native.begin_window(key, false);
        }
        check(status, ErrorFamily::Value);
    }
    auto end(std::string_view key, bool sync_execution) {
        EnergyWindows& e = energy();
        Monitor& native = live();
        if (sync_execution && !e.sync.is_none()) e.sync(e.gpu_index_list);
        auto result = [&] {
            ReleasedGil release;
            return native.end_window(key, false);
        }();
        return unwrap(std::move(result), ErrorFamily::Value);
    }
};
using CarbonWindows = ChargedWindows<carbon::CarbonEmissionMonitor>;
using CostWindows = ChargedWindows<carbon::EnergyCostMonitor>;

template <class T>
T unwrap_runtime(Result<T>&& r) {
    return unwrap(std::move(r), ErrorFamily::Runtime);
}

void bind_intensity_source(nb::module_& m) {
    nb::class_<IntensitySource>(m, "CarbonIntensitySource", "A native carbon-intensity provider.")
        .def_static("electricity_maps",
             [](std::optional<std::string> zone, std::optional<double> lat, std::optional<double> lon,
                std::string location_source, bool estimate, std::string factor, std::string base_url,
                std::optional<std::string> token) {
                 carbon::ElectricityMapsOptions o;
                 o.zone = std::move(zone);
                 if (lat && lon) o.location = carbon::GeoLocation{*lat, *lon, std::move(location_source)};
                 o.estimate = estimate;
                 o.emission_factor_type = std::move(factor);
                 o.base_url = std::move(base_url);
                 o.token = std::move(token);
                 o.allow_no_token = true;  // as the original's client; the API says when it wants one
                 auto p = unwrap(carbon::ElectricityMaps::open(std::move(o)), ErrorFamily::Runtime);
                 return IntensitySource{std::shared_ptr<carbon::CarbonIntensityProvider>(std::move(p))};
             },
             nb::arg("zone").none(), nb::arg("latitude").none(), nb::arg("longitude").none(),
             nb::arg("location_source"), nb::arg("estimate"), nb::arg("emission_factor_type"), nb::arg("base_url"),
             nb::arg("token").none())
        .def_static("constant",
             [](double g, std::string zone) {
                 return IntensitySource{unwrap(carbon::constant_intensity(g, std::move(zone)), ErrorFamily::Runtime)};
             },
             nb::arg("g_per_kwh"), nb::arg("zone"))
        .def_static("from_file",
             [](std::string path) {
                 return IntensitySource{unwrap(carbon::intensity_from_file(path), ErrorFamily::Runtime)};
             },
             nb::arg("path"))
        .def_static("from_python",
             [](nb::handle provider) {
                 return IntensitySource{std::make_shared<PythonIntensityProvider>(provider)};
             },
             nb::arg("provider"), "A provider written in Python (its _python_intensities(hours) is asked).")
        .def_prop_ro("provider", [](const IntensitySource& s) { return s.provider->provider(); })
        .def_prop_ro("zone", [](const IntensitySource& s) { return s.provider->zone(); })
        .def("intensities",
             [](IntensitySource& s, std::vector<double> hours) {
                 const auto h = hours_of(hours);
                 auto r = [&] {
                     ReleasedGil release;
                     return s.provider->intensities(h);
                 }();
                 return rate_tuples(unwrap_runtime(std::move(r)));
             },
             nb::arg("hours"), "(hour, g/kWh, data time, estimated) tuples for these hours and any others known.")
        .def("latest",
             [](IntensitySource& s) {
                 auto* em = dynamic_cast<carbon::ElectricityMaps*>(s.provider.get());
                 if (em == nullptr) throw nb::type_error("latest() is ElectricityMaps' only");
                 auto r = [&] {
                     ReleasedGil release;
                     return em->latest();
                 }();
                 return rate_tuples({unwrap_runtime(std::move(r))}).front();
             })
        .def("history", [](IntensitySource& s) {
            auto* em = dynamic_cast<carbon::ElectricityMaps*>(s.provider.get());
            if (em == nullptr) throw nb::type_error("history() is ElectricityMaps' only");
            auto r = [&] {
                ReleasedGil release;
                return em->history();
            }();
            return rate_tuples(unwrap_runtime(std::move(r)));
        });
    m.def("locate_by_ip",
          [](std::string base_url) {
              auto where = unwrap_runtime(carbon::locate_by_ip(base_url));
              return std::make_tuple(where.latitude, where.longitude, where.source);
          },
          nb::arg("base_url"));
}

// OpenEI's utility rates: the raw rate JSON and the price source over it.
void bind_price_sources(nb::module_& m) {
    const auto openei_options = [](double lat, double lon, std::string label, std::string sector, int radius,
                                   int offset, std::string base_url, std::optional<std::string> key) {
        carbon::OpenEiOptions o;
        o.location = carbon::GeoLocation{lat, lon, "given"};
        o.label = std::move(label);
        o.sector = std::move(sector);
        o.radius = radius;
        o.utc_offset_hours = offset;
        o.base_url = std::move(base_url);
        o.api_key = std::move(key);
        return o;
    };
    m.def(
        "openei_rate_json",
        [openei_options](double lat, double lon, std::string label, std::string sector, int radius,
                         std::string base_url, std::optional<std::string> key) {
            auto r = [&] {
                ReleasedGil release;
                return carbon::openei_rate_json(openei_options(lat, lon, std::move(label), std::move(sector), radius, 0,
                                                               std::move(base_url), std::move(key)));
            }();
            // (error code, message) or ("", the rate's JSON): the caller picks the original's exception.
            if (!r) return std::make_pair(std::string(to_string(r.error().code)), r.error().describe());
            return std::make_pair(std::string(), std::move(*r));
        },
        nb::arg("latitude"), nb::arg("longitude"), nb::arg("label"), nb::arg("sector"), nb::arg("radius"),
        nb::arg("base_url"), nb::arg("api_key").none());

    nb::class_<PriceSource>(m, "ElectricityPriceSource", "A native electricity-price provider.")
        .def_static(
            "openei",
            [openei_options](double lat, double lon, std::string label, std::string sector, int radius, int offset,
                             std::string base_url, std::optional<std::string> key) {
                return PriceSource{
                    unwrap(carbon::openei_prices(openei_options(lat, lon, std::move(label), std::move(sector), radius,
                                                                offset, std::move(base_url), std::move(key))),
                           ErrorFamily::Runtime)};
            },
            nb::arg("latitude"), nb::arg("longitude"), nb::arg("label"), nb::arg("sector"), nb::arg("radius"),
            nb::arg("utc_offset_hours"), nb::arg("base_url"), nb::arg("api_key").none())
        .def_static(
            "constant",
            [](double price, std::string currency) {
                return PriceSource{unwrap(carbon::constant_price(price, std::move(currency)), ErrorFamily::Runtime)};
            },
            nb::arg("per_kwh"), nb::arg("currency"))
        .def_static(
            "from_file",
            [](std::string path, std::string currency, int offset) {
                return PriceSource{
                    unwrap(carbon::prices_from_file(path, std::move(currency), offset), ErrorFamily::Runtime)};
            },
            nb::arg("path"), nb::arg("currency"), nb::arg("utc_offset_hours"))
        .def_prop_ro("provider", [](const PriceSource& s) { return s.provider->provider(); })
        .def_prop_ro("zone", [](const PriceSource& s) { return s.provider->zone(); })
        .def_prop_ro("currency", [](const PriceSource& s) { return s.provider->currency(); })
        .def(
            "prices",
            [](PriceSource& s, std::vector<double> hours) {
                const auto h = hours_of(hours);
                auto r = [&] {
                    ReleasedGil release;
                    return s.provider->prices(h);
                }();
                return rate_tuples(unwrap_runtime(std::move(r)));
            },
            nb::arg("hours"));
}

template <class M>
void bind_measurement_fields(nb::class_<M>& c) {
    c.def_prop_ro("time", [](const M& x) { return x.energy.time.count(); }, "Elapsed time (s).")
        .def_prop_ro("measurement", [](const M& x) { return x.energy; }, "The window's energy Measurement.")
        .def_prop_ro("provenance", [](const M& x) { return provenance_dict(x.provenance); },
                     "Provider, zone, unit, per-hour rates with timestamps and flags, fallback_used, warnings.")
        .def_prop_ro("warnings", [](const M& x) { return x.provenance.warnings; });
}

void bind_measurements(nb::module_& m) {
    nb::class_<carbon::CarbonEmissionMeasurement> carbon_m(m, "CarbonEmissionMeasurement",
        "A window's energy and carbon emission (gCO2eq), with the intensity of each UTC hour it spans.");
    bind_measurement_fields(carbon_m);
    carbon_m
        .def_prop_ro("gpu_energy", [](const carbon::CarbonEmissionMeasurement& x) {
            std::map<unsigned, double> d;
            for (const auto& [i, v] : x.energy.gpu_energy) d[i] = v.energy.count();
            return d;
        })
        .def_prop_ro("gpu_carbon_emission", [](const carbon::CarbonEmissionMeasurement& x) {
            return amounts(x.gpu_carbon_emission, true);
        }, "gCO2eq per GPU, or None when the intensity is unavailable (provenance says why).")
        .def_prop_ro("cpu_carbon_emission", [](const carbon::CarbonEmissionMeasurement& x) {
            return amounts(x.cpu_carbon_emission, !x.energy.cpu_energy.empty());
        })
        .def_prop_ro("dram_carbon_emission", [](const carbon::CarbonEmissionMeasurement& x) {
            return amounts(x.dram_carbon_emission, !x.energy.dram_energy.empty());
        })
        .def_prop_ro("total_carbon_emission",
                     [](const carbon::CarbonEmissionMeasurement& x) { return x.total_carbon_emission; });

    nb::class_<carbon::EnergyCostMeasurement> cost_m(m, "EnergyCostMeasurement",
        "A window's energy and electricity cost, with the price of each UTC hour it spans.");
    bind_measurement_fields(cost_m);
    cost_m
        .def_prop_ro("gpu_energy", [](const carbon::EnergyCostMeasurement& x) {
            std::map<unsigned, double> d;
            for (const auto& [i, v] : x.energy.gpu_energy) d[i] = v.energy.count();
            return d;
        })
        .def_prop_ro("gpu_energy_cost", [](const carbon::EnergyCostMeasurement& x) {
            return amounts(x.gpu_energy_cost, true);
        })
        .def_prop_ro("cpu_energy_cost", [](const carbon::EnergyCostMeasurement& x) {
            return amounts(x.cpu_energy_cost, !x.energy.cpu_energy.empty());
        })
        .def_prop_ro("dram_energy_cost", [](const carbon::EnergyCostMeasurement& x) {
            return amounts(x.dram_energy_cost, !x.energy.dram_energy.empty());
        })
        .def_prop_ro("total_energy_cost", [](const carbon::EnergyCostMeasurement& x) { return x.total_energy_cost; });
}

// The native monitors behind CarbonEmissionMonitor and EnergyCostMonitor.
void bind_windows(nb::module_& m) {
    nb::class_<CarbonWindows>(m, "CarbonEmissionWindows", "Native CarbonEmissionMonitor over a ZeusMonitor.")
        .def("__init__",
             [](CarbonWindows* self, nb::object energy, nb::object provider, double poll, std::optional<double> fallback,
                int max_gap) {
                 auto& e = nb::cast<EnergyWindows&>(energy);
                 auto& p = nb::cast<IntensitySource&>(provider);
                 auto monitor = std::make_unique<carbon::CarbonEmissionMonitor>(
                     *e.monitor, p.provider, monitor_options(e, poll, fallback, max_gap));
                 new (self) CarbonWindows{energy, provider, std::move(monitor)};
             },
             nb::arg("energy_monitor"), nb::arg("provider"), nb::arg("poll_interval_s"),
             nb::arg("fallback_intensity").none(), nb::arg("max_gap_hours"))
        .def("begin_window", &CarbonWindows::begin, nb::arg("key"), nb::arg("sync_execution") = true)
        .def("end_window", &CarbonWindows::end, nb::arg("key"), nb::arg("sync_execution") = true)
        .def("poll", [](CarbonWindows& w) {
            auto& native = w.live();
            ReleasedGil release;
            native.poll();
        })
        .def("_stop_threads", &CarbonWindows::stop_threads, "Joins the hourly thread (interpreter exit); idempotent.");

    nb::class_<CostWindows>(m, "EnergyCostWindows", "Native EnergyCostMonitor over a ZeusMonitor.")
        .def("__init__",
             [](CostWindows* self, nb::object energy, nb::object provider, double poll, std::optional<double> fallback,
                int max_gap) {
                 auto& e = nb::cast<EnergyWindows&>(energy);
                 auto& p = nb::cast<PriceSource&>(provider);
                 auto monitor = std::make_unique<carbon::EnergyCostMonitor>(*e.monitor, p.provider,
                                                                            monitor_options(e, poll, fallback, max_gap));
                 new (self) CostWindows{energy, provider, std::move(monitor)};
             },
             nb::arg("energy_monitor"), nb::arg("provider"), nb::arg("poll_interval_s"),
             nb::arg("fallback_price").none(), nb::arg("max_gap_hours"))
        .def("begin_window", &CostWindows::begin, nb::arg("key"), nb::arg("sync_execution") = true)
        .def("end_window", &CostWindows::end, nb::arg("key"), nb::arg("sync_execution") = true)
        .def("poll", [](CostWindows& w) {
            auto& native = w.live();
            ReleasedGil release;
            native.poll();
        })
        .def("_stop_threads", &CostWindows::stop_threads, "Joins the hourly thread (interpreter exit); idempotent.");
}

}  // namespace

void bind_carbon(nb::module_& m) {
    m.def(
        "carbon_aware_selector",
        [](const IntensitySource& source, double eta, double threshold, std::optional<double> reference,
           std::optional<int> world_size) {
            carbon::CarbonAwareOptions options;
            options.eta_knob = eta;
            options.threshold = threshold;
            options.reference_g_per_kwh = reference.value_or(0.0);
            options.world_size = world_size;
            if (reference && !(*reference > 0)) {
                raise_error(
                    Error{ErrorCode::InvalidArgument, fmt::format("reference_g_per_kwh {} is not positive", *reference),
                          "give the intensity (gCO2eq/kWh) at which the choice is ZeusCost's, or None for "
                          "the intensity at the first choice"},
                    ErrorFamily::Value);
            }
            return Selector{unwrap(carbon::carbon_aware_selector(carbon::intensity_now(source.provider), options),
                                   ErrorFamily::Value)};
        },
        nb::arg("provider"), nb::arg("eta_knob"), nb::arg("threshold"), nb::arg("reference_g_per_kwh").none(),
        nb::arg("world_size").none());
    bind_intensity_source(m);
    bind_price_sources(m);
    bind_measurements(m);
    bind_windows(m);
}

}  // namespace zeus::python
