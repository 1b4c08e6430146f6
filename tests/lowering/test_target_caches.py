"""The cache sizes the cache-blocked products are blocked for: read from a
sysfs-like directory, and the target CPU's (`TargetCpu.caches`) used where
convert-matrix-to-affine's options are left at 0."""

from dataclasses import replace
from pathlib import Path

import pytest
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.jit import lower_to_llvm_ir
from mx.lowering.matrix_to_affine.caches import (
    DEFAULT_CACHES,
    Caches,
    host_caches,
    read_caches,
)
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)
from mx.lowering.matrix_to_affine.target_cpu import (
    DEFAULT_CPU,
    cpu_of,
    for_target_cpu,
    target_cpu,
)


def _sysfs(root: Path, entries: list[tuple[int, str, str]]) -> Path:
    for i, (level, kind, size) in enumerate(entries):
        index = root / f"index{i}"
        index.mkdir()
        (index / "level").write_text(f"{level}\n")
        (index / "type").write_text(f"{kind}\n")
        (index / "size").write_text(f"{size}\n")
    return root


def test_zen4_sizes_are_read(tmp_path: Path) -> None:
    root = _sysfs(
        tmp_path,
        [(1, "Data", "32K"), (1, "Instruction", "32K"), (2, "Unified", "1024K"),
         (3, "Unified", "32768K")],
    )  # fmt: skip
    assert read_caches(root) == Caches(32 * 1024, 1024 * 1024, 32 * 1024 * 1024)


def test_l1_ways_are_read(tmp_path: Path) -> None:
    """The L1 data cache's ways (sysfs' ways_of_associativity): a Zen 3's 8
    ways; not the instruction cache's, not L2's."""
    root = _sysfs(
        tmp_path,
        [(1, "Instruction", "32K"), (1, "Data", "32K"), (2, "Unified", "512K")],
    )
    for index, ways in zip(sorted(root.glob("index*")), (4, 8, 16), strict=True):
        (index / "ways_of_associativity").write_text(f"{ways}\n")
    assert read_caches(root) == Caches(
        32 * 1024, 512 * 1024, DEFAULT_CACHES.l3_bytes, 8
    )


def test_missing_levels_keep_the_defaults(tmp_path: Path) -> None:
    root = _sysfs(tmp_path, [(1, "Instruction", "64K"), (2, "Unified", "2M")])
    expected = Caches(DEFAULT_CACHES.l1_bytes, 2 * 1024 * 1024, DEFAULT_CACHES.l3_bytes)
    assert read_caches(root) == expected
    assert read_caches(tmp_path / "absent") == DEFAULT_CACHES


def test_host_caches_are_plausible() -> None:
    caches = host_caches()
    assert 4 * 1024 <= caches.l1_bytes <= caches.l2_bytes <= 1 << 31


GEMM = """
func.func @f(%a: !matrix.matrix<40x50xf32>, %b: !matrix.matrix<50x40xf32>) -> !matrix.matrix<40x40xf32> {
  %r = matrix.matmul %a, %b : !matrix.matrix<40x50xf32>, !matrix.matrix<50x40xf32> -> !matrix.matrix<40x40xf32>
  func.return %r : !matrix.matrix<40x40xf32>
}
"""


def _lowered(l1_bytes: int = 0, l2_bytes: int = 0, l3_bytes: int = 0) -> str:
    ctx = mx_context()
    module = Parser(ctx, GEMM).parse_module()
    lowering = ConvertMatrixToAffinePass(
        l1_bytes=l1_bytes, l2_bytes=l2_bytes, l3_bytes=l3_bytes, blocked_min_bytes=0
    )
    lowering.apply(ctx, module)
    return str(module)


def test_options_left_at_zero_take_the_targets_caches() -> None:
    explicit = _lowered(l1_bytes=2048, l2_bytes=7424, l3_bytes=6400)
    assert target_cpu().caches == DEFAULT_CACHES
    assert _lowered() != explicit
    with for_target_cpu(replace(DEFAULT_CPU, caches=Caches(2048, 7424, 6400))):
        assert _lowered() == explicit
        # An option given wins over the target's.
        assert _lowered(l1_bytes=4096) != explicit
    assert target_cpu().caches == DEFAULT_CACHES


def test_the_jit_lowers_for_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    import mx.jit_machine_code

    pipeline = "convert-matrix-to-affine{blocked-min-bytes=0},convert-to-llvm"
    small = Caches(2048, 7424, 6400)
    monkeypatch.setattr(mx.jit_machine_code, "host_caches", lambda: small)
    for_small, _, _ = lower_to_llvm_ir(GEMM, pipeline)
    monkeypatch.setattr(mx.jit_machine_code, "host_caches", lambda: DEFAULT_CACHES)
    for_default, _, _ = lower_to_llvm_ir(GEMM, pipeline)
    assert for_small != for_default
    monkeypatch.setattr(mx.jit_machine_code, "host_caches", lambda: small)
    assert lower_to_llvm_ir(GEMM, pipeline)[0] == for_small


@pytest.mark.parametrize(
    ("cpu", "streams"),
    [("znver3", 4), ("znver4", 1), ("znver5", 1), ("sapphirerapids", 4), ("", 4)],
)
def test_weight_streams_of_each_cpu(cpu: str, streams: int) -> None:
    """The float matvec reads one row at a time on Zen 4 and later, four on
    every other CPU (a Zen 3 measured 165 against 209 ps a weight with one:
    `TargetCpu.weight_streams`)."""
    assert cpu_of("+avx2,+fma,+f16c", cpu).weight_streams == streams
