#include "zeus/platform/utf8.hpp"

#include <fmt/format.h>

namespace zeus {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool continuation(unsigned char byte) { return (byte & 0xC0U) == 0x80U; }

// The length of the well-formed UTF-8 sequence at `at` (Unicode table 3-7),
// 0 when the byte there does not start one.
std::size_t sequence_length(std::string_view text, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80U) return 1;
    std::size_t length = 0;
    unsigned char second_min = 0x80U;
    unsigned char second_max = 0xBFU;
    if (lead >= 0xC2U && lead <= 0xDFU) {
        length = 2;
    } else if (lead >= 0xE0U && lead <= 0xEFU) {
        length = 3;
        if (lead == 0xE0U) second_min = 0xA0U;  // overlong
        if (lead == 0xEDU) second_max = 0x9FU;  // UTF-16 surrogates
    } else if (lead >= 0xF0U && lead <= 0xF4U) {
        length = 4;
        if (lead == 0xF0U) second_min = 0x90U;  // overlong
        if (lead == 0xF4U) second_max = 0x8FU;  // above U+10FFFF
    } else {
        return 0;
    }
    if (at + length > text.size()) return 0;
    if (byte(1) < second_min || byte(1) > second_max) return 0;
    for (std::size_t i = 2; i < length; ++i) {
        if (!continuation(byte(i))) return 0;
    }
    return length;
}

// A control character of the sequence at `at` (C0, DEL, or C1 as U+0080 to
// U+009F, which terminals act on as they do on ESC [ and the like).
bool control(std::string_view sequence) {
    const auto lead = static_cast<unsigned char>(sequence[0]);
    if (sequence.size() == 1) return lead < 0x20U || lead == 0x7FU;
    return sequence.size() == 2 && lead == 0xC2U && static_cast<unsigned char>(sequence[1]) < 0xA0U;
}

void append_escaped_control(std::string& out, std::string_view sequence) {
    switch (sequence[0]) {
        case '\n':
            out += "\\n";
            return;
        case '\t':
            out += "\\t";
            return;
        case '\r':
            out += "\\r";
            return;
        case '\x1b':
            out += "\\e";
            return;
        default:
            break;
    }
    // A C1 control is shown as its code point's byte, as in $'\x9b'.
    const auto value =
        sequence.size() == 1 ? static_cast<unsigned char>(sequence[0]) : static_cast<unsigned char>(sequence[1]);
    out += fmt::format("\\x{:02x}", value);
}

// The text with each well-formed sequence passed to `valid` and each byte
// that starts none to `invalid`, which append what they make of it.
template <class Valid, class Invalid>
std::string rewrite(std::string_view text, Valid valid, Invalid invalid) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t length = sequence_length(text, at);
        if (length == 0) {
            invalid(out, static_cast<unsigned char>(text[at]));
            ++at;
        } else {
            valid(out, text.substr(at, length));
            at += length;
        }
    }
    return out;
}

}  // namespace

std::size_t first_invalid_utf8(std::string_view text) {
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t length = sequence_length(text, at);
        if (length == 0) return at;
        at += length;
    }
    return std::string_view::npos;
}

std::string to_utf8(std::string_view text) {
    return rewrite(
        text, [](std::string& out, std::string_view sequence) { out += sequence; },
        [](std::string& out, unsigned char) { out += kReplacement; });
}

std::string terminal_safe(std::string_view text) {
    return rewrite(
        text,
        [](std::string& out, std::string_view sequence) {
            if (control(sequence)) {
                append_escaped_control(out, sequence);
            } else {
                out += sequence;
            }
        },
        [](std::string& out, unsigned char byte) { out += fmt::format("\\x{:02x}", byte); });
}

std::string terminal_safe_lines(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    while (!text.empty()) {
        const auto end = text.find('\n');
        out += terminal_safe(text.substr(0, end));
        if (end == std::string_view::npos) break;
        out += '\n';
        text.remove_prefix(end + 1);
    }
    return out;
}

std::string utf8_problem(std::string_view value) {
    const std::size_t at = first_invalid_utf8(value);
    if (at == std::string_view::npos) return {};
    return fmt::format("'{}' is not UTF-8 (byte 0x{:02x} at offset {})", terminal_safe(value),
                       static_cast<unsigned char>(value[at]), at);
}

Status require_utf8(std::string_view input, std::string_view value) {
    std::string problem = utf8_problem(value);
    if (problem.empty()) return {};
    return Error{ErrorCode::InvalidArgument, fmt::format("{} {}", input, problem), utf8_name_fix(input), 0};
}

std::string utf8_name_fix(std::string_view input) {
    return fmt::format(
        "give {} in UTF-8: it names something in JSON, Prometheus and the Pushgateway, which only take "
        "UTF-8",
        input);
}

}  // namespace zeus
