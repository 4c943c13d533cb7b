"""The rules that classify a PyTorch name Ember lacks: out of scope with a reason where the
rule is clear, planned otherwise. One ordered table; the first matching rule wins."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .ledger import OUT_OF_SCOPE, PLANNED, Entry

#: the reason a missing name gets when no rule calls it out of scope
NOT_YET_IMPLEMENTED = "not yet implemented"


@dataclass(frozen=True)
class Rule:
    """Names matching `pattern` (a full match) in `sections` (None: every section) are out
    of scope for `reason`."""

    pattern: str
    reason: str
    sections: tuple[str, ...] | None = None


_TORCH = ("torch",)
_TENSOR = ("Tensor",)

RULES: tuple[Rule, ...] = (
    Rule(
        r"uniform|normal|constant|eye|dirac|xavier_uniform|xavier_normal|kaiming_uniform"
        r"|kaiming_normal|orthogonal|sparse",
        "deprecated alias of the in-place initialiser (the name with a trailing underscore)",
        ("torch.nn.init",),
    ),
    Rule(
        r"\w*complex\w*|cfloat|cdouble|chalf|view_as_real\w*|polar|conj\w*|resolve_conj"
        r"|resolve_neg|is_conj|is_neg|real|imag",
        "complex numbers: Ember has no complex dtypes",
    ),
    Rule(
        r"\w*sparse\w*|Sparse\w*|coalesce|is_coalesced|indices|values|crow_indices"
        r"|col_indices|ccol_indices|row_indices|dense_dim|smm|sspaddmm|hspmm|saddmm|spmm|dsmm"
        r"|hsmm|\w*_indices_copy|values_copy|indices_copy|\w*bsr\w*|\w*bsc\w*|\w*csr\w*"
        r"|\w*csc\w*|to_dense|sparse_mask",
        "sparse layouts: Ember tensors are dense and strided",
    ),
    Rule(
        r"\w*quantiz\w*|q_\w+|qscheme|Q[Uu]?Int\w*|q?u?int\dx\d|qu?int\d+|quint\w*"
        r"|per_tensor_\w+|per_channel_\w+|\w*fake_quant\w*|int_repr|fbgemm_\w+"
        r"|choose_qparams\w*|empty_quantized|quantized_\w+",
        "quantized tensors: out of scope (Ember quantizes nothing)",
    ),
    Rule(
        r"names|refine_names|rename_?|align_to|align_as|align_tensors|has_names",
        "named tensors: a prototype PyTorch feature Ember does not carry",
    ),
    Rule(
        r"is_nested|nested\w*|jagged|to_padded_tensor",
        "nested (jagged) tensors: out of scope",
    ),
    Rule(
        r"DispatchKey|DispatchKeySet|ExcludeDispatchKeyGuard|DisableTorchFunction\w*"
        r"|ThroughputBenchmark|BenchmarkConfig|BenchmarkExecutionStats|AggregationType|AVG|SUM"
        r"|cpp|segment_reduce",
        "C++ dispatcher, benchmarking and extension bindings, not Python API",
        _TORCH,
    ),
    Rule(
        r"jit|compile|compiler|export|fx|is_compiling|cond|while_loop|Script\w*|script\w*"
        r"|Sym\w+|sym_\w+|is_inference_mode_enabled_for_export|Tag|library"
        r"|compiled_with_cxx11_abi|unsafe_\w+|slice_inverse|(?!index_copy$)\w+_copy|fork|wait|Future"
        r"|\w+Type|AliasDb|Argument|ArgumentSpec|Block|CallStack|Capsule|Code|CompilationUnit"
        r"|CompleteArgumentSpec|ConcreteModuleType\w*|DeepCopyMemoTable|ErrorReport|ExecutionPlan"
        r"|FileCheck|FunctionSchema|Gradient|Graph|GraphExecutorState|IODescriptor|JITException"
        r"|LiteScriptModule|LockingLogger|NoopLogger|Node|OperatorInfo|StaticModule|TracingState"
        r"|Use|Value|ModuleDict|ParameterDict|BufferDict|import_ir_module\w*|parse_ir"
        r"|parse_schema|parse_type_comment|merge_type_from_type_comment|unify_type_list",
        "JIT, compile and export machinery (TorchScript, Dynamo, FX, symbolic shapes)",
        _TORCH + _TENSOR,
    ),
    Rule(
        r"(\w+_)?(mps|xpu|mtia|maia|ipu|hpu|xla|vulkan|ort|mkldnn|miopen|cudnn|metal)(_\w+)?",
        "backend-specific (MPS, XPU, MTIA, IPU, XLA, Vulkan, MKL-DNN, cuDNN, MIOpen) entry point",
    ),
    Rule(
        r"\w*Storage|(?!storage_offset$)\w*storage\w*|StorageBase|\w+StorageContext"
        r"|PyTorchFileReader|PyTorchFileWriter",
        "storage and serialization internals: Ember's storage is not PyTorch's TypedStorage",
    ),
    Rule(
        r"float8_\w+|float4_\w+|bits\d\w*|u?int[1-7]",
        "sub-byte and 8-bit float dtypes: low-precision formats for quantized kernels",
        _TORCH,
    ),
    Rule(
        r"native_\w+|batch_norm_\w+|\w+_backward\w*|convolution|constant_pad_nd|grid_sampler\w*"
        r"|affine_grid_generator|embedding_renorm_|lstm|gru|rnn_tanh|rnn_relu|\w+_cell"
        r"|norm_except_dim|feature_dropout_?|feature_alpha_dropout_?|alpha_dropout_|dropout_"
        r"|autocast_(increment|decrement)_nesting|clear_autocast_cache|\w+_autocast_cache_\w+",
        "ATen-level entry point, not documented API (the public form is in torch.nn or "
        "torch.nn.functional)",
        _TORCH,
    ),
    Rule(
        r"eig|symeig|lstsq|solve|matrix_rank",
        "removed from PyTorch: the name remains only to raise an error pointing to torch.linalg",
        _TORCH + _TENSOR,
    ),
    Rule(
        r"upsample|upsample_bilinear|upsample_nearest",
        "deprecated alias of interpolate",
        ("torch.nn.functional",),
    ),
    Rule(r"NLLLoss2d|Container", "deprecated alias (NLLLoss, Module)", ("torch.nn",)),
    Rule(
        r"\w*DataPipe|DataChunk|functional_datapipe|argument_validation|runtime_validation\w*"
        r"|guaranteed_datapipes_determinism|non_deterministic",
        "DataPipes: deprecated in PyTorch and frozen (torchdata moved on)",
        ("torch.utils.data",),
    ),
    Rule(
        r"handle_torch_function|has_torch_function\w*|boolean_dispatch|assert_int_or_pair"
        r"|BroadcastingList\d|ScalingType|SwizzleType|DType|classproperty|LoggerBase"
        r"|get_file_path|prepare_multiprocessing_environment|PRIVATE_OPS|profiler_\w+"
        r"|factory_kwargs",
        "internal helper that the namespace happens to expose, not documented API",
    ),
    Rule(
        r"reinforce|volatile|map2_|map_|apply_",
        "legacy autograd and CPU-only Python hooks",
        _TENSOR,
    ),
)

#: names in an out-of-scope family that stay in scope: PyTorch code asks a tensor whether it is
#: complex or sparse (and Ember must answer honestly), and nn.init.sparse_ is dense-in, dense-out
IN_SCOPE: tuple[tuple[str, str], ...] = (
    ("Tensor", "is_complex"),
    ("Tensor", "is_sparse"),
    ("torch", "is_complex"),
    ("torch.nn.init", "sparse_"),
)

_COMPILED = tuple((re.compile(rule.pattern), rule) for rule in RULES)


def classify(section: str, name: str) -> Entry:
    """The entry a name Ember lacks gets before anyone edits it by hand."""
    if (section, name) in IN_SCOPE:
        return Entry(PLANNED, NOT_YET_IMPLEMENTED)
    for pattern, rule in _COMPILED:
        if rule.sections is not None and section not in rule.sections:
            continue
        if pattern.fullmatch(name):
            return Entry(OUT_OF_SCOPE, rule.reason)
    return Entry(PLANNED, NOT_YET_IMPLEMENTED)
