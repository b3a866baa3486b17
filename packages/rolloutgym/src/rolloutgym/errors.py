"""The rolloutgym exception hierarchy (re-exported from ``rolloutgym_protocol.errors``)."""

from rolloutgym_protocol.errors import *  # noqa: F403
from rolloutgym_protocol.errors import __all__  # noqa: F401
from rolloutgym_protocol.errors import __doc__ as _protocol_doc

__doc__ = _protocol_doc
