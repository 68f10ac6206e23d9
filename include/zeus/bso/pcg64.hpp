// The random generator of the batch-size optimizer: numpy's PCG64 bit
// generator (128-bit LCG, XSL-RR output) and the three draws the original
// server makes through numpy.random.Generator -- a bounded integer (Lemire),
// choice(replace=False) of a whole list (Floyd + shuffle) and normal
// (ziggurat). Its state is numpy's `bit_generator.state` dict as JSON, the
// value the original stores in `job.mab_random_generator_state`, so a job
// seeded on either server continues on the other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zeus::bso {

// GCC's 128-bit integer; __extension__ keeps -Wpedantic quiet about it.
__extension__ typedef unsigned __int128 Uint128;

class Pcg64 {
public:
    // numpy.random.default_rng(seed) for a non-negative integer seed.
    static Pcg64 from_seed(std::uint64_t seed);
    // Parses numpy's state JSON ({"bit_generator": "PCG64", "state": {"state": ..,
    // "inc": ..}, "has_uint32": .., "uinteger": ..}); throws std::invalid_argument.
    static Pcg64 from_state_json(const std::string& json);
    [[nodiscard]] std::string state_json() const;

    std::uint64_t next_uint64();
    std::uint32_t next_uint32();  // numpy's buffered half of a 64-bit draw
    double next_double();         // [0, 1), 53 bits

    // numpy's random_bounded_uint64(0, max) with Lemire's method: uniform in [0, max].
    std::uint64_t bounded(std::uint64_t max);
    // Generator.choice(range(n), n, replace=False): a uniform permutation of 0..n-1.
    std::vector<std::size_t> permutation(std::size_t n);
    double standard_normal();
    // Generator.normal(loc, scale); a scale of 0 returns loc after one draw, as numpy does.
    double normal(double loc, double scale);

    friend bool operator==(const Pcg64&, const Pcg64&) = default;

private:
    Uint128 state_ = 0;
    Uint128 inc_ = 0;
    bool has_uint32_ = false;
    std::uint32_t uinteger_ = 0;
};

}  // namespace zeus::bso
