"""The compiled tool-call families a dialect declares itself on (dialects: ``lmparse.dialects``).

- ``ToolParser``: the outer block, call identity, filtering, normalized deltas.
- ``JsonToolParser``: one JSON envelope per block (``JsonValueScanner`` finds value ends).
- ``XmlToolParser``: sequential, function-first, tag-delimited calls (``xml_grammar``, ``xml_values``).
- ``DsmlToolParser``: DeepSeek's DSML invoke/parameter markup.
- ``SectionToolParser``: special-token sections of calls with JSON arguments.
- ``PythonicToolParser``: a pythonic call list ``[f(a=1), g()]`` with Python-literal arguments.
"""
from lmparse.tools.base import ToolParser
from lmparse.tools.dsml import DsmlToolParser
from lmparse.tools.json_parser import JsonToolParser
from lmparse.tools.json_scanner import JsonValueScanner
from lmparse.tools.pythonic import PythonicToolParser
from lmparse.tools.sections import SectionToolParser
from lmparse.tools.xml_parser import XmlToolParser

__all__ = [
    'DsmlToolParser',
    'JsonToolParser',
    'JsonValueScanner',
    'PythonicToolParser',
    'SectionToolParser',
    'ToolParser',
    'XmlToolParser',
]
