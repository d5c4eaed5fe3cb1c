"""The package version (a leaf module: importing it pulls in nothing else)."""

__version__ = "0.1.0"
