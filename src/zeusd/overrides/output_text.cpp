#include "zeusd/overrides/output_text.hpp"

#include "zeus/platform/utf8.hpp"

namespace zeus::zeusd {
namespace {

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

std::string output_tail(std::string_view output, std::size_t max_bytes) {
    while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.remove_suffix(1);
    if (output.empty()) return "<empty>";
    if (output.size() <= max_bytes) return to_utf8(output);
    output.remove_prefix(output.size() - max_bytes);
    // Do not start in the middle of a character.
    while (!output.empty() && is_continuation(static_cast<unsigned char>(output.front()))) output.remove_prefix(1);
    return "..." + to_utf8(output);
}

}  // namespace zeus::zeusd
