"""yamlgrad's hand-written runtime: Tensor, Node, Edge, AccumulateGrad, SavedVariable,
the Engine, grad mode, and the helpers that generated code and formulas call."""
