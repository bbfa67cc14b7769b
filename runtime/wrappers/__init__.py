"""What the generated wrappers call: argument unpacking and binding, the autograd
steps of a wrapper (compute_requires_grad, collect_next_edges, set_history and its
siblings), kernel error texts, and Python's indexing and in-place assignment.

This layer imports the autograd core (runtime/autograd/) and nothing above it.
"""
