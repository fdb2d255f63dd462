"""Built-in dialects: one module per model family, each a declaration on a compiled family.

Importing this package registers every built-in dialect under its lmparse
name and its aliases (``import lmparse`` does it): every module in this
package is imported, so a new family only adds a file. Which family a dialect
sits on, and what it declares, is in each module; README "Writing a dialect".
"""
from __future__ import annotations

import importlib
import pkgutil

__all__: list[str] = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith('_'))

for _name in __all__:
    importlib.import_module(f'{__name__}.{_name}')
