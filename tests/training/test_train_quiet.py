"""A training run's output: no Lightning banners or known-harmless warnings, real ones kept."""

import logging
import warnings

from train_helpers import shrunk_params

from attnlab.training.quiet import LIGHTNING_INFO, quiet_lightning


def test_banners_are_dropped_and_other_lightning_lines_kept(caplog):
    quiet_lightning()
    quiet_lightning()  # twice: still one filter
    logger = logging.getLogger(LIGHTNING_INFO)
    assert len(logger.filters) == 1
    with caplog.at_level(logging.INFO, logger=LIGHTNING_INFO):
        logger.info("GPU available: False, used: False")
        logger.info("💡 Tip: For seamless cloud logging and experiment tracking, try")
        logger.info("`Trainer.fit` stopped: `max_steps=4` reached.")
        logger.info("Restoring states from the checkpoint path at last.ckpt")
    assert [r.getMessage() for r in caplog.records] == [
        "Restoring states from the checkpoint path at last.ckpt"
    ]


def test_the_pytree_warning_is_silenced_and_real_warnings_still_show():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        quiet_lightning()
        harmless = "`isinstance(treespec, LeafSpec)` is deprecated, use TreeSpec.is_leaf()"
        warnings.warn_explicit(harmless, FutureWarning, "_pytree.py", 21, "lightning.pytorch.x")
        warnings.warn_explicit("a real problem", UserWarning, "x.py", 1, "lightning.pytorch.x")
        warnings.warn_explicit(harmless, FutureWarning, "mine.py", 1, "attnlab.mine")
    assert [str(w.message) for w in caught] == ["a real problem", harmless]


def test_a_training_prints_no_banner(train_in_process, caplog):
    with caplog.at_level(logging.INFO):
        train_in_process(shrunk_params(steps=4), "ladder-mlp")
    shown = [r.getMessage() for r in caplog.records]
    assert not [line for line in shown if "available:" in line or "Tip:" in line], shown
    assert any(line.startswith("ladder-mlp step 4/4 loss ") for line in shown), shown
    assert not any("loss -" in line for line in shown), shown
