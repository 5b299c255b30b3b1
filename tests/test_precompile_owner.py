"""Which class or module a guarded dict belongs to, as the precompile writer names it
(`_precompile/_writer.py::_owner_of`): a class's own dict holds `__module__` but not
`__qualname__`, so the writer finds the class through the type that refers to the dict."""

from __future__ import annotations

import gc

import torch.nn as nn

from torchferro._precompile._writer import _owner_of


class Importable(nn.Module):
    def forward(self, x):
        return x + 1


def _class_dict(cls):
    # The dict under the class's mappingproxy (what the guards hold).
    [d] = [r for r in gc.get_referents(vars(cls)) if isinstance(r, dict)]
    return d


def test_a_module_class_of_an_importable_module_is_named_by_its_path():
    assert _owner_of(_class_dict(Importable)) == f"{__name__}.Importable"
    assert _owner_of(_class_dict(nn.Linear)) == "torch.nn.modules.linear.Linear"


def test_a_class_made_inside_a_function_has_no_owner():
    def make():
        class Local(nn.Module):
            def forward(self, x):
                return x

        return Local

    assert _owner_of(_class_dict(make())) is None


def test_a_copy_of_a_class_dict_is_not_the_class_dict():
    assert _owner_of(dict(_class_dict(Importable))) is None
