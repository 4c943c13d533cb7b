"""Every elementwise program the OpenCL device renders, rendered into CUDA C and compiled
by NVRTC for sm_90: no error, no warning, every kernel in the cubin, no register spills.

The 679 programs (1358 kernels) compile in a few translation units of many programs each
(~0.1 s per program), split into test items that pytest-xdist spreads over its workers.
The parameter layouts are checked by the static_asserts each program carries, and those
asserts are shown to fail on a layout that is wrong.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import ember
from ember.library import CompileError
from ember.plugins import expressions as ex
from ember.plugins import ops
from ember_cuda import _nvrtc
from ember_cuda import kernels_elementwise as ke
from ember_cuda._params import GEOMETRY, MAX_DIMS, ParamLayout, pack_geometry

PROGRAMS = list(ke.programs())
CHUNKS = 8
#: Registers a hot elementwise kernel may use: 64 keeps 4 blocks of 256 threads per SM.
REGISTER_BUDGET = 64
DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int32, ember.int64, ember.float16,
          ember.float32, ember.float64, ember.bfloat16]  # fmt: skip


def test_every_variant_the_tables_define_is_rendered_once() -> None:
    """The count from the expression tables themselves, independently of `programs()`."""
    families = [ex.family(d.name) for d in DTYPES]
    unary = sum(f in ex.UNARY[op] for op in ops.UNARY for f in families)
    binary = 3 * sum(f in ex.BINARY[op] for op in ops.BINARY for f in families)
    copies, bits = len(DTYPES) ** 2, 4 + 4  # fill_ and where per element width
    aranges = len(DTYPES) + sum(not d.is_floating_point for d in DTYPES)
    assert len(PROGRAMS) == unary + binary + copies + bits + aranges
    names = [p.name for p in PROGRAMS]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_programs_compile_for_sm90_without_warnings_or_spills(
    session_cache: Path, chunk: int
) -> None:
    programs = PROGRAMS[chunk::CHUNKS]
    cubin = _nvrtc.compile_cuda(
        ke.batch_source(programs),
        f"elementwise_{chunk}",
        warnings_as_errors=True,
        resource_usage=True,
    )
    expected = {kernel for program in programs for kernel in program.kernels}
    assert expected <= cubin.symbols()
    resources = cubin.resources()
    assert expected <= set(resources)
    spilling = {k: r for k, r in resources.items() if k in expected and r.spills}
    assert not spilling
    heavy = {k: r.registers for k, r in resources.items() if r.registers > REGISTER_BUDGET}
    assert not heavy


def test_one_program_alone_is_what_a_launch_loads(session_cache: Path) -> None:
    program = ke.binary_program("add", ember.float16, scalar_at=2)
    assert program is not None
    cubin = _nvrtc.compile_cuda(program.source, program.name, warnings_as_errors=True)
    assert set(program.kernels) <= cubin.symbols()


def test_rendering_puts_the_tables_expression_and_types_in_place() -> None:
    add = ke.binary_program("add", ember.int8)
    assert add is not None and "((signed char)((unsigned char)a + (unsigned char)b))" in add.body
    lt = ke.binary_program("lt", ember.float32, scalar_at=1)
    assert lt is not None
    assert "#define P0_T unsigned char" in lt.body  # comparisons store bool
    assert "P1_C s1" in lt.body and "P2_LOAD(p2, o2 + (i2))" in lt.body
    half = ke.unary_program("exp", ember.float16)
    assert half is not None
    assert "__half2float" in half.body and "__float2half_rn" in half.body
    assert "__double2half" in ke.copy_program(ember.float16, ember.float64).body
    assert ke.unary_program("exp", ember.int32) is None  # no integer exp in the table
    assert ke.binary_program("div", ember.int64) is None


def test_parameter_layouts_follow_the_c_abi() -> None:
    layout = ParamLayout(["pointer", "em_i64", "unsigned char", "float", "em_i64", "EmGeometry"])
    assert layout.offsets == (0, 8, 16, 20, 24, 32)
    assert layout.size == 32 + GEOMETRY.size
    geometry = pack_geometry((2, 3), ((3, 1), (0, 1)))
    packed = layout.pack(0x1000, 5, 1, 2.5, 6, geometry)
    assert len(packed) == layout.size
    assert struct.unpack_from("<QqBxxxfq", packed) == (0x1000, 5, 1, 2.5, 6)
    values = GEOMETRY.unpack(packed[32:])
    assert values[:3] == (2, 2, 3)
    assert values[1 + MAX_DIMS : 1 + MAX_DIMS + 2] == (3, 1)
    assert values[1 + 2 * MAX_DIMS : 1 + 2 * MAX_DIMS + 2] == (0, 1)
    program = ke.binary_program("mul", ember.float64, scalar_at=1)
    assert program is not None
    assert program.contiguous.types == ("pointer", "em_i64", "double", "pointer", "em_i64",
                                        "em_i64")  # fmt: skip
    assert program.strided.types[-1] == "EmGeometry"


def test_a_packer_that_disagrees_with_the_compiler_fails_to_compile(cache: Path) -> None:
    layout = ParamLayout(["pointer", "unsigned char", "double"])
    assert layout.offsets == (0, 8, 16)
    layout.offsets = (0, 8, 12)  # as if double were 4-byte aligned
    source = "typedef long long em_i64;\n" + layout.static_asserts("wrong")
    with pytest.raises(CompileError, match="is not where the host packs it"):
        _nvrtc.compile_cuda(source, "wrong_layout")
    good = ParamLayout(["pointer", "unsigned char", "double"])
    _nvrtc.compile_cuda("typedef long long em_i64;\n" + good.static_asserts("right"), "layout")
