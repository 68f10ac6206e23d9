#include "zeus/platform/privileges.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace zeus {

bool has_cap_sys_admin() {
    constexpr unsigned kCapSysAdmin = 21;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.rfind("CapEff:", 0) != 0) continue;
        unsigned long long mask = 0;
        std::istringstream(line.substr(7)) >> std::hex >> mask;
        return ((mask >> kCapSysAdmin) & 1ULL) != 0;
    }
    return false;
}

}  // namespace zeus
