"""Hook implementations of rolloutgym-code (imports nothing heavy)."""
