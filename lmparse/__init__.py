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
    BraceCallToolParser,
    DsmlToolParser,
    JsonToolParser,
    JsonValueScanner,
    NsElementToolParser,
    SectionToolParser,
    ToolParser,
    XmlToolParser,
)
# Importing the dialects registers every built-in parser name.
from lmparse.dialects.deepseek import (
    DeepSeekV3ReasoningParser,
    DeepSeekV3ToolParser,
    DeepSeekV31ReasoningParser,
    DeepSeekV31ToolParser,
    DeepSeekV4ReasoningParser,
    DeepSeekV4ToolParser,
    DeepSeekV32ReasoningParser,
    DeepSeekV32ToolParser,
)
from lmparse.dialects.gemma import Gemma4ReasoningParser, Gemma4ToolParser
from lmparse.dialects.glm import Glm47ToolParser
from lmparse.dialects.gpt_oss import GptOssResponseParser
from lmparse.dialects.internlm import InternS2PreviewToolParser, Internlm2ToolParser
from lmparse.dialects.kimi import KimiK2ToolParser
from lmparse.dialects.llama import Llama3JsonToolParser
from lmparse.dialects.qwen import Qwen3CoderToolParser, Qwen3ToolParser
from lmparse.dialects.seed_oss import SeedOssReasoningParser, SeedOssToolParser
from lmparse.dialects.granite import GraniteReasoningParser, GraniteToolParser
from lmparse.dialects.hermes import HermesToolParser
from lmparse.dialects.mistral import MistralReasoningParser, MistralToolParser
from lmparse.tools.json_header import JsonHeaderToolParser
from lmparse.dialects.deepseek import DeepSeekV41ToolParser
from lmparse.dialects.kimi import KimiK3ReasoningParser, KimiK3ToolParser
from lmparse.dialects.minimax import (
    MiniMaxM2ReasoningParser,
    MiniMaxM2ToolParser,
    MiniMaxM3ReasoningParser,
    MiniMaxM3ToolParser,
)

__version__ = '0.1.0'

__all__ = [
    'BaseResponseParser',
    'BraceCallToolParser',
    'ChatCompletionRequest',
    'DeepSeekV3ReasoningParser',
    'DeepSeekV3ToolParser',
    'DeepSeekV31ReasoningParser',
    'DeepSeekV31ToolParser',
    'DeepSeekV32ReasoningParser',
    'DeepSeekV32ToolParser',
    'DeepSeekV4ReasoningParser',
    'DeepSeekV41ToolParser',
    'DeepSeekV4ToolParser',
    'DsmlToolParser',
    'DeltaFunctionCall',
    'DeltaMessage',
    'DeltaToolCall',
    'FunctionCall',
    'Gemma4ReasoningParser',
    'Gemma4ToolParser',
    'Glm47ToolParser',
    'GptOssResponseParser',
    'HarmonyResponseParser',
    'HarmonyToolParser',
    'InternS2PreviewToolParser',
    'Internlm2ToolParser',
    'JsonToolParser',
    'JsonValueScanner',
    'KimiK2ToolParser',
    'KimiK3ReasoningParser',
    'KimiK3ToolParser',
    'LEGACY_REASONING_PARSER_NAMES',
    'Llama3JsonToolParser',
    'MiniMaxM2ReasoningParser',
    'MiniMaxM2ToolParser',
    'MiniMaxM3ReasoningParser',
    'MiniMaxM3ToolParser',
    'NsElementToolParser',
    'Qwen3CoderToolParser',
    'Qwen3ToolParser',
    'ReasoningParser',
    'ReasoningParserManager',
    'ResponseParser',
    'ResponseParserManager',
    'SectionToolParser',
    'SeedOssReasoningParser',
    'SeedOssToolParser',
    'ToolCall',
    'ToolParser',
    'ToolParserManager',
    'XmlToolParser',
    'dump_tools',
    'validate_parser_names',
    '__version__',
]
__all__ += ['GraniteReasoningParser', 'GraniteToolParser', 'HermesToolParser', 'JsonHeaderToolParser',
            'MistralReasoningParser', 'MistralToolParser']
