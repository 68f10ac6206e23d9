#include <CLI/CLI.hpp>
#include "measure_session.hpp"

#include "option_checks.hpp"
#include "trace_writer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace zeus::cli {
namespace {

void note(const std::string& text) { std::cerr << "zeus: note: " << text << "\n"; }

// The selected indices of a device set: the listed ones (each must exist and
// be usable) or, for "all", every usable one (the others are noted).
template <class Set, class Available>
Result<std::vector<unsigned>> select(const Set& set, const std::optional<std::vector<unsigned>>& wanted,
                                     std::string_view option, std::string_view word, Available&& why_not) {
    const std::string why_none = set.status().ok() ? std::string() : set.status().error().describe();
    const std::string why_none_short = set.status().ok() ? std::string("none found") : set.status().error().message;
    std::vector<unsigned> selected;
    if (wanted) {
        if (auto ok = check_indices(option, word, *wanted, set.size(), why_none); !ok) return ok.error();
        for (unsigned i : *wanted) {
            if (auto reason = why_not(i)) {
                return Error{ErrorCode::Unavailable, fmt::format("{}: {} {} cannot be measured: {}", option, word, i,
                                                                 *reason),
                             fmt::format("leave it out of {}", option)};
            }
            selected.push_back(i);
        }
        return selected;
    }
    if (set.size() == 0) {
        note(fmt::format("no {} measured: {} (zeus show-env says more)", word, why_none_short));
    }
    for (unsigned i = 0; i < set.size(); ++i) {
        if (auto reason = why_not(i)) {
            note(fmt::format("{} {} left out: {}", word, i, *reason));
            continue;
        }
        selected.push_back(i);
    }
    return selected;
}

Result<std::vector<unsigned>> select_gpus(const Gpus& gpus, const std::optional<std::vector<unsigned>>& wanted) {
    return select(gpus, wanted, "--gpus", "GPU", [&](unsigned i) -> std::optional<std::string> {
        const Gpu& gpu = gpus[i];
        if (!gpu.available()) return gpu.status().error().describe();
        return std::nullopt;
    });
}

Result<std::vector<unsigned>> select_cpus(const Cpus& cpus, const std::optional<std::vector<unsigned>>& wanted) {
    return select(cpus, wanted, "--cpus", "CPU", [&](unsigned i) -> std::optional<std::string> {
        const Cpu& cpu = cpus[i];
        if (!cpu.available()) return cpu.status().error().describe();
        return std::nullopt;
    });
}

// Files first: finding out that a path is wrong should not take opening every device.
Status check_files(const MeasureOptions& options, bool want_trace) {
    if (!options.output.empty() && options.output != "-") {
        if (auto ok = check_writable("--output", options.output); !ok) return ok.error();
    }
    if (!options.log_file.empty()) {
        if (auto ok = check_writable("--log-file", options.log_file); !ok) return ok.error();
    }
    if (want_trace && !options.trace.empty()) {
        if (auto ok = check_writable("--trace", options.trace); !ok) return ok.error();
    }
    return check_distinct_outputs({{"--output", options.output == "-" ? std::string() : options.output},
                                   {"--log-file", options.log_file},
                                   {"--trace", want_trace ? options.trace : std::string()}});
}

struct DeviceOptions {
    GpuOptions gpus;
    CpuOptions cpus;
    SocOptions soc;
};

// The environment's device options, with --simulate.
Result<DeviceOptions> device_options(const MeasureOptions& options) {
    auto gpu_options = GpuOptions::from_environment();
    if (!gpu_options) return gpu_options.error();
    GpuOptions gopts = *gpu_options;
    gopts.simulate = gopts.simulate || options.device.simulate;
    auto cpu_options = CpuOptions::from_environment();
    if (!cpu_options) return cpu_options.error();
    auto soc_options = SocOptions::from_environment();
    if (!soc_options) return soc_options.error();
    return DeviceOptions{std::move(gopts), *cpu_options, *soc_options};
}

// Where the report goes: --output FILE, standard output with --output -, or
// by default standard output (standard error when a command runs, so that the
// command's output keeps standard output).
struct ReportOutput {
    std::ostream* stream = nullptr;  // null: `file`
    std::unique_ptr<ReportFile> file;
    std::string name;  // for errors
    bool command_stdout_to_stderr = false;
};

Result<ReportOutput> open_report_output(const MeasureOptions& options) {
    ReportOutput out;
    if (options.output.empty()) {
        out.stream = options.runs_command ? &std::cerr : &std::cout;
        out.name = options.runs_command ? "standard error" : "standard output";
    } else if (options.output == "-") {
        out.stream = &std::cout;
        out.name = "standard output (--output -)";
        out.command_stdout_to_stderr = options.runs_command;
    } else {
        out.name = "--output " + options.output;
        auto file = ReportFile::open(options.output);
        if (!file) return file.error();
        out.file = std::move(file).value();
    }
    return out;
}

// A new file beside `target` (".NAME.zeus-PID-N"), created with the mode a
// new `target` would get; empty when the directory cannot take one.
std::string create_temporary_beside(const std::filesystem::path& target) {
    const auto directory = target.parent_path();
    for (int attempt = 0; attempt < 100; ++attempt) {
        const auto name = fmt::format(".{}.zeus-{}-{}", target.filename().string(), ::getpid(), attempt);
        const auto path = (directory / name).string();
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // NOLINT: POSIX varargs
        if (fd >= 0) {
            ::close(fd);
            return path;
        }
        if (errno != EEXIST) break;
    }
    return {};
}

}  // namespace

Result<std::unique_ptr<ReportFile>> ReportFile::open(const std::string& path) {
    std::unique_ptr<ReportFile> file(new ReportFile());
    std::error_code ec;
    // Through a link: replace the file it names, not the link.
    const bool exists = std::filesystem::exists(path, ec);
    const std::filesystem::path target = exists ? std::filesystem::canonical(path, ec) : std::filesystem::path(path);
    file->target_ = ec ? path : target.string();
    const auto status = std::filesystem::status(file->target_, ec);
    if (!std::filesystem::exists(status) || std::filesystem::is_regular_file(status)) {
        file->temporary_ = create_temporary_beside(file->target_);
    }
    // A directory only the file itself may be written in: written directly, as before.
    file->stream_.open(file->temporary_.empty() ? file->target_ : file->temporary_, std::ios::out | std::ios::trunc);
    if (!file->stream_) {
        return Error{ErrorCode::NoPermission, fmt::format("--output {}: cannot write the file", path),
                     "give a path in an existing directory that you may write to"};
    }
    return file;
}

ReportFile::~ReportFile() {
    if (temporary_.empty()) return;
    stream_.close();
    ::unlink(temporary_.c_str());
}

Status ReportFile::replace_target() {
    if (temporary_.empty()) return {};
    if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
        Error error{ErrorCode::OperatingSystem,
                    fmt::format("cannot put the report in place as {}: {}", target_, std::strerror(errno)),
                    fmt::format("the report is kept in {}", temporary_)};
        temporary_.clear();  // kept, as the hint says
        return error;
    }
    temporary_.clear();
    return {};
}

void add_measure_options(CLI::App& app, MeasureOptions& options, MeasureFlags which) {
    add_device_flags(app, options.device);
    app.add_option("--gpus", options.gpus,
                   "GPUs to measure: visible indices (as CUDA numbers them) such as 0,2, or all, or none")
        ->capture_default_str();
    app.add_option("--cpus", options.cpus, "CPU packages (RAPL) to measure: indices such as 0,1, or all, or none")
        ->capture_default_str();
    if (which.interval_help != nullptr) {
        app.add_option("--interval,--update-period", options.interval_s, which.interval_help)
            ->check(finite_number(0.001, 86400.0, "s"))
            ->capture_default_str();
    }
    if (which.duration) {
        app.add_option("--duration", options.duration_s, "Stop after this many seconds instead of at Ctrl-C")
            ->check(finite_number(0.0, 1e9, "s"));
    }
    if (which.power_domain) {
        app.add_option("--power-domain", options.power_domain, "Power reading to show for GPUs")
            ->check(one_of({"device_instant", "device_average", "memory_average"}))
            ->capture_default_str();
    }
    app.add_option("--format", options.format, "Output format")
        ->check(one_of({"human", "csv", "json"}))
        ->capture_default_str();
    app.add_option("--output,-o", options.output,
                   options.runs_command ? "Write the report to FILE, or with - to standard output (the command's "
                                          "output then goes to standard error); default: standard error"
                                        : "Write the report to FILE instead of standard output");
    app.add_option("--log-file", options.log_file,
                   "Write the measured window to FILE as an energy-window CSV log (Zeus's format; appended to a log of "
                   "the same GPUs)");
    if (which.trace) {
        app.add_option("--trace", options.trace,
                       "Write a Chrome/Perfetto trace (JSON) with power per device and the measured window");
    }
    if (which.charges) add_charge_options(app, options.charges);
}

int setup_exit_code(const Error& error) {
    switch (error.code) {
        case ErrorCode::InvalidArgument:
        case ErrorCode::InvalidConfig:
        case ErrorCode::NotFound:
        case ErrorCode::NoPermission:
        case ErrorCode::NotSupported:
        case ErrorCode::Unavailable: return 2;
        default: return 1;
    }
}

MeasureSession::~MeasureSession() {
    if (power_monitor_) power_monitor_->stop();
}

Result<std::unique_ptr<MeasureSession>> MeasureSession::open(const MeasureOptions& options, bool want_trace) {
    std::unique_ptr<MeasureSession> s(new MeasureSession());
    auto format = parse_format(options.format);
    if (!format) return format.error();
    s->format_ = *format;
    auto domain = parse_power_domain(options.power_domain);
    if (!domain) return domain.error();
    s->domain_ = *domain;
    auto gpu_list = parse_index_list("--gpus", options.gpus);
    if (!gpu_list) return gpu_list.error();
    auto cpu_list = parse_index_list("--cpus", options.cpus);
    if (!cpu_list) return cpu_list.error();
    if (auto ok = check_files(options, want_trace); !ok) return ok.error();
    if (want_trace) s->trace_path_ = options.trace;
    auto device = device_options(options);
    if (!device) return device.error();

    // GPUs are only opened when some may be measured: --gpus none must work without a driver.
    if (!gpu_list->has_value() || !(*gpu_list)->empty()) s->gpus_ = Gpus::open(device->gpus);
    for (const auto& w : s->gpus_.warnings()) note(w);
    auto gpus = select_gpus(s->gpus_, *gpu_list);
    if (!gpus) return gpus.error();
    s->gpu_indices_ = *gpus;

    if (!cpu_list->has_value() || !(*cpu_list)->empty()) s->cpus_ = Cpus::open(device->cpus);
    auto cpus = select_cpus(s->cpus_, *cpu_list);
    if (!cpus) return cpus.error();
    s->cpu_indices_ = *cpus;

    auto soc = open_soc(device->soc);
    if (!soc) return soc.error();
    if ((*soc)->available()) s->soc_ = std::move(soc).value();

    if (s->gpu_indices_.empty() && s->cpu_indices_.empty() && !s->soc_) {
        // With the simulator already on, "try --simulate" would send the user in a circle.
        return Error{ErrorCode::NotFound, "nothing to measure: no GPU, CPU package or SoC is selected and usable",
                     device->gpus.simulate
                         ? "run zeus show-env --simulate to see the simulator's GPUs (ZEUS_SIM_CONFIG sets them), and "
                           "check --gpus and --cpus"
                         : "run zeus show-env to see what can be measured, or try --simulate"};
    }

    EnergyMonitorOptions mopts;
    mopts.gpu_indices = s->gpu_indices_;
    mopts.cpu_indices = s->cpu_indices_;
    mopts.wait_for_counter_refresh = options.wait_for_counter_refresh;
    mopts.edges = options.window_edges;
    if (!options.log_file.empty()) mopts.log_file = options.log_file;
    auto monitor = EnergyMonitor::open(s->gpus_, &s->cpus_, s->soc_.get(), std::move(mopts));
    if (!monitor) return monitor.error();
    s->monitor_ = std::move(monitor).value();
    auto charges = ChargedWindows::open(options.charges, *s->monitor_, s->gpus_);
    if (!charges) return charges.error();
    s->charges_ = std::move(charges).value();

    auto output = open_report_output(options);
    if (!output) return output.error();
    ReportOutput& out = output.value();
    s->out_ = out.stream;
    s->out_file_ = std::move(out.file);
    s->out_name_ = std::move(out.name);
    s->command_stdout_to_stderr_ = out.command_stdout_to_stderr;
    return s;
}

Status MeasureSession::flush_output() {
    std::ostream& stream = out();
    errno = 0;
    stream.flush();
    const int error = errno;
    if (stream.good()) {
        if (out_file_ && stream.tellp() > 0) return out_file_->replace_target();
        return {};
    }
    return Error{ErrorCode::OperatingSystem,
                 fmt::format("cannot write the report to {}{}", out_name_,
                             error != 0 ? fmt::format(": {}", std::strerror(error)) : std::string()),
                 "the measurement is lost; write the report where there is room, e.g. --output FILE on another disk"};
}

Status MeasureSession::start_power_monitor(bool keep_all) {
    if (gpu_indices_.empty()) return {};
    std::string reasons;
    bool any = false;
    for (unsigned i : gpu_indices_) {
        const auto& support = gpus_[i].capabilities().power(domain_).support;
        any = any || support.supported;
        if (!support.supported) reasons += fmt::format("{}GPU {}: {}", reasons.empty() ? "" : "; ", i, support.reason);
    }
    if (!any) {
        return Error{ErrorCode::NotSupported,
                     fmt::format("--power-domain {}: no selected GPU reports this power ({})", to_string(domain_),
                                 reasons),
                     "use --power-domain device_instant or device_average, or select other GPUs"};
    }
    PowerMonitorOptions popts;
    popts.gpu_indices = gpu_indices_;
    popts.domains = {domain_};
    popts.max_samples_per_gpu = keep_all ? 0 : 1024;
    auto pm = PowerMonitor::start(gpus_, std::move(popts));
    if (!pm) return pm.error();
    power_monitor_ = std::move(pm).value();
    return {};
}

std::vector<std::string> MeasureSession::power_devices() const {
    std::vector<std::string> devices;
    for (unsigned i : gpu_indices_) devices.push_back(gpu_label(i));
    for (unsigned i : cpu_indices_) devices.push_back(cpu_label(i));
    return devices;
}

EnergyReport MeasureSession::report(const Measurement& m, std::string command_name) const {
    return report::measurement_report(m, std::move(command_name), gpus_, &cpus_, soc_.get());
}

void MeasureSession::begin_charges() {
    if (charges_) charges_->begin();
}

EnergyReport MeasureSession::charged_report(const Measurement& m, std::string command_name) {
    EnergyReport r = report(m, std::move(command_name));
    if (charges_) charges_->end(m, r);
    return r;
}

void finish_trace(TraceRecorder& trace, const MeasureSession& session, CpuPowerSampler& cpu_sampler,
                  Timestamp last_cpu, Timestamp end) {
    const auto devices = session.power_devices();
    const std::size_t gpu_count = session.gpu_indices().size();
    const auto cpu_watts = cpu_sampler.sample(end);
    for (std::size_t k = 0; k < cpu_watts.size(); ++k) {
        trace.add_track(devices[gpu_count + k]);
        if (cpu_watts[k]) trace.add_interval_power(devices[gpu_count + k], last_cpu, *cpu_watts[k]);
    }
    trace.finish(end);
    const PowerMonitor* pm = session.power_monitor();
    if (pm == nullptr) return;
    const auto timelines = pm->all_power_timelines();
    const auto domain = timelines.find(session.power_domain());
    for (unsigned i : session.gpu_indices()) {
        std::vector<PowerSample> samples;
        if (domain != timelines.end()) {
            if (auto it = domain->second.find(i); it != domain->second.end()) samples = it->second;
        }
        trace.add_timeline(gpu_label(i), samples, end);
    }
}

}  // namespace zeus::cli
