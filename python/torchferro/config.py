"""Global settings. Assign attributes to change them: ``torchferro.config.recompile_limit = 4``."""

from __future__ import annotations

import sys
import types

from . import _C


class _Config(types.ModuleType):
    @property
    def recompile_limit(self) -> int:
        """Entries compiled per function before it runs eagerly instead (default 8)."""
        return _C.get_recompile_limit()

    @recompile_limit.setter
    def recompile_limit(self, n: int) -> None:
        if int(n) < 1:
            raise ValueError("recompile_limit must be at least 1")
        _C.set_recompile_limit(int(n))

    @property
    def direct_call(self) -> bool:
        """Call compiled graphs straight from the frame hook (True) or through the transformed
        code object (False). Both give the same results; direct calls skip one Python frame."""
        return self._direct_call

    @direct_call.setter
    def direct_call(self, v: bool) -> None:
        self._direct_call = bool(v)
        _C.set_direct_call(bool(v))

    @property
    def automatic_dynamic_shapes(self) -> bool:
        """With ``dynamic=None``: a tensor dimension whose size changed at a recompile is
        compiled with a symbolic size from then on (torch's ``automatic_dynamic_shapes``).
        On by default, as in torch; off, every new size recompiles (up to the recompile
        limit). ``dynamic=True`` and ``mark_dynamic`` work either way."""
        return _C.get_automatic_dynamic()

    @automatic_dynamic_shapes.setter
    def automatic_dynamic_shapes(self, v: bool) -> None:
        _C.set_automatic_dynamic(bool(v))

    @property
    def automatic_dynamic_whole_tensor(self) -> bool:
        """With automatic dynamic: at a recompile, a tensor with a changed dimension becomes
        dynamic in all its dimensions of size at least 2, not only the changed ones (on by
        default; not torch's rule, which it restores when off). A batch size and a length that
        start changing at different calls then cost one recompile instead of two."""
        return _C.get_automatic_dynamic_whole_tensor()

    @automatic_dynamic_whole_tensor.setter
    def automatic_dynamic_whole_tensor(self, v: bool) -> None:
        _C.set_automatic_dynamic_whole_tensor(bool(v))

    @property
    def automatic_dynamic_size_oblivious(self) -> bool:
        """With automatic dynamic: a dimension made dynamic may be 1 in the same graph (its
        symbol's lower bound is 1), unless an op's answer at 1 differs (``squeeze``, a
        broadcast against another size: then it is guarded at least 2, or pinned to 1 where it
        was traced at 1). On by default (torch's ``backed_size_oblivious``, which torch leaves
        off); off, sizes 0 and 1 specialize as torch's default."""
        return _C.get_automatic_dynamic_size_oblivious()

    @automatic_dynamic_size_oblivious.setter
    def automatic_dynamic_size_oblivious(self, v: bool) -> None:
        _C.set_automatic_dynamic_size_oblivious(bool(v))


sys.modules[__name__].__class__ = _Config
sys.modules[__name__]._direct_call = True
