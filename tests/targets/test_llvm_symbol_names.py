"""Symbol names that need quoting in LLVM IR: the `-t llvm` text is accepted
by llvm-as-16 and the JIT (whose wrappers are IR text too) calls them."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mx.jit import compile_module, lower_to_llvm_ir
from mx.targets.llvm_ir import llvm_symbol
from tests.system_tools import required_tool

NAMES = ["my kernel", 'quote"back\\slash', "tab\tand\nnewline", "café", "0th", "a@b"]


def _source(name: str) -> str:
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\t", "\\t")
    return f"""
func.func @"{escaped}"(%a: memref<4xf32>, %k: f32) -> f32 {{
  %c2 = arith.constant 2 : index
  %x = memref.load %a[%c2] : memref<4xf32>
  %y = arith.mulf %x, %k : f32
  func.return %y : f32
}}
func.func @"caller of {escaped}"(%a: memref<4xf32>) -> f32 {{
  %k = arith.constant 3.0 : f32
  %y = func.call @"{escaped}"(%a, %k) : (memref<4xf32>, f32) -> f32
  func.return %y : f32
}}
"""


@pytest.mark.parametrize(
    ("name", "spelling"),
    [
        ("kernel", "@kernel"),
        ("plain.name_$-1", "@plain.name_$-1"),
        ("my kernel", '@"my kernel"'),
        ('a"b\\c', '@"a\\22b\\5Cc"'),
        ("line\n", '@"line\\0A"'),
        ("café", '@"caf\\C3\\A9"'),
        ("0th", '@"0th"'),
    ],
)
def test_llvm_symbol_spelling(name: str, spelling: str) -> None:
    assert llvm_symbol(name) == spelling


def test_llvm_as_accepts_quoted_names(tmp_path: Path) -> None:
    llvm_as = required_tool("llvm-as-16")
    for index, name in enumerate(NAMES):
        ir, _, _ = lower_to_llvm_ir(_source(name))
        assert f"define float {llvm_symbol(name)}(" in ir
        ll = tmp_path / f"k{index}.ll"
        ll.write_text(ir)
        subprocess.run([llvm_as, str(ll), "-o", os.devnull], check=True)


@pytest.mark.parametrize("name", [n for n in NAMES if n.isascii()])
def test_jit_calls_functions_whose_names_need_quotes(name: str) -> None:
    module = compile_module(_source(name))
    a = np.array([1.0, 2.0, 5.5, 8.0], np.float32)
    assert module[name](a, np.float32(0.5)) == np.float32(2.75)
    assert module[f"caller of {name}"](a) == np.float32(16.5)
