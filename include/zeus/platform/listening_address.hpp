// What a server prints as the TCP address it listens on. One function for
// every server (zeusd's log line and the CLI servers' "listening on"), so
// that a test or a script that starts one on port 0 reads the same form.
#pragma once

#include <string>
#include <string_view>

namespace zeus {

// "HOST:PORT" for a server that was asked to listen on `requested` (IP:PORT,
// as --listen and --tcp-bind-address take it) and bound `bound_port`: with
// port 0 the kernel chose the port, and the address printed must be one a
// client can connect to. An IPv6 host is in brackets ("[::1]:PORT") whether
// or not `requested` had them, so the port stays unambiguous.
[[nodiscard]] std::string listening_address(std::string_view requested, unsigned short bound_port);

}  // namespace zeus
