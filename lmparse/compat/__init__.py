"""Compatibility layers that put lmparse behind other projects' parser APIs.

``lmparse.compat.lmdeploy`` swaps LMDeploy 0.18's ``lmdeploy.serve.parsers``
for lmparse-backed modules (``install()`` / ``uninstall()``). Nothing here is
imported by ``lmparse`` itself, so the core package never needs LMDeploy.
"""
