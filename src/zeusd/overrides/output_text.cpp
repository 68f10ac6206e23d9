#include "zeusd/overrides/output_text.hpp"

namespace zeus::zeusd {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Length of the valid UTF-8 sequence at the start of `bytes`, or 0.
std::size_t valid_sequence_length(std::string_view bytes) {
    const auto lead = static_cast<unsigned char>(bytes[0]);
    std::size_t length = 0;
    unsigned min_second = 0x80;
    unsigned max_second = 0xBF;
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) min_second = 0xA0;  // overlong
        if (lead == 0xED) max_second = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) min_second = 0x90;  // overlong
        if (lead == 0xF4) max_second = 0x8F;  // beyond U+10FFFF
    } else {
        return 0;
    }
    if (bytes.size() < length) return 0;
    const auto second = static_cast<unsigned char>(bytes[1]);
    if (second < min_second || second > max_second) return 0;
    for (std::size_t i = 2; i < length; ++i) {
        if (!is_continuation(static_cast<unsigned char>(bytes[i]))) return 0;
    }
    return length;
}

}  // namespace

std::string to_valid_utf8(std::string_view bytes) {
    std::string text;
    text.reserve(bytes.size());
    while (!bytes.empty()) {
        const auto length = valid_sequence_length(bytes);
        if (length == 0) {
            text += kReplacement;
            bytes.remove_prefix(1);
        } else {
            text.append(bytes.substr(0, length));
            bytes.remove_prefix(length);
        }
    }
    return text;
}

std::string output_tail(std::string_view output, std::size_t max_bytes) {
    while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.remove_suffix(1);
    if (output.empty()) return "<empty>";
    if (output.size() <= max_bytes) return to_valid_utf8(output);
    output.remove_prefix(output.size() - max_bytes);
    // Do not start in the middle of a character.
    while (!output.empty() && is_continuation(static_cast<unsigned char>(output.front()))) output.remove_prefix(1);
    return "..." + to_valid_utf8(output);
}

}  // namespace zeus::zeusd
