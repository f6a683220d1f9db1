"""`ModelConfig` under the module name :mod:`attnlab.training.capacity` imports it by.

The class lives in :mod:`attnlab.architecture` (also exported by :mod:`attnlab.models`).
"""

from attnlab.architecture import ModelConfig

__all__ = ["ModelConfig"]
