# cython: language_level=3
"""SGLang's streaming result objects built from lmparse's deltas in compiled code.

The SGLang detectors of :mod:`lmparse.integrations.sglang` return, per engine
chunk, the reasoning parser's ``StreamingParseResult`` (a plain class:
``normal_text``, ``reasoning_text``) and the function-call parser's pydantic
``StreamingParseResult`` holding ``ToolCallItem`` instances. pydantic v2 keeps a
model instance's state in four attributes (``__dict__``,
``__pydantic_fields_set__``, ``__pydantic_extra__``, ``__pydantic_private__``);
:class:`Results` sets those (``lmparse.pydantic_state``; the plain class'
``__dict__`` through the same public C-API), with no Python-level constructor
call per chunk.

At start-up :meth:`Results.__init__` builds each type both ways on probe values
and compares them with SGLang's own public constructors (type, equality, dumps,
fields set, the instance attributes and their order); a type for which anything
differs (another SGLang or pydantic) is built with its public constructor
instead. The pattern is :mod:`lmparse.compat.lmdeploy_types`.
"""
from cpython.object cimport PyObject_GenericSetAttr
from cpython.type cimport PyType_GenericNew
from lmparse.protocol cimport DeltaFunctionCall as LpFunctionDelta
from lmparse.protocol cimport DeltaMessage as LpMessage
from lmparse.protocol cimport DeltaToolCall as LpToolDelta
from lmparse.pydantic_state cimport new_instance
from lmparse.response cimport ResponseParserCore

from lmparse.pydantic_state import same_instance

__all__ = ['Results']

cdef tuple _EMPTY = ()
# The fields SGLang's own detectors pass to their constructors (what pydantic marks as set).
cdef frozenset _SET_RESULT = frozenset(('normal_text', 'calls'))
cdef frozenset _SET_ITEM = frozenset(('tool_index', 'name', 'parameters'))
cdef tuple _RESULT_FIELDS = ('normal_text', 'calls')
cdef tuple _ITEM_FIELDS = ('tool_index', 'name', 'parameters')


cdef inline object _model(object cls, dict state, frozenset fields_set):
    """A pydantic model instance with ``state``, as its validating constructor leaves it (no extra fields)."""
    return new_instance(cls, state, fields_set, False)


cdef inline object _plain(object cls, dict state):
    """A plain class instance whose ``__init__`` only stores ``state``."""
    obj = PyType_GenericNew(cls, _EMPTY, None)
    PyObject_GenericSetAttr(obj, '__dict__', state)
    return obj


def _same_plain(a: object, b: object) -> bool:
    return type(a) is type(b) and vars(a) == vars(b) and list(vars(a)) == list(vars(b))


cdef class Results:
    """lmparse deltas -> SGLang's result objects (one per process, from SGLang's classes).

    ``reasoning_cls``: ``sglang.srt.parser.reasoning_parser.StreamingParseResult``;
    ``result_cls`` / ``item_cls``: ``sglang.srt.function_call.core_types.StreamingParseResult`` /
    ``ToolCallItem``.
    """

    cdef readonly object ReasoningResult, StreamingParseResult, ToolCallItem
    # Whether each type is built directly (True) or by its public constructor (False).
    cdef readonly bint fast_reasoning, fast_result, fast_item

    def __init__(self, reasoning_cls: object, result_cls: object, item_cls: object) -> None:
        self.ReasoningResult = reasoning_cls
        self.StreamingParseResult = result_cls
        self.ToolCallItem = item_cls
        self.fast_reasoning = self._check_reasoning()
        self.fast_item = self._check_item()
        self.fast_result = self._check_result()

    def _check_reasoning(self) -> bool:
        try:
            for normal, reasoning in (('', ''), ('a', ''), ('', 'r'), ('a', 'r')):
                if not _same_plain(_plain(self.ReasoningResult, {'normal_text': normal, 'reasoning_text': reasoning}),
                                   self.ReasoningResult(normal_text=normal, reasoning_text=reasoning)):
                    return False
        except Exception:  # any surprise: use the public constructor
            return False
        return True

    def _check_item(self) -> bool:
        try:
            if tuple(self.ToolCallItem.model_fields) != _ITEM_FIELDS:
                return False
            for index, name, parameters in ((0, 'f', ''), (2, None, '{"a": 1'), (1, 'g', '{}')):
                if not same_instance(_model(self.ToolCallItem, {'tool_index': index, 'name': name,
                                                              'parameters': parameters}, _SET_ITEM),
                                   self.ToolCallItem(tool_index=index, name=name, parameters=parameters)):
                    return False
        except Exception:
            return False
        return True

    def _check_result(self) -> bool:
        try:
            if tuple(self.StreamingParseResult.model_fields) != _RESULT_FIELDS:
                return False
            item = self.ToolCallItem(tool_index=0, name='f', parameters='{}')
            for normal, calls in (('', []), ('a', []), ('', [item]), ('a b', [item, item])):
                if not same_instance(_model(self.StreamingParseResult, {'normal_text': normal, 'calls': list(calls)},
                                          _SET_RESULT),
                                   self.StreamingParseResult(normal_text=normal, calls=list(calls))):
                    return False
        except Exception:
            return False
        return True

    cdef object _reasoning(self, str normal, str reasoning):
        if self.fast_reasoning:
            return _plain(self.ReasoningResult, {'normal_text': normal, 'reasoning_text': reasoning})
        return self.ReasoningResult(normal_text=normal, reasoning_text=reasoning)

    cdef object _item(self, Py_ssize_t index, object name, str parameters):
        if self.fast_item:
            return _model(self.ToolCallItem, {'tool_index': index, 'name': name, 'parameters': parameters}, _SET_ITEM)
        return self.ToolCallItem(tool_index=index, name=name, parameters=parameters)

    cdef object _result(self, str normal, list calls):
        if self.fast_result:
            return _model(self.StreamingParseResult, {'normal_text': normal, 'calls': calls}, _SET_RESULT)
        return self.StreamingParseResult(normal_text=normal, calls=calls)

    def reasoning(self, str normal not None, str reasoning not None) -> object:
        """The reasoning parser's ``StreamingParseResult(normal_text=normal, reasoning_text=reasoning)``."""
        return self._reasoning(normal, reasoning)

    def result(self, str normal not None, list calls not None) -> object:
        """The function-call parser's ``StreamingParseResult(normal_text=normal, calls=calls)``."""
        return self._result(normal, calls)

    def item(self, Py_ssize_t index, object name, str parameters not None) -> object:
        """``ToolCallItem(tool_index=index, name=name, parameters=parameters)``."""
        return self._item(index, name, parameters)

    def stream(self, parser: object, str text not None, bint final=False) -> tuple:
        """One ``parser.stream_chunk(text, (), final=final)`` as ``(reasoning, content, calls, in_reasoning)``
        (:meth:`split`; ``in_reasoning``: the parser's mode after the chunk is reasoning). lmparse's own router
        is called without a Python-level call."""
        cdef ResponseParserCore core
        if isinstance(parser, ResponseParserCore) and type(parser).stream_chunk is ResponseParserCore.stream_chunk:
            core = <ResponseParserCore>parser
            out = core._stream(text, _EMPTY, final)
        else:
            out = parser.stream_chunk(text, _EMPTY, final=final)
        if out:
            reasoning, content, calls = self._split(<list?>out)
        else:
            reasoning, content, calls = '', '', []
        return reasoning, content, calls, parser.mode == 'reasoning'

    def split(self, list out not None) -> tuple:
        """``stream_chunk`` output as ``(reasoning, content, calls)``: the chunk's reasoning and content text
        and its tool deltas as ``ToolCallItem``\\ s, consecutive fragments of one call joined into one item
        (a name starts a new item; the serving layer sends one SSE frame per item)."""
        return self._split(out)

    cdef tuple _split(self, list out):
        cdef list reasoning = None, content = None, calls = None
        cdef LpMessage m
        cdef LpToolDelta d
        cdef LpFunctionDelta f
        cdef Py_ssize_t last_index = -1
        cdef object last_name = None
        cdef list last_args = None
        cdef object name
        cdef str args
        for pair in out:
            m = <LpMessage?>(<tuple?>pair)[0]
            if m.reasoning_content:
                if reasoning is None:
                    reasoning = []
                reasoning.append(m.reasoning_content)
            if m.content:
                if content is None:
                    content = []
                content.append(m.content)
            if not m.tool_calls:
                continue
            for item in <list?>m.tool_calls:
                d = <LpToolDelta?>item
                if d.function is None:
                    continue
                f = <LpFunctionDelta?>d.function
                name = f.name
                args = <str?>(f.arguments or '')
                if last_args is not None and name is None and d.index == last_index:
                    last_args.append(args)
                    continue
                if last_args is not None:
                    calls.append(self._item(last_index, last_name, ''.join(last_args)))
                elif calls is None:
                    calls = []
                last_index, last_name, last_args = d.index, name, [args]
        if last_args is not None:
            calls.append(self._item(last_index, last_name, ''.join(last_args)))
        return ('' if reasoning is None else ''.join(reasoning), '' if content is None else ''.join(content),
                [] if calls is None else calls)
