// The SPANK plugin's options, the words after the plugin's path on its
// plugstack.conf line ("spool=/var/spool/zeus-slurm zeusd=unix:/run/zeusd/zeusd.sock").
// Parsed once per step; an unknown word or a bad value is an error naming the
// option, the problem and the fix, which the plugin logs to slurmd's log and
// shows in the job's stderr line (the job still runs, unmeasured).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "zeus/device/zeusd_client.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::slurm {

struct PluginOptions {
    // Where each node writes its per-job and per-step JSON records.
    std::string spool = "/var/spool/zeus-slurm";
    // The daemon the counters are read through (zeusd's default socket).
    ZeusdConfig zeusd = ZeusdConfig::unix_socket("/run/zeusd/zeusd.sock");
    // A file holding a zeusd token, for a daemon that requires auth.
    std::string token_file;
    // Whether the step's line goes to its last task's stderr.
    bool stderr_line = true;
};

// Parses the plugstack.conf words. A token file is read here, so that a
// missing or unreadable one is reported with the options.
[[nodiscard]] Result<PluginOptions> parse_plugin_options(const std::vector<std::string>& words);

// How requests to zeusd are bounded inside slurmstepd: a wedged daemon must
// not hold a job's end for long.
inline constexpr std::chrono::milliseconds kZeusdTimeout{3'000};

}  // namespace zeus::slurm
