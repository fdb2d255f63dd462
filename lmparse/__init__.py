"""lmparse: fast streaming parsers for LLM output (content, reasoning, tool calls)."""
from lmparse.protocol import DeltaFunctionCall, DeltaMessage, DeltaToolCall, FunctionCall, ToolCall
from lmparse.reasoning import ReasoningParser
from lmparse.registry import (
    LEGACY_REASONING_PARSER_NAMES,
    ReasoningParserManager,
    ResponseParserManager,
    ToolParserManager,
    validate_parser_names,
)
from lmparse.request import ChatCompletionRequest, dump_tools
from lmparse.response import BaseResponseParser, ResponseParser
from lmparse.tools import (
    Internlm2ToolParser,
    JsonToolParser,
    JsonValueScanner,
    Llama3JsonToolParser,
    Qwen3ToolParser,
    ToolParser,
)

ResponseParserManager.register_module('default', module=BaseResponseParser)

__version__ = '0.1.0'

__all__ = [
    'BaseResponseParser',
    'ChatCompletionRequest',
    'DeltaFunctionCall',
    'DeltaMessage',
    'DeltaToolCall',
    'FunctionCall',
    'Internlm2ToolParser',
    'JsonToolParser',
    'JsonValueScanner',
    'LEGACY_REASONING_PARSER_NAMES',
    'Llama3JsonToolParser',
    'Qwen3ToolParser',
    'ReasoningParser',
    'ReasoningParserManager',
    'ResponseParser',
    'ResponseParserManager',
    'ToolCall',
    'ToolParser',
    'ToolParserManager',
    'dump_tools',
    'validate_parser_names',
    '__version__',
]
