// libzeus's side of zeus/platform/user_file.hpp: a user's file as text, or an
// Error that names the input, the path, which problem it has and the fix.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "zeus/platform/user_file.hpp"
#include "zeus/platform/error.hpp"

namespace zeus {

// What a file is for, in the user's words: what = "power-limit profile",
// flag = "--profile" (or an environment variable's name).
struct UserInput {
    std::string_view what;
    std::string_view flag;
    std::uintmax_t max_bytes = kUserFileMaxBytes;
};

// "cannot use the power-limit profile 'x': it is a directory, not a file"
// with a fix that names the flag.
[[nodiscard]] Error user_file_error(const std::string& path, const UserInput& input, UserFileProblem problem,
                                    const std::string& detail);

// The whole file as text, without the UTF-8 byte-order mark a Windows editor
// or Excel puts first (JSON parsers refuse one), or user_file_error().
[[nodiscard]] Result<std::string> read_user_file(const std::string& path, const UserInput& input);

}  // namespace zeus
