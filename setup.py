"""setup.py — only here because setuptools takes cffi_modules from setup(); all metadata is in pyproject.toml."""
from setuptools import setup

setup(cffi_modules=["native/build_ffi.py:ffibuilder"])
