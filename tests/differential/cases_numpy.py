"""Issue 14, bullet "numpy inside compiled code": numpy calls on arrays that come from
``tensor.numpy()`` (and numpy arrays passed in) traced as torch ops, as torch.compile does; the
arrays turned back into arrays (of eager's dtype, and numpy scalars where eager has them) where
they leave the frame. What reads array values into Python (``float``, ``tolist``, a branch) and
``np.random`` break the graph. Each case must give eager's values in no more graphs than
torch.compile (``STRICT_BREADTH``)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .runner import case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True

# torch.compile's own departures from eager on these programs (its result is then no bound).
TC_SCALAR = "torch.compile returns a 0-d ndarray where eager returns a numpy scalar"
TC_INT_DIV = (
    "torch.compile divides an int64 array by an int into float32; numpy gives float64"
)
TC_WHERE_FLOATS = (
    "torch.compile's np.where of two Python floats is float32; numpy's is float64"
)
TC_RANDOM = "torch.compile's values differ from eager's after np.random.seed"


def x34(r):
    return (r.randn(3, 4),)


def x34_y34(r):
    return (r.randn(3, 4), r.randn(3, 4))


def ints34(r):
    return (r.randint(-5, 6, 3, 4),)


def arr34(r):
    return (r.randn(3, 4).numpy(),)


def arr34_x34(r):
    return (r.randn(3, 4).numpy(), r.randn(3, 4))


def batch(r):
    return (r.randn(8, 5),)


# ---------------------------------------------------------------------------------------------
# Normalizing and statistics on x.numpy()


@case(batch)
def normalize_mean_std(x):
    a = x.numpy()
    z = (a - np.mean(a, axis=0)) / (np.std(a, axis=0) + 1e-5)
    return torch.from_numpy(z)


@case(batch)
def normalize_keepdims_array(x):
    a = x.numpy()
    mu = a.mean(axis=1, keepdims=True)
    sd = a.std(axis=1, keepdims=True)
    return (a - mu) / sd


@case(batch)
def numpy_softmax(x):
    a = x.numpy()
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return torch.from_numpy(e / e.sum(axis=1, keepdims=True))


@case(batch)
def var_ddof_and_std(x):
    a = x.numpy()
    return torch.as_tensor(np.var(a, axis=0, ddof=1)), torch.as_tensor(a.std(ddof=1))


@case(x34)
def min_max_methods(x):
    a = x.numpy()
    return torch.from_numpy(a.max(axis=0) - a.min(axis=0)), x * a.max()


@case(x34)
def prod_and_cumsum(x):
    a = x.numpy()
    return torch.from_numpy(np.prod(a, axis=1)), np.cumsum(a, axis=0), np.cumsum(a)


@case(x34)
def argmax_to_tensor(x):
    a = x.numpy()
    idx = np.argmax(a, axis=1)
    return torch.from_numpy(idx), x.gather(1, torch.from_numpy(idx)[:, None])


@case(ints34)
def int_mean_is_float64(x):
    # numpy's mean of an int64 array is float64; back as a tensor of that dtype.
    return torch.tensor(np.mean(x.numpy(), axis=0)), torch.tensor(np.mean(x.numpy()))


@case(x34)
def count_positive(x):
    n = np.sum(x.numpy() > 0)
    return x * torch.as_tensor(n)


@case(x34)
def any_all_axes(x):
    a = x.numpy()
    return np.any(a > 1.0, axis=1), np.all(a > -3.0, axis=0)


# ---------------------------------------------------------------------------------------------
# Masks, ufuncs, broadcasting


@case(x34)
def where_leaky_relu(x):
    a = x.numpy()
    return torch.from_numpy(np.where(a > 0, a, 0.1 * a))


@case(x34, xfail_tc=TC_WHERE_FLOATS)
def where_scalar_branches(x):
    a = x.numpy()
    return np.where(a > 0, 1.0, -1.0)


@case(x34)
def ufunc_chain(x):
    a = x.numpy()
    return np.exp(a) + np.log(np.abs(a) + 1) - np.sqrt(np.maximum(a, 0))


@case(x34)
def clip_and_minimum(x):
    a = x.numpy()
    return np.clip(a, -0.5, 0.5) + np.minimum(a, 0.25)


@case(x34)
def logical_masks(x):
    a = x.numpy()
    inside = np.logical_and(a > -1, a < 1)
    return torch.from_numpy(inside), torch.from_numpy(~inside | (a > 2))


@case(x34)
def broadcast_row_col(x):
    a = x.numpy()
    return a - a[:, :1] + a[0]


@case(x34)
def trig_and_power(x):
    a = x.numpy()
    return np.sin(a) ** 2 + np.cos(a) ** 2 + np.tanh(a) * np.arctan2(a, 2.0)


@case(x34)
def floor_ceil_sign(x):
    a = x.numpy() * 3
    return np.floor(a) + np.ceil(a) * np.sign(a) + np.floor_divide(a, 2.0)


# ---------------------------------------------------------------------------------------------
# dtypes: numpy's promotion, not torch's


@case(ints34, xfail_tc=TC_INT_DIV)
def int_array_true_divide(x):
    return x.numpy() / 2


@case(x34)
def int32_plus_float32_is_float64(x):
    return x.int().numpy() + x.numpy()


@case(x34)
def float32_keeps_with_python_float(x):
    return x.numpy() * 2.5 + 1


@case(x34)
def float64_scalar_is_strong(x):
    return x.numpy() * np.float64(2.0)


@case(x34)
def astype_int_and_back(x):
    a = (x.numpy() * 10).astype(np.int64)
    return torch.from_numpy(a), a.astype(np.float32) / 10


@case(x34_y34)
def astype_like_other(x, y):
    a = x.numpy()
    b = (y * 4).long().numpy()
    return b.astype(a.dtype) + a


@case(x34)
def arr_dtype_branch(x):
    a = x.numpy()
    if a.dtype == np.float32:
        return torch.from_numpy(a * 2)
    return x


@case(x34)
def bool_sum_is_int64(x):
    return torch.as_tensor(np.sum(x.numpy() > 0, axis=1)), x + 1


# ---------------------------------------------------------------------------------------------
# Constants: finfo/iinfo, pi, scalar types


@case(x34)
def finfo_eps(x):
    return x / (x.norm() + np.finfo(np.float32).eps)


@case(x34)
def iinfo_bound(x):
    return x.clamp(max=float(np.iinfo(np.int8).max)) * np.iinfo(np.int16).bits


@case(x34)
def np_pi_and_e(x):
    return torch.sin(x * np.pi / 2) + np.e


@case(x34)
def np_sqrt_constant(x):
    return x * np.sqrt(2.0) + np.float32(0.5)


@case(x34)
def finfo_of_array_dtype(x):
    a = x.numpy()
    tiny = np.finfo(a.dtype).tiny
    return torch.from_numpy(np.maximum(np.abs(a), tiny))


# ---------------------------------------------------------------------------------------------
# numpy scalars mixed with tensors


@case(x34)
def tensor_minus_np_mean(x):
    return x - np.mean(x.numpy())


@case(x34)
def np_max_scales_tensor(x):
    return np.max(np.abs(x.numpy())) * x


@case(x34)
def int_tensor_times_np_float(x):
    return (x * 10).long() * np.mean(x.numpy())


@case(x34)
def scalar_from_index(x):
    a = x.numpy()
    return x + a[1, 2]


# ---------------------------------------------------------------------------------------------
# Shapes, indexing, joining


@case(x34)
def reshape_and_transpose(x):
    a = x.numpy()
    return a.reshape(2, 6).T, a.reshape((4, 3)), np.transpose(a)


@case(x34)
def shape_attrs_as_constants(x):
    a = x.numpy()
    rows, cols = a.shape
    return x.reshape(cols, rows) * a.ndim + a.size


@case(x34)
def basic_indexing(x):
    a = x.numpy()
    return a[0], a[:, 1:3], a[..., 0], a[None, 1]


@case(x34)
def concatenate_and_stack(x):
    a = x.numpy()
    c = np.concatenate([a, a * 2], axis=1)
    s = np.stack([a, a + 1])
    return c, s.sum(axis=(0, 1), keepdims=True)


@case(x34)
def hstack_vstack(x):
    a = x.numpy()
    return np.hstack([a, a]), np.vstack((a, a[:1]))


@case(x34)
def squeeze_expand_swap(x):
    a = x.numpy()
    b = np.expand_dims(a, 0)
    return b.squeeze(0).swapaxes(0, 1), a.ravel(), a.flatten()


@case(x34)
def matmul_transpose(x):
    a = x.numpy()
    return torch.from_numpy(a @ a.T), a[:2] @ a[1:].T


@case(x34)
def dot_of_rows(x):
    a = x.numpy()
    return torch.as_tensor(np.dot(a[0], a[1]))


@case(x34)
def numpy_factories(x):
    a = x.numpy()
    return (
        a + np.arange(4),
        a * np.ones((3, 4)),
        np.zeros_like(a) + np.full((3, 4), 2.0),
    )


@case(x34)
def linspace_eye(x):
    a = x.numpy()
    return a * np.linspace(0.0, 1.0, 4), a @ np.eye(4, dtype=np.float32)


@case(x34)
def len_and_isinstance(x):
    a = x.numpy()
    if isinstance(a, np.ndarray) and len(a) == 3:
        return torch.from_numpy(a + 1)
    return x


# ---------------------------------------------------------------------------------------------
# Writes through x.numpy() reach x


@case(x34)
def mask_assign_mutates_input(x):
    a = x.numpy()
    a[a < 0] = 0
    return x * 2


@case(x34)
def inplace_add_mutates_input(x):
    a = x.numpy()
    a += 1
    a *= 2
    return x


@case(
    x34, xfail_tc="torch.compile's numpy scalar from a[0, 0] sees a later write into a"
)
def scalar_is_a_copy(x):
    a = x.numpy()
    s = a[0, 0]
    a[0, 0] = 7.0
    return x + s, torch.as_tensor(s)


@case(x34)
def view_sees_later_write(x):
    a = x.numpy()
    row = a[0]
    a[0, 1] = -3.0
    return torch.from_numpy(row) * 2


@case(x34)
def copy_does_not_mutate(x):
    a = x.numpy().copy()
    a[0] = 5
    return x + 1, a


@case(x34)
def return_the_array_itself(x):
    return x.numpy(), x + 1


@case(x34)
def detach_cpu_numpy(x):
    y = torch.relu(x)
    return y.detach().cpu().numpy() * 3


# ---------------------------------------------------------------------------------------------
# Leaving the frame as numpy scalars


@case(x34, xfail_tc=TC_SCALAR)
def return_numpy_scalar(x):
    return np.sum(x.numpy()), x.numpy().mean()


@case(ints34, xfail_tc=TC_SCALAR)
def return_int_scalar(x):
    return np.max(x.numpy()), np.argmax(x.numpy())


# ---------------------------------------------------------------------------------------------
# What cannot be traced: graph breaks, and eager's values


@case(x34)
def branch_on_np_sum(x):
    if np.sum(x.numpy()) > 0:
        return x + 1
    return x - 1


@case(x34)
def float_of_np_max(x):
    m = float(np.max(x.numpy()))
    return x / m


@case(x34)
def item_arithmetic_in_python(x):
    lo = np.min(x.numpy()).item()
    hi = float(np.max(x.numpy()))
    span = hi - lo + 1e-6
    return (x - lo) / span, span


@case(ints34)
def int_of_int_scalar(x):
    n = int(np.sum(np.abs(x.numpy())))
    return x * n, n


@case(x34)
def python_numbers_divided(x):
    a = x.numpy()
    ratio = float(a.max()) / float(np.abs(a).sum())
    return x * ratio


@case(x34)
def tolist_then_python(x):
    a = x.numpy()
    total = sum(a.tolist()[0])
    return x + total


@case(x34, xfail_tc=TC_RANDOM)
def np_random_breaks(x):
    np.random.seed(0)
    noise = np.random.rand(3, 4).astype(np.float32)
    return x + torch.from_numpy(noise)


@case(x34)
def item_of_np_scalar(x):
    s = np.mean(x.numpy()).item()
    return x * s


# ---------------------------------------------------------------------------------------------
# numpy arrays as inputs


@case(arr34)
def ndarray_input_ufuncs(a):
    return np.exp(a) * 2


@case(arr34_x34)
def ndarray_input_to_tensor(a, x):
    return torch.from_numpy(a) + x


@case(arr34)
def ndarray_input_reduce(a):
    return torch.from_numpy(a.sum(axis=0)) * 2


@case(arr34)
def ndarray_input_returned(a):
    a *= 2
    return a, a.shape


@case(arr34_x34)
def ndarray_input_mask_write(a, x):
    a[a > 0.5] = 0.5
    return x + torch.from_numpy(a)


@case(arr34)
def ndarray_input_tolist(a):
    return [v * 2 for v in a.tolist()[0]]


def x34_grad(r):
    return (r.randn(3, 4, requires_grad=True),)


@case(
    x34_grad,
    raises=True,
    xfail_tc="torch.compile calls numpy() on a tensor that requires grad without raising",
)
def numpy_of_grad_tensor_raises(x):
    return x.numpy() * 2


@case(x34_grad)
def detach_numpy_of_grad_tensor(x):
    stats = np.abs(x.detach().numpy()).mean(axis=0)
    return x * torch.from_numpy(stats)


@case(x34)
def numpy_inside_function_call(x):
    def stats(arr):
        return arr.mean(), arr.std()

    mu, sd = stats(x.numpy())
    return F.relu(x - mu) / sd
