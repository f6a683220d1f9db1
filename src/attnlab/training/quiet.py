"""Lightning's banners and known-harmless warnings silenced at their source.

A train stage printed, 30 times per ``dvc repro``, which accelerators exist ("GPU
available: False, used: False", TPU, HPU), two tips to install Lightning's cloud
products, "`Trainer.fit` stopped: `max_steps=N` reached", a note that validation (the
``val/ppl`` curve) runs after every batch at tiny budgets, and a ``_pytree`` deprecation
warning that Lightning raises from inside itself. They drown the lines that matter: the
progress, the W&B run, real warnings. :func:`quiet_lightning` drops exactly those
messages, by their text; every other message and warning still shows.
"""

import logging
import re
import warnings

# rank_zero_info's logger, through which Lightning prints every banner and tip.
LIGHTNING_INFO = "lightning.pytorch.utilities.rank_zero"
BANNERS = re.compile(
    r"^(GPU available:|TPU available:|HPU available:|💡 Tip:|`Trainer.fit` stopped: `max_steps="
    r"|`Trainer\(val_check_interval=1\)` was configured)"  # a curve point every step
)
# Lightning 2.6 calls torch's deprecated LeafSpec check on every batch it moves.
HARMLESS_WARNINGS = ((r"`isinstance\(treespec, LeafSpec\)` is deprecated", r"lightning\.pytorch"),)


class _DropBanners(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not BANNERS.match(record.getMessage())


_FILTER = _DropBanners()


def quiet_lightning() -> None:
    """Drop Lightning's banners and its known-harmless warnings (idempotent)."""
    logger = logging.getLogger(LIGHTNING_INFO)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    for message, module in HARMLESS_WARNINGS:
        warnings.filterwarnings("ignore", message=message, module=module)
