// What the current process may do without asking anyone.
#pragma once

namespace zeus {

// True when the process has CAP_SYS_ADMIN in its effective set (root has it),
// which NVML requires to change power limits, clocks and persistence mode.
[[nodiscard]] bool has_cap_sys_admin();

}  // namespace zeus
