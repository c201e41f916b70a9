"""The package version, apart from ``mtplug/__init__`` so that modules can name it
without importing the top-level API."""

__version__ = "0.1.0"
