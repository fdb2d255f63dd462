"""``keep_undeclared_tool_calls`` / ``ToolParser.keep_undeclared_calls``: calls to tools the request does not declare.

LMDeploy drops them (lmparse's default); vLLM's parsers keep them, and SGLang
with ``SGLANG_FORWARD_UNKNOWN_TOOLS=true``. Each case runs over one chunk,
every split inside every tag, fixed and random chunkings.
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import BaseResponseParser
from tests.streaming import chunkings, complete, make_request, run_case

HERMES = '<tool_call>\n{"name": "launch_rocket", "arguments": {"x": 1}}\n</tool_call>'
KNOWN = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "A"}}\n</tool_call>'
V31 = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>rm<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
DSML = ('\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="rm">\n<｜DSML｜parameter name="p" string="true">/'
        '</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>')
CASES = [
    ('hermes', 'Sure. ' + HERMES + KNOWN, 'Sure. ',
     [('launch_rocket', '{"x": 1}'), ('get_weather', '{"city": "A"}')], [('get_weather', '{"city": "A"}')]),
    ('deepseek_v31', 'a' + V31, 'a', [('rm', '{}')], []),
    ('deepseek_v4', 'a' + DSML, 'a', [('rm', '{"p": "/"}')], []),
]
TAGS = ('<tool_call>', '</tool_call>', '<｜tool▁call▁begin｜>', '<｜tool▁sep｜>', '<｜DSML｜invoke', '</｜DSML｜parameter>')


def _calls(result: Any) -> list[tuple[str, str]]:
    return [(c.function.name, c.function.arguments) for c in result or ()]


@pytest.mark.parametrize(('tool', 'text', 'content', 'kept', 'dropped'), CASES, ids=[c[0] for c in CASES])
def test_kept_when_asked_dropped_by_default(tool: str, text: str, content: str, kept: Any, dropped: Any) -> None:
    request = make_request(['get_weather'])
    default = BaseResponseParser.with_parsers(None, tool)
    keep = BaseResponseParser.with_parsers(None, tool)
    keep.keep_undeclared_tool_calls = True
    got = keep(request).parse_complete(text)
    assert (got[0], _calls(got[1])) == (content, kept)
    got = default(request).parse_complete(text)
    assert (got[0], _calls(got[1]) if got[1] else []) == (content, dropped)
    for label, chunks in chunkings(text, TAGS):
        assert run_case(keep(request), chunks) == (content, None, kept), label
        assert run_case(default(request), chunks) == (content, None, dropped), label
    # the instance switch on the tool parser does the same
    parser = default(request)
    parser.tool_parser.keep_undeclared_calls = True
    assert complete(parser, text).calls == kept


def test_bare_calls_still_need_an_offered_name() -> None:
    keep = BaseResponseParser.with_parsers(None, 'deepseek_v31')
    keep.keep_undeclared_tool_calls = True
    text = 'x<｜tool▁call▁begin｜>rm<｜tool▁sep｜>{}<｜tool▁call▁end｜>'
    assert keep(make_request(['get_weather'])).parse_complete(text) == (text, None, None)
