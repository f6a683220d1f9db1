"""Independent, reproducible random streams for the probes, all derived from one seed.

Each probe (and each size inside it) draws from its own generator, so changing one size in
params.yaml never shifts the random numbers another probe sees.
"""

import hashlib

import torch


def derive_seed(seed: int, *labels: str | int) -> int:
    """A 63-bit seed that depends only on ``seed`` and ``labels`` (stable across runs)."""
    key = "/".join(str(part) for part in (seed, *labels)).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "little") >> 1


def generator(seed: int, *labels: str | int) -> torch.Generator:
    """A CPU generator seeded by :func:`derive_seed` (``generator(1337, "e05", 64)``)."""
    return torch.Generator().manual_seed(derive_seed(seed, *labels))
