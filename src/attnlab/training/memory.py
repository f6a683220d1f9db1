"""Keep glibc from returning training's buffers to the kernel between steps.

Every training step of docs/catalogue.md's models frees and reallocates the same activation
buffers, a few MiB each. glibc serves blocks that large with ``mmap`` and gives them back
with ``munmap`` (or trims the heap), so each step pays tens of thousands of fresh page
faults: about 30,000 a step on P0's model, CPU time x1.2 (PERFORMANCE.md measured x1.26
with the equivalent environment variables). Raising the mmap and trim thresholds keeps
the memory in the process and the faults near zero; results do not change.

The same thresholds can be set with ``MALLOC_MMAP_THRESHOLD_``/``MALLOC_TRIM_THRESHOLD_``
before the process starts; ``mallopt`` sets them from inside, so every stage command
stays a plain ``python pipeline/<stage>.py``.
"""

import ctypes
import ctypes.util
import platform

# mallopt's parameter numbers (malloc.h) and values; mallopt takes a C int.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 1 << 30  # 1 GiB: no training buffer is served by mmap
TRIM_THRESHOLD = (1 << 31) - 1  # the largest int: never trim the heap's top


def tune_malloc() -> bool:
    """Raise glibc's mmap and trim thresholds for this process.

    Returns:
        True when both were set; False on another C library (nothing is changed).
    """
    if platform.libc_ver()[0] != "glibc":
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    mmap_set = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    trim_set = libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return mmap_set and trim_set
