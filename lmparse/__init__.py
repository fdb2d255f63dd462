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
from lmparse.harmony import HarmonyResponseParser, HarmonyToolParser
from lmparse.tools import (
    DsmlToolParser,
    JsonToolParser,
    JsonValueScanner,
    PythonicToolParser,
    SectionToolParser,
    ToolParser,
    XmlToolParser,
)
# Importing the dialects registers every built-in parser name.
from lmparse.dialects.deepseek import (
    DeepSeekV3ReasoningParser,
    DeepSeekV4ReasoningParser,
    DeepSeekV4ToolParser,
    DeepSeekV32ReasoningParser,
    DeepSeekV32ToolParser,
)
from lmparse.dialects.glm import Glm47ToolParser
from lmparse.dialects.gpt_oss import GptOssResponseParser
from lmparse.dialects.internlm import InternS2PreviewToolParser, Internlm2ToolParser
from lmparse.dialects.kimi import KimiK2ToolParser
from lmparse.dialects.llama import (
    Llama3JsonToolParser,
    Llama3LenientJsonToolParser,
    Llama4JsonToolParser,
    PythonicCallsToolParser,
)
from lmparse.dialects.qwen import Qwen3CoderToolParser, Qwen3ToolParser

__version__ = '0.1.0'

__all__ = [
    'BaseResponseParser',
    'ChatCompletionRequest',
    'DeepSeekV3ReasoningParser',
    'DeepSeekV32ReasoningParser',
    'DeepSeekV32ToolParser',
    'DeepSeekV4ReasoningParser',
    'DeepSeekV4ToolParser',
    'DsmlToolParser',
    'DeltaFunctionCall',
    'DeltaMessage',
    'DeltaToolCall',
    'FunctionCall',
    'Glm47ToolParser',
    'GptOssResponseParser',
    'HarmonyResponseParser',
    'HarmonyToolParser',
    'InternS2PreviewToolParser',
    'Internlm2ToolParser',
    'JsonToolParser',
    'JsonValueScanner',
    'KimiK2ToolParser',
    'LEGACY_REASONING_PARSER_NAMES',
    'Llama3JsonToolParser',
    'Llama3LenientJsonToolParser',
    'Llama4JsonToolParser',
    'PythonicCallsToolParser',
    'PythonicToolParser',
    'Qwen3CoderToolParser',
    'Qwen3ToolParser',
    'ReasoningParser',
    'ReasoningParserManager',
    'ResponseParser',
    'ResponseParserManager',
    'SectionToolParser',
    'ToolCall',
    'ToolParser',
    'ToolParserManager',
    'XmlToolParser',
    'dump_tools',
    'validate_parser_names',
    '__version__',
]
