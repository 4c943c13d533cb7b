"""gradcheck and gradgradcheck: analytical Jacobians (autograd) against central differences.

The Jacobians are assembled on the host in float64 (NumPy), one input element (numerical)
or one output element (analytical) at a time, so inputs are kept small. Perturbations are
written through ember ops, so every device is checked the same way.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import _upper
from ember._tensor import Tensor
from ember.autograd._api import grad as autograd_grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """A gradient check failed."""


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _host(t: Tensor) -> np.ndarray:
    return np.array(_upper.ops.conversion.to_host_array(t.detach()), dtype=np.float64)


def _differentiable_outputs(outputs: tuple[Any, ...]) -> list[Tensor]:
    return [o for o in outputs if isinstance(o, Tensor) and o._dtype.is_floating_point]


def _evaluate(fn: Callable[..., Any], inputs: tuple[Any, ...]) -> list[np.ndarray]:
    outputs = _as_tuple(fn(*inputs))
    return [_host(o).reshape(-1) for o in _differentiable_outputs(outputs)]


def _numerical(
    fn: Callable[..., Any], inputs: tuple[Any, ...], index: int, eps: float
) -> list[np.ndarray]:
    """d outputs / d inputs[index] by central differences: one (n_in, n_out) per output."""
    x = inputs[index]
    alias = x.detach()  # shares storage: perturbing it perturbs what fn reads
    shape = x._shape
    n = x.numel()
    columns: list[list[np.ndarray]] = []
    for flat in range(n):
        position = _position(flat, shape)
        original = alias[position].item()
        alias[position] = original + eps
        plus = _evaluate(fn, inputs)
        alias[position] = original - eps
        minus = _evaluate(fn, inputs)
        alias[position] = original
        columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus, strict=True)])
    sizes = [len(o) for o in _evaluate(fn, inputs)]
    return [
        np.stack([c[k] for c in columns]) if columns else np.zeros((0, sizes[k]))
        for k in range(len(sizes))
    ]


def _position(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index of element `flat` (row-major) of a tensor of `shape`."""
    return tuple(int(p) for p in np.unravel_index(flat, shape)) if shape else ()


def _analytical(
    outputs: list[Tensor], inputs: tuple[Any, ...], wrt: list[int]
) -> list[list[np.ndarray]]:
    """[output][input] -> (n_in, n_out) Jacobian from one backward per output element."""
    result: list[list[np.ndarray]] = []
    for out in outputs:
        n_out = out.numel()
        per_input = [np.zeros((inputs[i].numel(), n_out)) for i in wrt]
        if out._autograd is None or not out._autograd.requires_grad:
            result.append(per_input)
            continue
        for k in range(n_out):
            seed = _upper.ops.creation.zeros(out._shape, dtype=out._dtype, device=out._device)
            position = _position(k, out._shape)
            seed[position] = 1.0
            grads = autograd_grad(
                out, [inputs[i] for i in wrt], seed, retain_graph=True, allow_unused=True
            )
            for j, (i, g) in enumerate(zip(wrt, grads, strict=True)):
                if g is None:
                    continue
                _check_gradient_layout(g, inputs[i], i)
                per_input[j][:, k] = _host(g).reshape(-1)
        result.append(per_input)
    return result


def _check_gradient_layout(g: Tensor, x: Tensor, i: int) -> None:
    if g._shape != x._shape:
        raise GradcheckError(
            f"Gradient has shape mismatch for input {i}: got {list(g._shape)}, "
            f"expected {list(x._shape)}"
        )
    if g._dtype is not x._dtype:
        raise GradcheckError(
            f"Gradient has dtype mismatch for input {i}: got {g._dtype}, expected {x._dtype}"
        )
    if g._device is not x._device:
        raise GradcheckError(
            f"Gradient has device mismatch for input {i}: got {g._device}, expected {x._device}"
        )


def _fail(message: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
) -> bool:
    """Check the gradients of `func` at `inputs` against central finite differences.

    Differentiable inputs should be float64 (a warning says so otherwise). Gradients of
    every output are checked (backward runs with the other outputs' gradients undefined),
    and backward is run twice to check it is reentrant within `nondet_tol`. `fast_mode`
    and `check_undefined_grad` are accepted for PyTorch compatibility: the full Jacobian
    is always compared, which covers both.
    """
    if check_batched_grad:
        raise NotImplementedError("gradcheck(check_batched_grad=True) is not supported")
    tupled = _as_tuple(inputs)
    wrt = [
        i
        for i, x in enumerate(tupled)
        if isinstance(x, Tensor) and x._autograd is not None and x._autograd.requires_grad
    ]
    if not wrt:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of "
            "the them have requires_grad=True."
        )
    for i in wrt:
        if tupled[i]._dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point "
                "or complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ",
                stacklevel=2,
            )
    if not check_backward_ad:
        return True
    outputs = _differentiable_outputs(_as_tuple(func(*tupled)))
    analytical = _analytical(outputs, tupled, wrt)
    again = _analytical(outputs, tupled, wrt)
    numerical = [_numerical(func, tupled, i, eps) for i in wrt]
    for o, out in enumerate(outputs):
        for j, i in enumerate(wrt):
            a, n = analytical[o][j], numerical[j][o]
            if not np.allclose(a, again[o][j], rtol=0.0, atol=nondet_tol):
                return _fail(
                    f"Backward is not reentrant, i.e., running backward with same input and "
                    f"grad_output multiple times gives different values, although analytical "
                    f"gradient matches numerical gradient. The tolerance for nondeterminism "
                    f"was {nondet_tol}.",
                    raise_exception,
                )
            if out._autograd is None and np.any(n != 0):
                return _fail(
                    f"Numerical gradient for function expected to be zero (output {o} does "
                    f"not require grad, but its numerical gradient wrt input {i} is not zero)",
                    raise_exception,
                )
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(
                    f"Jacobian mismatch for output {o} with respect to input {i},\n"
                    f"numerical:{_show(n)}\nanalytical:{_show(a)}\n",
                    raise_exception,
                )
    return True


def _show(array: np.ndarray) -> str:
    return np.array2string(array, precision=4, max_line_width=100)


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    fast_mode: bool = False,
) -> bool:
    """Check second-order gradients: gradcheck of the map (inputs, v) -> vJ, built with
    `create_graph=True`; `v` is random (seeded) unless `grad_outputs` are given."""
    tupled = _as_tuple(inputs)
    wrt = [
        i
        for i, x in enumerate(tupled)
        if isinstance(x, Tensor) and x._autograd is not None and x._autograd.requires_grad
    ]
    if grad_outputs is None:
        outputs = _differentiable_outputs(_as_tuple(func(*tupled)))
        grad_outputs = tuple(_random_like(o, seed) for seed, o in enumerate(outputs))
    seeds = _as_tuple(grad_outputs)
    count = len(tupled)

    def first_derivative(*args: Any) -> tuple[Tensor, ...]:
        xs, vs = args[:count], args[count:]
        outs = _differentiable_outputs(_as_tuple(func(*xs)))
        differentiable = [(o, v) for o, v in zip(outs, vs, strict=True) if o._autograd is not None]
        grads = autograd_grad(
            [o for o, _ in differentiable],
            [xs[i] for i in wrt],
            [v for _, v in differentiable],
            create_graph=True,
            allow_unused=True,
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivative,
        (*tupled, *seeds),
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        fast_mode=fast_mode,
    )


def _random_like(t: Tensor, seed: int) -> Tensor:
    """Values in [-1, 1) of `t`'s shape, dtype and device, requiring grad."""
    values = np.random.default_rng(seed).uniform(-1.0, 1.0, size=t._shape)
    out = _upper.ops.creation.tensor(values, dtype=t._dtype, device=t._device)
    return out.requires_grad_()
