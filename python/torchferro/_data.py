"""``tensor.data`` read and assigned inside a compiled graph: the tracer's graph nodes call these,
so each call runs eager's own attribute (no version-counter bump, a leaf that requires grad may
be assigned, the new storage shared as in eager)."""


def data(t):
    """``t.data``: a tensor sharing ``t``'s storage, outside autograd."""
    return t.data


def set_data_(t, value):
    """``t.data = value``; returns ``t`` (an in-place op on ``t``)."""
    t.data = value
    return t
