"""The op families: each forward kernel beside its backward helper.

elementwise, reductions, linalg, shapes (views, shape manipulation), indexing
(gather/scatter, advanced indexing), convolutions, pooling2d and pooling (with the
window arithmetic they share in windows), normalization, activations, gates (glu
and the thresholding activations), losses, composites (bodies of composite entries), special (scipy.special's functions),
special_kernels (fast forms of special functions, used where they beat
scipy's at no more error than PyTorch's kernels; benchmarks/special_accuracy.md),
special_polynomials (torch.special's orthogonal polynomials), scatters (index_put,
scatter_reduce, index_reduce, masked_scatter), statistics (aminmax, var_mean,
std_mean, logcumsumexp, renorm, histc), margin_losses, blocks (narrow_copy,
unsafe_split, block_diag, nonzero, one_hot), counting (bincount, histogram,
isin, gcd, lcm, signbit, isposinf, isneginf, heaviside), gamma (mvlgamma), householder
(householder_product, ormqr), attention (the fused CPU attention and
_safe_softmax), linalg_spectral (svd, eigh), linalg_solves (slogdet, solve),
linalg_composites (the bodies of torch.linalg's composites: norms, cond,
multi_dot, ...), spectral (the discrete Fourier transforms torch.fft is built
on), resampling (padding, upsampling, shuffles, im2col), antialiasing (the
antialiased bilinear and bicubic upsampling), and common (private helpers several
families share; it imports no family, so no import cycle runs through it).

Kernels run on ndarrays; backward helpers run on ndarrays in a first-order
backward and on Tensors (through the recorded ops) under `create_graph=True`,
written once against `array_namespace` (namespace.py), to which each family
registers its kernels under PyTorch's op names.
Each module declares, as literal tuples the generator reads with ast
(tools/catalog.py), its KERNELS (callable from a `forward:`), its
BACKWARD_HELPERS (callable from formulas) and its COMPOSITE_HELPERS; a new family
module is found by scanning this folder, with no list to update.
This layer imports the autograd core and the wrappers, never generated/.
"""
