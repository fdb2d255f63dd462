"""XML-like dialects as declarations: markers on a Python subclass, one compiled grammar.

* a Python class that only declares Qwen3-Coder's (or GLM-4.7's) markers parses
  exactly like the built-in dialect over every case and chunking, and runs on
  the compiled grammar (no Python hook);
* other real XML-like formats (MiniMax-M2, Seed-OSS) fit with declarations only;
* declared token-aligned prefixes are what is held back; bad declarations are
  type errors; the compiled grammar is cached per class.
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from lmparse import BaseResponseParser, Glm47ToolParser, Qwen3CoderToolParser, XmlToolParser
from lmparse.tools.xml_grammar import clear_grammar_cache
from tests.streaming import check_messages, chunkings, complete, reconstruct, stream_flagged, token_chunks
from tests.test_xml_dialects import CASES, QWEN_TAGS, TAGS, Case, request


class PyQwen3Coder(XmlToolParser):
    """Qwen3-Coder, declared in Python."""

    function_open = '<function='
    function_name_end = '>'
    arg_open = '<parameter='
    arg_name_end = '>'
    arg_value_close_tag = '</parameter>'
    function_close = '</function>'
    multiple_calls = True
    strip_value_newlines = True
    bare_call_open = '<function='

    tool_open_tag = '<tool_call>'
    tool_close_tag = '</tool_call>'


class PyGlm47(XmlToolParser):
    """GLM-4.7, declared in Python."""

    function_open = ''
    arg_open = '<arg_key>'
    arg_name_end = '</arg_key>'
    value_open = '<arg_value>'
    arg_value_close_tag = '</arg_value>'

    tool_open_tag = '<tool_call>'
    tool_close_tag = '</tool_call>'


class MiniMaxM2(XmlToolParser):
    """``<minimax:tool_call><invoke name="NAME"><parameter name="K">V</parameter></invoke></minimax:tool_call>``."""

    function_open = '<invoke name="'
    function_name_end = '">'
    arg_open = '<parameter name="'
    arg_name_end = '">'
    arg_value_close_tag = '</parameter>'
    function_close = '</invoke>'
    multiple_calls = True

    tool_open_tag = '<minimax:tool_call>'
    tool_close_tag = '</minimax:tool_call>'


class SeedOss(PyQwen3Coder):
    """``<seed:tool_call><function=NAME><parameter=K>V</parameter></function></seed:tool_call>``."""

    tool_open_tag = '<seed:tool_call>'
    tool_close_tag = '</seed:tool_call>'


class TokenAlignedQwen3Coder(PyQwen3Coder):
    """Only the prefixes Qwen's tokenizer can end a chunk with (``<``/``function``/``=NAME``...)."""

    function_open_prefixes = ('<', '<function')
    arg_open_prefixes = ('<', '<parameter')
    function_close_prefixes = ('</', '</function')
    arg_value_close_prefixes = ('</', '</parameter')


_RESPONSE_CLASSES: dict[tuple[Any, type], Any] = {}


def response_cls(reasoning: str | None, tool_cls: type) -> Any:
    cls = _RESPONSE_CLASSES.get((reasoning, tool_cls))
    if cls is None:
        cls = _RESPONSE_CLASSES[(reasoning, tool_cls)] = BaseResponseParser.with_parsers(reasoning, None)
        cls.tool_parser_cls = tool_cls
    return cls


def run(cls: Any, chunks: list[Any]) -> Any:
    parser = cls(request())
    flagged = stream_flagged(parser, chunks)
    check_messages(flagged)
    rec = reconstruct(parser, flagged)
    for _name, args in rec.calls:
        json.loads(args)
    return rec.key()


def every_chunking(cls: Any, text: str, tags: tuple[str, ...]) -> set[str]:
    """Distinct results over parse_complete and every chunking."""
    results = {repr(complete(cls(request()), text).key())}
    for _label, chunks in chunkings(text, tags):
        results.add(repr(run(cls, chunks)))
    return results


# ---- the shipped dialects, declared in Python ----------------------------------------

QWEN_CASES = [c for c in CASES if c.tool == 'qwen3coder']
GLM_CASES = [c for c in CASES if c.tool == 'glm47']


@pytest.mark.parametrize('case', QWEN_CASES + GLM_CASES, ids=lambda c: c.id)
def test_python_declaration_equals_builtin(case: Case) -> None:
    tool_cls = PyQwen3Coder if case.tool == 'qwen3coder' else PyGlm47
    assert every_chunking(response_cls(case.reasoning, tool_cls), case.text, TAGS[case.tool]) == {repr(case.expected)}


@pytest.mark.parametrize('tool_cls', [PyQwen3Coder, PyGlm47, MiniMaxM2, SeedOss, Qwen3CoderToolParser,
                                      Glm47ToolParser])
def test_declared_dialects_run_on_the_compiled_grammar(tool_cls: type) -> None:
    grammar = tool_cls._xml_grammar()
    assert grammar.python_hooks == ()
    assert tool_cls._xml_grammar() is grammar  # built once per class


def test_builtin_declarations() -> None:
    q = Qwen3CoderToolParser._xml_grammar()
    assert (q.function_open, q.function_name_end, q.arg_open, q.arg_name_end, q.value_open, q.value_close,
            q.function_close, q.multiple_calls) == ('<function=', '>', '<parameter=', '>', None, '</parameter>',
                                                    '</function>', True)
    g = Glm47ToolParser._xml_grammar()
    assert (g.function_open, g.function_name_end, g.arg_open, g.arg_name_end, g.value_open, g.value_close,
            g.function_close, g.multiple_calls) == ('', None, '<arg_key>', '</arg_key>', '<arg_value>',
                                                    '</arg_value>', None, False)
    assert repr(PyQwen3Coder._xml_grammar()) == repr(q) and repr(PyGlm47._xml_grammar()) == repr(g)


# ---- other XML-like formats: declarations only -----------------------------------------

def mcall(name: str, *params: tuple[str, str], block: bool = True) -> str:
    body = ''.join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params)
    call = f'<invoke name="{name}">\n{body}</invoke>\n'
    return f'<minimax:tool_call>\n{call}</minimax:tool_call>' if block else call


MINIMAX_TAGS = ('<think>', '</think>', '<minimax:tool_call>', '</minimax:tool_call>', '<invoke name="', '">',
                '</invoke>', '<parameter name="', '</parameter>')
MINIMAX_CASES = [
    ('basic', 'Think.</think>Sure.\n' + mcall('get_weather', ('city', 'Beijing'), ('unit', 'c')),
     ('Sure.\n', 'Think.', [('get_weather', '{"city": "Beijing", "unit": "c"}')])),
    ('two-invokes-one-block', 'r</think><minimax:tool_call>\n' + mcall('get_time', block=False)
     + mcall('search', ('query', 'q'), ('limit', '3'), block=False) + '</minimax:tool_call>after',
     ('after', 'r', [('get_time', '{}'), ('search', '{"query": "q", "limit": 3}')])),
    ('typed', 'r</think>' + mcall('configure', ('count', '42'), ('tags', '["a", 1]'), ('enabled', 'false')),
     (None, 'r', [('configure', '{"count": 42, "tags": ["a", 1], "enabled": false}')])),
    ('lookalikes-in-value', 'r</think>' + mcall('search', ('query', 'a </param <invoke name="x"> </invoke b')),
     (None, 'r', [('search', '{"query": "a </param <invoke name=\\"x\\"> </invoke b"}')])),
    ('unknown-name-filtered', 'r</think>' + mcall('rm', ('x', '1')) + mcall('get_time'),
     (None, 'r', [('get_time', '{}')])),
    ('truncated-in-value', 'r</think><minimax:tool_call>\n<invoke name="search">\n<parameter name="query">ab</par',
     (None, 'r', [('search', '{"query": "ab</par"}')])),
    ('truncated-in-name', 'r</think><minimax:tool_call>\n<invoke name="get_ti', (None, 'r', [])),
]


@pytest.mark.parametrize('text,expected', [c[1:] for c in MINIMAX_CASES], ids=[c[0] for c in MINIMAX_CASES])
def test_minimax_m2_declared_in_python(text: str, expected: Any) -> None:
    assert every_chunking(response_cls('default', MiniMaxM2), text, MINIMAX_TAGS) == {repr(expected)}


def _seed(text: str) -> str:
    return text.replace('<tool_call>', '<seed:tool_call>').replace('</tool_call>', '</seed:tool_call>')


@pytest.mark.parametrize('case', QWEN_CASES, ids=lambda c: c.id)
def test_seed_oss_declared_in_python(case: Case) -> None:
    tags = tuple(_seed(t) for t in QWEN_TAGS)
    assert every_chunking(response_cls(case.reasoning, SeedOss), _seed(case.text), tags) == {repr(case.expected)}


# ---- token-aligned prefixes --------------------------------------------------------------

@pytest.mark.parametrize('case', QWEN_CASES, ids=lambda c: c.id)
def test_token_aligned_prefixes_on_qwen_token_streams(case: Case, qwen_tokenizer: Any) -> None:
    cls = response_cls(case.reasoning, TokenAlignedQwen3Coder)
    assert run(cls, token_chunks(qwen_tokenizer, case.text)) == case.expected


@pytest.mark.parametrize('tail,held,held_by_default', [
    ('<', 1, 1), ('<function', 9, 9), ('<func', 0, 5),
    # a whole marker: the unterminated name after it is consumed into the parser's own state
    ('<function=get_time', 0, 0),
])
def test_only_declared_prefixes_are_held(tail: str, held: int, held_by_default: int) -> None:
    for cls, expected_hold in ((TokenAlignedQwen3Coder, held), (Qwen3CoderToolParser, held_by_default)):
        parser = cls()
        parser.begin_tool_block()
        text = '\n' + tail
        assert parser.feed_tool_block(text, []) == len(text) - expected_hold, cls


# ---- declarations are checked, read once, and re-read on request -------------------------

@pytest.mark.parametrize('attrs,message', [
    ({'function_open': '', 'function_name_end': None}, 'multiple_calls'),
    # a name led by the block's open tag and ended by function_name_end is one call per block (MiniCPM 5)
    ({'function_open': ''}, 'multiple_calls'),
    ({'function_open': '', 'function_name_end': None, 'multiple_calls': False, 'arg_open': None}, 'arg_open'),
    ({'arg_open': ''}, 'arg_open'),
    ({'arg_name_end': 3}, 'arg_name_end'),
    ({'arg_open': '<p>', 'arg_open_prefixes': ('<q',)}, 'not a proper prefix'),
])
def test_bad_declarations_are_type_errors(attrs: dict[str, Any], message: str) -> None:
    cls = type('Bad', (PyQwen3Coder,), attrs)
    with pytest.raises(TypeError, match=message):
        cls()


def test_grammar_cache_is_per_class_and_follows_changes() -> None:
    cls = type('Changing', (PyQwen3Coder,), {})
    grammar = cls._xml_grammar()
    assert grammar.arg_open == '<parameter='
    assert cls._xml_grammar() is grammar  # built once per class
    cls.arg_open = '<param='
    assert cls._xml_grammar().arg_open == '<param='  # a changed declaration is seen
    assert PyQwen3Coder._xml_grammar().arg_open == '<parameter='
    clear_grammar_cache()
    assert cls._xml_grammar().arg_open == '<param='


def test_python_hook_override_is_reported() -> None:
    class Upper(PyQwen3Coder):
        def _consume_arg_name(self, payload: str, pos: int) -> Any:
            result = super()._consume_arg_name(payload, pos)
            return None if result is None else (result[0], result[1].upper())

    assert Upper._xml_grammar().python_hooks == ('_consume_arg_name',)
    text = '<tool_call>\n<function=search>\n<parameter=query>\nq\n</parameter>\n</function>\n</tool_call>'
    assert every_chunking(response_cls(None, Upper), text, QWEN_TAGS) == {repr((None, None, [('search', '{"QUERY": "q"}')]))}
