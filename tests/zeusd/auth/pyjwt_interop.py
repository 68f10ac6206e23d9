#!/usr/bin/env python3
"""PyJWT (a standard, independent JWT library) against zeusd's tokens.

Our tokens must decode in PyJWT with the same claims, and PyJWT's HS256 tokens
must verify in zeusd, while its tokens with another key, another algorithm or
"none", a past exp or an unknown scope must be refused for that reason.

Usage: pyjwt_interop.py PATH/TO/zeusd_auth_interop_tool
Exit status 77 (ctest: skipped) when PyJWT is not installed.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import jwt
except ImportError:
    print("PyJWT is not installed in .venv: run `.venv/bin/python -m pip install PyJWT==2.10.1`, or remove "
          ".venv and run scripts/setup-python.sh", file=sys.stderr)
    sys.exit(77)

TOOL = sys.argv[1]
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def tool(*args):
    done = subprocess.run([TOOL, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{TOOL} {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout.strip()


def verify_here(key_path, token):
    return json.loads(tool("verify", key_path, token))


with tempfile.TemporaryDirectory() as scratch:
    # Raw key bytes, newline included: both sides must use them as they are.
    key = os.urandom(32) + b"\n"
    key_path = os.path.join(scratch, "signing.key")
    # Owner-only, as zeusd requires of a signing key.
    with open(os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
        f.write(key)
    now = int(time.time())

    # --- zeusd -> PyJWT -------------------------------------------------------
    token = tool("issue", key_path, "alice", "gpu-read,cpu-read", "7d")
    check(jwt.get_unverified_header(token) == {"typ": "JWT", "alg": "HS256"}, "our header is the original's")
    claims = jwt.decode(token, key, algorithms=["HS256"])
    check(claims["sub"] == "alice" and claims["scopes"] == ["gpu-read", "cpu-read"], "PyJWT reads our claims")
    check(abs(claims["exp"] - (now + 7 * 86400)) <= 60, "our exp is now + 7 days")

    token = tool("issue", key_path, "bob", "gpu-control", "never")
    check(jwt.decode(token, key, algorithms=["HS256"]) == {"sub": "bob", "scopes": ["gpu-control"]},
          "PyJWT reads our no-expiry token")
    try:
        jwt.decode(token, key + b"x", algorithms=["HS256"])
        check(False, "PyJWT refuses our token under another key")
    except jwt.InvalidSignatureError:
        check(True, "PyJWT refuses our token under another key")

    # --- PyJWT -> zeusd -------------------------------------------------------
    def encode(payload, signing_key=key, algorithm="HS256", headers=None):
        return jwt.encode(payload, signing_key, algorithm=algorithm, headers=headers)

    payload = {"sub": "carol", "scopes": ["cpu-read", "gpu-read"], "exp": now + 3600}
    verdict = verify_here(key_path, encode(payload))
    check(verdict == {"ok": True, "claims": payload}, f"we accept PyJWT's token: {verdict}")

    payload = {"sub": "dave", "scopes": []}
    verdict = verify_here(key_path, encode(payload, headers={"kid": "k1"}))
    check(verdict == {"ok": True, "claims": payload}, f"we accept PyJWT's no-exp token with a kid: {verdict}")

    def refused(token, problem, reason, what):
        verdict = verify_here(key_path, token)
        check(verdict == {"ok": False, "problem": problem, "reason": reason}, f"{what}: {verdict}")

    good = {"sub": "eve", "scopes": ["gpu-read"]}
    refused(encode({**good, "exp": now - 3600}), "Expired", "ExpiredSignature", "we refuse PyJWT's expired token")
    refused(encode(good, signing_key=b"another key with enough bytes to be safe!"), "BadSignature",
            "InvalidSignature", "we refuse PyJWT's token under another key")
    refused(encode(good, algorithm="HS384"), "WrongAlgorithm", "InvalidAlgorithm", "we refuse HS384")
    refused(encode(good, signing_key=None, algorithm="none"), "WrongAlgorithm", "InvalidAlgorithm",
            "we refuse alg none")
    refused(encode({"sub": "eve", "scopes": ["gpu-write"]}), "UnknownScope",
            "JSON error: unknown variant `gpu-write`, expected one of `gpu-control`, `gpu-read`, `cpu-read`",
            "we refuse an unknown scope")

if failures:
    print(f"{len(failures)} interop check(s) failed", file=sys.stderr)
    sys.exit(1)
print(f"PyJWT {jwt.__version__} and zeusd agree")
