// Helpers shared by the auth tests: temporary files and an HMAC computed by
// the `openssl` command-line tool, independent of the code under test.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "zeusd/auth/base64url.hpp"

namespace zeus::zeusd::testing {

// A fresh directory under the test's temp dir, removed with the object.
class TempDir {
  public:
    TempDir() {
        std::string pattern = ::testing::TempDir() + "zeusd-auth-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
        std::filesystem::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] std::string file(std::string_view name, std::string_view contents) const {
        const auto path = path_ / name;
        std::ofstream(path, std::ios::binary) << contents;
        // Owner-only, as a signing key must be.
        std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
        return path.string();
    }
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

// stdout of a shell command, or nullopt when it exits non-zero.
inline std::optional<std::string> run_shell(const std::string& command) {
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return std::nullopt;
    std::string out;
    std::array<char, 4096> buffer{};
    std::size_t got = 0;
    while ((got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), got);
    return ::pclose(pipe) == 0 ? std::optional(out) : std::nullopt;
}

inline bool have_openssl_cli() { return run_shell("openssl version >/dev/null 2>&1").has_value(); }

inline std::string to_hex(std::string_view bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string hex;
    for (const char c : bytes) {
        const auto byte = static_cast<unsigned char>(c);
        hex += kDigits[byte >> 4];
        hex += kDigits[byte & 15];
    }
    return hex;
}

// HMAC-SHA256 of `data` under `key` by `openssl dgst`, base64url-encoded: the
// JWS signature an independent implementation computes. The key goes in as
// hex so that any bytes (NUL included) survive the command line.
inline std::string openssl_cli_signature(std::string_view key, std::string_view data) {
    const TempDir dir;
    const auto input = dir.file("signing-input", data);
    const auto mac = run_shell("openssl dgst -sha256 -mac HMAC -macopt hexkey:" + to_hex(key) + " -binary '" +
                               input + "'");
    if (!mac) throw std::runtime_error("openssl dgst failed");
    return base64url_encode(*mac);
}

// A JWT with any header and payload text, signed by the openssl CLI.
inline std::string cli_signed_token(std::string_view header_json, std::string_view payload_json,
                                    std::string_view key) {
    const std::string signing_input = base64url_encode(header_json) + "." + base64url_encode(payload_json);
    return signing_input + "." + openssl_cli_signature(key, signing_input);
}

}  // namespace zeus::zeusd::testing
