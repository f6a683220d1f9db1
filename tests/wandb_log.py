"""Read W&B's offline transaction log (``.wandb``) so tests can check what a run recorded."""

import struct
from collections.abc import Iterator
from pathlib import Path

from wandb.proto import wandb_internal_pb2


def wandb_records(run_file: Path) -> Iterator[wandb_internal_pb2.Record]:
    """The records of an offline run's ``.wandb`` file (W&B's LevelDB-style log).

    A 7-byte header, then 32 KiB blocks of chunks, each with a 7-byte header (CRC,
    length, type: 1 whole, 2 first, 3 middle, 4 last).
    """
    data = run_file.read_bytes()
    assert data[:4] == b":W&B", f"{run_file} is not a W&B transaction log"
    pos, block, pending = 7, 32768, b""
    while pos + 7 <= len(data):
        if block - pos % block < 7:
            pos += block - pos % block  # the block's tail is padding
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        pending += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            pending = b""
            yield record
