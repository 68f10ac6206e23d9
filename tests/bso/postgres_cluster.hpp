// A private PostgreSQL server for tests: initdb in a temporary directory,
// pg_ctl start on a free loopback port (as `nobody` via runuser when run as
// root, since PostgreSQL refuses root), stopped and removed at the end.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace zeus::bso::testing {

inline std::optional<std::filesystem::path> postgres_bin_dir() {
    const std::filesystem::path root = "/usr/lib/postgresql";
    if (!std::filesystem::exists(root)) return std::nullopt;
    std::optional<std::filesystem::path> best;
    for (const auto& entry : std::filesystem::directory_iterator(root)) {
        auto bin = entry.path() / "bin";
        if (std::filesystem::exists(bin / "pg_ctl") && (!best || bin > *best)) best = bin;
    }
    return best;
}

inline int free_loopback_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

class PostgresCluster {
public:
    // Empty uri() when PostgreSQL is not installed or does not start; error() says why.
    PostgresCluster() {
        const auto bin = postgres_bin_dir();
        if (!bin) {
            error_ = "PostgreSQL server binaries not found under /usr/lib/postgresql (scripts/setup.sh installs postgresql)";
            return;
        }
        char pattern[] = "/tmp/zeus-bso-pg-XXXXXX";
        if (!::mkdtemp(pattern)) {
            error_ = "mkdtemp failed";
            return;
        }
        dir_ = pattern;
        const std::string as_user = ::geteuid() == 0 ? "runuser -u nobody -- " : "";
        if (::geteuid() == 0) run("chown nobody " + dir_.string());
        port_ = free_loopback_port();
        const std::string data = (dir_ / "data").string();
        if (!run(as_user + (*bin / "initdb").string() + " -D " + data + " -A trust -U bso --no-sync -E UTF8 >" +
                 (dir_ / "initdb.log").string() + " 2>&1")) {
            error_ = "initdb failed; see " + (dir_ / "initdb.log").string();
            return;
        }
        psql_ = (*bin / "psql").string();
        pg_ctl_ = as_user + (*bin / "pg_ctl").string() + " -D " + data;
        if (!run(pg_ctl_ + " -w -t 60 -l " + (dir_ / "server.log").string() + " -o \"-p " + std::to_string(port_) +
                 " -k " + dir_.string() + " -c listen_addresses=127.0.0.1 -c fsync=off\" start >/dev/null 2>&1")) {
            error_ = "pg_ctl start failed; see " + (dir_ / "server.log").string();
            return;
        }
        started_ = true;
        uri_ = "postgresql://bso@127.0.0.1:" + std::to_string(port_) + "/postgres";
    }
    ~PostgresCluster() {
        if (started_) run(pg_ctl_ + " -m immediate stop >/dev/null 2>&1");
        if (!dir_.empty() && error_.empty()) std::filesystem::remove_all(dir_);
    }
    PostgresCluster(const PostgresCluster&) = delete;
    PostgresCluster& operator=(const PostgresCluster&) = delete;

    [[nodiscard]] const std::string& uri() const { return uri_; }
    [[nodiscard]] const std::string& error() const { return error_; }
    // A fresh database on this server, for one test.
    std::string new_database(const std::string& name) {
        run(psql_ + " -q -h 127.0.0.1 -p " + std::to_string(port_) + " -U bso -d postgres -c 'CREATE DATABASE " + name +
            "' >/dev/null 2>&1");
        return "postgresql://bso@127.0.0.1:" + std::to_string(port_) + "/" + name;
    }

    // pg_ctl restart (fast shutdown: every client's connection is cut).
    bool restart() {
        return run(pg_ctl_ + " -w -t 60 -m fast -l " + (dir_ / "server.log").string() + " restart >/dev/null 2>&1");
    }
    // Ends every other backend connected to `database`, as an operator's pg_terminate_backend does.
    bool terminate_backends(const std::string& database) {
        return run(psql_ + " -q -h 127.0.0.1 -p " + std::to_string(port_) +
                   " -U bso -d postgres -c \"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
                   database + "' AND pid <> pg_backend_pid()\" >/dev/null 2>&1");
    }
    // Runs one SQL statement on `database` with psql; true when it succeeded.
    bool sql(const std::string& database, const std::string& statement) {
        return run(psql_ + " -q -h 127.0.0.1 -p " + std::to_string(port_) + " -U bso -d " + database + " -c \"" +
                   statement + "\" >/dev/null 2>&1");
    }

private:
    static bool run(const std::string& command) { return std::system(command.c_str()) == 0; }

    std::filesystem::path dir_;
    std::string pg_ctl_;
    std::string psql_;
    std::string uri_;
    std::string error_;
    int port_ = 0;
    bool started_ = false;
};

// The test process's one server, started on first use.
inline PostgresCluster& cluster() {
    static PostgresCluster instance;
    return instance;
}

}  // namespace zeus::bso::testing
