"""C ABI: `-t llvm` output is accepted by llvm-as-16 and links with a C driver
compiled by clang-16 (`void k(float *a, float *b, float *c)`)."""

import subprocess
from pathlib import Path

from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.lowering.llvm.convert_to_llvm import ConvertToLLVMPass
from mx.targets.llvm_ir import module_to_llvm_ir
from tests.system_tools import required_tool

KERNEL = """
func.func @k(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %n: index) {
  affine.for %i = 0 to %n {
    %x = affine.load %a[%i] : memref<?xf32>
    %y = affine.load %b[%i] : memref<?xf32>
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %y : f32
    affine.store %s, %c[%i] : memref<?xf32>
  }
  func.return
}
func.func @h(%x: f16, %y: bf16, %n: index) -> f16 {
  %e = arith.extf %y : bf16 to f32
  %t = arith.truncf %e : f32 to f16
  %r = arith.addf %x, %t : f16
  func.return %r : f16
}
"""

DRIVER = r"""
#include <stdio.h>
#include <stdint.h>
#include <string.h>
void k(float *a, float *b, float *c, int64_t n);
_Float16 h(_Float16 x, __bf16 y, int64_t n);
int main(void) {
  float a[5] = {1, 2, 3, 4, 5}, b[5] = {0.5f, -1, 2, 0.25f, 3}, c[5];
  k(a, b, c, 5);
  for (int i = 0; i < 5; ++i) printf("%.9g\n", c[i]);
  uint16_t bits = 0x4040; /* bf16 3.0 */
  __bf16 y; memcpy(&y, &bits, 2);
  printf("%.9g\n", (double)(float)h((_Float16)1.5f, y, 0));
  return 0;
}
"""


def _llvm_ir() -> str:
    ctx = mx_context()
    module = Parser(ctx, KERNEL).parse_module()
    ConvertToLLVMPass().apply(ctx, module)
    return module_to_llvm_ir(module)


def test_llvm_as_accepts(tmp_path: Path) -> None:
    llvm_as = required_tool("llvm-as-16")
    ll = tmp_path / "k.ll"
    ll.write_text(_llvm_ir())
    subprocess.run([llvm_as, str(ll), "-o", str(tmp_path / "k.bc")], check=True)
    text = ll.read_text()
    assert "define void @k(ptr %" in text
    assert "inttoptr" not in text and "ptrtoint" not in text


def test_clang_links_and_runs(tmp_path: Path) -> None:
    clang = required_tool("clang-16")
    ll = tmp_path / "k.ll"
    ll.write_text(_llvm_ir())
    driver = tmp_path / "main.c"
    driver.write_text(DRIVER)
    exe = tmp_path / "main"
    subprocess.run([clang, "-O2", str(driver), str(ll), "-o", str(exe)], check=True)
    lines = subprocess.run(
        [str(exe)], check=True, capture_output=True, text=True
    ).stdout.split()
    a, b = [1, 2, 3, 4, 5], [0.5, -1, 2, 0.25, 3]
    assert [float(v) for v in lines[:5]] == [
        x * y + y for x, y in zip(a, b, strict=False)
    ]
    assert float(lines[5]) == 4.5
