"""Behaviours where yamlgrad once differed from torch, each run on both and
compared: what is printed, raised or returned must be the same."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CASES = {
    "set_grad_enabled_decorator": """
        @torch.set_grad_enabled(False)
        def f():
            return torch.is_grad_enabled()
        print(torch.is_grad_enabled(), f(), torch.is_grad_enabled())
    """,
    "inference_mode_false_inside": """
        with torch.inference_mode():
            with torch.inference_mode(False):
                x = torch.ones(2, requires_grad=True)
                print(torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
                      (x * 2).requires_grad)
    """,
    "enable_grad_inside_inference_mode": """
        a = torch.ones(2, requires_grad=True)
        with torch.inference_mode():
            with torch.enable_grad():
                y = a * a
                print(torch.is_grad_enabled(), y.requires_grad, y.grad_fn)
    """,
    "materialize_grads_create_graph": """
        x = torch.ones(2, requires_grad=True)
        z = torch.ones(2, requires_grad=True)
        gx, gz = torch.autograd.grad((x * x).sum(), [x, z], create_graph=True,
                                     materialize_grads=True)
        print(gx.requires_grad, gz.requires_grad, gz.tolist())
    """,
    "post_accumulate_hook_returning": """
        x = torch.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda p: p * 2)
        try:
            (x * 2).sum().backward()
        except RuntimeError as e:
            print(e)
    """,
    "grad_checks_outputs_first": """
        a = torch.ones(2, requires_grad=True)
        for f in (lambda: torch.autograd.grad(a * 2, torch.ones(1)),
                  lambda: torch.autograd.grad(torch.ones(1), torch.ones(1)),
                  lambda: torch.autograd.grad(a * 2, torch.ones(1), torch.ones(3))):
            try:
                f()
            except RuntimeError as e:
                print(str(e).replace("yamlgrad", "torch"))
    """,
    "inplace_hint_under_anomaly": """
        import warnings
        warnings.simplefilter("ignore")
        a = torch.ones(2, requires_grad=True)
        with torch.autograd.detect_anomaly():
            b = a.sigmoid()
            b.mul_(2)
            try:
                b.sum().backward()
            except RuntimeError as e:
                print(str(e).split("Hint:")[1])
    """,
    "einsum": """
        m, n = torch.arange(6.).reshape(2, 3), torch.arange(12.).reshape(3, 4)
        print(torch.einsum(m, [0, 1], n, [1, 2], [0, 2]).tolist())
        print(torch.einsum(m, [0, 1], n, [1, 2]).tolist())
        print(torch.einsum(m, [Ellipsis, 1], [1]).tolist())
        for args in (("ij,jk->ik", torch.ones(2, 3), torch.ones(4, 5)),
                     ("ij,jk", torch.ones(2, 3))):
            try:
                torch.einsum(*args)
            except RuntimeError as e:
                print(e)
    """,
    "autograd_function_setup_context_and_vmap": """
        class Old(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
            @staticmethod
            def backward(ctx, g):
                return g * 2
        class New(torch.autograd.Function):
            generate_vmap_rule = True
            @staticmethod
            def forward(x, y):
                return x * y
            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(*inputs)
            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y, g * x
        class NoRule(New):
            generate_vmap_rule = False
        class OwnRule(NoRule):
            @staticmethod
            def vmap(info, in_dims, x, y):
                print("rule", info.batch_size, in_dims)
                return x * y, 0
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        y = torch.tensor([4., 5., 6.], requires_grad=True)
        out = New.apply(x, y)
        out.sum().backward()
        print(out.tolist(), x.grad.tolist(), type(out.grad_fn).__name__)
        print(torch.func.vmap(New.apply)(x.detach(), y.detach()).tolist())
        print(torch.func.vmap(OwnRule.apply)(x.detach(), y.detach()).tolist())
        for f, args in ((Old.apply, (x.detach(),)), (NoRule.apply, (x.detach(), y.detach()))):
            try:
                torch.func.vmap(f)(*args)
            except RuntimeError as e:
                print(e)
    """,
    "stack_module_state": """
        models = [torch.nn.Linear(3, 2) for _ in range(4)]
        params, buffers = torch.func.stack_module_state(models)
        print({k: (tuple(v.shape), v.requires_grad, v.is_leaf) for k, v in params.items()})
        out = torch.func.vmap(
            lambda p, b, x: torch.func.functional_call(models[0], (p, b), (x,)),
            in_dims=(0, 0, None))(params, buffers, torch.ones(5, 3))
        print(tuple(out.shape))
        try:
            torch.func.stack_module_state([])
        except RuntimeError as e:
            print(e)
    """,
    "legacy_api": """
        import numpy as np
        from torch.autograd import Variable
        t = torch.ones(2, 3)
        v = Variable(t, requires_grad=True)
        print(type(v).__name__, v.requires_grad, v is t, t.requires_grad,
              isinstance(t, Variable))
        print(t.ndimension(), t.nelement(), t.type(), t.type(torch.DoubleTensor).dtype)
        print(isinstance(t, torch.FloatTensor), isinstance(t, torch.LongTensor),
              torch.LongTensor(2).shape, torch.FloatTensor([1, 2]).dtype)
        print(t == None, t != None, t in [None], t == "a")
        print(torch.inf, torch.pi, torch.e, torch.newaxis)
        print(torch.finfo(torch.float32), torch.iinfo(torch.int32), torch.finfo().eps)
        print(torch.promote_types(torch.int32, torch.float32),
              torch.result_type(torch.tensor([1]), 2.5),
              torch.can_cast(torch.float32, torch.int32))
        print(type(np.exp(t)).__name__, np.exp(torch.tensor([1, 2])).dtype)
        print([1, 2, 3][torch.tensor(1)], t[: torch.tensor(1)].shape)
        try:
            torch.tensor([1, 2]).mean()
        except RuntimeError as e:
            print(e)
        print(torch.nn.functional.mse_loss(
            torch.zeros(2, 3), torch.ones(2, 3, dtype=torch.int64)).dtype)
        torch.set_num_threads(1)
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        print(torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(),
              torch.backends.cudnn.deterministic, torch.backends.mps.is_available())
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.cuda.amp.autocast():
                print((t @ t.T).dtype)
            scaler = torch.cuda.amp.GradScaler()
        print(scaler.is_enabled(), scaler.get_scale())
    """,
    "module_hooks": """
        import warnings
        torch.manual_seed(0)
        log = []
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(3, 2)
            def forward(self, x, scale):
                return self.fc(x).relu() * scale
        net = Net()
        with torch.no_grad():
            net.fc.weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
            net.fc.bias.copy_(torch.tensor([0.1, 0.2]))
        def full(m, gi, go):
            log.append(("full", type(m).__name__, [None if g is None else [round(v, 4) for v in g.flatten().tolist()] for g in gi], [[round(v, 4) for v in g.flatten().tolist()] for g in go]))
        def pre(m, go):
            log.append(("pre", [tuple(g.shape) for g in go]))
            return (go[0] * 2,)
        h1 = net.register_full_backward_hook(full)
        h2 = net.register_full_backward_pre_hook(pre)
        x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], requires_grad=True)
        out = net(x, 3.0)
        print(type(out.grad_fn).__name__)
        out.sum().backward()
        print(log); print(x.grad.tolist()); print(net.fc.weight.grad.tolist())
        log.clear()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = net(torch.ones(2, 3), 1.0)
            y.sum().backward()
        print(log, [str(i.message)[:60] for i in w])
        h1.remove(); h2.remove()
        try:
            net.register_backward_hook(lambda *a: None)
        except RuntimeError as e: print(e)
        lin = torch.nn.Linear(3, 2)
        lin.register_backward_hook(lambda m, gi, go: log.append(("old", len(gi), [None if g is None else tuple(g.shape) for g in gi])))
        log.clear()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lin(x).sum().backward()
        print(log, [str(i.message)[:50] for i in w])
        seq = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
        seq.register_backward_hook(lambda m, gi, go: None)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            seq(x).sum().backward()
        print([str(i.message)[:60] for i in w])
        # state dict hooks
        m = torch.nn.Linear(2, 1)
        m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("sdpre", prefix, keep_vars)))
        m._register_state_dict_hook(lambda mod, sd, prefix, meta: log.append(("sdpost", prefix, sorted(sd))))
        log.clear(); seqm = torch.nn.Sequential(m); print(sorted(seqm.state_dict())); print(log)
        def lpre(mod, sd, prefix, meta, strict, missing, unexpected, errors):
            log.append(("lpre", prefix, sorted(sd)))
            sd[prefix + "bias"] = torch.zeros(1)
        m.register_load_state_dict_pre_hook(lpre)
        def lpost(mod, keys):
            log.append(("lpost", sorted(keys.missing_keys), sorted(keys.unexpected_keys)))
            keys.unexpected_keys.clear()
        m.register_load_state_dict_post_hook(lpost)
        log.clear()
        r = seqm.load_state_dict({"0.weight": torch.ones(1, 2), "extra": torch.ones(1)})
        print(log, r, seqm[0].bias.tolist())
    """,
    "reduce_lr_on_plateau": """
        p = torch.nn.Parameter(torch.ones(1))
        opt = torch.optim.SGD([p], lr=1.0)
        s = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2, cooldown=1, min_lr=0.1)
        for metric in [5, 4, 4, 4, 4, 4, 4, 3.9999, 4, 4, 4, 4, 4, 4, 4, 4, 4]:
            s.step(metric)
            print(s.get_last_lr(), s.num_bad_epochs, s.cooldown_counter, s.best)
        s2 = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", threshold_mode="abs", threshold=0.5)
        for m in [1, 1.2, 1.6, 1.7]: s2.step(m)
        print(s2.best, s2.num_bad_epochs, sorted(k for k in s2.state_dict()))
        for args in ({"factor": 1.0}, {"mode": "avg"}, {"threshold_mode": "x"}, {"min_lr": [0.1, 0.2]}):
            try: torch.optim.lr_scheduler.ReduceLROnPlateau(opt, **args)
            except ValueError as e: print(e)
    """,
    "one_cycle_lr": """
        p = torch.nn.Parameter(torch.ones(1))
        for make, kw in ((lambda: torch.optim.SGD([p], lr=0.1, momentum=0.9), {}), (lambda: torch.optim.Adam([p]), {"three_phase": True, "anneal_strategy": "linear"})):
            opt = make()
            s = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10, **kw)
            rows = []
            for _ in range(10):
                opt.step()
                s.step()
                g = opt.param_groups[0]
                rows.append((round(s.get_last_lr()[0], 6), round(g.get("momentum", g.get("betas", (0,))[0]), 6)))
            print(rows)
            try:
                s.step()
            except ValueError as e:
                print(e)
        opt = torch.optim.SGD([p], lr=0.1)
        for kw in ({}, {"total_steps": 0}, {"total_steps": 5, "pct_start": 2.0}, {"total_steps": 5, "anneal_strategy": "x"}, {"total_steps": 5}, {"epochs": 2, "steps_per_epoch": 3, "cycle_momentum": False}):
            try:
                s = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, **kw); print(s.total_steps, s.get_last_lr())
            except ValueError as e:
                print(e)
    """,
    "deprecated_number_first_overloads": """
        import warnings
        warnings.simplefilter("ignore")
        w = torch.ones(3, requires_grad=True)
        (w * 2).sum().backward()
        w.data.add_(-0.1, w.grad.data)
        print(w)
        w.grad.data.zero_()
        print(w.grad, w.data[0], w.data.numpy().sum())
        x = torch.Tensor([[1, 2], [3, 4]])
        print(x.type(torch.float64).dtype, (x > 2).type(torch.float).sum().item(), x.size(0), x.size())
        print(torch.addmm(torch.zeros(2, 2), x, x, beta=1, alpha=2))
        print(x.sum(0, keepdim=True), x.mean(), torch.mean(x, 1), x.max(), x.max(dim=1)[1])
        y = torch.zeros(2); y.copy_(torch.tensor([3., 4.])); print(y)
        print(torch.squeeze(x.unsqueeze(0)).shape, x.t(), x.transpose(0, 1).is_contiguous())
        v = torch.autograd.Variable(torch.ones(2), requires_grad=True)
        out = (v * v).sum(); out.backward(); print(v.grad.data)
        print(x.sub_(1).div_(2), x.clamp_(0, 1))
    """,
}


def _run(code: str, as_yamlgrad: bool, tmp_path: Path) -> str:
    script = tmp_path / "case.py"
    script.write_text("import torch\n" + textwrap.dedent(code))
    command = [
        sys.executable,
        *(["-m", "yamlgrad"] if as_yamlgrad else []),
        str(script),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.replace("yamlgrad", "torch")


@pytest.mark.parametrize("name", sorted(CASES))
def test_behaves_as_torch(name: str, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    expected = _run(CASES[name], False, tmp_path)
    assert _run(CASES[name], True, tmp_path) == expected
