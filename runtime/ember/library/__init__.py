"""ember.library: define custom ops, add or override kernels for any op on any device,
and ask which kernel runs (docs/plugins/writing-kernels.md).

    @ember.library.custom_op("mylib::scaled_add", mutates_args=())
    def scaled_add(a: ember.Tensor, b: ember.Tensor, alpha: float) -> ember.Tensor:
        return a + alpha * b  # the default implementation, on every device

    handle = ember.library.register_kernel("mylib::scaled_add", "cpu", my_cpu_kernel)
    print(ember.library.explain("mylib::scaled_add", "cpu"))
    handle.remove()  # back to the default
"""

from __future__ import annotations

from ember._dispatch import KernelConflictWarning
from ember.library._call import CustomOp
from ember.library._compile_error import CompileError
from ember.library._custom_op import CustomOpDef, custom_op
from ember.library._explain import Explanation, Supplier, explain
from ember.library._geometry import elementwise_plan
from ember.library._inline_names import inline_names
from ember.library._kernels import KernelHandle, register_autograd, register_fake, register_kernel
from ember.library._opcheck import OpCheckError, opcheck

__all__ = [
    "CompileError", "CustomOp", "CustomOpDef", "Explanation", "KernelConflictWarning",
    "KernelHandle", "OpCheckError", "Supplier", "custom_op", "elementwise_plan", "explain",
    "inline_names", "opcheck",
    "register_autograd", "register_fake", "register_kernel",
]  # fmt: skip
