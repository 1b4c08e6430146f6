"""mx's bottom layer over xDSL: every workaround of xDSL 0.75 behaviour, and
the only place that uses xDSL's private API.

Importing this package installs the fixes of `patches` into xDSL's classes
(once per process). mx's dialect registration imports it (`mx.universe`, which
stock `xdsl-opt` loads through the `xdsl.universe` entry point, and
`mx.dialects`), so every tool and pipeline that reads mx's dialects runs with
them. `parser` and `interpreter` give public names to the private xDSL API
mx's parsers and interpreters need. Bugs that belong upstream are described,
with reproducers and patches, in docs/xdsl-upstream.md.
"""

from mx.xdsl_compat.patches import install

install()
