"""spacealg's own spaces, one kind per module; importing this package registers them all."""

from spacealg.spaces import (  # noqa: F401
    array,
    box,
    categorical,
    difference,
    dynamic,
    finite,
    graph,
    interval,
    masked,
    oneof,
    product,
    sequence,
    text,
    union,
)
