"""Build the Cython extensions: every .pyx under lmparse/ becomes one module.

Both stages run in parallel by default, also under ``pip install`` (which
passes no ``-j``): Cython translates the modules in ``JOBS`` processes and
``build_ext`` compiles them in ``JOBS`` threads. ``JOBS`` is the number of
CPUs this process may use, or ``LMPARSE_BUILD_JOBS``; ``-j N`` still wins.
Unchanged modules are neither re-translated nor recompiled.
"""
import os
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

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


def jobs() -> int:
    env = os.environ.get("LMPARSE_BUILD_JOBS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class ParallelBuildExt(build_ext):
    """``build_ext`` that compiles in parallel unless told otherwise."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = jobs()


# Guarded: from CPython 3.14 multiprocessing starts workers with forkserver, which
# imports this file again in every Cython worker; unguarded, each would cythonize anew.
# (setuptools' PEP 517 backend runs this file as __main__ too.)
if __name__ == "__main__":
    setup(
        ext_modules=cythonize(extensions(), compiler_directives=COMPILER_DIRECTIVES, nthreads=jobs()),
        cmdclass={"build_ext": ParallelBuildExt},
    )
