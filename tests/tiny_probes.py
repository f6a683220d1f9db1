"""The computed experiments' params shrunk to seconds, for tests that run their stages."""


def shrink_probes(params: dict) -> None:
    """Shrink ``probes`` and ``cost`` in place: tiny widths, few pairs, E14 on the CPU."""
    probes = params["probes"]
    probes.update(dims=[4, 64], pairs=2000, rows=50, example_d=64, widths=[128, 256])
    probes["shuffle"].update(tokens=16, width=8)
    probes["equivariance"].update(tokens=8, d_model=16, n_head=2)
    probes["parity"].update(tokens=8, d_model=16, n_head=2)
    params["cost"].update(device="cpu", max_tokens=512, warmup=0, repeats=1)
