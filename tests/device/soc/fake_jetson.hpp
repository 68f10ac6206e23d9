// A fake Jetson sysfs tree in a temporary folder, laid out as the kernel does:
// device entries in the driver folder are links into /sys/devices, and each
// device links back to its driver (a cycle discovery must not follow).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "zeus/device/soc.hpp"

namespace zeus::test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class FakeJetson {
  public:
    FakeJetson() {
        std::string tmpl = (fs::temp_directory_path() / "zeus-soc-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        root_ = tmpl;
    }
    ~FakeJetson() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    FakeJetson(const FakeJetson&) = delete;
    FakeJetson& operator=(const FakeJetson&) = delete;

    [[nodiscard]] const fs::path& root() const { return root_; }
    [[nodiscard]] fs::path sys() const { return root_ / "sys"; }

    // Writes through a temporary file and a rename, as atomically as sysfs
    // regenerates a value: a sampler sees the old content or the new, never half.
    static void write(const fs::path& path, std::string_view content) {
        fs::create_directories(path.parent_path());
        const fs::path tmp = path.string() + ".tmp";
        {
            std::ofstream out(tmp, std::ios::trunc);
            out << content;
        }
        fs::rename(tmp, path);
    }

    // <sys>/bus/i2c/drivers/<driver>/<device> -> <sys>/devices/platform/<device>.
    fs::path device(std::string_view driver, std::string_view name) {
        const fs::path real = sys() / "devices/platform" / name;
        const fs::path driver_dir = sys() / "bus/i2c/drivers" / driver;
        fs::create_directories(real);
        fs::create_directories(driver_dir);
        if (!fs::exists(driver_dir / name)) fs::create_directory_symlink(real, driver_dir / name);
        if (!fs::exists(real / "driver")) fs::create_directory_symlink(driver_dir, real / "driver");
        write(driver_dir / "uevent", "");
        return real;
    }
    // L4T 34+: <device>/hwmon/hwmon<n>/in<i>_label, in<i>_input (mV), curr<i>_input (mA).
    fs::path hwmon(std::string_view device_name, int n = 3) {
        const fs::path dir = device("ina3221", device_name) / "hwmon" / ("hwmon" + std::to_string(n));
        fs::create_directories(dir);
        return dir;
    }
    // L4T 32: <device>/iio:device<n>/rail_name_<i>, in_power<i>_input (mW) ...
    fs::path iio(std::string_view device_name, int n = 0) {
        const fs::path dir = device("ina3221x", device_name) / ("iio:device" + std::to_string(n));
        fs::create_directories(dir);
        return dir;
    }

    static void hwmon_rail(const fs::path& dir, int ch, std::string_view label, long mv, long ma) {
        write(dir / ("in" + std::to_string(ch) + "_label"), std::string(label) + "\n");
        write(dir / ("in" + std::to_string(ch) + "_input"), std::to_string(mv) + "\n");
        write(dir / ("curr" + std::to_string(ch) + "_input"), std::to_string(ma) + "\n");
    }
    static void iio_rail_power(const fs::path& dir, int ch, std::string_view name, long mw) {
        write(dir / ("rail_name_" + std::to_string(ch)), std::string(name) + "\n");
        write(dir / ("in_power" + std::to_string(ch) + "_input"), std::to_string(mw) + "\n");
    }
    static void iio_rail_vi(const fs::path& dir, int ch, std::string_view name, long mv, long ma) {
        write(dir / ("rail_name_" + std::to_string(ch)), std::string(name) + "\n");
        write(dir / ("in_voltage" + std::to_string(ch) + "_input"), std::to_string(mv) + "\n");
        write(dir / ("in_current" + std::to_string(ch) + "_input"), std::to_string(ma) + "\n");
    }

    [[nodiscard]] SocOptions options(std::chrono::milliseconds period = std::chrono::milliseconds(5)) const {
        SocOptions o;
        o.sysfs_root = sys().string();
        o.sample_period = period;
        return o;
    }

  private:
    fs::path root_;
};

inline std::unique_ptr<Soc> open_fake(const FakeJetson& fake,
                                      std::chrono::milliseconds period = std::chrono::milliseconds(5)) {
    auto soc = open_soc(fake.options(period));
    if (!soc) throw std::runtime_error(soc.error().describe());
    return std::move(soc).value();
}

// A copy: rails() returns a snapshot that the caller often does not keep.
inline std::optional<SocRail> find_rail(const std::vector<SocRail>& rails, std::string_view name) {
    for (const auto& r : rails) {
        if (r.name == name) return r;
    }
    return std::nullopt;
}

inline double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace zeus::test
