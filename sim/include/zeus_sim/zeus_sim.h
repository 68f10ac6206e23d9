/*
 * Control API of the Zeus GPU simulator (libnvidia-ml.so.1 built from sim/).
 *
 * The same shared library that answers NVML calls exports these functions, so a
 * workload (or a test) can put load on a simulated GPU, run a fixed amount of
 * work that slows down when the GPU is throttled, move the virtual clock, read
 * the exact ground-truth energy and inject faults. Plain C so that any language
 * with a C FFI can drive it. GPU indices are NVML indices.
 *
 * Every function is thread-safe. Failures return a non-zero status and leave a
 * message in zeusSimLastError() (thread-local). See docs/simulator.md.
 */
#ifndef ZEUS_SIM_ZEUS_SIM_H
#define ZEUS_SIM_ZEUS_SIM_H

#include <stddef.h>

/* Exported from libnvidia-ml.so.1, which hides everything else. */
#if defined(__GNUC__)
#define ZEUS_SIM_API __attribute__((visibility("default")))
#else
#define ZEUS_SIM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    ZEUS_SIM_OK = 0,
    ZEUS_SIM_ERROR_INVALID_ARGUMENT = 1,
    ZEUS_SIM_ERROR_NOT_FOUND = 2,
    ZEUS_SIM_ERROR_CONFIG = 3,
    ZEUS_SIM_ERROR_STATE = 4,
    ZEUS_SIM_ERROR_UNSUPPORTED = 5
} zeusSimStatus_t;

/* Thread-local message describing the last failure of a zeusSim* call on this thread. */
ZEUS_SIM_API const char* zeusSimLastError(void);

/* Load the configuration ($ZEUS_SIM_CONFIG) and attach the state ($ZEUS_SIM_STATE).
 * Reference-counted together with nvmlInit: the simulator stays open while
 * either holds it. */
ZEUS_SIM_API zeusSimStatus_t zeusSimOpen(void);
ZEUS_SIM_API zeusSimStatus_t zeusSimClose(void);

ZEUS_SIM_API zeusSimStatus_t zeusSimGpuCount(unsigned* count);

/* Simulator clock: seconds since the state was created. */
ZEUS_SIM_API zeusSimStatus_t zeusSimNow(double* seconds);
/* The simulator's time now on the scale of NVML's field-value timestamps
 * (microseconds since the Unix epoch): the host's clock on the real clock,
 * the state's creation time plus the virtual time on the virtual clock. */
ZEUS_SIM_API zeusSimStatus_t zeusSimUnixTimeUs(long long* unix_us);
/* Moves the virtual clock forward; ZEUS_SIM_ERROR_UNSUPPORTED on the real clock. */
ZEUS_SIM_API zeusSimStatus_t zeusSimAdvance(double seconds);

/* Exact integrated energy of the simulated GPU since the state was created. */
ZEUS_SIM_API zeusSimStatus_t zeusSimGroundTruthEnergy(unsigned gpu, double* joules);
/* The instant-power sensor as a sampler that saw every refresh would integrate
 * it: joules of the readings, each held from its refresh to the next, up to the
 * latest refresh (at *refreshed_unix_us, NVML's timestamp scale), and the
 * latest reading (W), which holds until the next refresh. On the virtual clock
 * no thread can sample while the simulation jumps; this is what it would have
 * seen. Not the ground truth: it has the sensor's noise and part-time window. */
ZEUS_SIM_API zeusSimStatus_t zeusSimPowerSensorEnergy(unsigned gpu, double* joules, long long* refreshed_unix_us,
                                                      double* reading_w);
/* Instantaneous true power now. */
ZEUS_SIM_API zeusSimStatus_t zeusSimTruePower(unsigned gpu, double* watts);
ZEUS_SIM_API zeusSimStatus_t zeusSimTemperature(unsigned gpu, double* celsius);
/* Current (possibly throttled) SM clock. */
ZEUS_SIM_API zeusSimStatus_t zeusSimClockMhz(unsigned gpu, double* mhz);

/* Put a constant load (utilization in [0,1]) on a GPU until zeusSimLoadEnd. The
 * load belongs to the calling process: it disappears when that process dies. */
ZEUS_SIM_API zeusSimStatus_t zeusSimLoadBegin(unsigned gpu, double utilization, int* load_id);
ZEUS_SIM_API zeusSimStatus_t zeusSimLoadEnd(int load_id);

/* Run work_units of work (1 unit = 1 s at full utilization and the maximum
 * clock); blocks on the real clock, advances the virtual clock; takes longer
 * when the power limit, locked clocks or heat throttle the GPU. */
ZEUS_SIM_API zeusSimStatus_t zeusSimRunWork(unsigned gpu, double work_units, double utilization, double* elapsed_s);

/* Fault injection. Names (value in parentheses):
 *   "counter_reset"        energy counter drops to 0 now, as after a driver reload (ignored)
 *   "stuck_counter"        energy counter stops refreshing (1) or resumes (0)
 *   "power_spike"          the next instant-power reading shows +value W (ground truth unaffected)
 *   "lost"                 the GPU falls off the bus: NVML calls on it return GPU_IS_LOST (1), or it returns (0)
 *   "energy_not_supported" the energy counter reads NOT_SUPPORTED (1) or works again (0)
 *   "set_temperature"      sets the die temperature to value degrees C (thermal experiments)
 *   "clear"                clears every injected fault (ignored) */
ZEUS_SIM_API zeusSimStatus_t zeusSimInjectFault(unsigned gpu, const char* fault, double value);

/* ---- Additions beyond the minimal API ---- */

/* Workload profile from a real power trace (CSV with columns
 * dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power,
 * e.g. data/power-traces/summary_power_a40.csv). workload is "dataset/network";
 * optimizer may be NULL when the rows for that batch size use one optimizer.
 * While a trace load runs, the GPU draws the trace's average power interpolated
 * at the current power limit and completes 1/time_per_epoch epochs per second.
 * The profile lives in the shared state; loading the same rows twice returns the same id. */
ZEUS_SIM_API zeusSimStatus_t zeusSimTraceProfileLoad(const char* csv_path, const char* workload, int batch_size,
                                        const char* optimizer, int* profile_id);
/* Same, from arrays sorted or not by power limit (2..64 points). */
ZEUS_SIM_API zeusSimStatus_t zeusSimTraceProfileDefine(const char* name, unsigned points, const double* power_limit_w,
                                          const double* time_per_epoch_s, const double* average_power_w,
                                          int* profile_id);
/* Trace-shaped counterparts of zeusSimLoadBegin / zeusSimRunWork (work in epochs). */
ZEUS_SIM_API zeusSimStatus_t zeusSimTraceLoadBegin(unsigned gpu, int profile_id, int* load_id);
ZEUS_SIM_API zeusSimStatus_t zeusSimRunTraceWork(unsigned gpu, int profile_id, double epochs, double* elapsed_s);

/* Snapshot of one GPU for dashboards and tests. Set size = sizeof(zeusSimGpuStatus_t). */
typedef struct {
    unsigned size;
    char name[96];
    char uuid[96];
    double now_s;
    double true_power_w;
    double temperature_c;
    double clock_mhz;
    double power_limit_w;
    double utilization;          /* sum of active loads, capped at 1 */
    double ground_truth_energy_j;
    int energy_counter_supported;
    unsigned long long energy_counter_mj;
    double instant_power_reading_w; /* what NVML_FI_DEV_POWER_INSTANT shows now */
    double average_power_reading_w; /* what the 1 s average shows now */
    unsigned active_loads;
    int lost;
} zeusSimGpuStatus_t;
ZEUS_SIM_API zeusSimStatus_t zeusSimGetGpuStatus(unsigned gpu, zeusSimGpuStatus_t* status);

/* The default configuration (used when ZEUS_SIM_CONFIG is unset) as JSON text. */
ZEUS_SIM_API const char* zeusSimDefaultConfigJson(void);
/* The built-in GPU models (presets), for tools that pick one, e.g. from a
 * power trace's file name. Needs no open simulator. Set size =
 * sizeof(zeusSimPresetInfo_t); NOT_FOUND past the last preset. */
typedef struct {
    unsigned size;
    char key[32];          /* "RTX6000": the configuration's `model` */
    char name[96];         /* "Quadro RTX 6000": what nvmlDeviceGetName returns */
    char trace_names[64];  /* "rtx6000,quadrortx6000": <name> in summary_power_<name>.csv */
    double limit_min_w, limit_max_w, limit_default_w;
    int energy_counter_supported; /* 0 before Volta */
} zeusSimPresetInfo_t;
ZEUS_SIM_API unsigned zeusSimPresetCount(void);
ZEUS_SIM_API zeusSimStatus_t zeusSimPresetInfo(unsigned index, zeusSimPresetInfo_t* info);

/* ---- Processes (sim/src/processes.h, docs/simulator.md) ----
 * Every load belongs to a process: NVML's nvmlDeviceGetComputeRunningProcesses_v3
 * and nvmlDeviceGetProcessUtilization answer from them, and each keeps its
 * ground-truth energy: what the GPU drew above idle because of it. */
/* A utilization load attributed to process `pid` (0: the caller; the load
 * still ends when the caller dies) whose dynamic power per unit of utilization
 * is power_weight (in (0, 10]) times the GPU's. End it with zeusSimLoadEnd. */
ZEUS_SIM_API zeusSimStatus_t zeusSimProcessLoadBegin(unsigned gpu, double utilization, int pid, double power_weight,
                                                     int* load_id);
/* How processes share a GPU: "concurrent" (MPS-like, the default: loads run
 * together) or "time_sliced" (each of n processes runs 1/n of the time). */
ZEUS_SIM_API zeusSimStatus_t zeusSimSetSharing(unsigned gpu, const char* mode);
/* Ground-truth energy of process `pid` on `gpu` since the state was created. */
ZEUS_SIM_API zeusSimStatus_t zeusSimProcessEnergy(unsigned gpu, int pid, double* joules);

/* 1 when the simulator runs on the virtual clock, 0 on the real clock. */
ZEUS_SIM_API zeusSimStatus_t zeusSimIsVirtualClock(int* is_virtual);

#ifdef __cplusplus
}
#endif

#endif /* ZEUS_SIM_ZEUS_SIM_H */
