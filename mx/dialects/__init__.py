"""mx's dialects (`matrix`, `arbfp`) and its additions to xDSL's `memref` and
`llvm`. Importing any of them installs mx's xDSL fixes (`mx.xdsl_compat`)."""

import mx.xdsl_compat  # noqa: F401  # pyright: ignore[reportUnusedImport]
