#!/usr/bin/env python3
"""Writes the seed corpus of zeusd_request_fuzz to fuzz/corpus/zeusd_request/.

Each seed is one mode byte (see the comment at the top of
zeusd_request_fuzz.cpp) followed by the bytes a client sends. The tokens are
HS256 JWTs signed with the fuzzer's fixed key, so that seeds with
authentication on reach the routes. Run it again after changing the seeds;
the files are committed, so the fuzzer does not need Python.
"""
import base64
import hashlib
import hmac
import json
import os
import sys

KEY = b"zeusd-fuzz-signing-key"
AUTH = 0x01
GROUP_CONTROL, GROUP_GPU_READ, GROUP_CPU_READ = 0x02, 0x04, 0x08
ALLOW_LIST, PEER_UID_1000, PEER_TCP = 0x10, 0x20, 0x40


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(sub, scopes, exp=None):
    header = b64(json.dumps({"typ": "JWT", "alg": "HS256"}, separators=(",", ":")).encode())
    claims = {"sub": sub, "scopes": scopes}
    if exp is not None:
        claims["exp"] = exp
    payload = b64(json.dumps(claims, separators=(",", ":")).encode())
    signature = b64(hmac.new(KEY, f"{header}.{payload}".encode(), hashlib.sha256).digest())
    return f"{header}.{payload}.{signature}"


ALL = token("alice", ["gpu-control", "gpu-read", "cpu-read"])
READ = token("bob", ["gpu-read"])
EXPIRED = token("carol", ["cpu-read"], exp=1000)


def get(target, headers=(), version="1.1", method="GET", body=b""):
    lines = [f"{method} {target} HTTP/{version}", "Host: localhost"]
    lines += list(headers)
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def post(target, headers=()):
    return get(target, headers, method="POST")


def bearer(t):
    return (f"Authorization: Bearer {t}",)


SEEDS = {
    # Every route, authentication off.
    "discover": (0, get("/discover")),
    "time": (0, get("/time")),
    "whoami_no_auth": (0, get("/auth/whoami")),
    "gpu_energy": (0, get("/gpu/get_cumulative_energy?gpu_ids=0,1")),
    "gpu_power": (0, get("/gpu/get_power")),
    "gpu_power_ids": (0, get("/gpu/get_power?gpu_ids=2,%200")),
    "gpu_power_limit": (0, get("/gpu/get_power_limit?gpu_ids=0")),
    "gpu_constraints": (0, get("/gpu/get_power_limit_constraints")),
    "gpu_persistence": (0, get("/gpu/get_persistence_mode?gpu_ids=0,1,2")),
    "gpu_stream": (0, get("/gpu/stream_power?gpu_ids=0,2")),
    "cpu_energy": (0, get("/cpu/get_cumulative_energy?cpu=true&dram=true")),
    "cpu_energy_ids": (0, get("/cpu/get_cumulative_energy?cpu_ids=1&cpu=false&dram=true")),
    "cpu_power": (0, get("/cpu/get_power?cpu_ids=0,1")),
    "cpu_stream": (0, get("/cpu/stream_power", ("Accept: text/event-stream",))),
    "set_power_limit": (0, post("/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=200000&block=true")),
    "set_power_limit_async": (0, post("/gpu/set_power_limit?gpu_ids=2&power_limit_mw=150000&block=false&persist=true")),
    "set_persistence": (0, post("/gpu/set_persistence_mode?gpu_ids=0&enabled=false&block=true")),
    "set_gpu_clocks": (0, post("/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=210&max_clock_mhz=1410&block=true")),
    "set_mem_clocks": (0, post("/gpu/set_mem_locked_clocks?gpu_ids=0,2&min_clock_mhz=1215&max_clock_mhz=1593&block=false")),
    "reset_gpu_clocks": (0, post("/gpu/reset_gpu_locked_clocks?gpu_ids=0&block=true")),
    "reset_mem_clocks": (0, post("/gpu/reset_mem_locked_clocks?gpu_ids=1&block=true")),
    "reset_clocks": (0, post("/gpu/reset_locked_clocks?gpu_ids=0,1,2&block=false")),
    # Keep-alive: several requests on one connection.
    "pipelined": (0, get("/gpu/get_power") + get("/cpu/get_cumulative_energy?cpu=true&dram=false")
                  + post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=250000&block=true") + get("/time", ("Connection: close",))),
    "http10": (0, get("/discover", version="1.0")),
    "http10_keepalive": (0, get("/time", ("Connection: keep-alive",), version="1.0") + get("/time", version="1.0")),
    # Authentication on.
    "auth_discover": (AUTH, get("/discover")),
    "auth_whoami": (AUTH, get("/auth/whoami", bearer(ALL))),
    "auth_gpu_power": (AUTH, get("/gpu/get_power", bearer(READ))),
    "auth_forbidden": (AUTH, get("/cpu/get_cumulative_energy?cpu=true&dram=true", bearer(READ))),
    "auth_control": (AUTH, post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=200000&block=true", bearer(ALL))),
    "auth_cpu_power": (AUTH, get("/cpu/get_power", bearer(ALL))),
    "auth_stream": (AUTH, get("/gpu/stream_power", bearer(ALL))),
    "auth_missing": (AUTH, get("/gpu/get_power")),
    "auth_expired": (AUTH, get("/auth/whoami", bearer(EXPIRED))),
    "auth_bad_signature": (AUTH, get("/auth/whoami", bearer(ALL[:-4] + "AAAA"))),
    "auth_garbage": (AUTH, get("/gpu/get_power", ("Authorization: Bearer a.b.c",))),
    "auth_alg_none": (AUTH, get("/gpu/get_power", bearer(b64(b'{"alg":"none","typ":"JWT"}') + "." + b64(b'{"sub":"x","scopes":["gpu-read"]}') + "."))),
    "auth_scheme": (AUTH, get("/gpu/get_power", ("Authorization: bearer " + READ,))),
    # API groups, allow-lists and peers.
    "read_only_groups": (GROUP_GPU_READ | GROUP_CPU_READ, post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=200000&block=true")),
    "cpu_only": (GROUP_CPU_READ, get("/discover") + get("/gpu/get_power")),
    "gpu_only": (GROUP_CONTROL | GROUP_GPU_READ, get("/cpu/stream_power")),
    "allow_list_refused": (ALLOW_LIST, post("/gpu/reset_locked_clocks?gpu_ids=0&block=true")),
    "allow_list_allowed": (ALLOW_LIST | PEER_UID_1000, post("/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true")),
    "tcp_peer": (PEER_TCP | ALLOW_LIST, post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=200000&block=false")),
    # Bad input.
    "bad_percent": (0, get("/gpu/get_power?gpu_ids=%zz")),
    "bad_path_bytes": (0, get("/gpu/get_power%FF")),
    "bad_id_bytes": (0, get("/gpu/get_power?gpu_ids=%FF")),
    "unknown_param": (0, get("/gpu/get_power?gpu=0")),
    "duplicate_param": (0, get("/cpu/get_cumulative_energy?cpu=true&cpu=true&dram=true")),
    "bad_bool": (0, get("/cpu/get_cumulative_energy?cpu=True&dram=1")),
    "huge_number": (0, post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=99999999999999999999999&block=true")),
    "huge_id": (0, get("/gpu/get_power?gpu_ids=4294967296")),
    "empty_ids": (0, get("/gpu/get_power?gpu_ids=")),
    "empty_id_element": (0, post("/gpu/reset_gpu_locked_clocks?gpu_ids=0,,1&block=true")),
    "unknown_gpu": (0, post("/gpu/set_gpu_locked_clocks?gpu_ids=7&min_clock_mhz=1&max_clock_mhz=2&block=true")),
    "unknown_stream_ids": (0, get("/gpu/stream_power?gpu_ids=0,5,9")),
    "wrong_method": (0, post("/gpu/get_power")),
    "unknown_route": (0, get("/gpu/nothing")),
    "body": (0, get("/time", ("Content-Type: text/plain",), method="POST", body=b"hello")),
    "chunked": (0, b"POST /gpu/reset_locked_clocks?gpu_ids=0&block=true HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
    "bad_content_length": (0, b"GET /time HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n"),
    "big_header": (0, b"GET /time HTTP/1.1\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n"),
    "bad_request_line": (0, b"GET  /time HTTP/1.1\r\n\r\n"),
    "bad_version": (0, b"GET /time HTTP/2.0\r\n\r\n"),
    "absolute_target": (0, get("http://localhost/gpu/get_power")),
    "star_target": (0, get("*", method="OPTIONS")),
    "truncated": (0, b"GET /discover HTTP/1.1\r\nHost: loc"),
}


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "zeusd_request")
    os.makedirs(out, exist_ok=True)
    for name, (mode, data) in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([mode]) + data)
    print(f"wrote {len(SEEDS)} seeds to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
