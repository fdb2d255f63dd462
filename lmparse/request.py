"""Request handling shared by every parser.

Parsers accept three kinds of request:

* :class:`ChatCompletionRequest` -- lmparse's own lightweight request type;
* a plain ``dict`` in OpenAI chat-completions request shape;
* any pydantic model exposing the same fields (notably LMDeploy's
  ``ChatCompletionRequest``).

Every helper here works on all three, so callers never have to convert a
request before handing it to a parser. Nothing in this module imports the
compiled (Cython) modules.
"""
from __future__ import annotations

import copy
import json
import logging
import operator
from collections.abc import Callable, Mapping
from typing import Any, Protocol

__all__ = [
    'ChatCompletionRequest',
    'allowed_tool_names',
    'as_request',
    'chat_template_kwargs_from_request',
    'dump_tools',
    'get_field',
    'normalize_chat_request',
    'prepare_tools',
    'register_request_adapter',
    'tool_choice_function_name',
    'tool_choice_kind',
    'tool_function_dict',
    'tool_parameter_schemas',
    'update_request',
]

logger = logging.getLogger('lmparse')

_TOOL_CHOICE_STRINGS = ('auto', 'none', 'required')


class RequestAdapter(Protocol):
    """Construction-time handling of one foreign request type (usually compiled).

    Each method returns None for a request it leaves to the generic path.
    """

    def prepare_tools(self, request: Any, updates: dict[str, Any] | None
                      ) -> tuple[Any, set[str], dict[str, dict[str, Any]]] | None:
        """:func:`prepare_tools` of ``request`` updated with ``updates``."""

    def normalize(self, request: Any) -> Any | None:
        """``request`` itself when :func:`normalize_chat_request` would not change it."""

    def fields(self, request: Any) -> tuple[Any, Any, Any, Any] | None:
        """``(tool_choice, chat_template_kwargs, enable_thinking, reasoning_effort)`` as stored."""


# Exact request type -> adapter, consulted by parser construction before the generic path.
REQUEST_ADAPTERS: dict[type, RequestAdapter] = {}


def register_request_adapter(request_type: type, adapter: RequestAdapter | None) -> None:
    """Give parser construction a faster equivalent for ``request_type`` (None removes it).

    The adapter must give exactly what the generic functions give; lmparse's
    LMDeploy drop-in registers one for LMDeploy's request after checking it.
    """
    if adapter is None:
        REQUEST_ADAPTERS.pop(request_type, None)
    else:
        REQUEST_ADAPTERS[request_type] = adapter


# Declared fields, in the order model_dump() emits them (LMDeploy's field order).
_FIELDS: tuple[str, ...] = (
    'model',
    'messages',
    'tools',
    'tool_choice',
    'parallel_tool_calls',
    'max_completion_tokens',
    'max_tokens',
    'stop',
    'stream',
    'stream_options',
    'reasoning_effort',
    'response_format',
    'skip_special_tokens',
    'spaces_between_special_tokens',
    'enable_thinking',
    'chat_template_kwargs',
)
_FIELD_SET = frozenset(_FIELDS)
_SLOT_SET = _FIELD_SET | {'extra'}


# ---------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------

def _type_name(value: Any) -> str:
    return type(value).__name__


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list):
        raise TypeError(f'messages must be a list, got {_type_name(messages)}')


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise TypeError(f'tools must be a list of dicts or None, got {_type_name(tools)}')
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise TypeError(f'tools[{i}] must be a dict, got {_type_name(tool)}')
        if 'function' in tool:
            function = tool['function']
            if not isinstance(function, dict):
                raise TypeError(f'tools[{i}].function must be a dict, got {_type_name(function)}')
            if not isinstance(function.get('name'), str):
                raise ValueError(f'tools[{i}].function.name must be a string')
        elif not isinstance(tool.get('name'), str):
            # Bare function dicts are what dump_tools() leaves behind.
            raise ValueError(f"tools[{i}] must be an OpenAI tool {{'type': 'function', 'function': {{...}}}} "
                             f"or a function dict with a string 'name'")


def _check_dict_or_none(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, dict):
        raise TypeError(f'{name} must be a dict or None, got {_type_name(value)}')


def _tool_choice_dict_kind(choice: dict[str, Any]) -> str:
    """Validate a dict tool_choice and return 'function' or 'allowed_tools'."""
    # pydantic defaults `type`, so a missing type is inferred from the payload key.
    kind = choice.get('type')
    if kind is None:
        if 'function' in choice:
            kind = 'function'
        elif 'allowed_tools' in choice:
            kind = 'allowed_tools'
    if kind == 'function':
        function = choice.get('function')
        if not isinstance(function, dict) or not isinstance(function.get('name'), str):
            raise ValueError("tool_choice of type 'function' requires function.name (a string)")
        return 'function'
    if kind == 'allowed_tools':
        allowed = choice.get('allowed_tools')
        if not isinstance(allowed, dict) or not isinstance(allowed.get('tools'), list):
            raise ValueError("tool_choice of type 'allowed_tools' requires allowed_tools.tools (a list)")
        mode = allowed.get('mode')
        if mode is not None and mode not in ('auto', 'required'):
            raise ValueError(f"tool_choice allowed_tools.mode must be 'auto' or 'required', got {mode!r}")
        return 'allowed_tools'
    raise ValueError(f"tool_choice type must be 'function' or 'allowed_tools', got {kind!r}")


def _tool_choice_value_kind(choice: Any) -> str:
    """Classify (and validate) a tool_choice value of any supported shape."""
    if choice is None:
        return 'auto'
    if isinstance(choice, str):
        if choice in _TOOL_CHOICE_STRINGS:
            return choice
        raise ValueError(f"tool_choice must be 'auto', 'none', 'required' or a dict, got {choice!r}")
    if isinstance(choice, dict):
        return _tool_choice_dict_kind(choice)
    # pydantic AllowedToolChoice / ToolChoice, recognised structurally.
    if getattr(choice, 'allowed_tools', None) is not None:
        return 'allowed_tools'
    if isinstance(getattr(getattr(choice, 'function', None), 'name', None), str):
        return 'function'
    raise TypeError(f'tool_choice must be a str or a dict, got {_type_name(choice)}')


def _check_tool_choice(choice: Any) -> None:
    # Our own type stores only str/dict; pydantic objects belong to pydantic requests.
    if not isinstance(choice, (str, dict)):
        raise TypeError(f'tool_choice must be a str or a dict, got {_type_name(choice)}')
    _tool_choice_value_kind(choice)


def _dict_or_none_checker(name: str) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        _check_dict_or_none(name, value)
    return check


# Per-field checks applied to model_copy(update=...).
_VALIDATORS: dict[str, Callable[[Any], None]] = {
    'messages': _check_messages,
    'tools': _check_tools,
    'tool_choice': _check_tool_choice,
    'chat_template_kwargs': _dict_or_none_checker('chat_template_kwargs'),
    'response_format': _dict_or_none_checker('response_format'),
    'stream_options': _dict_or_none_checker('stream_options'),
}


# ---------------------------------------------------------------------------
# Request type
# ---------------------------------------------------------------------------

class ChatCompletionRequest:
    """Lightweight OpenAI chat-completions request (no pydantic).

    Known fields are attributes; every other key the client sent lives in
    ``extra`` (also readable as an attribute) so nothing is lost on a round
    trip through :meth:`from_dict` / :meth:`model_dump`. Validation runs at
    construction and in :meth:`model_copy`; plain attribute assignment is not
    validated, mirroring pydantic's default.
    """

    __slots__ = _FIELDS + ('extra',)

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    tool_choice: str | dict[str, Any]
    parallel_tool_calls: bool | None
    max_completion_tokens: int | None
    max_tokens: int | None
    stop: str | list[str] | None
    stream: bool | None
    stream_options: dict[str, Any] | None
    reasoning_effort: str | None
    response_format: dict[str, Any] | None
    skip_special_tokens: bool | None
    spaces_between_special_tokens: bool | None
    enable_thinking: bool | None
    chat_template_kwargs: dict[str, Any] | None
    extra: dict[str, Any]

    def __init__(
        self,
        *,
        model: str = '',
        messages: list[dict[str, Any]] | None = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = 'auto',
        parallel_tool_calls: bool | None = True,
        max_completion_tokens: int | None = None,
        max_tokens: int | None = None,
        stop: str | list[str] | None = None,
        stream: bool | None = False,
        stream_options: dict[str, Any] | None = None,
        reasoning_effort: str | None = None,
        response_format: dict[str, Any] | None = None,
        skip_special_tokens: bool | None = True,
        spaces_between_special_tokens: bool | None = True,
        enable_thinking: bool | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if messages is None:
            messages = []
        if tool_choice is None:
            # Clients sometimes send `null`; treat it as the OpenAI default.
            tool_choice = 'auto'
        _check_messages(messages)
        _check_tools(tools)
        _check_tool_choice(tool_choice)
        _check_dict_or_none('chat_template_kwargs', chat_template_kwargs)
        _check_dict_or_none('response_format', response_format)
        _check_dict_or_none('stream_options', stream_options)
        if extra is None:
            extra = {}
        elif not isinstance(extra, dict):
            raise TypeError(f'extra must be a dict or None, got {_type_name(extra)}')
        else:
            extra = dict(extra)
        if kwargs:
            extra.update(kwargs)
        shadowed = _FIELD_SET.intersection(extra)
        if shadowed:
            raise ValueError(f'extra must not contain declared fields: {sorted(shadowed)}')

        setf = object.__setattr__
        setf(self, 'model', model)
        setf(self, 'messages', messages)
        setf(self, 'tools', tools)
        setf(self, 'tool_choice', tool_choice)
        setf(self, 'parallel_tool_calls', parallel_tool_calls)
        setf(self, 'max_completion_tokens', max_completion_tokens)
        setf(self, 'max_tokens', max_tokens)
        setf(self, 'stop', stop)
        setf(self, 'stream', stream)
        setf(self, 'stream_options', stream_options)
        setf(self, 'reasoning_effort', reasoning_effort)
        setf(self, 'response_format', response_format)
        setf(self, 'skip_special_tokens', skip_special_tokens)
        setf(self, 'spaces_between_special_tokens', spaces_between_special_tokens)
        setf(self, 'enable_thinking', enable_thinking)
        setf(self, 'chat_template_kwargs', chat_template_kwargs)
        setf(self, 'extra', extra)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ChatCompletionRequest:
        """Build a request from an OpenAI-shape dict; unknown keys go to ``extra``."""
        if not isinstance(d, Mapping):
            raise TypeError(f'from_dict() expects a dict, got {_type_name(d)}')
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in d.items():
            if key in _FIELD_SET:
                known[key] = value
            else:
                extra[key] = value
        return cls(**known, extra=extra)

    # -- attribute access ----------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        # Only reached when the slot lookup fails: expose client extras as attributes.
        if name in _SLOT_SET or name.startswith('__'):
            raise AttributeError(name)
        try:
            return object.__getattribute__(self, 'extra')[name]
        except (AttributeError, KeyError):
            raise AttributeError(f'{type(self).__name__!r} object has no attribute {name!r}') from None

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SLOT_SET:
            object.__setattr__(self, name, value)
        else:
            self.extra[name] = value

    def __delattr__(self, name: str) -> None:
        if name in _SLOT_SET:
            raise AttributeError(f'cannot delete field {name!r}')
        try:
            del self.extra[name]
        except KeyError:
            raise AttributeError(name) from None

    # -- pydantic-like API -----------------------------------------------------

    def model_copy(self, update: Mapping[str, Any] | None = None, deep: bool = False) -> ChatCompletionRequest:
        """Return a copy, optionally deep, with ``update`` applied (validated)."""
        cls = type(self)
        new = cls.__new__(cls)
        setf = object.__setattr__
        if deep:
            memo: dict[int, Any] = {}
            for name in _FIELDS:
                setf(new, name, copy.deepcopy(getattr(self, name), memo))
            setf(new, 'extra', copy.deepcopy(self.extra, memo))
        else:
            # One C-level read of every slot; runs once per parser construction.
            for setter, value in zip(_SLOT_SETTERS, _read_fields(self)):
                setter(new, value)
            # Own extras dict so new attributes on the copy don't leak back.
            setf(new, 'extra', dict(self.extra))
        if update:
            for name, value in update.items():
                if name in _FIELD_SET:
                    if name == 'tool_choice' and value is None:
                        value = 'auto'
                    validator = _VALIDATORS.get(name)
                    if validator is not None:
                        validator(value)
                    setf(new, name, value)
                elif name == 'extra':
                    raise ValueError("'extra' cannot be replaced through model_copy(update=...)")
                else:
                    new.extra[name] = value
        return new

    def _copy_with_tools(self, tools: list[dict[str, Any]]) -> ChatCompletionRequest:
        """``model_copy(update={'tools': tools})`` for tools the caller already validated."""
        cls = type(self)
        new = cls.__new__(cls)
        for setter, value in zip(_SLOT_SETTERS, _read_fields(self)):
            setter(new, value)
        object.__setattr__(new, 'tools', tools)
        object.__setattr__(new, 'extra', dict(self.extra))
        return new

    def model_dump(self, exclude_none: bool = False) -> dict[str, Any]:
        """Return the OpenAI-shape dict (extras included).

        The top-level dict is new; nested values are shared, not copied.
        """
        out: dict[str, Any] = {}
        for name in _FIELDS:
            value = getattr(self, name)
            if value is None and exclude_none:
                continue
            out[name] = value
        for name, value in self.extra.items():
            if value is None and exclude_none:
                continue
            out[name] = value
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChatCompletionRequest):
            return NotImplemented
        if self.extra != other.extra:
            return False
        return all(getattr(self, name) == getattr(other, name) for name in _FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        parts = [f'{name}={getattr(self, name)!r}' for name in _FIELDS]
        if self.extra:
            parts.append(f'extra={self.extra!r}')
        return f'{type(self).__name__}({", ".join(parts)})'

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _SLOT_SET}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)


_read_fields = operator.attrgetter(*_FIELDS)
# The slot descriptors' own setters: no Python-level __setattr__ on the copy path.
_SLOT_SETTERS = tuple(getattr(ChatCompletionRequest, name).__set__ for name in _FIELDS)


# ---------------------------------------------------------------------------
# Generic accessors
# ---------------------------------------------------------------------------

def get_field(request: Any, name: str, default: Any = None) -> Any:
    """Read ``name`` from a dict request (``.get``) or an object (``getattr``)."""
    if isinstance(request, dict):
        return request.get(name, default)
    return getattr(request, name, default)


def as_request(obj: Any) -> Any:
    """Coerce ``obj`` into something the parsers accept.

    Dicts become :class:`ChatCompletionRequest`; our own requests and pydantic
    requests (anything with a ``tool_choice`` attribute) pass through unchanged.
    """
    if isinstance(obj, ChatCompletionRequest) or type(obj) in REQUEST_ADAPTERS:
        return obj
    if isinstance(obj, Mapping):
        return ChatCompletionRequest.from_dict(obj)
    if hasattr(obj, 'tool_choice'):
        return obj
    raise TypeError(f'Expected a ChatCompletionRequest, a dict or a pydantic request, got {_type_name(obj)}')


def update_request(request: Any, **updates: Any) -> Any:
    """Return a copy of ``request`` with ``updates`` applied; never mutates it."""
    if hasattr(request, 'model_copy'):
        return request.model_copy(update=updates)
    if isinstance(request, dict):
        return {**request, **updates}
    new = copy.copy(request)
    for name, value in updates.items():
        setattr(new, name, value)
    return new


# ---------------------------------------------------------------------------
# tool_choice
# ---------------------------------------------------------------------------

def tool_choice_kind(request: Any) -> str:
    """Return 'auto', 'none', 'required', 'function' or 'allowed_tools'."""
    return _tool_choice_value_kind(get_field(request, 'tool_choice', 'auto'))


def tool_choice_function_name(request: Any) -> str | None:
    """Name of the forced function when tool_choice names one, else None."""
    choice = get_field(request, 'tool_choice', 'auto')
    if _tool_choice_value_kind(choice) != 'function':
        return None
    name: str = choice['function']['name'] if isinstance(choice, dict) else choice.function.name
    return name


def _allowed_tools_entries(choice: Any) -> list[Any]:
    """The ``allowed_tools.tools`` list of a dict or pydantic tool_choice."""
    if isinstance(choice, dict):
        allowed = choice.get('allowed_tools')
        return get_field(allowed, 'tools', None) or []
    return getattr(choice.allowed_tools, 'tools', None) or []


# ---------------------------------------------------------------------------
# tools
# ---------------------------------------------------------------------------

def _function_obj_dict(function: Any) -> dict[str, Any]:
    """Dump a pydantic Function (or look-alike object) to a plain dict."""
    if isinstance(function, dict):
        return dict(function)
    dump = getattr(function, 'model_dump', None)
    if dump is not None:
        dumped: dict[str, Any] = dump()
        return dumped
    if hasattr(function, 'name'):
        # Duck-typed object without pydantic: same keys/order as Function.model_dump().
        return {
            'description': getattr(function, 'description', None),
            'name': function.name,
            'parameters': getattr(function, 'parameters', None),
        }
    raise TypeError(f'Cannot interpret {_type_name(function)} as a tool function')


def tool_function_dict(tool: Any) -> dict[str, Any]:
    """Return the function part of ``tool`` (any supported shape) as a new dict.

    Dict input is copied as given; pydantic input is ``model_dump()``-ed, so
    it carries ``description``/``name``/``parameters`` including None values.
    """
    if isinstance(tool, dict):
        if 'function' in tool:
            return _function_obj_dict(tool['function'])
        return dict(tool)
    function = getattr(tool, 'function', None)
    if function is not None:
        return _function_obj_dict(function)
    return _function_obj_dict(tool)


def _tool_name(tool: Any) -> str | None:
    """Function name of a tool in any shape, or None when it has none."""
    if isinstance(tool, dict):
        function = tool.get('function', tool)
    else:
        function = getattr(tool, 'function', None) or tool
    name = get_field(function, 'name')
    return name if isinstance(name, str) else None


def dump_tools(request: Any) -> Any:
    """Return a copy of ``request`` whose ``tools`` are bare function dicts.

    Applies the tool_choice filtering a chat template expects: a named
    function keeps only that tool, ``allowed_tools`` keeps only the allowed
    ones (and supplies them when the request has no tools of its own).
    """
    kind = tool_choice_kind(request)
    tools = get_field(request, 'tools')

    if kind == 'allowed_tools':
        allowed_names: set[str] = set()
        allowed_functions: list[dict[str, Any]] = []
        for entry in _allowed_tools_entries(get_field(request, 'tool_choice')):
            if not isinstance(entry, dict):
                continue
            function = entry.get('function', {})
            if isinstance(function, dict) and 'name' in function:
                allowed_names.add(function['name'])
                allowed_functions.append(dict(function))
        if not tools:
            return update_request(request, tools=allowed_functions or None)
        request_names = {_tool_name(tool) for tool in tools}
        missing = sorted(allowed_names - request_names)
        if missing:
            raise ValueError(f'Allowed tool(s) not found in request.tools: {missing}')
        kept = [tool_function_dict(tool) for tool in tools if _tool_name(tool) in allowed_names]
        return update_request(request, tools=kept)

    if not tools:
        return update_request(request, tools=None)
    if kind == 'function':
        forced = tool_choice_function_name(request)
        kept = [tool_function_dict(tool) for tool in tools if _tool_name(tool) == forced]
    else:
        kept = [tool_function_dict(tool) for tool in tools]
    return update_request(request, tools=kept)


def prepare_tools(request: Any, updates: dict[str, Any] | None = None
                  ) -> tuple[Any, set[str], dict[str, dict[str, Any]]]:
    """``(dump_tools(request), allowed_tool_names(...), tool_parameter_schemas(...))`` in one pass.

    ``updates``: fields set on the copy first (as :func:`update_request`).
    Runs once per parser construction. A request type with a registered
    adapter takes it; the common shape (a list of OpenAI dict tools,
    tool_choice not naming functions) is handled in a single loop; every
    other shape takes the general functions, with equal results.
    """
    if REQUEST_ADAPTERS:
        adapter = REQUEST_ADAPTERS.get(type(request))
        if adapter is not None:
            prepared = adapter.prepare_tools(request, updates)
            if prepared is not None:
                return prepared
    if updates:
        request = update_request(request, **updates)
    choice = get_field(request, 'tool_choice', 'auto')
    if not (choice is None or choice == 'auto' or choice == 'none' or choice == 'required'):
        dumped = dump_tools(request)
        return dumped, allowed_tool_names(dumped), tool_parameter_schemas(dumped)
    tools = get_field(request, 'tools')
    if not tools:
        return update_request(request, tools=None), set(), {}
    if type(tools) is not list:
        dumped = dump_tools(request)
        return dumped, allowed_tool_names(dumped), tool_parameter_schemas(dumped)
    kept: list[dict[str, Any]] = []
    names: set[str] = set()
    schemas: dict[str, dict[str, Any]] = {}
    valid = True
    for tool in tools:
        function = tool.get('function') if type(tool) is dict else None
        if type(function) is not dict or 'function' in function:
            dumped = dump_tools(request)
            return dumped, allowed_tool_names(dumped), tool_parameter_schemas(dumped)
        function = dict(function)
        kept.append(function)
        name = function.get('name')
        if not isinstance(name, str):
            valid = False
        elif name not in names:
            names.add(name)
            parameters = function.get('parameters')
            schemas[name] = parameters if isinstance(parameters, dict) else {}
    if valid and type(request) is ChatCompletionRequest:
        # Bare function dicts with string names: exactly what _check_tools accepts.
        return request._copy_with_tools(kept), names, schemas
    return update_request(request, tools=kept), names, schemas


def allowed_tool_names(request: Any) -> set[str]:
    """Names of the functions in ``request.tools`` (call after :func:`dump_tools`)."""
    names: set[str] = set()
    for tool in get_field(request, 'tools') or ():
        name = _tool_name(tool)
        if name is not None:
            names.add(name)
    return names


def tool_parameter_schemas(request: Any) -> dict[str, dict[str, Any]]:
    """Map function name -> parameters JSON schema (``{}`` when absent).

    The first tool with a given name wins, like a name lookup in request order.
    """
    schemas: dict[str, dict[str, Any]] = {}
    for tool in get_field(request, 'tools') or ():
        name = _tool_name(tool)
        if name is None or name in schemas:
            continue
        if isinstance(tool, dict):
            function = tool.get('function', tool)
        else:
            function = getattr(tool, 'function', None) or tool
        parameters = get_field(function, 'parameters')
        schemas[name] = parameters if isinstance(parameters, dict) else {}
    return schemas


# ---------------------------------------------------------------------------
# Template kwargs and normalisation
# ---------------------------------------------------------------------------

def chat_template_kwargs_from_request(request: Any) -> dict[str, Any]:
    """Merge deprecated top-level thinking switches into chat_template_kwargs.

    Returns a new dict; the request is not modified.
    """
    kwargs = dict(get_field(request, 'chat_template_kwargs') or {})
    enable_thinking = get_field(request, 'enable_thinking')
    if enable_thinking is not None:
        logger.warning('The top-level `enable_thinking` field is deprecated; '
                       'pass it in `chat_template_kwargs` instead.')
        if kwargs.get('enable_thinking') is None:
            kwargs['enable_thinking'] = enable_thinking
        else:
            logger.warning('`chat_template_kwargs.enable_thinking` overrides the '
                           'top-level `enable_thinking` of the request.')
    reasoning_effort = get_field(request, 'reasoning_effort')
    if reasoning_effort in ('high', 'max'):
        kwargs.setdefault('reasoning_effort', reasoning_effort)
    return kwargs


def _decode_arguments(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise ValueError(f'Tool call arguments contain invalid JSON at position {exc.pos} '
                         f'(line {exc.lineno}, column {exc.colno})') from exc


def _normalize_messages(messages: list[Any]) -> list[Any] | None:
    """Decode assistant tool-call argument strings into dicts.

    Copy-on-write: returns None when nothing changes, otherwise a new list in
    which only the touched message/tool_call/function dicts are copies.
    """
    new_messages: list[Any] | None = None
    for m_idx, message in enumerate(messages):
        if not isinstance(message, dict) or message.get('role') != 'assistant':
            continue
        tool_calls = message.get('tool_calls')
        if not isinstance(tool_calls, list):
            continue
        new_calls: list[Any] | None = None
        for c_idx, call in enumerate(tool_calls):
            if not isinstance(call, dict):
                continue
            function = call.get('function')
            if not isinstance(function, dict):
                continue
            arguments = function.get('arguments')
            if not isinstance(arguments, str):
                continue
            decoded = _decode_arguments(arguments)
            if not isinstance(decoded, dict):
                # Templates only benefit from objects; keep other JSON as text.
                continue
            if new_calls is None:
                new_calls = list(tool_calls)
            new_calls[c_idx] = {**call, 'function': {**function, 'arguments': decoded}}
        if new_calls is not None:
            if new_messages is None:
                new_messages = list(messages)
            new_messages[m_idx] = {**message, 'tool_calls': new_calls}
    return new_messages


def normalize_chat_request(request: Any) -> Any:
    """Normalise a request for template rendering and the engine.

    * ``response_format``: type 'text' -> None, anything else -> a dict;
    * ``stop``: a single string -> a one-element list;
    * ``max_completion_tokens``: falls back to the deprecated ``max_tokens``;
    * assistant ``tool_calls[].function.arguments`` JSON strings -> dicts.

    Only objects with ``model_copy`` are normalised (dicts pass through); the
    same object is returned when nothing needs to change.
    """
    if not hasattr(request, 'model_copy'):
        return request

    updates: dict[str, Any] = {}

    fmt = request.response_format
    if fmt is not None:
        fmt_type = fmt.get('type') if isinstance(fmt, dict) else getattr(fmt, 'type', None)
        if fmt_type == 'text':
            updates['response_format'] = None
        elif not isinstance(fmt, dict):
            updates['response_format'] = fmt.model_dump()

    stop = request.stop
    if isinstance(stop, str):
        updates['stop'] = [stop]

    if request.max_completion_tokens is None:
        max_tokens = getattr(request, 'max_tokens', None)
        if max_tokens is not None:
            updates['max_completion_tokens'] = max_tokens

    messages = request.messages
    if isinstance(messages, list):
        new_messages = _normalize_messages(messages)
        if new_messages is not None:
            updates['messages'] = new_messages

    if updates:
        return request.model_copy(update=updates)
    return request
