#include "trace_profile.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "errors.h"
#include "platform/csv_line.hpp"
#include "zeus/platform/user_file.hpp"

namespace zeus::sim {
namespace {

double parse_double(const std::string& text, const std::string& where) {
  try {
    std::size_t used = 0;
    const double x = std::stod(text, &used);
    if (used == text.size() && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  throw SimError(Status::kInvalidArgument, where + ": \"" + text + "\" is not a number");
}

std::string join(const std::set<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

TraceRows read_trace_csv(const std::string& path, const std::string& workload, int batch_size,
                         const std::string& optimizer) {
  auto file = zeus::read_user_file_text(path);
  if (!file.ok()) {
    throw SimError(file.problem == zeus::UserFileProblem::Missing ? Status::kNotFound : Status::kInvalidArgument,
                   "trace file " + path + " " + file.detail + "; pass e.g. data/power-traces/summary_power_a40.csv");
  }
  std::istringstream in(file.text);
  const auto slash = workload.find('/');
  if (slash == std::string::npos) {
    throw SimError(Status::kInvalidArgument,
                   "workload \"" + workload + "\" must be \"dataset/network\", e.g. cifar100/shufflenetv2");
  }
  const std::string dataset = workload.substr(0, slash);
  const std::string network = workload.substr(slash + 1);

  std::string line;
  if (!zeus::read_csv_header(in, line)) throw SimError(Status::kInvalidArgument, "trace file " + path + " is empty");
  const auto header = split_csv_line(line);
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (const char* needed :
       {"dataset", "network", "batch_size", "optimizer", "power_limit", "time_per_epoch", "average_power"}) {
    if (!column.count(needed)) {
      throw SimError(Status::kInvalidArgument, "trace file " + path + " has no column \"" + needed + "\"");
    }
  }

  std::set<std::string> workloads, batch_sizes, optimizers;
  std::map<std::string, TraceRows> by_optimizer;
  std::size_t line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty() || line == "\r") continue;
    const auto f = split_csv_line(line);
    const std::string where = path + ":" + std::to_string(line_number);
    if (f.size() < header.size()) throw SimError(Status::kInvalidArgument, where + ": too few columns");
    workloads.insert(f[column["dataset"]] + "/" + f[column["network"]]);
    if (f[column["dataset"]] != dataset || f[column["network"]] != network) continue;
    batch_sizes.insert(f[column["batch_size"]]);
    if (f[column["batch_size"]] != std::to_string(batch_size)) continue;
    const std::string& opt = f[column["optimizer"]];
    optimizers.insert(opt);
    if (!optimizer.empty() && opt != optimizer) continue;
    TraceRows& rows = by_optimizer[opt];
    rows.power_limit_w.push_back(parse_double(f[column["power_limit"]], where));
    rows.time_per_epoch_s.push_back(parse_double(f[column["time_per_epoch"]], where));
    rows.average_power_w.push_back(parse_double(f[column["average_power"]], where));
  }
  if (!workloads.count(workload)) {
    throw SimError(Status::kNotFound, "workload \"" + workload + "\" is not in " + path + " (available: " + join(workloads) + ")");
  }
  if (optimizers.empty()) {
    throw SimError(Status::kNotFound, "batch size " + std::to_string(batch_size) + " of " + workload + " is not in " +
                                          path + " (available: " + join(batch_sizes) + ")");
  }
  if (by_optimizer.empty()) {
    throw SimError(Status::kNotFound, "optimizer \"" + optimizer + "\" is not used for " + workload + " batch size " +
                                          std::to_string(batch_size) + " (available: " + join(optimizers) + ")");
  }
  if (by_optimizer.size() > 1) {
    throw SimError(Status::kInvalidArgument, workload + " batch size " + std::to_string(batch_size) +
                                                 " was measured with several optimizers (" + join(optimizers) +
                                                 "); choose one");
  }
  TraceRows rows = std::move(by_optimizer.begin()->second);
  rows.key = base_name(path) + ":" + workload + ":" + std::to_string(batch_size) + ":" + by_optimizer.begin()->first;
  return rows;
}

int store_trace_profile(SharedState& state, TraceRows rows) {
  const std::size_t n = rows.power_limit_w.size();
  if (n < 2 || n > kMaxProfilePoints || rows.time_per_epoch_s.size() != n || rows.average_power_w.size() != n) {
    throw SimError(Status::kInvalidArgument, "a trace profile needs 2 to 64 points, got " + std::to_string(n));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!(rows.power_limit_w[i] > 0) || !(rows.time_per_epoch_s[i] > 0) || !(rows.average_power_w[i] >= 0)) {
      throw SimError(Status::kInvalidArgument,
                     "trace profile point " + std::to_string(i) + " needs power_limit > 0, time_per_epoch > 0 and average_power >= 0");
    }
  }
  if (rows.key.size() >= sizeof(TraceProfile::key)) rows.key.resize(sizeof(TraceProfile::key) - 1);

  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return rows.power_limit_w[a] < rows.power_limit_w[b]; });
  TraceProfile profile{};
  profile.in_use = true;
  std::strncpy(profile.key, rows.key.c_str(), sizeof profile.key - 1);
  profile.points = static_cast<std::uint32_t>(n);
  for (std::size_t i = 0; i < n; ++i) {
    profile.power_limit_w[i] = rows.power_limit_w[order[i]];
    profile.time_per_epoch_s[i] = rows.time_per_epoch_s[order[i]];
    profile.average_power_w[i] = rows.average_power_w[order[i]];
    if (i > 0 && profile.power_limit_w[i] == profile.power_limit_w[i - 1]) {
      throw SimError(Status::kInvalidArgument, "trace profile has two points at the same power limit");
    }
  }
  for (unsigned i = 0; i < kMaxProfiles; ++i) {
    TraceProfile& slot = state.profiles[i];
    if (slot.in_use && std::strcmp(slot.key, profile.key) == 0) {
      slot = profile;  // same rows: refresh in place, keep the id
      return static_cast<int>(i);
    }
  }
  for (unsigned i = 0; i < kMaxProfiles; ++i) {
    if (!state.profiles[i].in_use) {
      state.profiles[i] = profile;
      return static_cast<int>(i);
    }
  }
  throw SimError(Status::kState, "all 16 trace profile slots of the simulator state are in use; delete the state file");
}

double interpolate_profile(const TraceProfile& p, const double* ys, double x) {
  const unsigned n = p.points;
  if (x <= p.power_limit_w[0]) return ys[0];
  if (x >= p.power_limit_w[n - 1]) return ys[n - 1];
  unsigned i = 1;
  while (p.power_limit_w[i] < x) ++i;
  const double w = (x - p.power_limit_w[i - 1]) / (p.power_limit_w[i] - p.power_limit_w[i - 1]);
  return ys[i - 1] + w * (ys[i] - ys[i - 1]);
}

}  // namespace zeus::sim
