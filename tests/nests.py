"""A deep nest of `scf.for`/`scf.if` for the tests of how passes scale with
the nesting depth."""

MATRIX = "!matrix.matrix<2x2xf32>"


def nested_loops(depth: int) -> str:
    """`@f`: `depth` nested loops and branches, each level with a dead op,
    duplicate ops and reads, writes to memory and a matrix product."""
    m = MATRIX
    lines = [
        f"func.func @f(%c: i1, %m: memref<4xf32>, %i: index, %a: {m}) {{",
        "  %x = memref.load %m[%i] : memref<4xf32>",
    ]
    for level in range(depth):
        if level % 2:
            lines.append("  scf.if %c {")
        else:
            lines.append(f"  scf.for %k{level} = %i to %i step %i {{")
        lines += [
            f"  %d{level} = arith.mulf %x, %x : f32",
            f"  %s{level} = arith.addf %x, %x : f32",
            f"  %e{level} = arith.addf %x, %x : f32",
            f"  %r{level} = memref.load %m[%i] : memref<4xf32>",
            f"  %q{level} = memref.load %m[%i] : memref<4xf32>",
            f"  memref.store %s{level}, %m[%i] : memref<4xf32>",
            f"  memref.store %e{level}, %m[%i] : memref<4xf32>",
            f"  memref.store %r{level}, %m[%i] : memref<4xf32>",
            f"  memref.store %q{level}, %m[%i] : memref<4xf32>",
            f"  %t{level} = matrix.transpose %a : {m} -> {m}",
            f"  %p{level} = matrix.matmul %t{level}, %a : {m}, {m} -> {m}",
            f"  matrix.column_major_store %p{level}, %m[0] : {m}, memref<4xf32>",
        ]
    lines += ["  }"] * depth + ["  func.return", "}"]
    return "\n".join(lines)
