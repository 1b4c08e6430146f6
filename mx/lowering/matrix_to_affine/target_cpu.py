"""The target CPU as the kernels are shaped for it (`TargetCpu`): its
shuffles, its vector registers, how many streams of weights its prefetchers
serve best, how its products' micro-kernel broadcasts, and its caches. The
JIT describes the host (`cpu_of` LLVM's name and features of it, the caches
Linux lists: `caches.host_caches`); `mx-opt` lowers for `DEFAULT_CPU`.

The shuffles that the f4e2m1fn kernels decode with: they look codes up in a
table (`decoded_matvec.py`, `reassociated_matvec.py`).

- f32 permutes. A look-up of f32 values written as a `vector.extract` per
  lane is one variable permute for LLVM only where the table fits one:
  AVX-512's `vpermps` picks from 16 lanes, so the 16 values of f4e2m1fn are
  one table; AVX2's picks from 8, and LLVM decoded a 16-entry table lane by
  lane there (a store and a load per lane: 10-40 s of LLVM for one kernel,
  slow code after it). With 8 lanes the kernels look up the 8 magnitudes and
  set the sign bit themselves.
- x86 byte shuffles. `pshufb` looks 16, 32 or 64 codes up at once in a
  16-byte table: the low or the high bytes of the bf16s of the 16 values,
  interleaved into f32s after. LLVM makes that instruction of a look-up
  written lane by lane only when every lane of the result is used, which
  the interleave that follows the look-up defeats (LLVM 16 and 22 both went
  lane by lane), so the packed f4e2m1fn kernels call the intrinsic
  (`llvm.x86.avx2.pshuf.b` and its 128-bit form) where the target has it.
  With AVX-512 (64-byte intrinsics, 16 lanes) the groups permute f32s
  instead (`vpermps` by the intrinsic, which reads the low 4 bits of each
  32-bit index): 8 codes a lane, shifted into place, and no mask, no byte
  shuffle, no interleave; every other f4e2m1fn look-up of the decode
  kernels takes the intrinsic too, unmasked.

And its vector registers: the JIT lowers with vectors at most as wide,
whatever `vector-bits` says, and sizes the products' kernels for as many
as it has (`TargetCpu.vector_registers`). With
`vector-bits=512` on an AVX2 host each 16-lane vector took a pair of
registers: on a Zen 1 the strict-order decode matvecs ran 1.2-1.9x slower
(f16 weights 588 against 308 ps a weight, FP8 787 against 652) and LLVM
compiled longer (examples/fp8_weights_matvec.mlir 2.0 against 1.4 s).

Under `mx-opt` the target is an AVX-512 one (Sapphire Rapids:
`DEFAULT_CPU`, with its caches: `caches.DEFAULT_CACHES`), with no byte shuffle
intrinsics (its LLVM IR is for any target LLVM has), 32 vector registers
and no cap on `vector-bits`; the JIT compiles for the host (`for_target_cpu`).
"""

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from mx.lowering.matrix_to_affine.caches import DEFAULT_CACHES, Caches

BYTE_SHUFFLES = (0, 16, 32, 64)
"""Bytes one x86 byte shuffle intrinsic can take (0: none)."""


@dataclass(frozen=True)
class TargetCpu:
    """What the kernels are shaped by in a target CPU (module docs)."""

    f32_lanes: int
    """The f32 lanes one variable permute picks from: 16 (AVX-512), 8
    (AVX2) or 4."""

    byte_shuffle: int = 0
    """Bytes one x86 byte shuffle intrinsic looks up (`BYTE_SHUFFLES`): 64
    with AVX-512BW (whose kernels permute f32s by an intrinsic instead), 32
    with AVX2; 0 where the kernels write no x86 intrinsic."""

    vector_bits: int = 0
    """Bits of the target's widest vector registers, which caps
    `convert-matrix-to-affine`'s `vector-bits` (LLVM splits wider vectors
    into pairs of registers); 0: no cap, the option decides (`mx-opt`)."""

    vector_registers: int = 32
    """How many vector registers the target has: 32 with AVX-512, 16
    otherwise. The products' kernels keep their sums in them: the
    cache-blocked micro-kernel (`blocked.py`'s `PANEL_SHAPES`) and the
    register-blocked one (`products.py`'s `accumulator_registers`)."""

    weight_streams: int = 4
    """Rows of float weights the reassociated matvec reads at once
    (`float_matvec_along_k`: streams from memory sharing each load of x).
    Which is fastest depends on the CPU's prefetchers, measured with f16
    weights of 4096 x 4096 streamed from DRAM on one thread: on Zen 4 67 ps
    a weight one row at a time against 99-116 with 4; on an Intel Xeon with
    AVX512-FP16, 161 ps with one row, 153 with 2, 138 with 4, 143 with 8
    (bf16: 177, 152, 136, 139); on a Zen 3 (AVX2) f16 209 ps with one row,
    189 with 2, 165 with 4 (139 against 158 with 8 in another A/B), bf16
    190 against 149 with 4. So 1 on Zen 4 and later (`ZEN4_AND_LATER`), 4
    elsewhere (the Sapphire Rapids of `mx-opt` too)."""

    broadcast_registers: bool = True
    """Whether the cache-blocked micro-kernel holds each broadcast of packed
    B in a register for several multiplies (a 4 x 6 panel with 32
    registers: `blocked.py`'s `PANEL_SHAPES`). On Intel cores a broadcast
    from memory is a load µop alone; on AMD's Zen cores it takes an FP
    pipe's cycle, and the kernel folds each broadcast into one multiply's
    memory operand instead (1 x 16)."""

    panel: str = ""
    """The micro-kernel's panel, `VxC` (`PANEL_SHAPES`' values: V vectors of
    rows of A by C columns of B), instead of the one the registers and
    `broadcast_registers` choose (empty); `convert-matrix-to-affine`'s
    `panel`."""

    caches: Caches = DEFAULT_CACHES
    """The caches the cache-blocked products are blocked for, where
    `convert-matrix-to-affine`'s `l1-bytes`, `l2-bytes`, `l3-bytes` leave
    them to the target (0)."""


DEFAULT_CPU = TargetCpu(16, broadcast_registers=False)
"""AVX-512's, without byte shuffle intrinsics (`mx-opt`), and the products'
micro-kernel that folds its broadcasts (`convert-matrix-to-affine`'s `panel`
chooses another)."""

_target: ContextVar[TargetCpu] = ContextVar("target_cpu", default=DEFAULT_CPU)


def target_cpu() -> TargetCpu:
    """The CPU being compiled for."""
    return _target.get()


@contextmanager
def for_target_cpu(cpu: TargetCpu) -> Generator[None]:
    """Compile for `cpu` within the block."""
    token = _target.set(cpu)
    try:
        yield
    finally:
        _target.reset(token)


ZEN4_AND_LATER = ("znver4", "znver5")
"""LLVM's names of the AMD cores whose float matvec reads one row at a time
(`TargetCpu.weight_streams`)."""


def cpu_of(features: str, cpu: str = "") -> TargetCpu:
    """The description of an x86 CPU with LLVM's `features` (`+avx2,...`) and
    name (`znver4`, `sapphirerapids`, ...)."""
    enabled = set(features.split(","))
    lanes = 16 if "+avx512f" in enabled else 8 if "+avx2" in enabled else 4
    byte_shuffle = 0
    if "+avx512bw" in enabled:
        byte_shuffle = 64
    elif "+avx2" in enabled:
        byte_shuffle = 32
    registers = 32 if lanes == 16 else 16
    zen = cpu.startswith("znver")
    streams = 1 if cpu in ZEN4_AND_LATER else 4
    return TargetCpu(lanes, byte_shuffle, 32 * lanes, registers, streams, not zen)
