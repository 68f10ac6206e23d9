// The SPANK surface of zeus_slurm.so: Slurm's C callbacks, each a thin call
// into the C++ of this folder with every exception caught, so nothing a
// measurement does can fail or stop a job (every callback returns 0).
//
// Remote context (slurmstepd, one process per step and node):
//   slurm_spank_init       options, the step's GPUs and whole CPU packages (its
//                          affinity there), the counters at its start
//   slurm_spank_task_init  in each task: its stderr handed to slurmstepd
//   slurm_spank_task_exit  the last task's exit ends the window: the record
//                          and the line in that task's stderr
//   slurm_spank_exit       the record, if no task ever exited (launch failed)
// Job script context (slurmd's prolog and epilog): the job's own record.
//
// State lives in one object per slurmstepd (`g_step`): SPANK gives a plugin
// nothing else to keep it in between callbacks.
extern "C" {
#include <slurm/spank.h>
}

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "slurm/energy_record.hpp"
#include "slurm/task_stderr.hpp"
#include "zeus/platform/read_user_file.hpp"

// SPANK_PLUGIN's symbols, spelled out: in C++ a namespace-scope const has
// internal linkage, and Slurm's loader looks these names up with dlsym.
extern "C" {
extern const char plugin_name[] = "zeus_slurm";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;
}

namespace {

using namespace zeus::slurm;

// Slurm's reserved step ids (slurm.h: SLURM_BATCH_SCRIPT and friends).
std::string step_name(std::uint32_t step_id) {
    switch (step_id) {
        case 0xfffffffbU:
            return "batch";
        case 0xfffffffcU:
            return "extern";
        case 0xfffffffaU:
            return "interactive";
        default:
            return std::to_string(step_id);
    }
}

std::string node_name() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) return "unknown";
    std::string name(host);
    return name.substr(0, name.find('.'));
}

std::vector<std::string> words_of(int argc, char** argv) { return std::vector<std::string>(argv, argv + argc); }

template <class Lookup>
EnvironmentLookup as_lookup(Lookup lookup) {
    return [lookup](std::string_view name) { return lookup(std::string(name)); };
}

// The options, or the reason every window of this step has no number.
struct Configuration {
    PluginOptions options;
    std::string problem;  // empty when the options are valid
};

Configuration configure(int argc, char** argv) {
    auto parsed = parse_plugin_options(words_of(argc, argv));
    if (parsed.ok()) return {std::move(parsed).value(), {}};
    slurm_error("zeus_slurm: %s; this job runs without its GPU energy measured", parsed.error().describe().c_str());
    return {PluginOptions{}, "the zeus_slurm plugin's options are invalid: " + parsed.error().describe()};
}

// Where the CPU topology is read (cpu_packages.hpp).
constexpr const char* kSysfsRoot = "/sys";

// Reads the counters of the GPUs `lookup` names, and of the CPU packages this
// process holds whole, unless the configuration or the GPU list is wrong.
WindowStart start_window(const Configuration& config, const EnvironmentLookup& lookup) {
    if (!config.problem.empty()) return failed_window(config.problem);
    auto gpus = select_gpus(lookup);
    if (!gpus.ok()) {
        slurm_error("zeus_slurm: %s", gpus.error().describe().c_str());
        return failed_window(gpus.error().describe());
    }
    // The packages matter only to a window with GPUs: others leave no record.
    auto packages = gpus->ids.empty() ? PackageHolding{} : held_packages(kSysfsRoot, lookup);
    return begin_window(config.options.zeusd, std::move(gpus).value(), std::move(packages));
}

// A window worth a record: it had GPUs, or something went wrong that the
// user and the admin should see. A step without GPUs leaves nothing.
bool worth_recording(const WindowStart& start) { return !start.no_gpus; }

// Saves the record; "record PATH", or why it was not saved, for the line.
std::string save_record(const std::string& spool, const EnergyRecord& record) {
    const std::string path = record_path(spool, record.identity);
    if (auto saved = write_file_atomically(path, record_json(record)); !saved.ok()) {
        slurm_error("zeus_slurm: %s", saved.error().describe().c_str());
        return "record not saved: " + saved.error().message;
    }
    return "record " + path;
}

struct StepSession {
    Configuration config;
    RecordIdentity identity;
    WindowStart start;
    TaskStderrRelay relay;
    std::vector<TaskEnd> tasks;
    std::uint32_t local_tasks = 0;
    bool finished = false;

    // Ends the window, saves the record and writes the line to `stderr_fd` (-1: no line).
    void finish(int stderr_fd) {
        finished = true;
        if (!worth_recording(start)) return;
        EnergyRecord record = end_window(config.options.zeusd, identity, start);
        record.tasks = tasks;
        const std::string saved = save_record(config.options.spool, record);
        if (stderr_fd >= 0 && config.options.stderr_line) write_line(stderr_fd, stderr_line(record, saved));
    }
};

std::unique_ptr<StepSession> g_step;

template <class Body>
int guarded(const char* callback, Body body) {
    try {
        body();
    } catch (const std::exception& e) {
        slurm_error("zeus_slurm: %s failed: %s; the job is not affected", callback, e.what());
    } catch (...) {
        slurm_error("zeus_slurm: %s failed; the job is not affected", callback);
    }
    return 0;
}

// The step's environment as Slurm prepared it for the tasks (its GRES variables included).
EnvironmentLookup step_environment(spank_t spank) {
    return as_lookup([spank](const std::string& name) {
        std::vector<char> buffer(4096);
        if (spank_getenv(spank, name.c_str(), buffer.data(), static_cast<int>(buffer.size())) != ESPANK_SUCCESS) {
            return std::optional<std::string>();
        }
        return std::optional<std::string>(buffer.data());
    });
}

void begin_step(spank_t spank, int argc, char** argv) {
    std::uint32_t job_id = 0, step_id = 0, local_tasks = 0;
    uid_t uid = 0;
    spank_get_item(spank, S_JOB_ID, &job_id);
    spank_get_item(spank, S_JOB_STEPID, &step_id);
    spank_get_item(spank, S_JOB_UID, &uid);
    spank_get_item(spank, S_JOB_LOCAL_TASK_COUNT, &local_tasks);
    if (step_name(step_id) == "extern") return;  // no tasks: the job's record covers the allocation
    auto session = std::make_unique<StepSession>();
    session->config = configure(argc, argv);
    session->identity = RecordIdentity{job_id, step_name(step_id), node_name(), static_cast<std::uint32_t>(uid)};
    session->local_tasks = local_tasks;
    session->start = start_window(session->config, step_environment(spank));
    session->relay.open();
    g_step = std::move(session);
}

void task_exited(spank_t spank) {
    if (!g_step || g_step->finished) return;
    int task_id = -1, status = 0;
    spank_get_item(spank, S_TASK_ID, &task_id);
    TaskEnd end{task_id, std::nullopt, std::nullopt};
    if (spank_get_item(spank, S_TASK_EXIT_STATUS, &status) == ESPANK_SUCCESS) {
        if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
    }
    g_step->tasks.push_back(end);
    const int stderr_fd = g_step->relay.take(task_id);
    if (g_step->tasks.size() >= g_step->local_tasks) g_step->finish(stderr_fd);
    if (stderr_fd >= 0) ::close(stderr_fd);
}

EnvironmentLookup process_environment() {
    return as_lookup([](const std::string& name) {
        const char* value = std::getenv(name.c_str());
        return value ? std::optional<std::string>(value) : std::nullopt;
    });
}

RecordIdentity job_identity(spank_t spank) {
    std::uint32_t job_id = 0;
    uid_t uid = 0;
    spank_get_item(spank, S_JOB_ID, &job_id);
    spank_get_item(spank, S_JOB_UID, &uid);
    return RecordIdentity{job_id, "job", node_name(), static_cast<std::uint32_t>(uid)};
}

void begin_job(spank_t spank, int argc, char** argv) {
    const Configuration config = configure(argc, argv);
    const WindowStart start = start_window(config, process_environment());
    if (!worth_recording(start)) return;
    const RecordIdentity identity = job_identity(spank);
    if (auto saved = write_file_atomically(job_start_path(config.options.spool, identity), window_start_json(start));
        !saved.ok()) {
        slurm_error("zeus_slurm: %s", saved.error().describe().c_str());
    }
}

void end_job(spank_t spank, int argc, char** argv) {
    const Configuration config = configure(argc, argv);
    const RecordIdentity identity = job_identity(spank);
    const std::string start_path = job_start_path(config.options.spool, identity);
    if (::access(start_path.c_str(), F_OK) != 0) return;  // no GPUs here, or the prolog did not run
    auto text = zeus::read_user_file(start_path, zeus::UserInput{"job start record", "spool="});
    auto start = text.ok() ? parse_window_start(*text) : zeus::Result<WindowStart>(text.error());
    const EnergyRecord record =
        end_window(config.options.zeusd, identity,
                   start.ok() ? std::move(start).value() : failed_window(start.error().describe()));
    save_record(config.options.spool, record);
    ::unlink(start_path.c_str());
}

}  // namespace

extern "C" {

int slurm_spank_init(spank_t spank, int argc, char** argv) {
    if (spank_context() != S_CTX_REMOTE) return 0;
    return guarded("slurm_spank_init", [&] { begin_step(spank, argc, argv); });
}

int slurm_spank_task_init(spank_t spank, int, char**) {
    return guarded("slurm_spank_task_init", [&] {
        if (!g_step) return;
        int task_id = -1;
        spank_get_item(spank, S_TASK_ID, &task_id);
        g_step->relay.send_from_task(task_id);
    });
}

int slurm_spank_task_exit(spank_t spank, int, char**) {
    return guarded("slurm_spank_task_exit", [&] { task_exited(spank); });
}

int slurm_spank_exit(spank_t, int, char**) {
    if (spank_context() != S_CTX_REMOTE) return 0;
    return guarded("slurm_spank_exit", [&] {
        if (g_step && !g_step->finished) g_step->finish(-1);
        g_step.reset();
    });
}

int slurm_spank_job_prolog(spank_t spank, int argc, char** argv) {
    return guarded("slurm_spank_job_prolog", [&] { begin_job(spank, argc, argv); });
}

int slurm_spank_job_epilog(spank_t spank, int argc, char** argv) {
    return guarded("slurm_spank_job_epilog", [&] { end_job(spank, argc, argv); });
}

}  // extern "C"
