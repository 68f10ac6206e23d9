#!/usr/bin/env python3
"""The classes of request every server shares through src/http_server/, tried
against all four servers as processes: zeusd, `zeus exporter`,
`zeus bso-server` and `zeus perseus-server`.

- HEAD on a GET route: GET's status and Content-Length, and no body (zeusd,
  the batch-size and the Perseus servers answered 405);
- an id that is not percent-encoded UTF-8 (%FF): a 4xx, never a 500;
- the request timeout holds again after an answer that took longer than it
  (a Perseus long-poll; zeusd's slow override is in tests/zeusd);
- JSON bodies nested too deeply: a 422 (the FastAPI-style servers);
- the Perseus server's 16 MiB bodies share one budget (a 503 once it is
  spent), and the memory of large bodies goes back after they are answered;
- request lines and Host as RFC 9112 asks: absolute-form targets served,
  Host required once in HTTP/1.1 (400), HTTP/1.2 served as 1.1, HTTP/2.0 a 505;
- every stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) stops each server
  gracefully: exit 0, its files closed whole, zeusd's GPU changes put back.

Also: each server on TCP port 0 prints the port the kernel chose, with
IPv6 hosts in brackets, and that port is the one that answers.

Usage: every_server_test.py ZEUS_CLI ZEUSD SIM_LIBRARY
Standard library only (Debian's python3).
"""
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
from pathlib import Path

ZEUS, ZEUSD, SIM_LIBRARY = sys.argv[1:4]
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python" / "tests"))
from server_listening import wait_for_listening  # noqa: E402

# What each server prints before the address it listens on.
LISTENING = {"zeusd": " zeusd: listening on ", "exporter": "zeus exporter: serving http://",
             "bso": "zeus bso-server: listening on ", "perseus": "zeus perseus-server: listening on "}


class Server:
    """A server process and how to reach it: a Unix socket path, or with
    `listening` (the text before the address it prints) TCP on the port it
    says it listens on; it was started on port 0."""

    def __init__(self, args, env, log, socket_path=None, listening=None, hangup_ignored=False):
        self.log_path = log
        self.log_file = open(log, "wb")
        # As nohup starts it: SIGHUP ignored.
        ignore_hangup = (lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)) if hangup_ignored else None
        self.process = subprocess.Popen(args, env=env, stdout=self.log_file, stderr=self.log_file,
                                        preexec_fn=ignore_hangup)
        if socket_path is None:
            try:
                self.listening = wait_for_listening(log, self.process, listening)
            except AssertionError:
                self.stop()
                raise
            self.address = (self.listening.ip, self.listening.port)
        else:
            self.address = socket_path
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                self.connect().close()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"{args[0]} exited: {self.log()}")
                time.sleep(0.05)
        raise RuntimeError(f"{args} never listened: {self.log()}")

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def connect(self):
        if isinstance(self.address, str):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        else:
            s = socket.socket(socket.AF_INET6 if ":" in self.address[0] else socket.AF_INET)
        s.settimeout(10)
        try:
            s.connect(self.address)
        except OSError:
            s.close()
            raise
        return s

    def exchange(self, raw):
        """Sends raw bytes on a new connection and returns all until it closes."""
        s = self.connect()
        s.sendall(raw)
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            pass
        s.close()
        return data

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log_file.close()

    def rss_kib(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


def status_of(reply):
    return int(reply.split(b" ", 2)[1])


def header(reply, name):
    head = reply.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    for line in head.split("\r\n")[1:]:
        key, _, value = line.partition(":")
        if key.strip().lower() == name.lower():
            return value.strip()
    return None


def request(method, target, body=b"", headers=""):
    return (f"{method} {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{headers}"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def server_environment(d):
    """The servers' environment (simulated GPUs, state in directory `d`) and a Perseus solution file."""
    env = dict(os.environ, ZEUS_SIMULATE="1", ZEUS_SIM_LIBRARY=SIM_LIBRARY,
               LD_LIBRARY_PATH=os.path.dirname(SIM_LIBRARY), ZEUS_SIM_STATE=os.path.join(d, "sim-state"),
               RUST_LOG="info")  # zeusd's "listening on" line is at info
    env.pop("ZEUS_BSO_DATABASE_URL", None)
    solution = os.path.join(d, "solution.json")
    with open(solution, "w") as f:
        json.dump([[["forward", 1410], ["backward", 1410]], [["forward", 1200], ["backward", 1200]]], f)
    return env, solution


def has_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


class EveryServer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory(prefix="zeus-every-server-")
        d = cls.dir.name
        env, solution = server_environment(d)
        cls.servers = {}
        try:
            socket_path = os.path.join(d, "zeusd.sock")
            cls.servers["zeusd"] = Server([ZEUSD, "serve", "--socket-path", socket_path], env,
                                          os.path.join(d, "zeusd.log"), socket_path=socket_path)
            cls.servers["exporter"] = Server([ZEUS, "exporter", "--listen", "127.0.0.1:0"], env,
                                             os.path.join(d, "exporter.log"), listening=LISTENING["exporter"])
            cls.servers["bso"] = Server([ZEUS, "bso-server", "--database", os.path.join(d, "bso.db"),
                                         "--listen", "127.0.0.1:0"], env, os.path.join(d, "bso.log"),
                                        listening=LISTENING["bso"])
            cls.servers["perseus"] = cls.perseus_server(env, solution, [])
            cls.env, cls.solution = env, solution
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def perseus_server(cls, env, solution, extra):
        log = tempfile.NamedTemporaryFile(dir=cls.dir.name, prefix="perseus-", suffix=".log", delete=False)
        log.close()
        return Server([ZEUS, "perseus-server", "--solution", solution, "--listen", "127.0.0.1:0",
                       "--dump-dir", os.path.join(cls.dir.name, "dump")] + extra, env, log.name,
                      listening=LISTENING["perseus"])

    @classmethod
    def tearDownClass(cls):
        for server in cls.servers.values():
            server.stop()
        cls.dir.cleanup()

    # A GET route of each server, and a target whose id is "%FF".
    GET_ROUTES = {"zeusd": "/time", "exporter": "/metrics", "bso": "/jobs/batch_size?job_id=none",
                  "perseus": "/schedule/none?rank=0"}
    UNDECODABLE = {"zeusd": "/gpu/get_power_limit?gpu_ids=%FF", "exporter": "/metrics?name=%FF",
                   "bso": "/jobs/batch_size?job_id=%FF", "perseus": "/schedule/%FF?rank=0"}

    def test_head_is_get_without_a_body(self):
        for name, server in self.servers.items():
            with self.subTest(server=name):
                get = server.exchange(request("GET", self.GET_ROUTES[name]))
                head = server.exchange(request("HEAD", self.GET_ROUTES[name]))
                self.assertEqual(status_of(head), status_of(get), head)
                self.assertNotEqual(status_of(head), 405, head)
                self.assertEqual(header(head, "Content-Length"), header(get, "Content-Length"), head)
                self.assertTrue(head.endswith(b"\r\n\r\n"), head)
                self.assertGreater(len(get.split(b"\r\n\r\n", 1)[1]), 0)

    def test_ids_that_are_not_utf8_are_a_4xx(self):
        for name, server in self.servers.items():
            with self.subTest(server=name):
                for _ in range(3):
                    reply = server.exchange(request("GET", self.UNDECODABLE[name]))
                    self.assertLess(status_of(reply), 500, reply)
                    if name in ("exporter",):  # takes no id; it must just not fail
                        continue
                    self.assertIn(status_of(reply), (400, 422), reply)
                body = reply.split(b"\r\n\r\n", 1)[1]
                if header(reply, "Content-Type") == "application/json":
                    json.loads(body)  # one valid document

    def test_request_lines_and_host_as_rfc_9112_says(self):
        """An absolute-form target is served as its path (not a 404), an
        HTTP/1.1 request without Host or with two is a 400, HTTP/1.2 is
        served as HTTP/1.1 and HTTP/2.0 as text is a 505."""
        for name, server in self.servers.items():
            route = self.GET_ROUTES[name]
            with self.subTest(server=name):
                expected = status_of(server.exchange(request("GET", route)))
                authority = "localhost" if isinstance(server.address, str) else "%s:%d" % server.address
                absolute = server.exchange(request("GET", f"http://{authority}{route}"))
                self.assertEqual(status_of(absolute), expected, absolute[:300])

                def raw(version, hosts):
                    return server.exchange(f"GET {route} {version}\r\n{hosts}Connection: close\r\n\r\n".encode())
                for hosts in ("", "Host: a\r\nHost: b\r\n"):
                    reply = raw("HTTP/1.1", hosts)
                    self.assertEqual(status_of(reply), 400, reply[:300])
                    self.assertIn(b"Host", reply)
                self.assertEqual(status_of(raw("HTTP/1.0", "")), expected)
                later = raw("HTTP/1.2", "Host: x\r\n")
                self.assertTrue(later.startswith(b"HTTP/1.1 %d " % expected), later[:300])
                self.assertEqual(status_of(raw("HTTP/2.0", "Host: x\r\n")), 505)

    def test_a_request_line_over_the_limit_is_a_431_that_says_what_to_do(self):
        for name, server in self.servers.items():
            route = self.GET_ROUTES[name]
            with self.subTest(server=name):
                long_target = route + ("&" if "?" in route else "?") + "x=" + "0" * 10000  # over 8 KiB
                reply = server.exchange(request("GET", long_target))
                self.assertEqual(status_of(reply), 431, reply[:300])
                self.assertIn(b"bytes: ask for fewer items per request", reply)
                self.assertLess(status_of(server.exchange(request("GET", route))), 500)  # still serving

    def test_deep_json_bodies_are_a_422(self):
        deep = b"[" * 60000  # under the batch-size server's 64 KiB body limit
        for name, target in (("bso", "/jobs"), ("perseus", "/register_job")):
            with self.subTest(server=name):
                reply = self.servers[name].exchange(request("POST", target, deep,
                                                            "Content-Type: application/json\r\n"))
                self.assertEqual(status_of(reply), 422, reply[:300])
                self.assertIn(b"deeper than 64", reply)

    def test_the_timeout_holds_after_a_perseus_long_poll(self):
        server = self.perseus_server(self.env, self.solution, ["--request-timeout-s", "1"])
        self.addCleanup(server.stop)
        job = json.loads(server.exchange(request(
            "POST", "/register_job", json.dumps({"job_id": "", "pp_degree": 2, "dp_degree": 1, "tp_degree": 1,
                                                 "world_size": 2}).encode())).split(b"\r\n\r\n", 1)[1])
        quoted = job.replace("+", "%2B")
        for rank in (0, 1):
            reply = server.exchange(request("POST", f"/register_rank/{quoted}", json.dumps(
                {"rank": rank, "dp_rank": 0, "pp_rank": rank, "tp_rank": 0,
                 "available_frequencies": [1410, 1200]}).encode()))
            self.assertEqual(status_of(reply), 200, reply)
        waiting = server.connect()  # keep-alive: no Connection: close
        waiting.sendall(f"GET /schedule/{quoted}?rank=0 HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        time.sleep(2.5)  # the long poll outlasts the 1 s request timeout
        self.assertEqual(status_of(server.exchange(request("GET", f"/schedule/{quoted}?rank=1"))), 200)
        reply = waiting.recv(65536)
        self.assertEqual(status_of(reply), 200, reply)
        idle_since = time.time()
        waiting.settimeout(6)
        try:
            while waiting.recv(65536):
                pass
            closed = True
        except socket.timeout:
            closed = False
        waiting.close()
        self.assertTrue(closed, "the idle keep-alive connection was still open 6 s after the long poll")
        self.assertLess(time.time() - idle_since, 3.5)

    def test_perseus_bodies_share_one_budget_and_memory_comes_back(self):
        server = self.servers["perseus"]
        mib16 = 16 << 20
        baseline = server.rss_kib()
        # Twelve 16 MiB bodies at once (the load that took RSS from 75 to 195 MB): the first four fit
        # the 64 MiB budget, the other eight are refused at their header.
        held = []
        for _ in range(12):
            s = server.connect()
            s.sendall(f"POST /register_job HTTP/1.1\r\nHost: x\r\nContent-Length: {mib16}\r\n\r\n".encode())
            held.append(s)
            time.sleep(0.05)
        time.sleep(0.3)
        for s in held[4:]:
            reply = s.recv(65536)
            self.assertEqual(status_of(reply), 503, reply)
            self.assertEqual(header(reply, "Retry-After"), "1")
            s.close()
        held = held[:4]
        # The four bodies arrive whole (not JSON: a quick 422) and are answered.
        body = b"x" * mib16
        for s in held:
            s.sendall(body)
        for s in held:
            s.settimeout(30)
            reply = s.recv(65536)
            self.assertEqual(status_of(reply), 422, reply[:200])
            s.close()
        time.sleep(0.5)
        after = server.rss_kib()
        print(f"perseus-server RSS: {baseline} KiB before twelve 16 MiB bodies, {after} KiB after", file=sys.stderr)
        if os.environ.get("ZEUS_TEST_SANITIZED") == "1":
            # AddressSanitizer's allocator quarantines freed memory and malloc_trim
            # does not reach it: RSS says nothing there (the budget is checked above).
            return
        self.assertLess(after - baseline, 32 * 1024,
                        f"RSS {baseline} KiB before twelve 16 MiB bodies, {after} KiB after they were answered")


def reply_json(reply):
    return json.loads(reply.split(b"\r\n\r\n", 1)[1])


class StopSignals(unittest.TestCase):
    """Each server stops gracefully on every stop signal: SIGINT, SIGTERM,
    SIGHUP (no server has a configuration to reload or a log file to reopen)
    and SIGQUIT. It exits 0, says which signal stopped it and leaves nothing
    behind: the batch-size server's job is in its SQLite file with the WAL
    checkpointed, the Perseus server's dump is whole, zeusd put back the power
    limit a client set and removed its socket. Before, SIGHUP and SIGQUIT
    killed each of them at once (zeusd's changed power limit stayed)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory(prefix="zeus-stop-signals-")
        cls.env, cls.solution = server_environment(cls.dir.name)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def stop_with(self, server, sig):
        server.process.send_signal(sig)
        try:
            code = server.process.wait(30)
        finally:
            server.stop()
        self.assertEqual(code, 0, server.log())
        return server.log()

    def state_dir(self, name, sig):
        d = os.path.join(self.dir.name, f"{name}-{sig.name}")
        os.makedirs(d)
        return d

    def test_bso_server(self):
        for sig in self.SIGNALS:
            with self.subTest(signal=sig.name):
                d = self.state_dir("bso", sig)
                database = os.path.join(d, "bso.db")
                server = Server([ZEUS, "bso-server", "--database", database, "--listen", "127.0.0.1:0"], self.env,
                                os.path.join(d, "log"), listening=LISTENING["bso"])
                spec = {"job_id": "mnist-1", "job_id_prefix": "mnist", "batch_sizes": [8, 16], "default_batch_size": 8,
                        "beta_knob": None, "max_power": 300, "number_of_gpus": 1, "gpu_model": "A100"}
                created = server.exchange(request("POST", "/jobs", json.dumps(spec).encode(),
                                                  "Content-Type: application/json\r\n"))
                self.assertEqual(status_of(created), 201, created)
                log = self.stop_with(server, sig)
                self.assertIn(f"zeus bso-server: stopped by {sig.name}", log)
                self.assertFalse(os.path.exists(database + "-wal"), "the database was not closed")
                with sqlite3.connect(database) as db:
                    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
                    job_table = next(t for t in tables if "job" in t.lower() and "batch" not in t.lower())
                    self.assertEqual(db.execute(f"SELECT COUNT(*) FROM {job_table}").fetchone()[0], 1, tables)

    def test_perseus_server(self):
        for sig in self.SIGNALS:
            with self.subTest(signal=sig.name):
                d = self.state_dir("perseus", sig)
                dump = os.path.join(d, "dump")
                server = Server([ZEUS, "perseus-server", "--solution", self.solution, "--listen", "127.0.0.1:0",
                                 "--dump-dir", dump], self.env, os.path.join(d, "log"), listening=LISTENING["perseus"])
                job = reply_json(server.exchange(request("POST", "/register_job", json.dumps(
                    {"job_id": "", "pp_degree": 2, "dp_degree": 1, "tp_degree": 1, "world_size": 2}).encode())))
                ranks = [{"rank": r, "dp_rank": 0, "pp_rank": r, "tp_rank": 0, "available_frequencies": [1410, 1200]}
                         for r in (0, 1)]
                self.assertIsInstance(job, str, job)
                for rank in ranks:
                    reply = server.exchange(request("POST", f"/register_rank/{urllib.parse.quote(job, safe='')}",
                                                    json.dumps(rank).encode()))
                    self.assertEqual(status_of(reply), 200, reply)
                log = self.stop_with(server, sig)
                self.assertIn(f"zeus perseus-server: stopped by {sig.name}", log)
                dumped = list(Path(dump).glob("*/ranks.json"))
                self.assertEqual(len(dumped), 1, log)
                self.assertEqual([r["rank"] for r in json.loads(dumped[0].read_text())], [0, 1])

    def test_exporter(self):
        for sig in self.SIGNALS:
            with self.subTest(signal=sig.name):
                d = self.state_dir("exporter", sig)
                server = Server([ZEUS, "exporter", "--listen", "127.0.0.1:0"], self.env, os.path.join(d, "log"),
                                listening=LISTENING["exporter"])
                self.assertEqual(status_of(server.exchange(request("GET", "/metrics"))), 200)
                log = self.stop_with(server, sig)
                self.assertIn(f"zeus exporter: stopped by {sig.name}", log)

    def test_zeusd(self):
        for sig in self.SIGNALS:
            with self.subTest(signal=sig.name):
                d = self.state_dir("zeusd", sig)
                socket_path = os.path.join(d, "zeusd.sock")
                env = dict(self.env, ZEUS_SIM_STATE=os.path.join(d, "sim-state"))
                server = Server([ZEUSD, "serve", "--socket-path", socket_path, "--restore-ledger",
                                 os.path.join(d, "ledger.json")], env, os.path.join(d, "log"), socket_path=socket_path)
                limits = reply_json(server.exchange(request("GET", "/gpu/get_power_limit_constraints?gpu_ids=0")))
                target = limits["0"]["min_power_limit_mw"]
                reply = server.exchange(request("POST", f"/gpu/set_power_limit?gpu_ids=0&power_limit_mw={target}"
                                                        "&block=true"))
                self.assertEqual(status_of(reply), 200, reply)
                log = self.stop_with(server, sig)
                self.assertIn(f"received {sig.name}; shutting down", log)
                self.assertIn("restored GPU 0 with set_power_limit (zeusd is stopping)", log)
                self.assertFalse(os.path.exists(socket_path), log)

    def test_a_hangup_ignored_by_nohup_stays_ignored(self):
        d = self.state_dir("exporter-nohup", signal.SIGHUP)
        server = Server([ZEUS, "exporter", "--listen", "127.0.0.1:0"], self.env, os.path.join(d, "log"),
                        listening=LISTENING["exporter"], hangup_ignored=True)
        server.process.send_signal(signal.SIGHUP)
        time.sleep(0.3)
        self.assertEqual(status_of(server.exchange(request("GET", "/metrics"))), 200, server.log())
        self.assertIn("stopped by SIGTERM", self.stop_with(server, signal.SIGTERM))


class PortZero(unittest.TestCase):
    """Each server started on TCP port 0 prints the address it listens on with
    the port the kernel chose (an IPv6 host in brackets), and that port is the
    one that answers."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory(prefix="zeus-port-zero-")
        cls.env, cls.solution = server_environment(cls.dir.name)
        cls.hosts = ["127.0.0.1"] + (["[::1]"] if has_ipv6_loopback() else [])
        if len(cls.hosts) == 1:
            print("no IPv6 loopback here: port 0 is tried on 127.0.0.1 only", file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def command(self, name, listen):
        return {"zeusd": [ZEUSD, "serve", "--mode", "tcp", "--tcp-bind-address", listen],
                "exporter": [ZEUS, "exporter", "--listen", listen],
                "bso": [ZEUS, "bso-server", "--database", os.path.join(self.dir.name, "bso.db"), "--listen", listen],
                "perseus": [ZEUS, "perseus-server", "--solution", self.solution, "--no-dump", "--listen", listen]}[name]

    # A GET each server answers, the status its routes give it, and its Server header.
    ANSWERS = {"zeusd": ("/time", 200, "zeusd"), "exporter": ("/metrics", 200, "zeus-exporter"),
               "bso": ("/jobs/batch_size?job_id=none", 400, "zeus-bso-server"),  # no such job
               "perseus": ("/schedule/none?rank=0", 404, "zeus-perseus-server")}  # unknown job id

    def check_port_zero(self, name):
        target, status, server_header = self.ANSWERS[name]
        for host in self.hosts:
            with self.subTest(host=host):
                log = os.path.join(self.dir.name, f"{name}-{len(host)}.log")
                server = Server(self.command(name, f"{host}:0"), self.env, log, listening=LISTENING[name])
                try:
                    self.assertEqual(server.listening.host, host)
                    self.assertNotEqual(server.listening.port, 0)
                    reply = server.exchange(request("GET", target))
                    self.assertEqual(status_of(reply), status, reply[:300])
                    self.assertEqual(header(reply, "Server"), server_header)
                finally:
                    server.stop()
                # The port that answered was this server's: it closed with it.
                with self.assertRaises(ConnectionRefusedError, msg=server.listening.host_port):
                    server.connect().close()

    def test_zeusd(self):
        self.check_port_zero("zeusd")

    def test_exporter(self):
        self.check_port_zero("exporter")

    def test_bso_server(self):
        self.check_port_zero("bso")

    def test_perseus_server(self):
        self.check_port_zero("perseus")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
