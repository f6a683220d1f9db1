"""Every ``dvc exp run -S`` of the README names a key the way DVC accepts it.

DVC's ``-S key=value`` changes a key params.yaml holds and refuses a missing one; a key
that is added needs ``+key=value``. Most variants override only ``model``, so the README
must show the ``+`` form for their ``train`` keys, or its example fails for them.
"""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


def _holds(path: str) -> bool:
    node = PARAMS
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _set_params() -> list[str]:
    # Dotted keys only: the README also writes the placeholder `-S key=value`.
    return re.findall(r"-S (\+?[\w-]+(?:\.[\w-]+)+)=", README)


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
