"""attnlab: the experiments of "attention and the transformer block, derived from an average"."""

__version__ = "0.1.0"
