"""spacealg's own spaces, one kind per module; importing this package registers them all."""

from spacealg.spaces import array, box, categorical, finite, interval, oneof, product  # noqa: F401
