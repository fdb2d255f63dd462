"""Build the Cython extensions: every .pyx under lmparse/ becomes one module."""
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = Path(__file__).parent

COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "initializedcheck": False,
    "cdivision": True,
    "embedsignature": True,
    # Free-threaded CPython (3.13t+) keeps the GIL off when importing these modules: the test
    # suite and tests/test_threads.py pass there (parsers are per response; module caches are
    # immutable entries behind atomic dict operations).
    "freethreading_compatible": True,
}


def extensions() -> list[Extension]:
    mods = []
    for pyx in sorted((ROOT / "lmparse").rglob("*.pyx")):
        rel = pyx.relative_to(ROOT).with_suffix("")
        mods.append(Extension(".".join(rel.parts), [str(pyx.relative_to(ROOT))], extra_compile_args=["-O2"]))
    return mods


setup(ext_modules=cythonize(extensions(), compiler_directives=COMPILER_DIRECTIVES))
