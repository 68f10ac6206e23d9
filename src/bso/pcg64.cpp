// numpy's PCG64 and Generator draws, followed step for step (numpy 1.17+;
// numpy/random/_pcg64.pyx, bit_generator.pyx SeedSequence,
// src/distributions/distributions.c). Parity is checked against numpy itself
// in tests/bso/numpy_parity_test.py.
#include "zeus/bso/pcg64.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <unordered_set>

namespace zeus::bso {
namespace {

using u128 = Uint128;

constexpr u128 kMultiplier = (u128{0x2360ED051FC65DA4ULL} << 64) | u128{0x4385DF649FCCF645ULL};

// numpy.random.SeedSequence(seed).generate_state(4, uint64) for a
// non-negative integer seed without spawn key.
std::array<std::uint64_t, 4> seed_sequence_state(std::uint64_t seed) {
    constexpr std::uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875, kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
    constexpr std::uint32_t kMixL = 0xca01f9dd, kMixR = 0x4973f715;
    std::vector<std::uint32_t> entropy{static_cast<std::uint32_t>(seed)};
    if (seed >> 32) entropy.push_back(static_cast<std::uint32_t>(seed >> 32));
    std::uint32_t hash_const = kInitA;
    auto hashmix = [&](std::uint32_t value) {
        value ^= hash_const;
        hash_const *= kMultA;
        value *= hash_const;
        value ^= value >> 16;
        return value;
    };
    auto mix = [](std::uint32_t x, std::uint32_t y) {
        std::uint32_t result = kMixL * x - kMixR * y;
        return result ^ (result >> 16);
    };
    std::array<std::uint32_t, 4> pool{};
    for (std::size_t i = 0; i < pool.size(); ++i) pool[i] = hashmix(i < entropy.size() ? entropy[i] : 0);
    for (std::size_t src = 0; src < pool.size(); ++src)
        for (std::size_t dst = 0; dst < pool.size(); ++dst)
            if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
    // Entropy words beyond the pool size (none for 64-bit seeds) would mix in here.
    std::array<std::uint32_t, 8> words{};
    std::uint32_t hash_b = kInitB;
    for (std::size_t i = 0; i < words.size(); ++i) {
        std::uint32_t value = pool[i % pool.size()];
        value ^= hash_b;
        hash_b *= kMultB;
        value *= hash_b;
        value ^= value >> 16;
        words[i] = value;
    }
    std::array<std::uint64_t, 4> out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = words[2 * i] | (std::uint64_t{words[2 * i + 1]} << 32);
    return out;
}

std::string u128_to_decimal(u128 value) {
    if (value == 0) return "0";
    std::string digits;
    while (value != 0) {
        digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(value % 10)));
        value /= 10;
    }
    return digits;
}

u128 decimal_to_u128(const std::string& text) {
    if (text.empty()) throw std::invalid_argument("PCG64 state: empty integer");
    u128 value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') throw std::invalid_argument("PCG64 state: '" + text + "' is not a non-negative integer");
        u128 next = value * 10 + static_cast<unsigned>(c - '0');
        if (next / 10 != value) throw std::invalid_argument("PCG64 state: '" + text + "' does not fit in 128 bits");
        value = next;
    }
    return value;
}

// Python's json.dumps writes the 128-bit integers as bare numbers, which a
// double cannot hold: they are read from the raw text instead.
u128 integer_field(const std::string& json, const std::string& key, std::size_t from = 0) {
    const std::string quoted = "\"" + key + "\"";
    auto at = json.find(quoted, from);
    if (at == std::string::npos) throw std::invalid_argument("PCG64 state: no \"" + key + "\"");
    at = json.find(':', at + quoted.size());
    if (at == std::string::npos) throw std::invalid_argument("PCG64 state: no value for \"" + key + "\"");
    ++at;
    while (at < json.size() && (json[at] == ' ' || json[at] == '\n' || json[at] == '\t')) ++at;
    auto end = at;
    while (end < json.size() && json[end] >= '0' && json[end] <= '9') ++end;
    return decimal_to_u128(json.substr(at, end - at));
}

// Ziggurat tables for 256 layers (Marsaglia & Tsang's construction with
// numpy's r and area), computed once.
struct ZigguratTables {
    static constexpr double kR = 3.6541528853610088;
    static constexpr double kInvR = 0.27366123732975828;
    std::array<std::uint64_t, 256> k{};
    std::array<double, 256> w{};
    std::array<double, 256> f{};
    ZigguratTables() {
        // Computed rather than copied; they match numpy.s
        // shipped tables to about 1 ulp (docs/batch-size-optimizer.md).
        constexpr double m = 4503599627370496.0;  // 2^52
        const double r = 3.6541528853610087963519472518;
        const double area = 4.92867323397465524494e-3;
        double dn = r;
        double tn = dn;
        const double q = area / std::exp(-0.5 * dn * dn);
        k[0] = static_cast<std::uint64_t>((dn / q) * m);
        k[1] = 0;
        w[0] = static_cast<double>(q / m);
        w[255] = static_cast<double>(dn / m);
        f[0] = 1.0;
        f[255] = static_cast<double>(std::exp(-0.5 * dn * dn));
        for (int i = 254; i >= 1; --i) {
            dn = std::sqrt(-2.0 * std::log(area / dn + std::exp(-0.5 * dn * dn)));
            k[static_cast<std::size_t>(i) + 1] = static_cast<std::uint64_t>((dn / tn) * m);
            tn = dn;
            f[static_cast<std::size_t>(i)] = static_cast<double>(std::exp(-0.5 * dn * dn));
            w[static_cast<std::size_t>(i)] = static_cast<double>(dn / m);
        }
    }
};

const ZigguratTables& ziggurat() {
    static const ZigguratTables tables;
    return tables;
}

}  // namespace

Pcg64 Pcg64::from_seed(std::uint64_t seed) {
    const auto words = seed_sequence_state(seed);
    const u128 initstate = (u128{words[0]} << 64) | words[1];
    const u128 initseq = (u128{words[2]} << 64) | words[3];
    Pcg64 rng;
    rng.inc_ = (initseq << 1) | 1;
    rng.state_ = rng.state_ * kMultiplier + rng.inc_;
    rng.state_ += initstate;
    rng.state_ = rng.state_ * kMultiplier + rng.inc_;
    return rng;
}

Pcg64 Pcg64::from_state_json(const std::string& json) {
    nlohmann::json parsed;
    try {
        parsed = nlohmann::json::parse(json);
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("PCG64 state is not JSON: ") + e.what());
    }
    if (!parsed.is_object() || parsed.value("bit_generator", "") != "PCG64")
        throw std::invalid_argument("PCG64 state: \"bit_generator\" is not \"PCG64\"");
    Pcg64 rng;
    // The inner "state" (the LCG's) follows the outer "state" key.
    const auto outer = json.find("\"state\"");
    rng.state_ = integer_field(json, "state", outer + 1);
    rng.inc_ = integer_field(json, "inc");
    rng.has_uint32_ = integer_field(json, "has_uint32") != 0;
    rng.uinteger_ = static_cast<std::uint32_t>(integer_field(json, "uinteger"));
    return rng;
}

std::string Pcg64::state_json() const {
    // The exact text json.dumps(rng.__getstate__()) writes (numpy 2.x).
    return "{\"bit_generator\": \"PCG64\", \"state\": {\"state\": " + u128_to_decimal(state_) +
           ", \"inc\": " + u128_to_decimal(inc_) + "}, \"has_uint32\": " + (has_uint32_ ? "1" : "0") +
           ", \"uinteger\": " + std::to_string(uinteger_) + "}";
}

std::uint64_t Pcg64::next_uint64() {
    state_ = state_ * kMultiplier + inc_;
    const auto rot = static_cast<int>(state_ >> 122);
    const auto x = static_cast<std::uint64_t>(state_ >> 64) ^ static_cast<std::uint64_t>(state_);
    return std::rotr(x, rot);
}

std::uint32_t Pcg64::next_uint32() {
    if (has_uint32_) {
        has_uint32_ = false;
        return uinteger_;
    }
    const auto next = next_uint64();
    has_uint32_ = true;
    uinteger_ = static_cast<std::uint32_t>(next >> 32);
    return static_cast<std::uint32_t>(next & 0xffffffffULL);
}

double Pcg64::next_double() { return static_cast<double>(next_uint64() >> 11) * (1.0 / 9007199254740992.0); }

std::uint64_t Pcg64::bounded(std::uint64_t max) {
    if (max == 0) return 0;
    if (max <= 0xffffffffULL) {
        if (max == 0xffffffffULL) return next_uint32();
        const auto range = static_cast<std::uint32_t>(max) + 1U;
        std::uint64_t m = std::uint64_t{next_uint32()} * range;
        auto leftover = static_cast<std::uint32_t>(m);
        if (leftover < range) {
            const std::uint32_t threshold = (0xffffffffU - static_cast<std::uint32_t>(max)) % range;
            while (leftover < threshold) {
                m = std::uint64_t{next_uint32()} * range;
                leftover = static_cast<std::uint32_t>(m);
            }
        }
        return m >> 32;
    }
    if (max == ~std::uint64_t{0}) return next_uint64();
    const std::uint64_t range = max + 1;
    u128 m = u128{next_uint64()} * range;
    auto leftover = static_cast<std::uint64_t>(m);
    if (leftover < range) {
        const std::uint64_t threshold = (~std::uint64_t{0} - max) % range;
        while (leftover < threshold) {
            m = u128{next_uint64()} * range;
            leftover = static_cast<std::uint64_t>(m);
        }
    }
    return static_cast<std::uint64_t>(m >> 64);
}

std::vector<std::size_t> Pcg64::permutation(std::size_t n) {
    // Generator.choice(a, n, replace=False) with shuffle=True: Floyd's
    // sampling of n of n (the tail-shuffle branch is taken only above 10,000
    // items), then a Fisher-Yates shuffle of the sample.
    std::vector<std::size_t> sample(n);
    std::unordered_set<std::size_t> seen;
    for (std::size_t j = 0; j < n; ++j) {
        const auto value = static_cast<std::size_t>(bounded(j));
        const std::size_t pick = seen.contains(value) ? j : value;
        seen.insert(pick);
        sample[j] = pick;
    }
    for (std::size_t i = n; i-- > 1;) std::swap(sample[i], sample[static_cast<std::size_t>(bounded(i))]);
    return sample;
}

double Pcg64::standard_normal() {
    const auto& t = ziggurat();
    for (;;) {
        std::uint64_t r = next_uint64();
        const auto idx = static_cast<std::size_t>(r & 0xff);
        r >>= 8;
        const bool negative = (r & 0x1) != 0;
        const std::uint64_t rabs = (r >> 1) & 0x000fffffffffffffULL;
        double x = static_cast<double>(rabs) * t.w[idx];
        if (negative) x = -x;
        if (rabs < t.k[idx]) return x;
        if (idx == 0) {
            for (;;) {
                const double xx = -ZigguratTables::kInvR * std::log1p(-next_double());
                const double yy = -std::log1p(-next_double());
                if (yy + yy > xx * xx)
                    return ((rabs >> 8) & 0x1) ? -(ZigguratTables::kR + xx) : ZigguratTables::kR + xx;
            }
        }
        if ((t.f[idx - 1] - t.f[idx]) * next_double() + t.f[idx] < std::exp(-0.5 * x * x)) return x;
    }
}

double Pcg64::normal(double loc, double scale) { return loc + scale * standard_normal(); }

}  // namespace zeus::bso
