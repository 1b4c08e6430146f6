// fuzz-args: 
// A hang (exponential backtracking in xDSL's string-literal regex), fixed by mx/xdsl_compat/patches.py.
func.func @vector_lengths(": vector<4xi8>) -> vector<8xf32> {
  func.return
}
