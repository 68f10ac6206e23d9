#pragma once

// Where this build put the programs and libraries that tests and benchmarks
// run, and where the clone keeps its data. Defined in a source that CMake
// generates (cmake/ZeusBuildPaths.cmake) instead of -D definitions, so that
// no other compile command holds a path of the clone: objects compiled in
// one clone are ccache hits in a clone at any other path.

#include <string>

namespace zeus::testing {

const std::string& source_dir();             // the clone
const std::string& data_dir();               // <clone>/data
const std::string& lowtime_test_data_dir();  // <clone>/tests/lowtime/data

const std::string& zeus_cli_path();             // the zeus CLI
const std::string& zeus_sim_cli_path();         // zeus-sim
const std::string& zeusd_path();                // the daemon
const std::string& sim_nvml_library_path();     // the simulator's libnvidia-ml
const std::string& fake_amdsmi_library_path();  // the fake libamd_smi
const std::string& fake_amdsmi_library_dir();   // the folder that holds it

}  // namespace zeus::testing
