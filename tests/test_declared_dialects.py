"""Dialects declared in Python on the compiled families (class attributes only) parse as the built-ins do."""
from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from lmparse import ToolParserManager
from lmparse.dialects.deepseek import DeepSeekV4ToolParser, DeepSeekV32ToolParser
from lmparse.tools.dsml import DSML_TOKEN, DsmlToolParser
from lmparse.dialects.internlm import Internlm2ToolParser
from lmparse.dialects.llama import Llama3JsonToolParser
from lmparse.dialects.qwen import Qwen3ToolParser
from lmparse.tools.json_parser import JsonToolParser
from tests import test_dsml, test_json_dialects
from tests.streaming import check_messages, chunkings, complete, reconstruct, stream_flagged


class DeclaredQwen3(JsonToolParser):
    tool_open_tag = '<tool_call>'
    tool_close_tag = '</tool_call>'


class DeclaredInternlm2(JsonToolParser):
    tool_open_tag = '<|action_start|><|plugin|>'
    tool_close_tag = '<|action_end|>'
    argument_field = 'parameters'


class DeclaredLlama3(JsonToolParser):
    tool_open_tag = '<|python_tag|>'
    argument_field = 'parameters'


class DeclaredV32(DsmlToolParser):
    tool_calls_block_name = 'function_calls'
    bare_call_open = f'<{DSML_TOKEN}invoke'


class DeclaredV4(DsmlToolParser):
    tool_calls_block_name = 'tool_calls'
    bare_call_open = f'<{DSML_TOKEN}invoke'


# builtin registry name -> (declared class, built-in class)
DECLARED = {
    'qwen': (DeclaredQwen3, Qwen3ToolParser),
    'qwen2d5': (DeclaredQwen3, Qwen3ToolParser),
    'qwen3': (DeclaredQwen3, Qwen3ToolParser),
    'internlm': (DeclaredInternlm2, Internlm2ToolParser),
    'intern-s1': (DeclaredInternlm2, Internlm2ToolParser),
    'llama3': (DeclaredLlama3, Llama3JsonToolParser),
    'deepseek-v32': (DeclaredV32, DeepSeekV32ToolParser),
    'deepseek-v4': (DeclaredV4, DeepSeekV4ToolParser),
}


@contextlib.contextmanager
def registered(name: str, cls: type) -> Iterator[str]:
    assert name not in ToolParserManager
    ToolParserManager.register_module(name, module=cls)
    try:
        yield name
    finally:
        ToolParserManager.module_dict.pop(name, None)


def results(case: Any, make_parser: Any, tool: str, tags: tuple[str, ...]) -> list[Any]:
    """parse_complete and every chunking of ``case`` through tool parser ``tool`` (same request)."""
    case = dataclasses.replace(case, tool=tool)
    out = [complete(case.parser(make_parser), case.text).key()]
    for _, chunks in chunkings(case.text, tags):
        parser = case.parser(make_parser)
        flagged = stream_flagged(parser, chunks)
        check_messages(flagged)
        out.append(reconstruct(parser, flagged).key())
    return out


def _cases() -> list[tuple[str, Any, tuple[str, ...]]]:
    cases = [(c.tool, c, c.tags) for c in test_json_dialects.CASES if c.tool in DECLARED]
    for tool in ('deepseek-v32', 'deepseek-v4'):
        cases += [(tool, c, test_dsml.tags(tool)) for c in test_dsml.cases_for(tool)]
    return cases


CASES = _cases()


@pytest.mark.parametrize('tool,case,tags', CASES, ids=[c.id for _, c, _ in CASES])
def test_declared_dialect_equals_builtin(tool: str, case: Any, tags: tuple[str, ...], make_parser: Any) -> None:
    declared, builtin = DECLARED[tool]
    with registered(f'declared-{tool}--test', declared) as name:
        assert type(dataclasses.replace(case, tool=name).parser(make_parser).tool_parser) is declared
        ours = results(case, make_parser, name, tags)
    theirs = results(case, make_parser, tool, tags)
    assert ours == theirs
    assert theirs[0] == case.expected


def test_declared_tags_and_fields() -> None:
    for declared, builtin in DECLARED.values():
        assert declared.get_tool_open_tag() == builtin.get_tool_open_tag()
        assert declared.get_tool_close_tag() == builtin.get_tool_close_tag()
    assert (Qwen3ToolParser.get_tool_open_tag(), Qwen3ToolParser.get_tool_close_tag()) == ('<tool_call>', '</tool_call>')
    assert Llama3JsonToolParser.get_tool_close_tag() is None
    assert JsonToolParser.get_tool_open_tag() is None and JsonToolParser.get_tool_close_tag() is None
    assert issubclass(DeepSeekV4ToolParser, DeepSeekV32ToolParser) and issubclass(DeepSeekV32ToolParser, DsmlToolParser)


def test_dsml_family_without_a_block_name_is_refused() -> None:
    with pytest.raises(TypeError, match='tool_calls_block_name'):
        DsmlToolParser()


def test_declared_dsml_token_and_elements() -> None:
    class Ascii(DsmlToolParser):
        dsml_token = '|T|'
        tool_calls_block_name = 'calls'
        invoke_element = 'call'
        parameter_element = 'arg'
        block_lead = ''

    assert Ascii.get_tool_open_tag() == '<|T|calls>' and Ascii.get_tool_close_tag() == '</|T|calls>'
    parser = Ascii()
    parser.begin_tool_block()
    deltas: list[Any] = []
    text = ('<|T|call name="f">\n<|T|arg name="a" string="true">x</|T|arg>\n'
            '<|T|arg name="b" string="false">[1, "</|T|calls>"]</|T|arg>\n</|T|call>\n</|T|calls>rest')
    consumed = parser.feed_tool_block(text, deltas, final=False)
    assert text[consumed:] == 'rest' and parser.block_closed
    assert ''.join(d.function.arguments or '' for d in deltas) == '{"a": "x", "b": [1, "</|T|calls>"]}'
    # The built-in V3.2 markers are untouched by the subclass.
    assert DeepSeekV32ToolParser.get_tool_open_tag() == f'\n\n<{DSML_TOKEN}function_calls>'


def test_json_declaration_changes_follow() -> None:
    class Custom(JsonToolParser):
        tool_open_tag = '<tc>'
        tool_close_tag = '</tc>'
        argument_field = 'args'

    def feed(text: str) -> tuple[str, str]:
        parser = Custom()
        parser.begin_tool_block()
        deltas: list[Any] = []
        consumed = parser.feed_tool_block(text, deltas, final=False)
        return text[consumed:], ''.join(d.function.arguments or '' for d in deltas)

    assert feed('{"name": "f", "args": {"a": 1}}</tc>rest') == ('rest', '{"a": 1}')
    Custom.argument_field = 'params'
    assert feed('{"name": "f", "params": {"a": 1}}</tc>rest') == ('rest', '{"a": 1}')
    Custom.name_field = 3  # type: ignore[assignment]
    with pytest.raises(TypeError, match='name_field'):
        Custom()


def test_bare_call_open_must_be_the_opener_it_stands_for() -> None:
    from lmparse.dialects.deepseek import DeepSeekV31ToolParser

    class WrongDsml(DsmlToolParser):
        tool_calls_block_name = 'tool_calls'
        bare_call_open = f'<{DSML_TOKEN}parameter'

    class WrongSections(DeepSeekV31ToolParser):
        bare_call_open = '<｜tool▁calls▁begin｜>'

    with pytest.raises(TypeError, match='bare_call_open'):
        WrongDsml()
    with pytest.raises(TypeError, match='bare_call_open'):
        WrongSections()
