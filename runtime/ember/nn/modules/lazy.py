"""Lazy modules: layers whose input size is inferred from the first forward's input.

Their parameters (and buffers) start as UninitializedParameter / UninitializedBuffer; a
forward pre-hook sizes them from the input, initialises them as the eager layer would,
removes itself and turns the module into its eager class (LazyLinear becomes Linear), as
PyTorch's LazyModuleMixin does. Loading a state_dict into a lazy module materialises the
parameters with the checkpoint's shapes first.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

from ember._ops import creation
from ember._tensor import Tensor
from ember.autograd._mode import no_grad
from ember.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d, IntArg
from ember.nn.modules.conv3d import Conv3d, ConvTranspose3d
from ember.nn.modules.conv_transpose import ConvTranspose1d
from ember.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from ember.nn.modules.linear import Linear
from ember.nn.modules.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d
from ember.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = [
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d",
    "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
    "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear",
    "LazyModuleMixin",
]  # fmt: skip


class LazyModuleMixin:
    """Infers parameter shapes on the first call; subclasses define initialize_parameters."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._register_lazy_hooks()

    def _register_lazy_hooks(self) -> None:
        module: Any = self
        module._load_hook = module._register_load_state_dict_pre_hook(self._lazy_load_hook)
        module._initialize_hook = module.register_forward_pre_hook(
            _infer_parameters, with_kwargs=True
        )

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialise the parameters from the first input (implemented by each layer)."""
        raise NotImplementedError

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer is still uninitialized."""
        module: Any = self
        return any(is_lazy(t) for t in chain(module._parameters.values(),
                                              module._buffers.values()))  # fmt: skip

    def _lazy_load_hook(
        self, state_dict: dict[str, Any], prefix: str, local_metadata: Any, strict: bool,
        missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str],
    ) -> None:  # fmt: skip
        module: Any = self
        for name, value in chain(module._parameters.items(), module._buffers.items()):
            key = prefix + name
            if key in state_dict and value is not None and is_lazy(value):
                loaded = state_dict[key]
                if not is_lazy(loaded):
                    with no_grad():
                        value.materialize(loaded.shape)

    def _save_to_state_dict(
        self, destination: dict[str, Any], prefix: str, keep_vars: bool
    ) -> None:
        module: Any = self
        for name, param in module._parameters.items():
            if param is not None:
                keep = is_lazy(param) or keep_vars
                destination[prefix + name] = param if keep else param.detach()
        for name, buf in module._buffers.items():
            if buf is not None and name not in module._non_persistent_buffers_set:
                keep = is_lazy(buf) or keep_vars
                destination[prefix + name] = buf if keep else buf.detach()


def _infer_parameters(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    module.initialize_parameters(*args, **kwargs)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    del module._initialize_hook
    del module._load_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


# -- linear and convolutions ------------------------------------------------------------------


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        Linear.__init__(self, 0, 0, False, device=device, dtype=dtype)
        self._register_lazy_hooks()
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                weight: Any = self.weight
                weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    bias: Any = self.bias
                    bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    _spatial = 0
    in_channels: int
    out_channels: int
    groups: int
    transposed: bool
    kernel_size: tuple[int, ...]
    weight: Any
    bias: Any

    def _lazy_setup(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        module: Any = self
        module.weight = UninitializedParameter(device=device, dtype=dtype)
        module.out_channels = out_channels
        if bias:
            module.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            parent: Any = super()  # the eager layer's reset, next in the MRO
            parent.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = self._spatial + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.ndim == unbatched + 1 else input.shape[0]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        with no_grad():
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _make_lazy_conv(eager: type, spatial: int) -> type:
    base: Any = eager  # its __init__ is called on the lazy instance

    def __init__(
        self: Any, out_channels: int, kernel_size: IntArg, stride: IntArg = 1,
        padding: Any = 0, dilation: IntArg = 1, groups: int = 1, bias: bool = True,
        padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        base.__init__(
            self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
            device, dtype,
        )  # fmt: skip
        self._register_lazy_hooks()
        self._lazy_setup(out_channels, bias, device, dtype)

    return _lazy_class(eager, _LazyConvMixin, __init__, spatial)


def _make_lazy_conv_transpose(eager: type, spatial: int) -> type:
    base: Any = eager  # its __init__ is called on the lazy instance

    def __init__(
        self: Any, out_channels: int, kernel_size: IntArg, stride: IntArg = 1,
        padding: IntArg = 0, output_padding: IntArg = 0, groups: int = 1, bias: bool = True,
        dilation: IntArg = 1, padding_mode: str = "zeros", device: Any = None,
        dtype: Any = None,
    ) -> None:  # fmt: skip
        base.__init__(
            self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
            padding_mode, device, dtype,
        )  # fmt: skip
        self._register_lazy_hooks()
        self._lazy_setup(out_channels, bias, device, dtype)

    return _lazy_class(eager, _LazyConvMixin, __init__, spatial)


def _lazy_class(eager: type, mixin: type, init: Any, spatial: int = 0) -> type:
    name = "Lazy" + eager.__name__
    namespace = {
        "__init__": init, "__doc__": f"{eager.__name__} whose input size is inferred from the "
        "first input.", "cls_to_become": eager, "_spatial": spatial, "__module__": __name__,
        "__qualname__": name,
    }  # fmt: skip
    return type(name, (mixin, eager), namespace)


LazyConv1d: Any = _make_lazy_conv(Conv1d, 1)
LazyConv2d: Any = _make_lazy_conv(Conv2d, 2)
LazyConv3d: Any = _make_lazy_conv(Conv3d, 3)
LazyConvTranspose1d: Any = _make_lazy_conv_transpose(ConvTranspose1d, 1)
LazyConvTranspose2d: Any = _make_lazy_conv_transpose(ConvTranspose2d, 2)
LazyConvTranspose3d: Any = _make_lazy_conv_transpose(ConvTranspose3d, 3)


# -- normalization ---------------------------------------------------------------------------


class _LazyNormMixin(LazyModuleMixin):
    num_features: int
    affine: bool
    track_running_stats: bool
    weight: Any
    bias: Any
    running_mean: Any
    running_var: Any

    def _lazy_setup(
        self, affine: bool, track_running_stats: bool, bias: bool, device: Any, dtype: Any
    ) -> None:
        module: Any = self
        module.affine = affine
        module.track_running_stats = track_running_stats
        if affine:
            module.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                module.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            module.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            module.running_var = UninitializedBuffer(device=device, dtype=dtype)
            module.num_batches_tracked = creation.tensor(0, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            parent: Any = super()  # the eager layer's reset, next in the MRO
            parent.reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with no_grad():
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _make_lazy_norm(eager: type, defaults: tuple[bool, bool]) -> type:
    affine_default, track_default = defaults
    base: Any = eager  # its __init__ is called on the lazy instance

    def __init__(
        self: Any, eps: float = 1e-5, momentum: float | None = 0.1,
        affine: bool = affine_default, track_running_stats: bool = track_default,
        device: Any = None, dtype: Any = None, *, bias: bool = True,
    ) -> None:  # fmt: skip
        # affine and running stats start off: the lazy ones are set up just after.
        base.__init__(self, 0, eps, momentum, False, False, device, dtype, bias=False)
        self._register_lazy_hooks()
        self._lazy_setup(affine, track_running_stats, bias, device, dtype)

    return _lazy_class(eager, _LazyNormMixin, __init__)


LazyBatchNorm1d: Any = _make_lazy_norm(BatchNorm1d, (True, True))
LazyBatchNorm2d: Any = _make_lazy_norm(BatchNorm2d, (True, True))
LazyBatchNorm3d: Any = _make_lazy_norm(BatchNorm3d, (True, True))
# PyTorch's lazy instance norms default to affine and tracked statistics, unlike the eager.
LazyInstanceNorm1d: Any = _make_lazy_norm(InstanceNorm1d, (True, True))
LazyInstanceNorm2d: Any = _make_lazy_norm(InstanceNorm2d, (True, True))
LazyInstanceNorm3d: Any = _make_lazy_norm(InstanceNorm3d, (True, True))
