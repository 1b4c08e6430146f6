// Bad input is a located error (exit status 1), never a traceback; with
// --split-input-file every chunk is processed and reported at its file line.
// RUN: not mx-opt %s --split-input-file 2>%t.err | filecheck %s --check-prefix=OUT
// RUN: filecheck %s --input-file=%t.err
// RUN: not mx-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=NOTRACE
// NOTRACE-NOT: Traceback

// CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: Operation nosuch.op is not registered
"nosuch.op"() : () -> ()

// -----

// CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'nosuch.type' is not registered
func.func @f(%a : !nosuch.type) {
  func.return
}

// -----

func.func @g() {
  // CHECK: errors.mlir:[[# @LINE + 1]]:3: error: 'func.return' op
  func.return %c : i32
  %c = arith.constant 0 : i32
}

// -----

// CHECK: errors.mlir:[[# @LINE + 1]]:17: error: {{.*}}
func.func @h() {{

// -----

// The valid chunk is still printed.
// OUT:      func.func @ok()
// OUT-NEXT:   func.return
func.func @ok() {
  func.return
}
