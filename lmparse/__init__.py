"""lmparse: fast streaming parsers for LLM output (content, reasoning, tool calls)."""
from lmparse.protocol import DeltaFunctionCall, DeltaMessage, DeltaToolCall, FunctionCall, ToolCall
from lmparse.reasoning import (
    DeepSeekV3ReasoningParser,
    DeepSeekV4ReasoningParser,
    DeepSeekV32ReasoningParser,
    ReasoningParser,
)
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
    DeepSeekV4ToolParser,
    DeepSeekV32ToolParser,
    Glm47ToolParser,
    InternS2PreviewToolParser,
    Internlm2ToolParser,
    KimiK2ToolParser,
    JsonToolParser,
    JsonValueScanner,
    Llama3JsonToolParser,
    Qwen3CoderToolParser,
    Qwen3ToolParser,
    ToolParser,
    XmlToolParser,
)

ResponseParserManager.register_module('default', module=BaseResponseParser)

from lmparse.harmony import GptOssResponseParser, HarmonyToolParser  # noqa: E402

ResponseParserManager.register_module('gpt-oss', module=GptOssResponseParser)

__version__ = '0.1.0'

__all__ = [
    'BaseResponseParser',
    'ChatCompletionRequest',
    'DeepSeekV3ReasoningParser',
    'DeepSeekV32ReasoningParser',
    'DeepSeekV32ToolParser',
    'DeepSeekV4ReasoningParser',
    'DeepSeekV4ToolParser',
    'DeltaFunctionCall',
    'DeltaMessage',
    'DeltaToolCall',
    'FunctionCall',
    'Glm47ToolParser',
    'GptOssResponseParser',
    'HarmonyToolParser',
    'InternS2PreviewToolParser',
    'Internlm2ToolParser',
    'JsonToolParser',
    'JsonValueScanner',
    'KimiK2ToolParser',
    'LEGACY_REASONING_PARSER_NAMES',
    'Llama3JsonToolParser',
    'Qwen3CoderToolParser',
    'Qwen3ToolParser',
    'ReasoningParser',
    'ReasoningParserManager',
    'ResponseParser',
    'ResponseParserManager',
    'ToolCall',
    'ToolParser',
    'ToolParserManager',
    'XmlToolParser',
    'dump_tools',
    'validate_parser_names',
    '__version__',
]
