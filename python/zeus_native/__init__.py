"""zeus_native: the Zeus Python API over a native C++ core.

Change `zeus` to `zeus_native` in your imports: `from zeus_native.monitor import
ZeusMonitor`. See docs/python.md for what differs from the original and why.
"""

from zeus_native import _exit as _exit  # first: its atexit hook then runs after every later one

__version__ = "0.1.0"
