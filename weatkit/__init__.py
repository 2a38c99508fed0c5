"""weatkit: association tests (WEAT, X-WEAT, CA-WEAT) on word representations across languages."""

from weatkit.errors import WeatkitError

__version__ = "0.1.0"

__all__ = ["WeatkitError", "__version__"]
