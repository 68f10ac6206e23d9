// NVML semantics of the simulator library, called exactly as a client would.
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "nvml_fixture.h"

namespace zeus::sim::testing {
namespace {

using NvmlApi = NvmlFixture;

TEST_F(NvmlApi, CallsBeforeInitReturnUninitialized) {
  use_config(simple_gpu_config());
  unsigned count = 0;
  nvmlDevice_t handle = nullptr;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(0, &handle), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
  char version[80];
  EXPECT_EQ(nvmlSystemGetDriverVersion(version, sizeof version), NVML_ERROR_UNINITIALIZED);
}

TEST_F(NvmlApi, InitIsReferenceCounted) {
  use_config(simple_gpu_config());
  ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  ASSERT_EQ(nvmlInitWithFlags(0), NVML_SUCCESS);
  unsigned count = 0;
  EXPECT_EQ(nvmlShutdown(), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(nvmlShutdown(), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
}

TEST_F(NvmlApi, ErrorStringsUseNvmlWording) {
  EXPECT_STREQ(nvmlErrorString(NVML_SUCCESS), "Success");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_NOT_SUPPORTED), "Not Supported");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_NO_PERMISSION), "Insufficient Permissions");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_UNINITIALIZED), "Uninitialized");
  EXPECT_STREQ(nvmlErrorString(static_cast<nvmlReturn_t>(12345)), "Unknown Error");
}

TEST_F(NvmlApi, DefaultConfigurationIsTwoA100s) {
  ScopedEnv no_config("ZEUS_SIM_CONFIG", nullptr);
  ScopedEnv no_state("ZEUS_SIM_STATE", nullptr);
  ASSERT_EQ(nvmlInit(), NVML_SUCCESS);
  unsigned count = 0;
  ASSERT_EQ(nvmlDeviceGetCount(&count), NVML_SUCCESS);
  ASSERT_EQ(count, 2u);
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
  ASSERT_EQ(nvmlDeviceGetName(device(1), name, sizeof name), NVML_SUCCESS);
  EXPECT_STREQ(name, "NVIDIA A100-SXM4-40GB");
  nvmlDeviceArchitecture_t arch = 0;
  ASSERT_EQ(nvmlDeviceGetArchitecture(device(0), &arch), NVML_SUCCESS);
  EXPECT_EQ(arch, NVML_DEVICE_ARCH_AMPERE);
  int major = 0, minor = 0;
  ASSERT_EQ(nvmlDeviceGetCudaComputeCapability(device(0), &major, &minor), NVML_SUCCESS);
  EXPECT_EQ(major * 10 + minor, 80);
  unsigned min_mw = 0, max_mw = 0, default_mw = 0, limit_mw = 0;
  ASSERT_EQ(nvmlDeviceGetPowerManagementLimitConstraints(device(0), &min_mw, &max_mw), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetPowerManagementDefaultLimit(device(0), &default_mw), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetPowerManagementLimit(device(0), &limit_mw), NVML_SUCCESS);
  EXPECT_EQ(min_mw, 100000u);
  EXPECT_EQ(max_mw, 400000u);
  EXPECT_EQ(default_mw, 400000u);
  EXPECT_EQ(limit_mw, 400000u);
}

TEST_F(NvmlApi, VersionsComeFromTheConfig) {
  init(R"({"driver_version": "550.54.15", "nvml_version": "12.550.54.15", "cuda_driver_version": 12040})");
  char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
  ASSERT_EQ(nvmlSystemGetDriverVersion(version, sizeof version), NVML_SUCCESS);
  EXPECT_STREQ(version, "550.54.15");
  ASSERT_EQ(nvmlSystemGetNVMLVersion(version, sizeof version), NVML_SUCCESS);
  EXPECT_STREQ(version, "12.550.54.15");
  int cuda = 0;
  ASSERT_EQ(nvmlSystemGetCudaDriverVersion_v2(&cuda), NVML_SUCCESS);
  EXPECT_EQ(cuda, 12040);
}

// Only lower bounds: a loaded machine may stretch a call, never shorten it.
TEST_F(NvmlApi, EachCallCostsItsConfiguredDriverLatency) {
  init(R"({"gpus": [{"model": "A100-SXM4-40GB", "count": 2, "driver_latency_us":
      {"default": 0, "nvmlDeviceGetTotalEnergyConsumption": 4000, "setters": 6000}}]})");
  using Clock = std::chrono::steady_clock;
  auto elapsed_ms = [](Clock::time_point since) {
    return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
  };
  unsigned long long energy = 0;
  auto start = Clock::now();
  for (unsigned gpu = 0; gpu < 2; ++gpu)
    ASSERT_EQ(nvmlDeviceGetTotalEnergyConsumption(device(gpu), &energy), NVML_SUCCESS);
  EXPECT_GE(elapsed_ms(start), 2 * 4.0) << "one energy read per GPU, 4 ms each";
  start = Clock::now();
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device(0), 300000), NVML_SUCCESS);
  EXPECT_GE(elapsed_ms(start), 6.0);
  start = Clock::now();
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device(0), 400000), NVML_SUCCESS);
  EXPECT_GE(elapsed_ms(start), 6.0);
}

TEST_F(NvmlApi, SixtyFourGpusEachAnswerAsThemselves) {
  init(R"({"gpus": [{"model": "H100-SXM5-80GB", "count": 64}]})");
  unsigned count = 0;
  ASSERT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  ASSERT_EQ(count, 64u);
  for (unsigned i = 0; i < count; ++i) {
    unsigned index = ~0u;
    ASSERT_EQ(nvmlDeviceGetIndex(device(i), &index), NVML_SUCCESS);
    EXPECT_EQ(index, i);
  }
  unsigned index = 0;
  int foreign = 0;
  EXPECT_EQ(nvmlDeviceGetIndex(reinterpret_cast<nvmlDevice_t>(&foreign), &index), NVML_ERROR_INVALID_ARGUMENT)
      << "a handle not from NVML";
}

TEST_F(NvmlApi, HandlesByUuidAndPciBusIdMatchHandlesByIndex) {
  init(R"({"gpus": [{"model": "A100-SXM4-40GB", "count": 3}]})");
  for (unsigned i = 0; i < 3; ++i) {
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    ASSERT_EQ(nvmlDeviceGetUUID(device(i), uuid, sizeof uuid), NVML_SUCCESS);
    EXPECT_TRUE(has_shape(uuid, kUuidShape)) << uuid;
    nvmlDevice_t by_uuid = nullptr, by_bus = nullptr, by_legacy = nullptr;
    ASSERT_EQ(nvmlDeviceGetHandleByUUID(uuid, &by_uuid), NVML_SUCCESS);
    EXPECT_EQ(by_uuid, device(i));
    nvmlPciInfo_t pci{};
    ASSERT_EQ(nvmlDeviceGetPciInfo_v3(device(i), &pci), NVML_SUCCESS);
    EXPECT_TRUE(has_shape(pci.busId, kBusIdShape)) << pci.busId;
    ASSERT_EQ(nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &by_bus), NVML_SUCCESS);
    ASSERT_EQ(nvmlDeviceGetHandleByPciBusId(pci.busIdLegacy, &by_legacy), NVML_SUCCESS);
    EXPECT_EQ(by_bus, device(i));
    EXPECT_EQ(by_legacy, device(i));
    unsigned index = 99;
    ASSERT_EQ(nvmlDeviceGetIndex(device(i), &index), NVML_SUCCESS);
    EXPECT_EQ(index, i);
    zeusSimNvmlPciInfoV1_t legacy{};
    ASSERT_EQ(nvmlDeviceGetPciInfo(device(i), &legacy), NVML_SUCCESS);
    EXPECT_STREQ(legacy.busId, pci.busIdLegacy);
    EXPECT_EQ(legacy.pciDeviceId, pci.pciDeviceId);
  }
  nvmlDevice_t handle = nullptr;
  EXPECT_EQ(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &handle), NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(nvmlDeviceGetHandleByPciBusId("00000000:FF:00.0", &handle), NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(nvmlDeviceGetHandleByPciBusId("not a bus id", &handle), NVML_ERROR_INVALID_ARGUMENT);
}

// Plain and _v2 callers pass the 52-byte pre-NVML-9 struct; writing the 68-byte
// nvmlPciInfo_t into it would overrun their memory.
TEST_F(NvmlApi, LegacyPciInfoWritesOnlyTheOldLayout) {
  init(simple_gpu_config());
  nvmlPciInfo_t current{};
  ASSERT_EQ(nvmlDeviceGetPciInfo_v3(device(0), &current), NVML_SUCCESS);
  using Getter = nvmlReturn_t (*)(nvmlDevice_t, zeusSimNvmlPciInfoV1_t*);
  for (Getter get : {Getter{&nvmlDeviceGetPciInfo}, Getter{&nvmlDeviceGetPciInfo_v2}}) {
    struct {
      zeusSimNvmlPciInfoV1_t pci;
      unsigned char canary[32];
    } guarded;
    std::memset(&guarded, 0xA5, sizeof guarded);
    ASSERT_EQ(get(device(0), &guarded.pci), NVML_SUCCESS);
    for (unsigned char byte : guarded.canary) ASSERT_EQ(byte, 0xA5) << "wrote past the 52-byte struct";
    EXPECT_STREQ(guarded.pci.busId, current.busIdLegacy);
    EXPECT_EQ(guarded.pci.bus, current.bus);
    EXPECT_EQ(guarded.pci.pciDeviceId, current.pciDeviceId);
    EXPECT_EQ(guarded.pci.pciSubSystemId, current.pciSubSystemId);
    EXPECT_EQ(guarded.pci.reserved0, 0u);
  }
}

TEST_F(NvmlApi, BadArgumentsAndHandlesAreRejected) {
  init(simple_gpu_config());
  nvmlDevice_t handle = nullptr;
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(1, &handle), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(0, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetCount_v2(nullptr), NVML_ERROR_INVALID_ARGUMENT);
  unsigned value = 0;
  int foreign = 0;
  EXPECT_EQ(nvmlDeviceGetPowerUsage(reinterpret_cast<nvmlDevice_t>(&foreign), &value), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(nullptr, &value), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(device(0), nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetTemperature(device(0), static_cast<nvmlTemperatureSensors_t>(7), &value),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetClockInfo(device(0), static_cast<nvmlClockType_t>(9), &value), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetFieldValues(device(0), 0, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device(0), nullptr), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(NvmlApi, TooSmallBuffersReportTheNeededSize) {
  init(simple_gpu_config());
  char small[5];
  EXPECT_EQ(nvmlDeviceGetName(device(0), small, sizeof small), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(nvmlDeviceGetUUID(device(0), small, sizeof small), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(nvmlSystemGetDriverVersion(small, sizeof small), NVML_ERROR_INSUFFICIENT_SIZE);
  char exact[sizeof "NVIDIA A100-SXM4-40GB"];
  EXPECT_EQ(nvmlDeviceGetName(device(0), exact, sizeof exact), NVML_SUCCESS);

  unsigned memory_count = 0;
  EXPECT_EQ(nvmlDeviceGetSupportedMemoryClocks(device(0), &memory_count, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(memory_count, 1u);
  unsigned memory_mhz = 0;
  ASSERT_EQ(nvmlDeviceGetSupportedMemoryClocks(device(0), &memory_count, &memory_mhz), NVML_SUCCESS);
  EXPECT_EQ(memory_mhz, 1215u);

  unsigned count = 1;
  unsigned one = 0;
  EXPECT_EQ(nvmlDeviceGetSupportedGraphicsClocks(device(0), memory_mhz, &count, &one), NVML_ERROR_INSUFFICIENT_SIZE);
  const unsigned expected = (1410 - 210) / 15 + 1;
  ASSERT_EQ(count, expected);
  std::vector<unsigned> clocks(count);
  ASSERT_EQ(nvmlDeviceGetSupportedGraphicsClocks(device(0), memory_mhz, &count, clocks.data()), NVML_SUCCESS);
  EXPECT_EQ(clocks.front(), 1410u);
  EXPECT_EQ(clocks.back(), 210u);
  EXPECT_TRUE(std::is_sorted(clocks.rbegin(), clocks.rend())) << "descending, like NVML";
  EXPECT_EQ(nvmlDeviceGetSupportedGraphicsClocks(device(0), 999, &count, clocks.data()), NVML_ERROR_NOT_FOUND);
}

TEST_F(NvmlApi, PowerLimitSetterValidatesAndThrottles) {
  init(simple_gpu_config());
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device(0), 99999), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device(0), 400001), NVML_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device(0), 200000), NVML_SUCCESS);
  unsigned limit = 0, enforced = 0;
  ASSERT_EQ(nvmlDeviceGetPowerManagementLimit(device(0), &limit), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetEnforcedPowerLimit(device(0), &enforced), NVML_SUCCESS);
  EXPECT_EQ(limit, 200000u);
  EXPECT_EQ(enforced, 200000u);
  double elapsed = 0;
  ASSERT_EQ(zeusSimRunWork(0, 1.0, 1.0, &elapsed), ZEUS_SIM_OK);
  EXPECT_NEAR(elapsed, 1.0 / std::pow(150.0 / 300.0, 1 / 2.5), 1e-6);

  int load = 0;
  ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK);
  advance(0.5);
  unsigned long long reasons = 0;
  ASSERT_EQ(nvmlDeviceGetCurrentClocksEventReasons(device(0), &reasons), NVML_SUCCESS);
  EXPECT_EQ(reasons, ZEUS_SIM_NVML_CLOCKS_EVENT_SW_POWER_CAP);
  ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

TEST_F(NvmlApi, LockedClocksClampTheSmClock) {
  init(simple_gpu_config());
  EXPECT_EQ(nvmlDeviceSetGpuLockedClocks(device(0), 900, 600), NVML_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(nvmlDeviceSetGpuLockedClocks(device(0), 210, 705), NVML_SUCCESS);
  int load = 0;
  ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK);
  advance(0.2);
  unsigned sm = 0, max_sm = 0;
  ASSERT_EQ(nvmlDeviceGetClockInfo(device(0), NVML_CLOCK_SM, &sm), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetMaxClockInfo(device(0), NVML_CLOCK_SM, &max_sm), NVML_SUCCESS);
  EXPECT_EQ(sm, 705u);
  EXPECT_EQ(max_sm, 1410u);
  ASSERT_EQ(nvmlDeviceResetGpuLockedClocks(device(0)), NVML_SUCCESS);
  advance(0.2);
  ASSERT_EQ(nvmlDeviceGetClockInfo(device(0), NVML_CLOCK_GRAPHICS, &sm), NVML_SUCCESS);
  EXPECT_EQ(sm, 1410u);
  ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
  unsigned mem = 0;
  ASSERT_EQ(nvmlDeviceSetMemoryLockedClocks(device(0), 1215, 1215), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetClockInfo(device(0), NVML_CLOCK_MEM, &mem), NVML_SUCCESS);
  EXPECT_EQ(mem, 1215u);
  EXPECT_EQ(nvmlDeviceResetMemoryLockedClocks(device(0)), NVML_SUCCESS);
}

// Every preset, as NVML shows it, matches what the preset API says (the
// catalogue tools choose from): name, power-limit range and default.
TEST_F(NvmlApi, EveryPresetIsWhatThePresetApiDescribes) {
  const unsigned presets = zeusSimPresetCount();
  ASSERT_GE(presets, 13u);  // Pascal, Volta, Turing, Ampere, Ada, Hopper, Grace Hopper
  std::string gpus;
  std::vector<zeusSimPresetInfo_t> infos;
  for (unsigned i = 0; i < presets; ++i) {
    zeusSimPresetInfo_t info{};
    info.size = sizeof info;
    ASSERT_EQ(zeusSimPresetInfo(i, &info), ZEUS_SIM_OK) << zeusSimLastError();
    infos.push_back(info);
    gpus += std::string(gpus.empty() ? "" : ", ") + R"({"model": ")" + info.key + R"("})";
  }
  zeusSimPresetInfo_t past{};
  past.size = sizeof past;
  EXPECT_EQ(zeusSimPresetInfo(presets, &past), ZEUS_SIM_ERROR_NOT_FOUND);
  for (const char* wanted : {"P100-PCIE-16GB", "V100-PCIE-32GB", "RTX6000", "T4", "A100-SXM4-40GB", "A40", "A10", "L4",
                             "L40S", "H100-SXM5-80GB", "H200", "GH200"}) {
    bool found = false;
    for (const auto& info : infos) found = found || std::strcmp(info.key, wanted) == 0;
    EXPECT_TRUE(found) << wanted;
  }
  init(R"({"clock": "virtual", "gpus": [)" + gpus + "]}");
  for (unsigned i = 0; i < presets; ++i) {
    const auto& info = infos[i];
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    ASSERT_EQ(nvmlDeviceGetName(device(i), name, sizeof name), NVML_SUCCESS);
    EXPECT_STREQ(name, info.name);
    unsigned min_mw = 0, max_mw = 0, default_mw = 0;
    ASSERT_EQ(nvmlDeviceGetPowerManagementLimitConstraints(device(i), &min_mw, &max_mw), NVML_SUCCESS);
    ASSERT_EQ(nvmlDeviceGetPowerManagementDefaultLimit(device(i), &default_mw), NVML_SUCCESS);
    EXPECT_EQ(min_mw, static_cast<unsigned>(info.limit_min_w * 1000)) << info.key;
    EXPECT_EQ(max_mw, static_cast<unsigned>(info.limit_max_w * 1000)) << info.key;
    EXPECT_EQ(default_mw, static_cast<unsigned>(info.limit_default_w * 1000)) << info.key;
    EXPECT_LT(info.limit_min_w, info.limit_max_w) << info.key;
    unsigned long long mj = 0;
    EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device(i), &mj) == NVML_SUCCESS, info.energy_counter_supported != 0)
        << info.key;
    // Idle power sits below the lowest limit, so every limit can be reached.
    EXPECT_LT(true_power(i), info.limit_min_w) << info.key;
  }
}

// The versioned temperature query of drivers 565+ (the original Zeus's TemperatureMonitor uses it).
TEST_F(NvmlApi, TemperatureVMatchesTheLegacyQueryAndChecksItsVersion) {
  init(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB", "thermal": {"initial_c": 61.4}}]})");
  unsigned legacy = 0;
  ASSERT_EQ(nvmlDeviceGetTemperature(device(0), NVML_TEMPERATURE_GPU, &legacy), NVML_SUCCESS);
  EXPECT_EQ(legacy, 61u);
  nvmlTemperature_v1_t t{};
  t.version = nvmlTemperature_v1;
  t.sensorType = NVML_TEMPERATURE_GPU;
  ASSERT_EQ(nvmlDeviceGetTemperatureV(device(0), &t), NVML_SUCCESS);
  EXPECT_EQ(t.temperature, static_cast<int>(legacy));
  t.version = 1u << 24;  // wrong size
  EXPECT_EQ(nvmlDeviceGetTemperatureV(device(0), &t), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  EXPECT_EQ(nvmlDeviceGetTemperatureV(device(0), nullptr), NVML_ERROR_INVALID_ARGUMENT);
}

// NVLink-C2C: enabled on Grace Hopper only; other GPUs say NOT_SUPPORTED, as the original Zeus expects.
TEST_F(NvmlApi, C2cModeTellsGraceHopperApart) {
  init(R"({"clock": "virtual", "gpus": [{"model": "GH200"}, {"model": "H100-SXM5-80GB"}]})");
  nvmlC2cModeInfo_v1_t info{};
  ASSERT_EQ(nvmlDeviceGetC2cModeInfoV(device(0), &info), NVML_SUCCESS);
  EXPECT_EQ(info.isC2cEnabled, 1u);
  EXPECT_EQ(nvmlDeviceGetC2cModeInfoV(device(1), &info), NVML_ERROR_NOT_SUPPORTED);
}

// A driver older than the functions answers as if it lacked them.
TEST_F(NvmlApi, OlderDriversLackTheVersionedFunctions) {
  init(R"({"driver_version": "535.129.03", "gpus": [{"model": "GH200"}]})");
  nvmlTemperature_v1_t t{};
  t.version = nvmlTemperature_v1;
  EXPECT_EQ(nvmlDeviceGetTemperatureV(device(0), &t), NVML_ERROR_FUNCTION_NOT_FOUND);
  nvmlC2cModeInfo_v1_t info{};
  EXPECT_EQ(nvmlDeviceGetC2cModeInfoV(device(0), &info), NVML_ERROR_FUNCTION_NOT_FOUND);
}

// Which power fields each architecture supports (reference/measurement-facts.md B.1).
TEST_F(NvmlApi, FieldValuesFollowEachArchitecture) {
  init(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB"}, {"model": "H100-SXM5-80GB"}, {"model": "A40"},
      {"model": "V100-SXM2-16GB"}, {"model": "P100-PCIE-16GB"}, {"model": "GH200"}]})");
  advance(3.0);
  enum { kInstantGpu, kAverageGpu, kInstantMemory, kInstantModule, kEnergy, kUnknown, kFields };
  struct Expect {
    bool instant_gpu, average_gpu, memory, module, energy;
  };
  const Expect expected[] = {
      {true, true, false, false, true},   // A100
      {true, true, true, false, true},    // H100
      {true, true, false, false, true},   // A40
      {true, false, false, false, true},  // V100
      {true, false, false, false, false}, // P100
      {false, false, true, true, true},   // GH200
  };
  const auto now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  for (unsigned gpu = 0; gpu < 6; ++gpu) {
    nvmlFieldValue_t values[kFields] = {};
    values[kInstantGpu] = {NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_GPU, 0, 0, {}, {}, {}};
    values[kAverageGpu] = {NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_GPU, 0, 0, {}, {}, {}};
    values[kInstantMemory] = {NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_MEMORY, 0, 0, {}, {}, {}};
    values[kInstantModule] = {NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_MODULE, 0, 0, {}, {}, {}};
    values[kEnergy] = {NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, 0, 0, 0, {}, {}, {}};
    values[kUnknown] = {9999, 0, 0, 0, {}, {}, {}};
    ASSERT_EQ(nvmlDeviceGetFieldValues(device(gpu), kFields, values), NVML_SUCCESS);
    const Expect& e = expected[gpu];
    auto ok = [&](int i) { return values[i].nvmlReturn == NVML_SUCCESS; };
    EXPECT_EQ(ok(kInstantGpu), e.instant_gpu) << "gpu " << gpu;
    EXPECT_EQ(ok(kAverageGpu), e.average_gpu) << "gpu " << gpu;
    EXPECT_EQ(ok(kInstantMemory), e.memory) << "gpu " << gpu;
    EXPECT_EQ(ok(kInstantModule), e.module) << "gpu " << gpu;
    EXPECT_EQ(ok(kEnergy), e.energy) << "gpu " << gpu;
    EXPECT_EQ(values[kUnknown].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    if (e.instant_gpu) {
      EXPECT_EQ(values[kInstantGpu].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
      EXPECT_GT(values[kInstantGpu].value.uiVal, 10000u) << "idle power in mW";
      // Refreshed at the last 100 ms tick of the virtual clock, which started with the state.
      EXPECT_NEAR(static_cast<double>(values[kInstantGpu].timestamp), static_cast<double>(now_us) + 3e6, 2e6);
    }
    if (e.energy) {
      EXPECT_EQ(values[kEnergy].valueType, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
    }
    if (e.module && e.memory) {
      EXPECT_GT(values[kInstantModule].value.uiVal, values[kInstantMemory].value.uiVal);
    }
  }
}

TEST_F(NvmlApi, PowerUsageIsInstantOnGa100AndOneSecondAverageOnHopper) {
  init(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB", "counters": {"power_noise_w": 0}},
      {"model": "H100-SXM5-80GB", "counters": {"power_noise_w": 0}}]})");
  advance(10.0);
  int loads[2];
  for (unsigned gpu = 0; gpu < 2; ++gpu) ASSERT_EQ(zeusSimLoadBegin(gpu, 1.0, &loads[gpu]), ZEUS_SIM_OK);
  advance(0.5);
  for (unsigned gpu = 0; gpu < 2; ++gpu) {
    nvmlFieldValue_t fields[2] = {{NVML_FI_DEV_POWER_INSTANT, 0, 0, 0, {}, {}, {}},
                                  {NVML_FI_DEV_POWER_AVERAGE, 0, 0, 0, {}, {}, {}}};
    ASSERT_EQ(nvmlDeviceGetFieldValues(device(gpu), 2, fields), NVML_SUCCESS);
    unsigned usage = 0;
    ASSERT_EQ(nvmlDeviceGetPowerUsage(device(gpu), &usage), NVML_SUCCESS);
    EXPECT_GT(fields[0].value.uiVal, fields[1].value.uiVal + 50000) << "half a second of load: average lags";
    EXPECT_EQ(usage, gpu == 0 ? fields[0].value.uiVal : fields[1].value.uiVal);
  }
}

TEST_F(NvmlApi, TemperatureIsTheTrueTemperatureInWholeDegrees) {
  init(simple_gpu_config("A100-SXM4-40GB", R"({"thermal": {"time_constant_s": 3}})"));
  int load = 0;
  ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK);
  for (int i = 0; i < 5; ++i) {
    advance(0.7);
    double celsius = 0;
    unsigned shown = 0;
    ASSERT_EQ(zeusSimTemperature(0, &celsius), ZEUS_SIM_OK);
    ASSERT_EQ(nvmlDeviceGetTemperature(device(0), NVML_TEMPERATURE_GPU, &shown), NVML_SUCCESS);
    EXPECT_EQ(shown, static_cast<unsigned>(std::lround(celsius)));
  }
}

TEST_F(NvmlApi, HousekeepingQueriesAnswerLikeADataCenterGpu) {
  init(simple_gpu_config());
  nvmlMemory_t memory{};
  ASSERT_EQ(nvmlDeviceGetMemoryInfo(device(0), &memory), NVML_SUCCESS);
  EXPECT_EQ(memory.total, 40960ULL << 20);
  EXPECT_EQ(memory.free + memory.used, memory.total);
  zeusSimNvmlMemoryV2_t memory2{};
  EXPECT_EQ(nvmlDeviceGetMemoryInfo_v2(device(0), &memory2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  memory2.version = ZEUS_SIM_NVML_MEMORY_V2;
  ASSERT_EQ(nvmlDeviceGetMemoryInfo_v2(device(0), &memory2), NVML_SUCCESS);
  EXPECT_EQ(memory2.free + memory2.used + memory2.reserved, memory2.total);

  int load = 0;
  ASSERT_EQ(zeusSimLoadBegin(0, 0.5, &load), ZEUS_SIM_OK);
  nvmlUtilization_t util{};
  ASSERT_EQ(nvmlDeviceGetUtilizationRates(device(0), &util), NVML_SUCCESS);
  EXPECT_EQ(util.gpu, 50u);

  nvmlEnableState_t mode = NVML_FEATURE_ENABLED;
  ASSERT_EQ(nvmlDeviceSetPersistenceMode(device(0), NVML_FEATURE_ENABLED), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetPersistenceMode(device(0), &mode), NVML_SUCCESS);
  EXPECT_EQ(mode, NVML_FEATURE_ENABLED);
  // The load belongs to this process (sim/tests/processes_test.cpp has the rest).
  unsigned processes = 7;
  nvmlProcessInfo_t infos[7];
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(device(0), &processes, infos), NVML_SUCCESS);
  ASSERT_EQ(processes, 1u);
  EXPECT_EQ(infos[0].pid, static_cast<unsigned>(::getpid()));
  char serial[32];
  EXPECT_EQ(nvmlDeviceGetSerial(device(0), serial, sizeof serial), NVML_SUCCESS);
  unsigned minor = 9, fan = 0;
  EXPECT_EQ(nvmlDeviceGetMinorNumber(device(0), &minor), NVML_SUCCESS);
  EXPECT_EQ(minor, 0u);
  EXPECT_EQ(nvmlDeviceGetFanSpeed(device(0), &fan), NVML_ERROR_NOT_SUPPORTED);
  int pstate = -1;
  EXPECT_EQ(nvmlDeviceGetPerformanceState(device(0), &pstate), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetPowerManagementMode(device(0), &mode), NVML_SUCCESS);
}

TEST_F(NvmlApi, ConcurrentCallersSeeConsistentCounters) {
  init(simple_gpu_config("A100-SXM4-40GB", R"({"count": 2})"));
  std::vector<std::thread> readers;
  std::vector<int> regressions(4, 0);
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&, r] {
      nvmlDevice_t handle = nullptr;
      if (nvmlDeviceGetHandleByIndex_v2(r % 2, &handle) != NVML_SUCCESS) return;
      unsigned long long last = 0;
      for (int i = 0; i < 400; ++i) {
        unsigned long long mj = 0;
        unsigned mw = 0;
        if (nvmlDeviceGetTotalEnergyConsumption(handle, &mj) != NVML_SUCCESS || mj < last) ++regressions[r];
        if (nvmlDeviceGetPowerUsage(handle, &mw) != NVML_SUCCESS) ++regressions[r];
        last = mj;
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    int load = 0;
    ASSERT_EQ(zeusSimLoadBegin(i % 2, 0.5, &load), ZEUS_SIM_OK);
    advance(0.013);
    ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
  }
  for (auto& t : readers) t.join();
  for (int r = 0; r < 4; ++r) EXPECT_EQ(regressions[r], 0) << "reader " << r;
}

}  // namespace
}  // namespace zeus::sim::testing
