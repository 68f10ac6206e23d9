#include "test_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace zeus::zeusd::testing {

TempDir::TempDir() {
    std::string pattern = "/tmp/zeusd-overrides-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

void write_file(const std::string& path, const std::string& contents, mode_t mode) {
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << contents;
        if (!out) throw std::runtime_error("cannot write " + path);
    }
    if (::chmod(path.c_str(), mode) != 0) throw std::runtime_error("cannot chmod " + path);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

bool file_exists(const std::string& path) { return std::filesystem::exists(path); }

std::string write_script(const TempDir& dir, const std::string& name, const std::string& body) {
    const auto path = dir.file(name);
    write_file(path, "#!/bin/sh\n" + body + "\n", 0755);
    return path;
}

Result<CommandOverrides> load_text(const TempDir& dir, const std::string& toml) {
    const auto path = dir.file("overrides.toml");
    write_file(path, toml);
    return CommandOverrides::load(path, ::geteuid());
}

bool process_gone(pid_t pid) {
    const auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    if (stat.empty()) return true;
    // "pid (comm) S ...": the state follows the last ')'.
    const auto paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

}  // namespace zeus::zeusd::testing
