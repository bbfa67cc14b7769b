"""vmap's batching rules, chosen by the generator from derivatives.yaml.

Every entry runs under vmap by a rule of runtime/func/batching_rules.py (its
`batch_rule:` key, or `elementwise` / `dims(...)` derived from the schema) or by
the loop-and-stack fallback, and generated/OPS.md says which. Each entry with a
rule is checked on its samples: vmap of the op over three samples equals the op
on each sample, stacked.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import INFOS, REPO_ROOT, copy_real_yaml, op_id, sample_inputs
from yamlgrad.generated import VariableType
from yamlgrad.runtime import testing
from yamlgrad.runtime.func import batching_rules
from yamlgrad.tools.batch_rules import rule_names
from yamlgrad.tools.load import load_derivatives
from yamlgrad.tools.model import DifferentiabilityInfo, GenError

OWN = tuple(i for i in INFOS if i.composite is None)
RULED = tuple(
    i
    for i in OWN
    if i.batch_rule not in ("", "fallback")
    and i.samples
    and not i.inplace
    and not i.random
)


def test_every_rule_name_has_a_rule() -> None:
    assert rule_names() == batching_rules.BATCH_RULES
    for name in rule_names():
        text = "dims(dim)" if name == "dims" else name
        rule = batching_rules.rule_named(text)
        assert (rule is batching_rules.fallback) == (name == "fallback")


@pytest.mark.parametrize("info", OWN, ids=op_id)
def test_every_entry_has_a_rule_or_the_fallback_in_the_op_table(
    info: DifferentiabilityInfo,
) -> None:
    rule = info.batch_rule
    if rule and rule != "fallback":
        assert batching_rules.rule_named(rule) is not batching_rules.fallback
    shown = f"`{rule}`" if rule and rule != "fallback" else "loop"
    rows = (REPO_ROOT / "generated" / "OPS.md").read_text().splitlines()
    row = next(r for r in rows if r.startswith(f"| `{info.func}` |"))
    assert row.endswith(f"| {shown} |")


def _arrays(kwargs: dict[str, Any]) -> list[str]:
    """Every tensor slot of a sample: a name, or `name[i]` in a Tensor[]."""
    slots = []
    for name, value in kwargs.items():
        if isinstance(value, np.ndarray):
            slots.append(name)
        elif isinstance(value, list):
            slots += [f"{name}[{i}]" for i, v in enumerate(value) if v is not None]
    return slots


def _slot(kwargs: dict[str, Any], slot: str) -> np.ndarray:
    name, _, index = slot.partition("[")
    value = kwargs[name]
    return value[int(index[:-1])] if index else value


@pytest.mark.parametrize("info", RULED, ids=op_id)
def test_vmap_by_the_rule_equals_the_op_per_sample(info: DifferentiabilityInfo) -> None:
    rng = np.random.default_rng(0)
    for sample in info.samples:
        batch = [sample_inputs(info, sample, rng, np.float64)[0] for _ in range(3)]
        slots = _arrays(batch[0])
        if not slots:
            continue

        def op(*tensors: Any) -> Any:
            return testing.call(info, batch[0], dict(zip(slots, tensors)), VariableType)

        stacked = [yg.tensor(np.stack([_slot(k, s) for k in batch])) for s in slots]
        with yg.no_grad():
            got = yg.func.vmap(op)(*stacked)
            want = [op(*(yg.tensor(_slot(k, s)) for s in slots)) for k in batch]
        got = list(got) if isinstance(got, (tuple, list)) else [got]
        for index, g in enumerate(got):
            w = [w[index] if isinstance(w, (tuple, list)) else w for w in want]
            np.testing.assert_allclose(
                g.numpy(), np.stack([x.numpy() for x in w]), rtol=1e-12, atol=1e-12
            )


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("sideways", "unknown batch_rule 'sideways'"),
        ("dims(other)", "batch_rule dims(...) names the op's integer dim arguments"),
        ("matmul(self)", "batch_rule 'matmul' takes no arguments"),
    ],
)
def test_a_bad_batch_rule_is_refused_with_its_line(
    tmp_path: Any, rule: str, message: str
) -> None:
    path = copy_real_yaml(tmp_path)
    text = path.read_text()
    anchor = "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n"
    path.write_text(text.replace(anchor, anchor + f"  batch_rule: {rule}\n", 1))
    with pytest.raises(GenError) as error:
        load_derivatives(path)
    assert message in str(error.value)
    line = text[: text.index(anchor)].count("\n") + 2
    assert f":{line}:" in str(error.value)
