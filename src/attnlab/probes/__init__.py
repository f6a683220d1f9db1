"""The computed experiments of docs/catalogue.md (no training): E03-E07, E10, E12, E14, E15, E19.

One module per group of experiments, each a set of pure functions of sizes and the params
seed returning typed results that offer ``metrics()`` and ``table()`` (see `records`):

- `averages`: E03 (the causal mean ignores order) and E04 (three ways to average);
- `scores`: E05 (Var q.k = d), E06 (effective tokens) and E07 (frozen rows);
- `accounting`: E10 (one block's parameter split) and E15 (GPT-2 small);
- `attention`: E12 (permutation equivariance) and E19 (parity with PyTorch);
- `cost` (one row, measured) and `sweep` (n doubling, budgets, fits): E14;
- `figures` (E06, E07) and `cost_figure` (E14); `records` and `seeding` are shared.

Stage scripts import the modules themselves, so each stage's deps list exactly the code
that can change its results.
"""
