"""The batch-size optimizer's generator against numpy itself (numpy 2.4.6 in
.venv/): default_rng(seed)'s PCG64 state, Generator.choice(a, len(a),
replace=False) and Generator.normal, consuming the same stream.

The state JSON and permutations must be identical; normal draws agree to a
few ulp (the ziggurat tables are computed, not copied: docs/batch-size-optimizer.md)
and the final states must be equal, so every accept/reject step matched.

usage: numpy_parity_test.py <rng_dump binary>
"""
import json
import math
import subprocess
import sys

import numpy as np

DUMP = sys.argv[1]


def numpy_lines(rng: np.random.Generator) -> list[str]:
    out = [json.dumps(rng.bit_generator.state)]
    for n in range(1, 8):
        out.append("".join(f"{v} " for v in rng.choice(np.arange(n), n, replace=False)))
    out += [repr(float(rng.normal(-100.0, 3.5))) for _ in range(20000)]
    out.append(json.dumps(rng.bit_generator.state))
    return out


def compare(ours: list[str], theirs: list[str], label: str) -> int:
    assert len(ours) == len(theirs), (label, len(ours), len(theirs))
    assert ours[0] == theirs[0], (label, "state", ours[0], theirs[0])
    assert ours[1:8] == theirs[1:8], (label, "permutations", ours[1:8], theirs[1:8])
    inexact = 0
    for a, b in zip(ours[8:-1], theirs[8:-1]):
        x, y = float(a), float(b)
        if x != y:
            inexact += 1
            assert abs(x - y) <= 4 * math.ulp(y), (label, x, y)
    assert ours[-1] == theirs[-1], (label, "final state", ours[-1], theirs[-1])
    return inexact


def main() -> int:
    inexact = 0
    for seed in (0, 1, 7, 42, 2**31 + 5, 2**40 + 3):
        ours = subprocess.check_output([DUMP, str(seed)], text=True).splitlines()
        inexact += compare(ours, numpy_lines(np.random.default_rng(seed)), f"seed {seed}")
    # A state read back mid-stream, with half a 64-bit draw buffered.
    rng = np.random.default_rng(3)
    rng.integers(0, 10, dtype=np.uint32)
    rng.bit_generator.random_raw(5)
    rng.bit_generator.state = {**rng.bit_generator.state, "has_uint32": 1, "uinteger": 123456789}
    ours = subprocess.check_output([DUMP, "-"], input=json.dumps(rng.bit_generator.state), text=True).splitlines()
    inexact += compare(ours, numpy_lines(rng), "restored state")
    print(f"numpy parity: ok ({inexact} of {7 * 20000} normal draws differ by at most 4 ulp)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
