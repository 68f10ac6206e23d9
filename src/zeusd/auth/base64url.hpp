// Base64url without padding (RFC 4648 §5), the encoding of every JWT part
// (RFC 7515 §2). Decoding is strict, like the Rust `base64` crate's
// URL_SAFE_NO_PAD engine that the original daemon's jsonwebtoken uses: no
// padding, no standard-alphabet '+' '/', no whitespace, and the unused low bits
// of the last symbol must be zero, so every byte string has exactly one text.
#pragma once

#include <string>
#include <string_view>

#include "zeus/platform/error.hpp"

namespace zeus::zeusd {

[[nodiscard]] std::string base64url_encode(std::string_view bytes);

// The error message reads like the `base64` crate's ("Invalid symbol 61,
// offset 3."), because it ends up in a 401 body after "Base64 error: ".
[[nodiscard]] Result<std::string> base64url_decode(std::string_view text);

}  // namespace zeus::zeusd
