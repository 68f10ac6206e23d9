#include "zeus/platform/listening_address.hpp"

#include <fmt/format.h>

namespace zeus {

std::string listening_address(std::string_view requested, unsigned short bound_port) {
    // The port is after the last colon, as the server's listen_tcp reads it.
    const auto colon = requested.rfind(':');
    const std::string_view host = colon == std::string_view::npos ? requested : requested.substr(0, colon);
    const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
    if (!bracketed && host.find(':') != std::string_view::npos) return fmt::format("[{}]:{}", host, bound_port);
    return fmt::format("{}:{}", host, bound_port);
}

}  // namespace zeus
