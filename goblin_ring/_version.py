"""The package version; native/build_ffi.py stamps the extension with it."""

__version__ = "0.1.0"
