"""setup.py — only here because setuptools takes cffi_modules and ext_modules from setup(); all metadata is in pyproject.toml.

Three compiled modules: the cffi extension goblin_ring._goblin_native (every C layer, built by
native/build_ffi.py) and two small CPython C-API modules: goblin_ring._plain_loads, which turns the
ring client's plain reply buffer into Python objects (native/python/plain_loads.c), and
goblin_ring._near_cache, the RingClient near-cache whose hit is one call (native/python/near_cache.c).
"""
from setuptools import Extension, setup

setup(
    cffi_modules=["native/build_ffi.py:ffibuilder"],
    ext_modules=[Extension("goblin_ring._plain_loads", ["native/python/plain_loads.c"]),
                 Extension("goblin_ring._near_cache", ["native/python/near_cache.c"])],
)
