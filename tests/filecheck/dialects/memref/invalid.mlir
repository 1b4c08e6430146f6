// RUN: mx-opt %s --verify-diagnostics --split-input-file

func.func @too_few_indices(%m: memref<4x4xf32>, %i: index) {
  // expected-error @+1 {{expects as many indices as the memref's rank (2), got 1}}
  memref.prefetch %m[%i], read, locality<3>, data : memref<4x4xf32>
  func.return
}

// -----

func.func @locality_out_of_range(%m: memref<4xf32>, %i: index) {
  // expected-error @+1 {{locality must be 0..3, got 4}}
  memref.prefetch %m[%i], read, locality<4>, data : memref<4xf32>
  func.return
}

// -----

func.func @neither_read_nor_write(%m: memref<4xf32>, %i: index) {
  // expected-error @+1 {{Expected one of 'read', 'write'}}
  memref.prefetch %m[%i], fetch, locality<3>, data : memref<4xf32>
  func.return
}

// -----

func.func @neither_data_nor_instr(%m: memref<4xf32>, %i: index) {
  // expected-error @+1 {{Expected one of 'data', 'instr'}}
  memref.prefetch %m[%i], read, locality<3>, code : memref<4xf32>
  func.return
}
