"""Checks that zeus_native wheels stay self-contained, portable and small:

    python scripts/wheel-check.py WHEEL...     (needs pyelftools; build-wheel.sh's audit venv has it)
    python scripts/wheel-check.py --self-test  (shows the checks reject what they must)

Every shared object in a wheel may need only glibc's libraries and libgcc_s
(NEEDED), glibc symbol versions up to 2.31 (manylinux_2_31) and no libstdc++
versions (it is static); undefined symbols without a version may only be
CPython's (Py*, _Py*), which the interpreter provides. A wheel is under 5 MB,
carries the simulator's NVML and no second libzeus. Exit status 1 lists every
problem found."""

from __future__ import annotations

import io
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from elftools.elf.dynamic import DynamicSection
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

MAX_WHEEL_BYTES = 5_000_000
MAX_GLIBC = (2, 31)
ALLOWED_NEEDED = {
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
    "libgcc_s.so.1", "ld-linux-x86-64.so.2",
}
SIM_NVML = "zeus_native/zeus-sim/libnvidia-ml.so.1"


def elf_problems(name: str, data: bytes) -> list[str]:
    """What is wrong with one shared object of a wheel."""
    try:
        elf = ELFFile(io.BytesIO(data))
    except ELFError as error:
        return [f"{name} is not an ELF shared object ({error})"]
    problems = []
    needed = []
    for section in elf.iter_sections():
        if isinstance(section, DynamicSection):
            needed += [t.needed for t in section.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
    for lib in needed:
        if lib not in ALLOWED_NEEDED:
            problems.append(f"{name} needs {lib}, which is not glibc's or libgcc_s (link it statically or dlopen it)")
    versions = set()
    for section in elf.iter_sections():
        if isinstance(section, GNUVerNeedSection):
            for _, aux in section.iter_versions():
                versions.update(a.name for a in aux)
    for version in sorted(versions):
        match = re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", version)
        if match and (int(match[1]), int(match[2])) > MAX_GLIBC:
            problems.append(f"{name} needs {version}, newer than glibc 2.31 (build against the Debian 11 root)")
        if version.startswith(("GLIBCXX_", "CXXABI_")):
            problems.append(f"{name} needs libstdc++'s {version} (libstdc++ must be static)")
    dynsym = elf.get_section_by_name(".dynsym")
    versym = elf.get_section_by_name(".gnu.version")
    if dynsym is not None:
        for index, symbol in enumerate(dynsym.iter_symbols()):
            if symbol["st_shndx"] != "SHN_UNDEF" or not symbol.name or symbol["st_info"]["bind"] == "STB_WEAK":
                continue
            unversioned = versym is None or versym.get_symbol(index)["ndx"] in ("VER_NDX_GLOBAL", 1)
            if unversioned and not symbol.name.startswith(("Py", "_Py")):
                problems.append(f"{name} leaves '{symbol.name}' undefined with no library that defines it "
                                "(a glibc newer than 2.31 would be needed; see python/wheel/glibc_compat.c)")
    return problems


def wheel_problems(path: Path) -> list[str]:
    problems = []
    size = path.stat().st_size
    if size >= MAX_WHEEL_BYTES:
        problems.append(f"{path.name} is {size:,} bytes, over the {MAX_WHEEL_BYTES:,}-byte limit")
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        if SIM_NVML not in names:
            problems.append(f"{path.name} lacks {SIM_NVML} (ZEUS_SIMULATE=1 would not work)")
        for name in names:
            base = name.rsplit("/", 1)[-1]
            if base.startswith("libzeus.so"):
                problems.append(f"{path.name} carries {name}: libzeus belongs inside the extension")
            if ".libs/" in name:
                problems.append(f"{path.name} carries {name}: auditwheel bundled an external library")
            if re.search(r"\.so(\.\d+)*$", base):
                problems += elf_problems(f"{path.name}:{name}", wheel.read(name))
    return problems


def self_test() -> int:
    """The checks must reject a wheel whose extension needs libcurl and a wheel over the size limit."""
    curl = next((p for p in (Path("/usr/lib/x86_64-linux-gnu/libcurl.so.4"), Path("/lib/x86_64-linux-gnu/libcurl.so.4"))
                 if p.exists()), None)
    if curl is None:
        print("wheel-check self-test: no libcurl.so.4 on this machine to build a bad wheel from", file=sys.stderr)
        return 1
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "zeus_native-0-cp311-cp311-linux_x86_64.whl"
        with zipfile.ZipFile(bad, "w") as wheel:
            wheel.write(curl, "zeus_native/_core.so")
            wheel.writestr(SIM_NVML, b"")
        found = " ".join(wheel_problems(bad))
        for expected in ("needs libssl.so.3", "newer than glibc 2.31"):
            if expected not in found:
                failures.append(f"a wheel with libcurl as its extension was not reported for '{expected}'")
        big = Path(tmp) / "zeus_native-0-cp311-cp311-big.whl"
        with zipfile.ZipFile(big, "w", compression=zipfile.ZIP_STORED) as wheel:
            wheel.writestr("zeus_native/data.bin", bytes(MAX_WHEEL_BYTES))
            wheel.writestr(SIM_NVML, b"")
        if not any("over the" in p for p in wheel_problems(big)):
            failures.append("a wheel over 5 MB was not reported")
        shutil.rmtree(tmp, ignore_errors=True)
    for failure in failures:
        print(f"wheel-check self-test: {failure}", file=sys.stderr)
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    if argv == ["--self-test"]:
        return self_test()
    if not argv:
        print("usage: wheel-check.py WHEEL... | --self-test", file=sys.stderr)
        return 2
    problems = [p for arg in argv for p in wheel_problems(Path(arg))]
    for problem in problems:
        print(f"wheel-check: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
