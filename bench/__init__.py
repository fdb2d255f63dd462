"""Benchmarks (pytest-benchmark) and the side-by-side LMDeploy comparison; not part of the default test run."""
