"""Pass options that take only some values of their type: each pass declares
them (`option_choices`, option field -> allowed values) and checks them when
it is made (`check_option_choices` in its `__post_init__`), so a pass built
from Python is checked as one built from a pipeline. `mx-opt` reads the same
declaration to report a bad value at its column of the pipeline text."""

from collections.abc import Mapping, Sequence

from xdsl.passes import ModulePass


def option_choices(cls: type[object]) -> Mapping[str, Sequence[object]]:
    """The options of pass class `cls` that take only the values listed."""
    return getattr(cls, "option_choices", {})


def check_option_choices(p: ModulePass) -> None:
    """A ValueError if an option of `p` is not among its choices."""
    for field_name, allowed in option_choices(type(p)).items():
        value = getattr(p, field_name)
        if value not in allowed or isinstance(value, bool):
            raise ValueError(
                f"option '{field_name.replace('_', '-')}' of pass '{p.name}' must "
                f"be one of {', '.join(map(str, allowed))} (got '{value}')"
            )
