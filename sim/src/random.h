// Small deterministic generators: the simulator's noise must be reproducible
// from the seed and identical in every process sharing a state.
#pragma once

#include <cmath>
#include <cstdint>

namespace zeus::sim {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1).
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

 private:
  std::uint64_t state_;
};

// Standard normal deviate that depends only on (seed, index): Box-Muller.
inline double normal_for(std::uint64_t seed, std::uint64_t index) {
  SplitMix64 rng(seed ^ (index * 0xD1B54A32D192ED03ULL));
  const double u1 = rng.uniform();
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace zeus::sim
