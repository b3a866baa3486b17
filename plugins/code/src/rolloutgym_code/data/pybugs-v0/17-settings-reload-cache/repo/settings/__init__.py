from .store import Settings

__all__ = ["Settings"]
