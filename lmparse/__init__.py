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
from lmparse.models import ModelParsers, UnknownModelError, parsers_for_model
from lmparse.request import ChatCompletionRequest, dump_tools
from lmparse.response import BaseResponseParser, ResponseParser
from lmparse.harmony import HarmonyResponseParser, HarmonyToolParser
from lmparse.recipient_channels import ChannelGrammar, ChannelToolParser
from lmparse.tools import (
    BraceCallToolParser,
    DsmlToolParser,
    JsonHeaderToolParser,
    JsonToolParser,
    JsonValueScanner,
    NsElementToolParser,
    PythonicToolParser,
    SectionToolParser,
    ToolParser,
    XmlToolParser,
)
# Importing the dialects registers every built-in parser name.
from lmparse.dialects.apertus import ApertusReasoningParser, ApertusToolParser
from lmparse.dialects.beam import BeamReasoningParser, BeamToolParser
from lmparse.dialects.cohere import (
    CohereCommand3ReasoningParser,
    CohereCommand3ToolParser,
    CohereCommand4ReasoningParser,
    CohereCommand4ToolParser,
)
from lmparse.dialects.deepseek import (
    DeepSeekV31ReasoningParser,
    DeepSeekV31ToolParser,
    DeepSeekV32ReasoningParser,
    DeepSeekV32ToolParser,
    DeepSeekV3ReasoningParser,
    DeepSeekV3ToolParser,
    DeepSeekV41ToolParser,
    DeepSeekV4ReasoningParser,
    DeepSeekV4ToolParser,
)
from lmparse.dialects.dots import DotsToolParser
from lmparse.dialects.ernie import Ernie45ReasoningParser, Ernie45ToolParser
from lmparse.dialects.gemma import FunctionGemmaToolParser, Gemma4ReasoningParser, Gemma4ToolParser
from lmparse.dialects.gigachat import GigaChat3ToolParser, GigaChat35ToolParser
from lmparse.dialects.glm import Glm47ToolParser
from lmparse.dialects.gpt_oss import GptOssResponseParser
from lmparse.dialects.granite import Granite20bFcToolParser, GraniteReasoningParser, GraniteToolParser
from lmparse.dialects.hermes import HermesToolParser
from lmparse.dialects.hunyuan import (
    HYV3ReasoningParser,
    HYV3ToolParser,
    HYV4ReasoningParser,
    HYV4ToolParser,
    HunyuanA13BReasoningParser,
    HunyuanA13BToolParser,
)
from lmparse.dialects.holo import Holo2ReasoningParser
from lmparse.dialects.inkling import InklingReasoningParser, InklingToolParser
from lmparse.dialects.internlm import Internlm2ToolParser, InternS2PreviewToolParser
from lmparse.dialects.iquest import IQuestQ1ReasoningParser, IQuestQ1ToolParser
from lmparse.dialects.jamba import JambaToolParser
from lmparse.dialects.k2 import K2HorizonReasoningParser, K2HorizonToolParser
from lmparse.dialects.kimi import KimiK2ToolParser, KimiK3ReasoningParser, KimiK3ToolParser, KimiThinkReasoningParser
from lmparse.dialects.lfm import Lfm2ToolParser
from lmparse.dialects.ling import Ling3ToolParser
from lmparse.dialects.llama import (
    Llama3JsonToolParser,
    Llama3LenientJsonToolParser,
    Llama4JsonToolParser,
    PythonicCallsToolParser,
)
from lmparse.dialects.longcat import LongcatReasoningParser, LongcatToolParser
from lmparse.dialects.mimo import MiMoReasoningParser, MiMoToolParser
from lmparse.dialects.minicpm import MiniCPM5ToolParser, MiniCPMVReasoningParser
from lmparse.dialects.minimax import (
    MiniMaxM2ReasoningParser,
    MiniMaxM2ToolParser,
    MiniMaxM3ReasoningParser,
    MiniMaxM3ToolParser,
)
from lmparse.dialects.mistral import MistralReasoningParser, MistralToolParser
from lmparse.dialects.muse import (
    MuseGlimmerReasoningParser,
    MuseGlimmerToolParser,
    MuseReasoningParser,
    MuseToolParser,
)
from lmparse.dialects.nanbeige import NanbeigeToolParser
from lmparse.dialects.nemotron import Nemotron3ReasoningParser
from lmparse.dialects.olmo import Olmo3ReasoningParser, Olmo3ToolParser
from lmparse.dialects.phi import Phi4MiniJsonToolParser
from lmparse.dialects.plamo import Plamo3ReasoningParser, Plamo3ToolParser
from lmparse.dialects.poolside import PoolsideV1ReasoningParser, PoolsideV1ToolParser
from lmparse.dialects.qwen import Qwen3CoderToolParser, Qwen3ToolParser
from lmparse.dialects.response_template import (
    ResponseTemplateError,
    ResponseTemplateReasoningParser,
    ResponseTemplateToolParser,
    compile_response_template,
)
from lmparse.dialects.seed_oss import SeedOssReasoningParser, SeedOssToolParser
from lmparse.dialects.spark import Spark25ToolParser
from lmparse.dialects.step import Step3p5ToolParser, Step3ToolParser, StepReasoningParser
from lmparse.dialects.trinity import TrinityToolParser
from lmparse.dialects.xlam import XlamToolParser
# Dialects derived from a chat template (jinja2 is imported only when one is derived).
from lmparse.templates import TemplateDerivationError, derive_dialect, from_chat_template

__version__ = '0.1.0'

__all__ = [
    'ApertusReasoningParser',
    'ApertusToolParser',
    'BaseResponseParser',
    'BeamReasoningParser',
    'BeamToolParser',
    'BraceCallToolParser',
    'ChannelGrammar',
    'ChannelToolParser',
    'ChatCompletionRequest',
    'CohereCommand3ReasoningParser',
    'CohereCommand3ToolParser',
    'CohereCommand4ReasoningParser',
    'CohereCommand4ToolParser',
    'DeepSeekV31ReasoningParser',
    'DeepSeekV31ToolParser',
    'DeepSeekV32ReasoningParser',
    'DeepSeekV32ToolParser',
    'DeepSeekV3ReasoningParser',
    'DeepSeekV3ToolParser',
    'DeepSeekV41ToolParser',
    'DeepSeekV4ReasoningParser',
    'DeepSeekV4ToolParser',
    'DeltaFunctionCall',
    'DeltaMessage',
    'DeltaToolCall',
    'DotsToolParser',
    'DsmlToolParser',
    'Ernie45ReasoningParser',
    'Ernie45ToolParser',
    'FunctionCall',
    'FunctionGemmaToolParser',
    'Gemma4ReasoningParser',
    'Gemma4ToolParser',
    'GigaChat35ToolParser',
    'GigaChat3ToolParser',
    'Glm47ToolParser',
    'GptOssResponseParser',
    'Granite20bFcToolParser',
    'GraniteReasoningParser',
    'GraniteToolParser',
    'HYV3ReasoningParser',
    'HYV3ToolParser',
    'HYV4ReasoningParser',
    'HYV4ToolParser',
    'HarmonyResponseParser',
    'HarmonyToolParser',
    'HermesToolParser',
    'Holo2ReasoningParser',
    'HunyuanA13BReasoningParser',
    'HunyuanA13BToolParser',
    'IQuestQ1ReasoningParser',
    'IQuestQ1ToolParser',
    'InklingReasoningParser',
    'InklingToolParser',
    'InternS2PreviewToolParser',
    'Internlm2ToolParser',
    'JambaToolParser',
    'JsonHeaderToolParser',
    'JsonToolParser',
    'JsonValueScanner',
    'K2HorizonReasoningParser',
    'K2HorizonToolParser',
    'KimiK2ToolParser',
    'KimiK3ReasoningParser',
    'KimiK3ToolParser',
    'KimiThinkReasoningParser',
    'LEGACY_REASONING_PARSER_NAMES',
    'Lfm2ToolParser',
    'Ling3ToolParser',
    'Llama3JsonToolParser',
    'Llama3LenientJsonToolParser',
    'Llama4JsonToolParser',
    'LongcatReasoningParser',
    'LongcatToolParser',
    'MiMoReasoningParser',
    'MiMoToolParser',
    'MiniCPM5ToolParser',
    'MiniCPMVReasoningParser',
    'MiniMaxM2ReasoningParser',
    'MiniMaxM2ToolParser',
    'MiniMaxM3ReasoningParser',
    'MiniMaxM3ToolParser',
    'MistralReasoningParser',
    'MistralToolParser',
    'ModelParsers',
    'MuseGlimmerReasoningParser',
    'MuseGlimmerToolParser',
    'MuseReasoningParser',
    'MuseToolParser',
    'NanbeigeToolParser',
    'Nemotron3ReasoningParser',
    'NsElementToolParser',
    'Olmo3ReasoningParser',
    'Olmo3ToolParser',
    'Phi4MiniJsonToolParser',
    'Plamo3ReasoningParser',
    'Plamo3ToolParser',
    'PoolsideV1ReasoningParser',
    'PoolsideV1ToolParser',
    'PythonicCallsToolParser',
    'PythonicToolParser',
    'Qwen3CoderToolParser',
    'Qwen3ToolParser',
    'ReasoningParser',
    'ReasoningParserManager',
    'ResponseParser',
    'ResponseParserManager',
    'ResponseTemplateError',
    'ResponseTemplateReasoningParser',
    'ResponseTemplateToolParser',
    'SectionToolParser',
    'SeedOssReasoningParser',
    'SeedOssToolParser',
    'Spark25ToolParser',
    'Step3ToolParser',
    'Step3p5ToolParser',
    'StepReasoningParser',
    'TemplateDerivationError',
    'ToolCall',
    'ToolParser',
    'ToolParserManager',
    'TrinityToolParser',
    'UnknownModelError',
    'XlamToolParser',
    'XmlToolParser',
    '__version__',
    'compile_response_template',
    'derive_dialect',
    'dump_tools',
    'from_chat_template',
    'parsers_for_model',
    'validate_parser_names',
]
