#include "zeusd/ledger_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeus/platform/read_user_file.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::zeusd {
namespace {

constexpr std::array<Setting, 4> kSettings = {Setting::PowerLimit, Setting::PersistenceMode,
                                              Setting::GpuLockedClocks, Setting::MemLockedClocks};

std::optional<Setting> setting_named(std::string_view name) {
    for (const auto setting : kSettings) {
        if (to_string(setting) == name) return setting;
    }
    return std::nullopt;
}

Error write_error(const std::filesystem::path& path, const char* step) {
    return Error{ErrorCode::OperatingSystem,
                 fmt::format("cannot {} the restore ledger {}: {}", step, path.string(), std::strerror(errno)),
                 "zeusd records GPU changes there before applying them; give it a writable --restore-ledger path"};
}

// Temporary file, fsync, rename over the old one, fsync the directory: a
// crash at any point leaves either the old ledger or the new one.
Status write_atomically(const std::filesystem::path& path, const std::string& text) {
    const auto temporary = path.string() + ".tmp";
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return write_error(temporary, "create");
    std::size_t written = 0;
    while (written < text.size()) {
        const auto n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const Error error = write_error(temporary, "write");
            ::close(fd);
            return error;
        }
        written += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) {
        const Error error = write_error(temporary, "sync");
        ::close(fd);
        return error;
    }
    ::close(fd);
    if (::rename(temporary.c_str(), path.c_str()) != 0) return write_error(path, "replace");
    const auto directory = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    if (const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
        ::fsync(dir_fd);
        ::close(dir_fd);
    }
    return {};
}

}  // namespace

std::string_view to_string(Setting setting) {
    switch (setting) {
        case Setting::PowerLimit: return "power_limit";
        case Setting::PersistenceMode: return "persistence_mode";
        case Setting::GpuLockedClocks: return "gpu_locked_clocks";
        case Setting::MemLockedClocks: return "mem_locked_clocks";
    }
    return "unknown";
}

LedgerFile::LedgerFile(std::filesystem::path path, std::vector<std::string> gpu_pci_addresses)
    : path_(std::move(path)), gpu_pci_addresses_(std::move(gpu_pci_addresses)) {}

namespace {

// One entry as written by save(); throws std::runtime_error naming the entry
// and the field whose type is wrong, so that the whole file is set aside.
struct LedgerEntry {
    std::string pci_address;
    std::string setting;
    std::optional<std::int64_t> previous;
    ClientId owner = 0;
};

LedgerEntry read_entry(const nlohmann::json& entry, std::size_t index) {
    const auto wrong = [&](std::string_view field, std::string_view expected) {
        return std::runtime_error(fmt::format("records[{}]{} is not {}", index,
                                              field.empty() ? std::string() : fmt::format(".{}", field), expected));
    };
    if (!entry.is_object()) throw wrong("", "an object");
    LedgerEntry read;
    const auto string = [&](const char* field) {
        const auto it = entry.find(field);
        if (it == entry.end() || !it->is_string()) throw wrong(field, "a string");
        return it->get<std::string>();
    };
    read.pci_address = string("pci_address");
    read.setting = string("setting");
    if (const auto it = entry.find("previous"); it != entry.end() && !it->is_null()) {
        if (!it->is_number_integer()) throw wrong("previous", "an integer");
        read.previous = it->get<std::int64_t>();
    }
    const auto owner = entry.find("owner_pid");
    if (owner == entry.end() || !owner->is_number_integer() || owner->get<std::int64_t>() < 0 ||
        owner->get<std::int64_t>() > std::numeric_limits<pid_t>::max())
        throw wrong("owner_pid", "a process id");
    read.owner = static_cast<ClientId>(owner->get<std::int64_t>());
    return read;
}

}  // namespace

LedgerFile::Leftovers LedgerFile::load() const {
    Leftovers leftovers;
    // A directory or FIFO at the path must not hang or abort start-up: it is
    // named, and there is nothing to restore from it.
    const auto text = read_user_file(path_.string(), {"restore ledger", "--restore-ledger"});
    if (!text) {
        if (text.error().code != ErrorCode::NotFound) leftovers.warnings.push_back(text.error().describe());
        return leftovers;
    }
    std::vector<LedgerEntry> entries;
    try {
        const auto document = nlohmann::json::parse(*text);
        if (!document.is_object() || !document.value("records", nlohmann::json()).is_array()) {
            throw std::runtime_error("no \"records\" list");
        }
        // Every entry is checked before any is used: a file that does not
        // validate is set aside whole, as one that does not parse is (a
        // type error thrown later aborted every start).
        for (const auto& entry : document["records"]) entries.push_back(read_entry(entry, entries.size()));
    } catch (const std::exception& failure) {
        const auto aside = path_.string() + ".corrupt";
        std::error_code ignored;
        std::filesystem::rename(path_, aside, ignored);
        leftovers.warnings.push_back(fmt::format(
            "the restore ledger {} is not valid ({}); moved it to {} and restored nothing from it. GPU settings a "
            "previous zeusd changed may still be in place: check them with nvidia-smi",
            path_.string(), failure.what(), aside));
        return leftovers;
    }
    for (const auto& entry : entries) {
        const auto setting = setting_named(entry.setting);
        std::optional<unsigned> gpu;
        for (unsigned id = 0; id < gpu_pci_addresses_.size(); ++id) {
            if (gpu_pci_addresses_[id] == entry.pci_address) gpu = id;
        }
        if (!setting || !gpu) {
            leftovers.warnings.push_back(fmt::format("cannot restore {} of the GPU at {} recorded in {}: {}",
                                                     entry.setting, entry.pci_address, path_.string(),
                                                     !setting ? "unknown setting" : "no such GPU now"));
            continue;
        }
        SettingRecord record;
        record.gpu = *gpu;
        record.setting = *setting;
        record.previous = entry.previous;
        record.owner = entry.owner;
        leftovers.records.push_back(record);
    }
    return leftovers;
}

Status LedgerFile::save(const ControlLedger& ledger) {
    const std::lock_guard lock(mutex_);
    const auto records = ledger.snapshot();
    if (records.empty()) {
        if (::unlink(path_.c_str()) != 0 && errno != ENOENT) return write_error(path_, "remove");
        return {};
    }
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& record : records) {
        nlohmann::json entry = {
            {"gpu", record.gpu},
            {"pci_address", record.gpu < gpu_pci_addresses_.size() ? gpu_pci_addresses_[record.gpu] : std::string()},
            {"setting", to_string(record.setting)},
            // A client of another PID namespace has no pid here (0: none).
            {"owner_pid", std::max<ClientId>(record.owner, 0)}};
        if (record.previous) entry["previous"] = *record.previous;
        entries.push_back(std::move(entry));
    }
    return write_atomically(
        path_, json_text(nlohmann::json{{"format", "zeusd restore ledger 1"}, {"records", entries}}, 2) + "\n");
}

}  // namespace zeus::zeusd
