#!/usr/bin/python3
"""A small stand-in for zeusd, for testing the client before the real daemon exists.

It answers the original daemon's routes with its JSON shapes, status codes and
error bodies (zeus-inventory §5.2-§5.3), over a Unix socket or TCP, and appends
every request it receives (method, path, raw query, parsed query, headers) as
one JSON line to a log file, so tests can assert the exact requests a client
sends. Python standard library only.

Usage: fake_zeusd.py --config CONFIG.json --log LOG.jsonl --ready READY
                     (--unix PATH | --tcp)
READY is written once the socket listens: "unix" or the TCP port.
"""
import argparse
import http.server
import json
import os
import socketserver
import sys
import threading
import time
import urllib.parse

CONTROL_ROUTES = {
    "/gpu/set_power_limit": ["power_limit_mw", "block"],
    "/gpu/set_persistence_mode": ["enabled", "block"],
    "/gpu/set_gpu_locked_clocks": ["min_clock_mhz", "max_clock_mhz", "block"],
    "/gpu/reset_gpu_locked_clocks": ["block"],
    "/gpu/set_mem_locked_clocks": ["min_clock_mhz", "max_clock_mhz", "block"],
    "/gpu/reset_mem_locked_clocks": ["block"],
    "/gpu/reset_locked_clocks": ["block"],
}
GPU_READS = {"/gpu/get_cumulative_energy", "/gpu/get_power", "/gpu/get_power_limit",
             "/gpu/get_power_limit_constraints", "/gpu/get_persistence_mode"}


class BadRequest(Exception):
    """A 400 with a plain-text body (actix's extractor errors) or a JSON one."""

    def __init__(self, body, json_body=False):
        super().__init__(body)
        self.body = body
        self.json_body = json_body


def group_of(path):
    if path.startswith("/gpu/set_") or path.startswith("/gpu/reset_"):
        return "gpu-control"
    if path.startswith("/gpu/"):
        return "gpu-read"
    if path.startswith("/cpu/"):
        return "cpu-read"
    return None


def parse_bool(params, name):
    if name not in params:
        raise BadRequest(f"Query deserialize error: missing field `{name}`")
    value = params[name]
    if value not in ("true", "false"):
        raise BadRequest(f"Query deserialize error: provided string was not `true` or `false`")
    return value == "true"


def parse_uint(params, name):
    if name not in params:
        raise BadRequest(f"Query deserialize error: missing field `{name}`")
    value = params[name]
    if not value.isdigit() or int(value) > 0xFFFFFFFF:
        raise BadRequest(f"Query deserialize error: invalid digit found in string")
    return int(value)


def parse_ids(params, name, kind, required):
    if name not in params:
        if required:
            raise BadRequest(f"Query deserialize error: missing field `{name}`")
        return None
    raw = params[name]
    if raw.strip() == "":
        raise BadRequest(json.dumps({"error": f"{name} must contain at least one {kind} index"}), True)
    ids = set()
    for part in raw.split(","):
        part = part.strip()
        if part == "":
            raise BadRequest(json.dumps({"error": f"{name} contains an empty {kind} index"}), True)
        if not part.isdigit():
            raise BadRequest(json.dumps({"error": f"Invalid {kind} index: {part}"}), True)
        ids.add(int(part))
    return sorted(ids)


class State:
    def __init__(self, config, log_path):
        self.config = config
        self.log_path = log_path
        self.lock = threading.Lock()
        gpus = config.get("gpus", [])
        self.power_limit = {g["id"]: config.get("power_limit_mw", 200000) for g in gpus}
        self.persistence = {g["id"]: True for g in gpus}
        self.gpu_energy = {g["id"]: 1000 * (g["id"] + 1) for g in gpus}
        self.cpu_energy = {c["id"]: dict(config.get("cpu_start_uj", {"cpu": 1000000, "dram": 500000}))
                           for c in config.get("cpus", [])}
        self.cpu_reads = 0

    def record(self, entry):
        with self.lock, open(self.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as zeusd
    server_version = "fake-zeusd"

    connections = 0

    def setup(self):
        super().setup()
        # One handler per accepted connection: its number shows keep-alive reuse.
        with self.server.state.lock:
            Handler.connections += 1
            self.connection_number = Handler.connections

    def log_message(self, format, *args):  # noqa: A002 - quiet; the JSON log is what tests read
        pass

    def address_string(self):
        return "unix" if isinstance(self.client_address, str) else super().address_string()

    @property
    def state(self):
        return self.server.state

    def send(self, status, body=b"", content_type="application/json", extra=None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        if body:
            self.send_header("Content-Type", content_type)
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def handle_any(self, method):
        url = urllib.parse.urlsplit(self.path)
        params_list = urllib.parse.parse_qsl(url.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length", "0") or "0")
        body = self.rfile.read(length) if length else b""
        self.state.record({
            "connection": self.connection_number, "method": method, "path": url.path, "query": url.query,
            "params": dict(params_list), "param_names": [k for k, _ in params_list],
            "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body.decode(errors="replace"),
        })
        try:
            self.route(method, url.path, dict(params_list), [k for k, _ in params_list])
        except BadRequest as e:
            self.send(400, e.body, "application/json" if e.json_body else "text/plain; charset=utf-8")

    def middleware(self, path):
        """zeusd's order (§5.2): group enabled, auth enabled, token, scope. Returns True when answered."""
        config = self.config
        group = group_of(path)
        if group is not None and group not in config["enabled_api_groups"]:
            self.send(404, {"error": f"API group '{group}' is not enabled on this server."})
            return True
        if not config.get("auth_required", False):
            if path.startswith("/auth/"):
                self.send(404, {"error": "Authentication is not enabled on this server."})
                return True
            return False
        if path in ("/discover", "/time"):
            return False
        header = self.headers.get("Authorization", "")
        if not header.startswith("Bearer "):
            self.send(401, {"error": "Authentication required. Provide an Authorization: Bearer <token> header."},
                      extra={"WWW-Authenticate": 'Bearer realm="zeusd"'})
            return True
        claims = config.get("tokens", {}).get(header[len("Bearer "):])
        if claims is None:
            self.send(401, {"error": "Invalid token: InvalidSignature"})
            return True
        if claims.get("expired"):
            self.send(401, {"error": "Token has expired."})
            return True
        if group is not None and group not in claims["scopes"]:
            scopes = "[" + ", ".join(f"'{s}'" for s in claims["scopes"]) + "]"
            self.send(403, {"error": f"Token for user '{claims['sub']}' lacks required scope '{group}'. "
                                     f"Token scopes: {scopes}"})
            return True
        self.claims = claims
        return False

    @property
    def config(self):
        return self.state.config

    def route(self, method, path, params, names):
        if self.middleware(path):
            return
        forced = self.config.get("responses", {}).get(f"{method} {path}")
        if forced is not None:
            self.send(forced["status"], forced.get("body", ""), forced.get("content_type", "application/json"))
            return
        if method == "GET" and path == "/discover":
            if "discover_raw" in self.config:
                self.send(200, self.config["discover_raw"])
                return
            self.send(200, {key: self.config.get(key, default) for key, default in
                            (("gpus", []), ("cpus", []), ("enabled_api_groups", []), ("auth_required", False))})
        elif method == "GET" and path == "/time":
            self.send(200, {"timestamp_ms": int(time.time() * 1000)})
        elif method == "GET" and path == "/auth/whoami":
            claims = {"sub": self.claims["sub"], "scopes": self.claims["scopes"]}
            if "exp" in self.claims:
                claims["exp"] = self.claims["exp"]
            self.send(200, claims)
        elif method == "POST" and path in CONTROL_ROUTES:
            self.control(path, params, names)
        elif method == "GET" and path in GPU_READS:
            self.gpu_read(path, params, names)
        elif method == "GET" and path == "/cpu/get_cumulative_energy":
            self.cpu_energy(params, names)
        elif method == "GET" and path == "/cpu/get_power":
            self.cpu_power(params, names)
        else:
            self.send(404, "", "text/plain")

    @staticmethod
    def deny_unknown(names, allowed):
        for name in names:
            if name not in allowed:
                raise BadRequest(f"Query deserialize error: unknown field `{name}`, expected one of "
                                 + ", ".join(f"`{a}`" for a in allowed))

    def control(self, path, params, names):
        allowed = ["gpu_ids"] + CONTROL_ROUTES[path]
        self.deny_unknown(names, allowed)
        ids = parse_ids(params, "gpu_ids", "GPU", required=True)
        values = {}
        for name in CONTROL_ROUTES[path]:
            values[name] = parse_bool(params, name) if name in ("block", "enabled") else parse_uint(params, name)
        known = {g["id"] for g in self.config.get("gpus", [])}
        for gpu in ids:
            if gpu not in known:
                raise BadRequest(f"GPU index {gpu} does not exist.")
        with self.state.lock:
            for gpu in ids:
                if path == "/gpu/set_power_limit":
                    self.state.power_limit[gpu] = values["power_limit_mw"]
                elif path == "/gpu/set_persistence_mode":
                    self.state.persistence[gpu] = values["enabled"]
        self.send(200)

    def selected(self, params, name, kind, devices):
        ids = parse_ids(params, name, kind, required=False)
        known = [d["id"] for d in devices]
        if ids is None:
            return known
        for device in ids:
            if device not in known:
                raise BadRequest(json.dumps({"error": f"{kind} {device} not found"}), True)
        return ids

    def gpu_read(self, path, params, names):
        self.deny_unknown(names, ["gpu_ids"])
        ids = self.selected(params, "gpu_ids", "GPU", self.config.get("gpus", []))
        with self.state.lock:
            if path == "/gpu/get_cumulative_energy":
                for gpu in ids:
                    self.state.gpu_energy[gpu] += 1000
                out = {str(g): {"energy_mj": self.state.gpu_energy[g]} for g in ids}
            elif path == "/gpu/get_power":
                out = {"timestamp_ms": int(time.time() * 1000),
                       "power_mw": {str(g): 75000 + 1000 * g for g in ids}}
            elif path == "/gpu/get_power_limit":
                out = {str(g): {"power_limit_mw": self.state.power_limit[g]} for g in ids}
            elif path == "/gpu/get_power_limit_constraints":
                out = {str(g): {"min_power_limit_mw": 100000, "max_power_limit_mw": 300000} for g in ids}
            else:
                out = {str(g): {"enabled": self.state.persistence[g]} for g in ids}
        self.send(200, out)

    def dram_available(self, cpu):
        return next(c["dram_available"] for c in self.config["cpus"] if c["id"] == cpu)

    def cpu_energy(self, params, names):
        self.deny_unknown(names, ["cpu_ids", "cpu", "dram"])
        ids = self.selected(params, "cpu_ids", "CPU", self.config.get("cpus", []))
        want_cpu = parse_bool(params, "cpu")
        want_dram = parse_bool(params, "dram")
        step = self.config.get("cpu_step_uj", {"cpu": 2000000, "dram": 300000})
        out = {}
        with self.state.lock:
            self.state.cpu_reads += 1
            if self.state.cpu_reads == self.config.get("cpu_restart_at_read"):
                for counters in self.state.cpu_energy.values():  # a restarted daemon counts from 0
                    counters["cpu"] = counters["dram"] = 0
            for cpu in ids:
                counters = self.state.cpu_energy[cpu]
                counters["cpu"] += step["cpu"]
                counters["dram"] += step["dram"]
                dram = self.dram_available(cpu)
                out[str(cpu)] = {"cpu_energy_uj": counters["cpu"] if want_cpu else None,
                                 "dram_energy_uj": counters["dram"] if want_dram and dram else None}
        self.send(200, out)

    def cpu_power(self, params, names):
        self.deny_unknown(names, ["cpu_ids"])
        ids = self.selected(params, "cpu_ids", "CPU", self.config.get("cpus", []))
        self.send(200, {"timestamp_ms": int(time.time() * 1000),
                        "power_mw": {str(c): {"cpu_mw": 85000 + c, "dram_mw": 12000 if self.dram_available(c) else None}
                                     for c in ids}})


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class TcpServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--ready", required=True)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--unix")
    where.add_argument("--tcp", action="store_true")
    args = parser.parse_args()
    with open(args.config, encoding="utf-8") as f:
        config = json.load(f)
    if args.unix:
        if os.path.exists(args.unix):
            os.unlink(args.unix)
        server = UnixServer(args.unix, Handler)
        ready = "unix"
    else:
        server = TcpServer(("127.0.0.1", 0), Handler)
        ready = str(server.server_address[1])
    server.state = State(config, args.log)
    tmp = args.ready + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(ready)
    os.rename(tmp, args.ready)  # appears whole
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
