"""The rolloutgym exception hierarchy (re-exported from ``rolloutgym_protocol.errors``)."""

from rolloutgym_protocol.errors import *  # noqa: F403
from rolloutgym_protocol.errors import __all__, __doc__ as _protocol_doc  # noqa: F401

__doc__ = _protocol_doc
