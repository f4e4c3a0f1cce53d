"""The protocol (generic functions), the styles, rng handling and the Space base class."""
