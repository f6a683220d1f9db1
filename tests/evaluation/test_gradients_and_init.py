"""E11's gradient norms per block, parameters per component, and the rebuilt initial model."""

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from attnlab.evaluation import block_gradient_norms, build_initial_model, parameter_counts
from attnlab.evaluation.gradients import eval_mode_gradient_norms
from attnlab.models import LanguageModel, ModelConfig, count_parameters_by_formula

V = 32
CFG = ModelConfig(vocab_size=V, d_model=16, n_head=2, n_layer=3, block_size=16)


def _batch(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    windows = torch.randint(0, V, (4, 17), generator=torch.Generator().manual_seed(seed))
    return windows[:, :-1], windows[:, 1:]


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_one_gradient_norm_per_block_and_their_ratio(norm):
    cfg = dataclasses.replace(CFG, norm=norm)
    model = build_initial_model(cfg, seed=0).train()
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    x, y = _batch()
    norms = block_gradient_norms(model, x, y)
    assert list(norms) == [
        f"{prefix}/{key}"
        for prefix in ("grad_norm", "grad_norm_weights_rms", "grad_norm_attention", "grad_norm_mlp")
        for key in (*(f"block_{i:02d}" for i in range(3)), "ratio_last_first")
    ]
    assert all(value > 0 for value in norms.values())
    ratio = norms["grad_norm/block_02"] / norms["grad_norm/block_00"]
    assert norms["grad_norm/ratio_last_first"] == pytest.approx(ratio)
    for name, p in model.named_parameters():  # measured before any step: nothing moved
        assert torch.equal(p, before[name]), name


def _measured_and_by_hand() -> tuple[dict[str, float], LanguageModel]:
    """The measured norms, and the same initial model after a backward pass of our own."""
    x, y = _batch()
    norms = block_gradient_norms(build_initial_model(CFG, seed=0).train(), x, y)
    reference = build_initial_model(CFG, seed=0).train()
    F.cross_entropy(reference(x).flatten(0, 1), y.flatten()).backward()
    return norms, reference


def test_a_block_norm_is_the_norm_of_its_concatenated_gradients():
    norms, reference = _measured_and_by_hand()
    flat = torch.cat([p.grad.flatten() for p in reference.blocks[1].parameters()])
    assert norms["grad_norm/block_01"] == pytest.approx(flat.norm().item(), rel=1e-5)


def test_the_weights_rms_norm_is_the_rms_of_the_linear_weights_gradients_by_hand():
    norms, reference = _measured_and_by_hand()
    by_hand = []
    for block in reference.blocks:
        # The weight matrices, found as the Linear layers' weights: no bias, no LayerNorm.
        grads = [m.weight.grad for m in block.modules() if isinstance(m, torch.nn.Linear)]
        squares = sum(float((g.double() ** 2).sum()) for g in grads)
        entries = sum(g.numel() for g in grads)
        by_hand.append((squares / entries) ** 0.5)
    assert len(grads) == 4  # q/k/v together, the output, the MLP's two: the matrices there are
    for b, value in enumerate(by_hand):
        assert norms[f"grad_norm_weights_rms/block_{b:02d}"] == pytest.approx(value, rel=1e-9)
    ratio = by_hand[-1] / by_hand[0]
    assert norms["grad_norm_weights_rms/ratio_last_first"] == pytest.approx(ratio, rel=1e-9)
    # Not the all-parameter norm under another name: the biases and gains are left out.
    every = torch.cat([p.grad.flatten() for p in reference.blocks[0].parameters()])
    assert by_hand[0] != pytest.approx(every.norm().item() / every.numel() ** 0.5, rel=1e-3)


@pytest.mark.parametrize(
    ("prefix", "part"), [("grad_norm_attention", "mixer"), ("grad_norm_mlp", "mlp")]
)
def test_an_attention_or_mlp_norm_is_the_norm_of_that_parts_gradients_by_hand(prefix, part):
    norms, reference = _measured_and_by_hand()
    for b, block in enumerate(reference.blocks):
        flat = torch.cat([p.grad.flatten() for p in getattr(block, part).parameters()])
        assert norms[f"{prefix}/block_{b:02d}"] == pytest.approx(flat.norm().item(), rel=1e-5)
    # The two parts and the LayerNorms make the block: each part is less than the whole.
    assert norms[f"{prefix}/block_00"] < norms["grad_norm/block_00"]


def test_a_block_without_an_mlp_has_no_mlp_norm():
    model = build_initial_model(dataclasses.replace(CFG, mlp=False), seed=0).train()
    norms = block_gradient_norms(model, *_batch())
    assert "grad_norm_attention/block_00" in norms
    assert not any(key.startswith("grad_norm_mlp/") for key in norms)


def test_eval_mode_norms_drop_dropout_and_equal_training_mode_without_it():
    x, y = _batch()
    plain = build_initial_model(CFG, seed=0).train()
    assert eval_mode_gradient_norms(plain, x, y) == {
        key.replace("grad_norm/", "grad_norm_eval/"): value
        for key, value in block_gradient_norms(plain, x, y).items()
        if key.startswith("grad_norm/")
    }
    dropped = build_initial_model(dataclasses.replace(CFG, dropout=0.5), seed=0).train()
    in_eval = eval_mode_gradient_norms(dropped, x, y)
    assert dropped.training  # left in the mode it came in
    torch.manual_seed(0)
    in_training = block_gradient_norms(dropped, x, y)
    assert in_eval["grad_norm_eval/block_00"] != pytest.approx(
        in_training["grad_norm/block_00"], rel=1e-3
    )
    reference = build_initial_model(dataclasses.replace(CFG, dropout=0.5), seed=0).eval()
    F.cross_entropy(reference(x).flatten(0, 1), y.flatten()).backward()
    flat = torch.cat([p.grad.flatten() for p in reference.blocks[2].parameters()])
    assert in_eval["grad_norm_eval/block_02"] == pytest.approx(flat.norm().item(), rel=1e-5)


def test_parameter_counts_are_the_module_count_per_component():
    model = build_initial_model(CFG, seed=0)
    counts = parameter_counts(model)
    expected = {f"params/{k}": v for k, v in count_parameters_by_formula(CFG).items()}
    assert counts == expected
    assert counts["params/total"] == sum(p.numel() for p in model.parameters())


def test_the_initial_model_is_a_function_of_the_seed_and_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    state = torch.get_rng_state()
    first, again = build_initial_model(CFG, seed=7), build_initial_model(CFG, seed=7)
    assert torch.equal(torch.get_rng_state(), state)
    other = build_initial_model(CFG, seed=8)
    torch.manual_seed(7)
    by_hand = LanguageModel(CFG)
    for name, p in first.state_dict().items():
        assert torch.equal(p, again.state_dict()[name]), name
        assert torch.equal(p, by_hand.state_dict()[name]), name
    assert not torch.equal(first.tok.weight, other.tok.weight)


def test_the_gradient_norms_of_a_dropout_model_do_not_depend_on_the_process_s_random_state():
    # PyTorch seeds its global generator at random on start-up: the dropout masks of the
    # measurement must come from the root seed, or each evaluate run records other norms.
    from attnlab.evaluation.measurements import EvaluationInputs, evaluate_variant

    cfg = ModelConfig(vocab_size=64, d_model=32, n_layer=2, n_head=4, block_size=16, dropout=0.5)
    inputs = EvaluationInputs(
        model=build_initial_model(cfg, seed=1),
        seed=7,
        init_seed=1,
        val_tokens=torch.randint(0, 64, (400,), generator=torch.Generator().manual_seed(2)),
        train_tokens=torch.randint(0, 64, (400,), generator=torch.Generator().manual_seed(3)),
        batch_size=4,
        lengths=(16,),
        stats_windows=4,
        train_batch_size=4,
    )
    records = []
    for state in (11, 12):
        torch.manual_seed(state)
        records.append(evaluate_variant(inputs, ["grad_norms"]))
    norms = [{k: v for k, v in r.items() if k.startswith("grad_norm/")} for r in records]
    assert norms[0] and norms[0] == norms[1]
