"""The type stubs of the compiled modules, as ``mypy --strict`` users see them.

* a user module (a ``JsonToolParser`` dialect, a direct ``ToolParser``
  subclass, ``BaseResponseParser.with_parsers``, ``stream_chunk`` /
  ``parse_complete``) type-checks cleanly and also runs;
* a deliberately wrong module is rejected at exactly the marked lines, so the
  stubs are not silently ``Any``;
* ``stubtest`` finds no drift between the ``.pyi`` files and the built modules.

Skipped when mypy is not installed.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

mypy_api = pytest.importorskip('mypy.api')

import lmparse  # noqa: E402

PACKAGE_ROOT = Path(lmparse.__file__).resolve().parent.parent

STUBBED_MODULES = (
    'lmparse.response',
    'lmparse.tools.base',
    'lmparse.tools.json_parser',
    'lmparse.tools.json_scanner',
    'lmparse.tools.json_escape',
    'lmparse.token_ids',
)

GOOD_SCRIPT = r'''
"""A user module written against lmparse's public typing surface."""
from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, Literal

from lmparse import (
    BaseResponseParser,
    DeltaMessage,
    DeltaToolCall,
    JsonToolParser,
    JsonValueScanner,
    ToolCall,
    ToolParser,
    ToolParserManager,
)

if sys.version_info >= (3, 11):
    from typing import assert_type
else:
    from typing_extensions import assert_type


@ToolParserManager.register_module("example-json")
class ExampleJsonToolParser(JsonToolParser):
    argument_field = "arguments"

    @classmethod
    def get_tool_open_tag(cls) -> str:
        return "<tool_call>"

    @classmethod
    def get_tool_close_tag(cls) -> str:
        return "</tool_call>"

    def adjust_request(self, request: Any) -> Any:
        # Protocol-specific prompt setup goes here; always keep the base behaviour.
        return super().adjust_request(request)


class LineToolParser(ToolParser):
    """``<call>NAME ARGS</call>``: a name, one space, then raw JSON arguments."""

    tool_close_prefixes = ("</call", "</")

    @classmethod
    def get_tool_open_tag(cls) -> str:
        return "<call>"

    @classmethod
    def get_tool_close_tag(cls) -> str:
        return "</call>"

    def begin_tool_block(self) -> None:
        super().begin_tool_block()
        self._begin_call()

    def _consume_stream_payload(self, text: str, deltas: list[DeltaToolCall], *, final: bool = False) -> int:
        pos = 0
        if not self._name_emitted:
            space = text.find(" ")
            if space < 0:
                return 0
            self._emit_delta(deltas, name=text[:space])
            self._name_emitted = True
            pos = space + 1
        close = self._close_tag
        end = text.find(close, pos) if close else -1
        if end >= 0:
            if end > pos:
                self._emit_delta(deltas, arguments=text[pos:end])
            self._payload_closed = True
            return end
        prefixes = type(self).tool_close_prefixes or ()
        stop = len(text) if final else self._stable_prefix_end(text, prefixes, pos)
        if stop > pos:
            self._emit_delta(deltas, arguments=text[pos:stop])
        return stop


ToolParserManager.register_module("example-line", module=LineToolParser)


class AuditedResponseParser(BaseResponseParser):
    """A project subclass: ``with_parsers`` keeps its type."""

    def stream_chunk(
        self,
        delta_text: str | None,
        delta_token_ids: Sequence[int] | None = None,
        final: bool = False,
        **kwargs: Any,
    ) -> list[tuple[DeltaMessage, bool]]:
        return super().stream_chunk(delta_text, delta_token_ids, final, **kwargs)


REQUEST: dict[str, Any] = {
    "model": "m",
    "messages": [{"role": "user", "content": "weather in Paris?"}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ],
}


def stream(parser: BaseResponseParser, chunks: list[str]) -> tuple[str, str, dict[int, str], dict[int, str]]:
    content: list[str] = []
    reasoning: list[str] = []
    names: dict[int, str] = {}
    arguments: dict[int, list[str]] = {}
    for n, chunk in enumerate(chunks):
        result = parser.stream_chunk(chunk, [], final=n == len(chunks) - 1)
        assert_type(result, list[tuple[DeltaMessage, bool]])
        for message, tool_emitted in result:
            if message.content is not None:
                content.append(message.content)
            if message.reasoning_content is not None:
                reasoning.append(message.reasoning_content)
            if message.tool_calls is None:
                continue
            assert tool_emitted
            for i in range(len(message.tool_calls)):
                index = message.tool_calls[i].index
                function = message.tool_calls[i].function
                if function is None:
                    continue
                if function.name is not None:
                    names[index] = function.name
                if function.arguments is not None:
                    assert_type(function.arguments, str)
                    arguments.setdefault(index, []).append(function.arguments)
    return "".join(content), "".join(reasoning), names, {k: "".join(v) for k, v in arguments.items()}


def check_json_dialect() -> None:
    parser_cls = BaseResponseParser.with_parsers("default", "example-json")
    assert_type(parser_cls, type[BaseResponseParser])
    assert parser_cls.tool_parser_cls is ExampleJsonToolParser
    parser_cls.tokenizer = None  # class-level configuration is writable

    parser = parser_cls(REQUEST)
    assert_type(parser.tool_parser, ToolParser | None)
    assert_type(parser.reasoning_tokens, int | None)
    assert_type(parser.mode, Literal["plain", "reasoning", "tool"])
    assert parser.mode == parser_cls.MODE_REASONING
    assert parser.reasoning_enabled
    chunks = ["pl", "an</think>Sure.<tool_", 'call>{"name": "get_weather", "arguments": {"city": "Pa', 'ris"}}</tool_call>']
    content, reasoning, names, arguments = stream(parser, chunks)
    assert (content, reasoning) == ("Sure.", "plan"), (content, reasoning)
    assert names == {0: "get_weather"}, names
    assert json.loads(arguments[0]) == {"city": "Paris"}, arguments

    complete = parser_cls(REQUEST).parse_complete("".join(chunks))
    assert_type(complete, tuple[str | None, list[ToolCall] | None, str | None])
    text, calls, reasoning_text = complete
    assert text == "Sure." and reasoning_text == "plan", complete
    assert calls is not None
    call = calls[0]
    assert_type(call.function.arguments, str)
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris"}


def check_direct_tool_parser() -> None:
    parser_cls = AuditedResponseParser.with_parsers(None, "example-line")
    assert_type(parser_cls, type[AuditedResponseParser])
    parser = parser_cls(REQUEST)
    content, reasoning, names, arguments = stream(parser, ["a<ca", 'll>get_weather {"ci', 'ty": "Oslo"}</', "call>b"])
    assert (content, reasoning) == ("ab", ""), (content, reasoning)
    assert names == {0: "get_weather"}, names
    assert json.loads(arguments[0]) == {"city": "Oslo"}, arguments

    tool_parser = parser.tool_parser
    assert isinstance(tool_parser, LineToolParser)
    assert tool_parser.block_closed
    deltas: list[DeltaToolCall] = []
    tool_parser.begin_tool_block()
    consumed = tool_parser.feed_tool_block("get_weather {}</call>tail", deltas, final=False)
    assert_type(consumed, int)
    assert consumed == len("get_weather {}</call>"), consumed
    assert [c.function.name for c in ToolParser.build_tool_calls(deltas)] == ["get_weather"]


def check_scanner() -> None:
    scanner = JsonValueScanner()
    end = scanner.feed('{"a": [1, "}"]} tail')
    assert_type(end, int)
    assert scanner.complete and end == len('{"a": [1, "}"]}'), end


if __name__ == "__main__":
    check_json_dialect()
    check_direct_tool_parser()
    check_scanner()
    print("ok")
'''

# Every line marked ``# E: <code>`` must be reported with that error code,
# and nothing else may be reported.
BAD_SCRIPT = r'''
from __future__ import annotations

from lmparse import BaseResponseParser, DeltaToolCall, JsonToolParser, JsonValueScanner, ToolParser


class BadPayload(ToolParser):
    def _consume_stream_payload(self, text: str, deltas: list[DeltaToolCall], *, final: bool = False) -> str:  # E: override
        return text


class BadFields(JsonToolParser):
    argument_field = 3  # E: assignment


def misuse(parser: BaseResponseParser) -> None:
    parser.stream_chunk(42)  # E: arg-type
    for message, _ in parser.stream_chunk("x"):
        print(message.contnt)  # E: attr-defined
        for call in message.tool_calls or []:
            print(call.function.arguments)  # E: union-attr
    content, calls = parser.parse_complete("x")  # E: misc
    parser.tool_parser.build_tool_calls([])  # E: union-attr
    parser.reasoning_tokens = "many"  # E: assignment
    parser.tokenizer = None  # E: misc
    if parser.mode == "tol":  # E: comparison-overlap
        pass
    BaseResponseParser.with_parsers(tool_parser_name=1)  # E: arg-type
    JsonValueScanner().feed(b"{}")  # E: arg-type
    ToolParser.build_tool_calls([]).append("call")  # E: arg-type
'''

# Cython artefacts stubtest sees but that are not API.
STUBTEST_ALLOWLIST = r'''
# Cython's doctest dict and C-API capsule table.
lmparse\.(response|token_ids|tools\.(base|json_parser|json_scanner|json_escape))\.__(test|pyx_capi)__
# Cython's generated pickling helpers.
lmparse\..*\.__(reduce|setstate)_cython__
# A cdef class's __init__ is a slot wrapper reported as (*args, **kwargs);
# it really takes no arguments.
lmparse\.tools\.json_scanner\.JsonValueScanner\.__init__
# A type alias that exists only for type checkers.
lmparse\.token_ids\.TokenIdsLike
'''


def _is_installed(root: Path) -> bool:
    return root.name in ('site-packages', 'dist-packages')


@pytest.fixture(scope='module')
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp('typing')
    lines = ['[mypy]']
    if not _is_installed(PACKAGE_ROOT):
        # An in-place build: point mypy at it (an installed copy is found through py.typed).
        lines.append(f'mypy_path = {PACKAGE_ROOT}')
    (path / 'mypy.ini').write_text('\n'.join(lines) + '\n', encoding='utf-8')
    return path


def _write(workdir: Path, name: str, source: str) -> Path:
    script = workdir / name
    script.write_text(textwrap.dedent(source).lstrip(), encoding='utf-8')
    return script


def _mypy(workdir: Path, script: Path) -> tuple[str, int]:
    stdout, stderr, status = mypy_api.run([
        '--strict',
        '--config-file', str(workdir / 'mypy.ini'),
        '--cache-dir', str(workdir / '.mypy_cache'),
        '--no-error-summary',
        '--show-error-codes',
        '--no-pretty',
        str(script),
    ])
    return stdout + stderr, status


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get('PYTHONPATH', '')) if p)
    return env


def test_user_module_passes_mypy_strict(workdir: Path) -> None:
    script = _write(workdir, 'user_parsers.py', GOOD_SCRIPT)
    output, status = _mypy(workdir, script)
    assert status == 0, output


def test_user_module_runs(workdir: Path) -> None:
    # The checked module is real code: the typed API it uses behaves as declared.
    script = _write(workdir, 'user_parsers_run.py', GOOD_SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=_env(),
                          cwd=workdir, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == 'ok'


def test_wrong_usage_is_rejected(workdir: Path) -> None:
    script = _write(workdir, 'misuse.py', BAD_SCRIPT)
    output, status = _mypy(workdir, script)
    assert status == 1, output

    expected = set()
    for lineno, line in enumerate(script.read_text(encoding='utf-8').splitlines(), start=1):
        marker = re.search(r'# E: ([\w-]+)$', line)
        if marker:
            expected.add((lineno, marker.group(1)))
    assert len(expected) == 13

    error = re.compile(rf'^{re.escape(str(script))}:(\d+): error: .*\[([\w-]+)\]$')
    reported = set()
    for line in output.splitlines():
        match = error.match(line)
        if match:
            reported.add((int(match.group(1)), match.group(2)))
        else:
            assert ': error:' not in line, f'unexpected error output: {line}\n{output}'
    assert reported == expected, output


def test_stubtest_finds_no_drift(workdir: Path) -> None:
    allowlist = workdir / 'stubtest-allowlist.txt'
    allowlist.write_text(STUBTEST_ALLOWLIST, encoding='utf-8')
    proc = subprocess.run(
        [sys.executable, '-m', 'mypy.stubtest', *STUBBED_MODULES,
         '--mypy-config-file', str(workdir / 'mypy.ini'),
         '--allowlist', str(allowlist), '--ignore-unused-allowlist'],
        capture_output=True, text=True, env=_env(), cwd=workdir, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
