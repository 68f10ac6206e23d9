// Helpers shared by the simulator's tests: temporary files and environment.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace zeus::sim::testing {

// A fresh directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "zeus-sim-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name)) << text;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

// Sets (or unsets, with nullptr) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old, had_ = true;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ScopedEnv(const char* name, const std::string& value) : ScopedEnv(name, value.c_str()) {}
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::string old_;
  bool had_ = false;
};

// Runs `body` (returning an exit code) in a forked child that SIGALRM kills
// after `seconds`. Returns the child's exit code, or -1 if it did not exit
// (hung or crashed), so a regression to a hang fails instead of blocking.
template <typename F>
int exit_code_in_child(unsigned seconds, F&& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(seconds);
    _exit(body());
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// One GPU on the virtual clock with the physics made easy to compute by hand:
// no leakage, no sensor noise, no thermal throttling. `gpu_patch` is a JSON
// merge patch applied to the GPU object, e.g. R"({"thermal": {"time_constant_s": 2}})".
inline std::string simple_gpu_config(const std::string& model = "A100-SXM4-40GB", const std::string& gpu_patch = "{}",
                                     const std::string& clock = "virtual") {
  nlohmann::json gpu = {{"model", model},
                        {"power", {{"idle_w", 50}, {"max_dynamic_w", 300}, {"leakage_w_per_c", 0}, {"clock_exponent", 2.5}}},
                        {"thermal", {{"throttle_c", 300}}},
                        {"counters", {{"power_noise_w", 0}}}};
  gpu.merge_patch(nlohmann::json::parse(gpu_patch));
  return nlohmann::json{{"clock", clock}, {"seed", 7}, {"gpus", {gpu}}}.dump();
}

// Shape check without std::regex (which trips GCC 12 warnings under the
// sanitizers): 'x' = lowercase hex digit, 'X' = uppercase hex digit, anything
// else must match literally.
inline bool has_shape(const std::string& text, const std::string& pattern) {
  if (text.size() != pattern.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool digit = c >= '0' && c <= '9';
    if (pattern[i] == 'x' ? !(digit || (c >= 'a' && c <= 'f'))
                          : pattern[i] == 'X' ? !(digit || (c >= 'A' && c <= 'F')) : c != pattern[i]) {
      return false;
    }
  }
  return true;
}

inline constexpr const char* kUuidShape = "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
inline constexpr const char* kBusIdShape = "XXXXXXXX:XX:XX.X";

}  // namespace zeus::sim::testing
