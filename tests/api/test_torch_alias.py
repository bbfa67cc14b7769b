"""`yamlgrad.install_as_torch()` and `python -m yamlgrad`: PyTorch programs,
unmodified, on yamlgrad; PyTorch's module paths; refusing the real torch."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import yamlgrad

from tests.api.test_programs import yamlgrad_as_torch

SCRIPT = """\
import sys
import torch
from torch import nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.nn.modules.module import Module
import torch.optim.sgd

print(torch.__name__, sys.argv[1:], __name__)
torch.manual_seed(0)
model = nn.Linear(2, 1)
x = Variable(torch.randn(4, 2))
loss = F.mse_loss(model(x), torch.zeros(4, 1))
loss.backward()
print(isinstance(model, Module), type(model.weight.grad).__module__.split(".")[0])
"""


def test_python_m_yamlgrad_runs_a_script_with_torch_as_yamlgrad(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, "-m", "yamlgrad", str(script), "--lr", "0.1"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "yamlgrad ['--lr', '0.1'] __main__",
        "True yamlgrad",
    ]


def test_python_m_yamlgrad_without_a_script_prints_its_usage() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "yamlgrad"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2 and "usage: python -m yamlgrad" in done.stderr


def test_every_torch_path_is_yamlgrads_module_and_missing_ones_say_so() -> None:
    with yamlgrad_as_torch():
        torch = importlib.import_module("torch")
        assert torch is yamlgrad
        nn = importlib.import_module("torch.nn")
        assert nn is yamlgrad.nn
        assert importlib.import_module("torch.nn.functional") is yamlgrad.nn.functional
        # The import system must not replace the function with its module.
        importlib.import_module("torch.autograd.gradcheck")
        assert callable(torch.autograd.gradcheck)
        with pytest.raises(ModuleNotFoundError, match=r"'torch\._C'.*'yamlgrad\._C'"):
            importlib.import_module("torch._C")
        with pytest.raises(ModuleNotFoundError, match="torch.nn.modules.nosuch"):
            importlib.import_module("torch.nn.modules.nosuch")
    assert "torch" not in sys.modules or sys.modules["torch"] is not yamlgrad


def test_installing_while_the_real_torch_is_imported_is_refused() -> None:
    pytest.importorskip("torch")
    with pytest.raises(ImportError, match="the real torch is already imported"):
        yamlgrad.install_as_torch()


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("torch.nn.modules", "Module"),
        ("torch.nn.modules.module", "Module"),
        ("torch.nn.modules.linear", "Linear"),
        ("torch.nn.modules.conv", "Conv2d"),
        ("torch.nn.modules.loss", "MSELoss"),
        ("torch.nn.modules.activation", "ReLU"),
        ("torch.nn.modules.container", "Sequential"),
        ("torch.nn.modules.batchnorm", "BatchNorm1d"),
        ("torch.nn.modules.dropout", "Dropout"),
        ("torch.nn.modules.sparse", "Embedding"),
        ("torch.nn.modules.normalization", "LayerNorm"),
        ("torch.nn.modules.pooling", "MaxPool2d"),
        ("torch.nn.modules.flatten", "Flatten"),
        ("torch.nn.parameter", "Parameter"),
        ("torch.nn.init", "xavier_uniform_"),
        ("torch.nn.utils.clip_grad", "clip_grad_norm_"),
        ("torch.optim.sgd", "SGD"),
        ("torch.optim.adam", "Adam"),
        ("torch.optim.adamw", "AdamW"),
        ("torch.optim.rmsprop", "RMSprop"),
        ("torch.optim.adagrad", "Adagrad"),
        ("torch.optim.optimizer", "Optimizer"),
        ("torch.optim.lr_scheduler", "_LRScheduler"),
        ("torch.autograd.variable", "Variable"),
        ("torch.autograd.function", "Function"),
        ("torch.autograd.grad_mode", "no_grad"),
        ("torch.utils.data.dataset", "TensorDataset"),
        ("torch.utils.data.dataloader", "DataLoader"),
        ("torch.utils.data.sampler", "RandomSampler"),
        ("torch.testing", "assert_close"),
        ("torch.types", "Number"),
        ("torch.overrides", "has_torch_function"),
        ("torch.backends.cudnn", "deterministic"),
        ("torch.cuda.amp", "GradScaler"),
        ("torch.nn.modules.conv", "_ConvNd"),
        ("torch.nn.modules.batchnorm", "_BatchNorm"),
        ("torch.nn.modules.loss", "_Loss"),
        ("torch.nn.modules.module", "_addindent"),
        ("torch.nn.modules.utils", "_pair"),
        ("torch.nn.common_types", "_size_2_t"),
        ("torch.utils.hooks", "RemovableHandle"),
        ("torch.utils.data._utils.collate", "default_collate"),
        ("torch.optim.optimizer", "required"),
    ],
)
def test_pytorch_module_paths_import(path: str, name: str) -> None:
    with yamlgrad_as_torch():
        module = importlib.import_module(path)
        assert hasattr(module, name), (path, name)
        public = importlib.import_module("yamlgrad" + path[len("torch") :])
        assert getattr(public, name) is getattr(module, name)


def test_a_layer_added_to_nn_is_found_under_pytorchs_paths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The layout paths are views of the namespace: a class another module of
    yamlgrad adds to `nn` later needs no entry to be found under them."""

    class GRU(yamlgrad.nn.Module):
        pass

    monkeypatch.setattr(yamlgrad.nn, "GRU", GRU, raising=False)
    with yamlgrad_as_torch():
        rnn = importlib.import_module("torch.nn.modules.rnn")
        assert rnn.GRU is GRU
        assert importlib.import_module("torch.nn.modules").GRU is GRU
