"""The compiled tool-call families a dialect declares itself on (dialects: ``lmparse.dialects``).

- ``ToolParser``: the outer block, call identity, filtering, normalized deltas.
- ``JsonToolParser``: one JSON envelope per block (``JsonValueScanner`` finds value ends).
- ``JsonHeaderToolParser``: ``NAME[marker]{json}`` header calls, or JSON envelopes (Mistral).
- ``XmlToolParser``: sequential, function-first, tag-delimited calls (``xml_grammar``, ``xml_values``).
- ``DsmlToolParser``: DeepSeek's DSML invoke/parameter markup.
- ``NsElementToolParser``: namespace-marked element calls, arguments named by their element (MiniMax M3).
- ``SectionToolParser``: special-token sections of calls with JSON arguments.
- ``BraceCallToolParser``: ``call:NAME{key:value}`` calls with delimited strings, converted to JSON.
- ``PythonicToolParser``: a pythonic call list ``[f(a=1), g()]`` with Python-literal arguments.
"""
from lmparse.tools.base import ToolParser
from lmparse.tools.brace_call import BraceCallToolParser
from lmparse.tools.dsml import DsmlToolParser
from lmparse.tools.json_header import JsonHeaderToolParser
from lmparse.tools.json_parser import JsonToolParser
from lmparse.tools.json_scanner import JsonValueScanner
from lmparse.tools.ns_elements import NsElementToolParser
from lmparse.tools.pythonic import PythonicToolParser
from lmparse.tools.sections import SectionToolParser
from lmparse.tools.xml_parser import XmlToolParser

__all__ = [
    'BraceCallToolParser',
    'DsmlToolParser',
    'JsonHeaderToolParser',
    'JsonToolParser',
    'JsonValueScanner',
    'NsElementToolParser',
    'PythonicToolParser',
    'SectionToolParser',
    'ToolParser',
    'XmlToolParser',
]
