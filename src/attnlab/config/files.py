"""Which params file beside ``params.yaml`` holds which section, and reading them as one.

The knobs are split by domain so that each file reads on its own: ``params.yaml`` holds the
data and the language models (DVC's default params file, so its keys need no prefix after
``-S``), and five files beside it hold the seeds, the computed experiments, the Winograd
task, the sweeps and the knobs that change no result. Each file keeps its sections'
top-level names (``winograd.yaml`` holds ``winograd:``), so a key is spelled the same
everywhere: in ``dvc.yaml``, in ``dvc exp show`` and after ``-S winograd.yaml:``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from attnlab.errors import ParamsError

DEFAULT_FILE = "params.yaml"

# The sections of each file beside params.yaml; every other section is params.yaml's.
DOMAIN_FILES: dict[str, tuple[str, ...]] = {
    "seeds.yaml": ("seeds", "extra_seeds"),
    "probes.yaml": ("probes", "cost"),
    "winograd.yaml": ("winograd",),
    "sweeps.yaml": ("sweeps",),
    "runtime.yaml": ("runtime",),
}


def file_of(section: str) -> str:
    """The params file (a name beside params.yaml) that holds top-level ``section``."""
    for name, sections in DOMAIN_FILES.items():
        if section in sections:
            return name
    return DEFAULT_FILE


def params_files(params: Path | str) -> list[Path]:
    """``params`` (a params.yaml) and the domain files beside it, in reading order."""
    params = Path(params)
    return [params, *(params.with_name(name) for name in DOMAIN_FILES)]


# YAML 1.2's floats, which DVC reads params with (ruamel): unlike YAML 1.1 (PyYAML's safe
# loader) they need no dot in the mantissa nor a sign in the exponent. DVC writes a small
# `-S` value back as `1e-05`; read as YAML 1.1 it would be the text '1e-05'.
_FLOAT_TAG = "tag:yaml.org,2002:float"
_YAML_12_FLOAT = re.compile(
    r"""^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)


class _ParamsLoader(yaml.SafeLoader):
    """YAML's safe loader reading floats as DVC does, refusing a key given twice in a mapping.

    YAML itself keeps the last of two equal keys; DVC refuses them, and so does this loader.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


# The safe loader's resolvers with its YAML 1.1 float replaced by YAML 1.2's.
_ParamsLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _FLOAT_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_ParamsLoader.add_implicit_resolver(_FLOAT_TAG, _YAML_12_FLOAT, list("-+0123456789."))


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open(encoding="utf-8") as handle:  # a stream: YAML's marks name the file
            raw = yaml.load(handle, Loader=_ParamsLoader)  # noqa: S506 - a safe loader
    except FileNotFoundError:
        raise ParamsError(f"{path}: no such params file") from None
    except yaml.YAMLError as err:
        raise ParamsError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(raw, dict):
        raise ParamsError(f"{path}: expected a mapping at the top level")
    return raw


def read_params_mapping(params: Path | str) -> dict[str, Any]:
    """Every params file beside ``params`` read into one mapping, section by section.

    Raises:
        ParamsError: a file is missing or is not YAML, or a section sits in a file that is
            not its own (the message names the file it belongs in).
    """
    merged: dict[str, Any] = {}
    for path in params_files(params):
        for section, value in _read(path).items():
            home = file_of(str(section))
            if home != path.name:
                raise ParamsError(f"{path}: section {section!r} belongs in {home}")
            merged[section] = value
    return merged


def write_params_mapping(params: Path | str, mapping: dict[str, Any]) -> None:
    """Write ``mapping`` back as the params files beside ``params``, each its own sections.

    For tools and tests that build a project's params from a mapping; users edit the files
    (or use ``-S``), which keeps their comments.
    """
    for path in params_files(params):
        sections = {key: value for key, value in mapping.items() if file_of(key) == path.name}
        path.write_text(yaml.safe_dump(sections, sort_keys=False), encoding="utf-8")
