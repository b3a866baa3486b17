"""The built-in plugin: the ``toy`` environments and the ``oracle``, ``null``, ``random``,
``human`` and ``replay`` policies."""
