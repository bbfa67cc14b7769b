"""The op families: each forward kernel beside its backward helper.

Kernels run on ndarrays; backward helpers run on ndarrays in a first-order
backward and on Tensors (through the recorded ops) under `create_graph=True`.
This layer imports the autograd core and the wrappers, never generated/.
"""
