// RUN: mx-opt %s -p convert-to-llvm -t llvm | filecheck %s

// Symbol names that are not plain LLVM identifiers are quoted, with `"`, `\`,
// control and non-ASCII bytes escaped as \XX, wherever a name is printed.

// CHECK: @"my table" = private constant [2 x float] [float 0x3FF0000000000000, float 0x4000000000000000]
"memref.global"() <{sym_name = "my table", sym_visibility = "private", type = memref<2xf32>, initial_value = dense<[1.0, 2.0]> : tensor<2xf32>, constant}> : () -> ()

// CHECK-LABEL: define float @"my kernel"(i64 %{{.*}})
func.func @"my kernel"(%i: index) -> f32 {
  // CHECK: getelementptr inbounds float, ptr @"my table", i64
  %t = memref.get_global @"my table" : memref<2xf32>
  %x = memref.load %t[%i] : memref<2xf32>
  func.return %x : f32
}

// CHECK-LABEL: define float @"quote\22back\5Cslash\0Anewline"(i64 %{{.*}})
func.func @"quote\"back\\slash\nnewline"(%i: index) -> f32 {
  // CHECK: call float @"my kernel"(i64 %{{.*}})
  %x = func.call @"my kernel"(%i) : (index) -> f32
  func.return %x : f32
}

// Non-ASCII names are escaped byte by byte (UTF-8); a leading digit needs quotes.
// CHECK-LABEL: define void @"caf\C3\A9"()
func.func @"café"() {
  func.return
}
// CHECK-LABEL: define void @"0th"()
func.func @"0th"() {
  func.return
}

// Plain identifiers (letters, digits, `$._-`) are left bare.
// CHECK-LABEL: define void @plain.name_$-1()
func.func @"plain.name_$-1"() {
  func.return
}

// CHECK: declare i32 @"external fn"(i32)
func.func private @"external fn"(i32) -> i32
