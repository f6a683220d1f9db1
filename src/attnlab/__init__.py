"""attnlab: the experiments of "attention and the transformer block, derived from an average"."""

from attnlab import mkl_avx512

__version__ = "0.1.0"

# Before anything imports torch: oneMKL picks its kernels when torch loads it (mkl_avx512.py).
mkl_avx512.enable()
