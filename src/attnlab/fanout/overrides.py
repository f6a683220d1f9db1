"""What a ``-S`` mistake is told: DVC's reason, the key it probably meant, a near-duplicate name.

Serves knob changes over the whole catalogue (``attnlab repro -S``): a misspelt key or
variant name must fail before any stage runs, in one line that says what DVC refused and
what was probably meant, instead of DVC's bare "Invalid `--set-param` value" or a new
variant trained under a misspelt name.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from attnlab.errors import AttnlabError

# A new variant this many edits or fewer from an existing name is taken for a typo of it.
NEAR_EDITS = 2


def edit_distance(a: str, b: str) -> int:
    """Edits that turn ``a`` into ``b``: insert, delete or replace a character, or swap two.

    The optimal string alignment distance: ``mpl`` is one edit (a swap) from ``mlp``.
    """
    before, previous = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if before is not None and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, before[j - 2] + 1)
            current.append(best)
        before, previous = previous, current
    return previous[-1]


def closest(name: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` fewest edits from ``name`` (the first of equals); None if empty."""
    return min(names, key=lambda other: edit_distance(name, other), default=None)


def closest_key(mapping: Mapping[str, Any], dotted: str) -> str | None:
    """The existing key nearest ``dotted``: each missing part replaced by its closest sibling.

    None when ``dotted`` leaves the mappings (a part under a number or a list).
    """
    node: Any = mapping
    parts = []
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or not node:
            return None
        names = [str(key) for key in node]
        found = part if part in names else closest(part, names)
        parts.append(found)
        node = next(value for key, value in node.items() if str(key) == found)
    return ".".join(parts)


def dvc_reason(err: BaseException) -> str:
    """The first line of the innermost message DVC's exception wraps.

    DVC says only "Invalid `--set-param` value"; its causes say why ("Key 'scal' is not
    in struct", "missing EQUAL at '<EOF>'").
    """
    reason, cause = str(err), _cause(err)
    while cause is not None:
        lines = str(cause).strip().splitlines()
        if lines and lines[0] != "None":  # ANTLR's parse errors have no message
            reason = lines[0]
        cause = _cause(cause)
    return reason


def _cause(err: BaseException) -> BaseException | None:
    """The exception behind ``err``, as a traceback shows it ("During handling ...")."""
    return err.__cause__ or (None if err.__suppress_context__ else err.__context__)


def key_of(change: str) -> str:
    """The dotted key of one override (``+variants.x.train.lr=0.002``: ``variants.x.train.lr``)."""
    return change.lstrip("+~").partition("=")[0]


def refusal(shown: str, change: str, err: BaseException, params: Mapping[str, Any]) -> AttnlabError:
    """DVC's refusal of ``change``, with the closest existing key if its key is not one.

    Args:
        shown: The override as the user wrote it (``winograd.yaml:winograd.train.steps=1``).
        change: The override within its file (``winograd.train.steps=1``).
        err: DVC's exception.
        params: Every params file's sections, before the change.
    """
    message = f"-S {shown}: {dvc_reason(err)}"
    key = key_of(change)
    section, _, rest = key.partition(".")
    name = rest.partition(".")[0]
    aliases = params.get("aliases") or {}
    if section == "variants" and name in aliases:  # the nearest variant is not what it reads
        message += f" ({name} is an alias of {aliases[name]}: it has no knobs of its own)"
    elif not change.startswith("+"):  # a `+` key is meant to be new: DVC says it exists
        meant = closest_key(params, key)
        if meant is not None and meant != key:
            message += f" (did you mean {meant}?)"
    return AttnlabError(message)


def added_variant(change: str, variants: Mapping[str, Any]) -> str | None:
    """The variant ``change`` adds to params ``variants`` (``+variants.<name>...``), if any."""
    section, _, rest = key_of(change).partition(".")
    name = rest.partition(".")[0]
    if change.startswith("+") and section == "variants" and name and name not in variants:
        return name
    return None


def check_added_variant(change: str, name: str, names: Iterable[str]) -> None:
    """Refuse a ``+`` that adds variant ``name`` one or two edits from an existing name.

    ``++`` (DVC's "add or override") adds it all the same: the way to mean a new name.

    Raises:
        AttnlabError: the name is that close to one of ``names`` (the nearest is named).
    """
    if change.startswith("++"):
        return
    meant = closest(name, names)
    if meant is not None and edit_distance(name, meant) <= NEAR_EDITS:
        raise AttnlabError(
            f"-S {change}: adds a variant {name}; did you mean {meant}? (to add {name}, "
            f"write -S +{change})"
        )
