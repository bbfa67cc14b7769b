"""The generator: derivatives.yaml -> generated/ (torchgen's tools/autograd, in Python)."""
