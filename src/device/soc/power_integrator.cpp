#include "device/soc/power_integrator.hpp"

#include <algorithm>

namespace zeus::soc {

Joules PowerIntegrator::add(Watts power, Clock::time_point when) {
    if (power < Watts(0)) {
        ++negative_;
        power = Watts(0);
    }
    if (last_power_) {
        const auto dt = std::max(when - last_time_, Clock::duration::zero());
        longest_gap_ = std::max(longest_gap_, dt);
        total_ += ((*last_power_ + power) / 2.0) * dt;
    }
    if (!last_power_ || when >= last_time_) last_time_ = when;
    last_power_ = power;
    ++samples_;
    return total_;
}

}  // namespace zeus::soc
