"""XGrammar structural tags that are not one of xgrammar's built-in model formats."""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from lmparse import request as _req

__all__ = ['internlm2_required_response_format', 'openai_tool_dict']


def openai_tool_dict(tool: Any) -> dict[str, Any]:
    """One request tool as the OpenAI ``{"type": "function", "function": ...}`` dict xgrammar takes."""
    if hasattr(tool, 'model_dump'):
        return tool.model_dump(mode='json')  # type: ignore[no-any-return,unused-ignore]
    if isinstance(tool, dict):
        if 'function' in tool:
            return tool
        return {'type': 'function', 'function': tool}
    raise TypeError(f'unsupported tool definition: {type(tool).__name__}')


def internlm2_required_response_format(tools: Iterable[Any] | None, *, reasoning: bool,
                                       open_tag: str = '<|action_start|><|plugin|>',
                                       close_tag: str = '<|action_end|>', name_field: str = 'name',
                                       argument_field: str = 'parameters') -> dict[str, Any]:
    """XGrammar structural tag forcing at least one InternLM2 action block.

    Each allowed tool is one tag: the open tag and the JSON envelope's fixed
    head (``{"name": "<tool>", "parameters": ``), the parameters constrained by
    the tool's JSON schema, then ``}`` and the close tag; blocks are separated
    by a newline and trailing whitespace may follow. With ``reasoning`` the
    model first writes free text up to ``</think>`` and a blank line.
    """
    try:
        from xgrammar import structural_tag as st  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        raise ImportError('`tool_choice="required"` needs xgrammar: pip install "lmparse[structural-tags]"') from err
    tags = []
    for tool in tools or ():
        function = _req.tool_function_dict(tool)
        name = function.get('name')
        if not isinstance(name, str):
            raise ValueError(f'every tool needs a string function name, got {name!r}')
        schema = function.get('parameters') or {'type': 'object'}
        head = f'{open_tag}{{{json.dumps(name_field)}: {json.dumps(name)}, {json.dumps(argument_field)}: '
        tags.append(st.TagFormat(begin=head, content=st.JSONSchemaFormat(json_schema=schema), end='}' + close_tag))
    if not tags:
        raise ValueError('`tool_choice="required"` requires at least one tool.')
    calls = st.TagsWithSeparatorFormat(tags=tags, separator='\n', at_least_one=True)
    # Whitespace after the last block must not force another call before EOS.
    body = st.SequenceFormat(elements=[calls, st.RegexFormat(pattern=r'\s*')])
    if reasoning:
        body = st.SequenceFormat(elements=[st.TagFormat(begin='', content=st.AnyTextFormat(), end='</think>'),
                                           st.ConstStringFormat(value='\n\n'), body])
    result: dict[str, Any] = st.StructuralTag(format=body).model_dump(mode='json')
    return result
