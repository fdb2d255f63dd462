"""Incremental check that streamed tool arguments stay a valid JSON-object prefix.

Anthropic clients re-parse the accumulated ``partial_json`` after every
``input_json_delta`` (the official SDK with ``jiter`` in partial mode) and
raise on text that can no longer become JSON, so the adapter must never send
such a fragment. Work is linear: string bodies are skipped with one regex
match and only an unfinished escape, number or literal is carried over.
"""
from __future__ import annotations

import re

__all__ = ['JsonObjectPrefix']

_WS = re.compile(r'[ \t\n\r]*')
_STR_BODY = re.compile(r'[^"\\\x00-\x1f]*')
_HEX = re.compile(r'[0-9a-fA-F]{0,4}')
_NUM_CHARS = re.compile(r'[-+0-9.eE]+')
_NUM = re.compile(r'-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?')
_WORD = re.compile(r'[a-z]+')
_LITERALS = ('true', 'false', 'null')
_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')

# What the next significant character may be.
_START, _VALUE, _VALUE_OR_END, _KEY_OR_END, _KEY, _COLON, _COMMA_OR_END, _DONE = range(8)


def _number_prefix_ok(tok: str) -> bool:
    # A prefix is viable when it is a number, or becomes one with one more digit ("-", "1.", "2e+").
    return _NUM.fullmatch(tok) is not None or _NUM.fullmatch(tok + '0') is not None


class JsonObjectPrefix:
    """Feed fragments; :meth:`feed` returns how many leading characters keep the text valid.

    The top-level value must be an object (a tool's ``input``). After the
    first invalid character the checker is ``broken`` and accepts nothing.
    """

    __slots__ = ('_stack', '_expect', '_in_string', '_is_key', '_tail', 'broken', 'started')

    def __init__(self) -> None:
        self._stack: list[str] = []
        self._expect = _START
        self._in_string = False
        self._is_key = False
        self._tail = ''
        self.broken = False
        self.started = False  # a non-whitespace character was accepted

    @property
    def complete(self) -> bool:
        """True when the top-level object is closed."""
        return self._expect == _DONE and not self.broken

    def _after_value(self) -> None:
        self._expect = _COMMA_OR_END if self._stack else _DONE

    def feed(self, fragment: str) -> int:
        if self.broken:
            return 0
        offset = len(self._tail)
        s = self._tail + fragment if offset else fragment
        self._tail = ''
        bad = self._scan(s)
        if bad < 0:
            return len(fragment)
        self.broken = True
        return max(0, bad - offset)

    def _scan(self, s: str) -> int:
        """Advance over ``s``; return -1 when all of it is a valid prefix, else the bad position."""
        n = len(s)
        pos = 0
        stack = self._stack
        while pos < n:
            if self._in_string:
                pos = _STR_BODY.match(s, pos).end()  # type: ignore[union-attr]
                if pos == n:
                    break
                c = s[pos]
                if c == '"':
                    pos += 1
                    self._in_string = False
                    if self._is_key:
                        self._expect = _COLON
                    else:
                        self._after_value()
                elif c == '\\':
                    if pos + 1 == n:
                        self._tail = s[pos:]
                        return -1
                    e = s[pos + 1]
                    if e in _SIMPLE_ESCAPES:
                        pos += 2
                    elif e == 'u':
                        end = _HEX.match(s, pos + 2).end()  # type: ignore[union-attr]
                        if end - pos == 6:
                            pos = end
                        elif end == n:
                            self._tail = s[pos:]
                            return -1
                        else:
                            return end
                    else:
                        return pos + 1
                else:
                    return pos  # raw control character
                continue
            pos = _WS.match(s, pos).end()  # type: ignore[union-attr]
            if pos == n:
                break
            c = s[pos]
            expect = self._expect
            if expect == _START:
                if c != '{':
                    return pos
                self.started = True
                stack.append('{')
                self._expect = _KEY_OR_END
                pos += 1
            elif expect == _VALUE or expect == _VALUE_OR_END:
                if c == ']' and expect == _VALUE_OR_END:
                    stack.pop()
                    self._after_value()
                    pos += 1
                elif c == '{':
                    stack.append('{')
                    self._expect = _KEY_OR_END
                    pos += 1
                elif c == '[':
                    stack.append('[')
                    self._expect = _VALUE_OR_END
                    pos += 1
                elif c == '"':
                    self._in_string = True
                    self._is_key = False
                    pos += 1
                elif c == '-' or '0' <= c <= '9':
                    end = _NUM_CHARS.match(s, pos).end()  # type: ignore[union-attr]
                    tok = s[pos:end]
                    if end == n:
                        if not _number_prefix_ok(tok):
                            return pos
                        self._tail = tok
                        return -1
                    if _NUM.fullmatch(tok) is None:
                        return pos
                    self._after_value()
                    pos = end
                elif 'a' <= c <= 'z':
                    end = _WORD.match(s, pos).end()  # type: ignore[union-attr]
                    tok = s[pos:end]
                    if end == n:
                        if not any(lit.startswith(tok) for lit in _LITERALS):
                            return pos
                        self._tail = tok
                        return -1
                    if tok not in _LITERALS:
                        return pos
                    self._after_value()
                    pos = end
                else:
                    return pos
            elif expect == _KEY_OR_END or expect == _KEY:
                if c == '"':
                    self._in_string = True
                    self._is_key = True
                    pos += 1
                elif c == '}' and expect == _KEY_OR_END:
                    stack.pop()
                    self._after_value()
                    pos += 1
                else:
                    return pos
            elif expect == _COLON:
                if c != ':':
                    return pos
                self._expect = _VALUE
                pos += 1
            elif expect == _COMMA_OR_END:
                top = stack[-1]
                if c == ',':
                    self._expect = _KEY if top == '{' else _VALUE
                    pos += 1
                elif (c == '}' and top == '{') or (c == ']' and top == '['):
                    stack.pop()
                    self._after_value()
                    pos += 1
                else:
                    return pos
            else:  # _DONE: only whitespace may follow the object
                return pos
        return -1
