"""Package exports that import their module on first use (PEP 562).

A package that holds both light names and heavy modules (:mod:`attnlab.training`: a run's
configuration beside the trainer; :mod:`attnlab.metrics`: the scores beside their Lightning
callbacks) would otherwise make every reader pay for Lightning and W&B: 3 s of a quiet
2-core machine, 10 s under load, in each of the hundred-odd evaluate and Winograd stages
of a ``dvc repro``. Its ``__init__`` imports the light modules as usual and hands the
heavy ones to :func:`lazy_exports`.
"""

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``package.<module>`` when one of its names is read.

    Args:
        package: The package's ``__name__``.
        exports: For each submodule (relative name), the names the package re-exports from it.
            None may be a submodule's name: importing that submodule would set the package's
            attribute to the module, hiding the export.

    Returns:
        The function to bind as the package's ``__getattr__``. Each name it resolves is
        stored on the package, so it is looked up only once.
    """
    owner = {name: f"{package}.{module}" for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in owner:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(owner[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
