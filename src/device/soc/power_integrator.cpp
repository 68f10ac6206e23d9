#include "device/soc/power_integrator.hpp"

#include <algorithm>

namespace zeus::soc {

Joules PowerIntegrator::add(Watts power, Clock::time_point when) {
    if (power < Watts(0)) {
        ++negative_;
        power = Watts(0);
    }
    // A sample older than the last one (a concurrent reader's, added after
    // a newer one) adds nothing and leaves the newer power in place.
    if (last_power_ && when < last_time_) return total_;
    if (last_power_) {
        const auto dt = when - last_time_;
        longest_gap_ = std::max(longest_gap_, dt);
        total_ += ((*last_power_ + power) / 2.0) * dt;
    }
    last_time_ = when;
    last_power_ = power;
    ++samples_;
    return total_;
}

}  // namespace zeus::soc
