"""Every ``dvc exp run -S`` of the manual (README, docs/reference.md) names a key DVC accepts.

DVC's ``-S key=value`` changes a key params.yaml holds and refuses a missing one; a key
that is added needs ``+key=value``, and a key of a file beside params.yaml needs that
file first (``-S winograd.yaml:winograd.train.steps=500``). Most variants override only
``model``, so the README must show the ``+`` form for their ``train`` keys, or its example
fails for them.
"""

import re
from pathlib import Path

import yaml

from attnlab.config.files import DEFAULT_FILE, file_of, read_params_mapping

ROOT = Path(__file__).resolve().parents[1]
# The manual: the README and the reference it links to (docs/reference.md).
README = "\n".join(
    (ROOT / path).read_text(encoding="utf-8") for path in ("README.md", "docs/reference.md")
)
PARAMS = read_params_mapping(ROOT / "params.yaml")


def _holds(path: str) -> bool:
    node = PARAMS
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


# A dotted key after its file, if any: the README also writes the placeholder `-S key=value`.
SET_PARAM = r"-S (?:([\w-]+\.yaml):)?(\+?[\w-]+(?:\.[\w-]+)+)="


def _set_params() -> list[str]:
    return [key for _, key in re.findall(SET_PARAM, README)]


def test_every_set_param_names_the_file_that_holds_it():
    found = re.findall(SET_PARAM, README)
    assert any(name for name, _ in found), "no -S example of a file beside params.yaml"
    for name, key in found:
        assert (name or DEFAULT_FILE) == file_of(key.lstrip("+").split(".")[0]), (name, key)


def test_every_set_param_exists_and_every_added_one_does_not_yet():
    keys = _set_params()
    assert keys
    for key in keys:
        if key.startswith("+"):
            parent = key[1:].rsplit(".", 1)[0]
            assert not _holds(key[1:]) and _holds(parent.rsplit(".", 1)[0]), key
        else:
            assert _holds(key), f"-S {key}: params.yaml has no such key (DVC refuses it)"


def test_the_readme_shows_how_to_set_train_keys_of_a_variant_without_them():
    bare = {name for name, over in PARAMS["variants"].items() if "train" not in (over or {})}
    assert bare, "every variant overrides train: this test has nothing to check"
    shown = {key.split(".")[1] for key in _set_params() if key.startswith("+variants.")}
    assert shown & bare, "no `-S +variants.<v>.train...` example for a variant lacking train"


def test_every_readme_experiment_gives_params_that_load():
    # DVC accepting a key is not enough: the loader refuses params that break a rule
    # (a row changed without its protocol variants, for one), so each example must load.
    import copy

    from attnlab.config import parse_params

    commands = [line for line in README.splitlines() if "dvc exp run" in line and "-S " in line]
    assert commands
    for command in commands:
        params = copy.deepcopy(PARAMS)
        for key, value in re.findall(
            r"-S (?:[\w-]+\.yaml:)?\+?([\w-]+(?:\.[\w-]+)+)=(\S+)", command
        ):
            *parents, leaf = key.split(".")
            node = params
            for part in parents:
                if node.get(part) is None:  # an override section the variant lacks
                    node[part] = {}
                node = node[part]
            node[leaf] = yaml.safe_load(value)
        parse_params(params)
