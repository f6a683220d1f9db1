"""The base of every params section: frozen, strict, and closed to unknown keys."""

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A frozen params section that rejects unknown keys and values of the wrong type.

    Strict mode keeps YAML honest: ``"5"`` is not an int and ``true`` is not a number,
    while an int is still accepted where a float is expected (``lr: 1`` means 1.0).
    ``.inf`` and ``.nan`` are refused everywhere: no knob of attnlab means anything at
    infinity, and a NaN passes every ``<=`` check unnoticed.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)
