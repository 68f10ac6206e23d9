#include "zeusd/auth/base64url.hpp"

#include <array>
#include <cstdint>

#include <fmt/format.h>

namespace zeus::zeusd {
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::uint8_t kInvalid = 0xFF;

constexpr std::array<std::uint8_t, 256> make_decode_table() {
    std::array<std::uint8_t, 256> table{};
    table.fill(kInvalid);
    for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
        table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::uint8_t>(i);
    }
    return table;
}

constexpr auto kDecode = make_decode_table();

Error decode_error(std::string message) {
    return Error{ErrorCode::InvalidArgument, std::move(message),
                 "JWT parts are base64url without padding (RFC 7515); copy the token whole, as issued"};
}

}  // namespace

std::string base64url_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() * 4 + 2) / 3);
    std::size_t i = 0;
    const auto byte = [&](std::size_t at) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at])); };
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t group = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
        out += kAlphabet[(group >> 18) & 63];
        out += kAlphabet[(group >> 12) & 63];
        out += kAlphabet[(group >> 6) & 63];
        out += kAlphabet[group & 63];
    }
    const std::size_t rest = bytes.size() - i;
    if (rest == 1) {
        const std::uint32_t group = byte(i) << 16;
        out += kAlphabet[(group >> 18) & 63];
        out += kAlphabet[(group >> 12) & 63];
    } else if (rest == 2) {
        const std::uint32_t group = (byte(i) << 16) | (byte(i + 1) << 8);
        out += kAlphabet[(group >> 18) & 63];
        out += kAlphabet[(group >> 12) & 63];
        out += kAlphabet[(group >> 6) & 63];
    }
    return out;
}

Result<std::string> base64url_decode(std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '=') return decode_error("Invalid padding");
        if (kDecode[c] == kInvalid) return decode_error(fmt::format("Invalid symbol {}, offset {}.", c, i));
    }
    // One symbol carries 6 bits, less than a byte: no encoder produces it.
    if (text.size() % 4 == 1) return decode_error("Invalid input length.");

    std::string out;
    out.reserve(text.size() * 3 / 4);
    std::uint32_t buffer = 0;
    int bits = 0;
    for (const char c : text) {
        buffer = (buffer << 6) | kDecode[static_cast<unsigned char>(c)];
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((buffer >> bits) & 0xFF);
        }
    }
    // Leftover bits of the last symbol must be zero (canonical encoding).
    if (bits > 0 && (buffer & ((1U << bits) - 1)) != 0) {
        const std::size_t last = text.size() - 1;
        return decode_error(fmt::format("Invalid last symbol {}, offset {}.",
                                        static_cast<unsigned char>(text[last]), last));
    }
    return out;
}

}  // namespace zeus::zeusd
