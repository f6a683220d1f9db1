"""Stage ``winograd-score@<variant>-<seed>``: ask a trained Winograd run who *it* is (E16, E17)."""

from typing import Annotated

import typer

from attnlab import paths, result_code
from attnlab.config import load_params
from attnlab.errors import AttnlabError
from attnlab.runs.model_folder import load_trained_model
from attnlab.stages.command import DEFAULT_PARAMS, ParamsFile, RunSeed, run_stage
from attnlab.winograd.scoring import winograd_metrics
from attnlab.winograd.task_files import read_sentences, read_vocabulary


def main(
    variant: Annotated[str, typer.Option("--variant", help="The Winograd variant to score.")],
    seed: RunSeed,
    params: ParamsFile = DEFAULT_PARAMS,
) -> None:
    """Score the answer after `so the` on the held-out and the train sentences.

    Reads: params winograd.variants.<variant> (its name's first word is its task);
    data/winograd/models/<variant>/seed-<seed>/; data/winograd/<task>.parquet.
    Writes: reports/metrics/winograd/<variant>/seed-<seed>.json: the run's seed, init_seed
    and data_seed; winograd/acc, winograd/wrong_noun,
    winograd/neither (shares of the held-out answers that are the referent, the other noun
    of the pair, neither noun; they sum to 1), winograd/acc_crosser and winograd/acc_crossed
    (held-out accuracy by the adjective's role), winograd/sentences, and the same on the
    train split as winograd/train_*.
    """
    task = load_params(params).winograd.task_of(variant)
    path = paths.winograd_task(task)
    folder = paths.winograd_model_dir(variant, seed)
    trained = load_trained_model(folder)
    model = trained.model
    if trained.name != variant or trained.config.get("seed") != seed:
        raise AttnlabError(f"{folder} does not hold {variant!r} trained with seed {seed}")
    if model.config.vocab_size != len(read_vocabulary(path)):
        raise AttnlabError(f"{folder} was not trained on the words of {path}")
    metrics = winograd_metrics(
        model, read_sentences(path, "train"), read_sentences(path, "held_out")
    )
    paths.write_metrics(
        paths.winograd_score_metrics(variant, seed),
        {**trained.seeds, **metrics, result_code.CODE: result_code.stamp("winograd-score")},
    )
    shown = ("acc", "wrong_noun", "neither", "sentences", "train_acc")
    said = ", ".join(f"{key} {metrics['winograd/' + key]}" for key in shown)
    print(f"{paths.run(variant, seed)}: {said}")


if __name__ == "__main__":
    run_stage(main)
