"""E12 and E19: our multi-head attention is permutation-equivariant and matches PyTorch's."""

from attnlab.probes.attention import equivariance_probe, parity_probe


def test_attention_without_positions_or_mask_commutes_with_a_permutation():
    result = equivariance_probe(batch=2, tokens=16, d_model=32, n_head=4, seed=0)
    metrics = result.metrics()
    assert metrics["e12/max_abs_diff"] <= 1e-6
    # The contrasts must break it, or the probe could not tell the difference.
    for case in ("none-causal", "rope-none", "alibi-none"):
        assert metrics[f"e12/contrast/{case}"] > 1e-3, case


def test_our_attention_equals_pytorchs_in_float32():
    result = parity_probe(batch=2, tokens=32, d_model=64, n_head=4, seed=0)
    assert {(c.qkv_bias, c.reference) for c in result.cases} == {
        (bias, ref)
        for bias in (False, True)
        for ref in ("nn_multihead_attention", "sdpa", "own_masked_softmax")
    }
    for case in result.cases:
        assert case.max_abs_diff <= 1e-6, case
        assert case.mean_abs_output > 1e-3  # a diff of 1e-6 on outputs that are not ~0
