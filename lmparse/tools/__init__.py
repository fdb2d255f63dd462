"""Tool-call parsers and their registry names (mirroring LMDeploy's)."""
from lmparse.registry import ToolParserManager
from lmparse.tools.base import ToolParser
from lmparse.tools.dsml import DeepSeekV4ToolParser, DeepSeekV32ToolParser
from lmparse.tools.json_parser import Internlm2ToolParser, JsonToolParser, Llama3JsonToolParser, Qwen3ToolParser
from lmparse.tools.json_scanner import JsonValueScanner
from lmparse.tools.kimi import KimiK2ToolParser
from lmparse.tools.xml_parser import Glm47ToolParser, InternS2PreviewToolParser, Qwen3CoderToolParser, XmlToolParser

ToolParserManager.register_module(['qwen', 'qwen2d5', 'qwen3'], module=Qwen3ToolParser)
ToolParserManager.register_module(['internlm', 'intern-s1'], module=Internlm2ToolParser)
ToolParserManager.register_module('llama3', module=Llama3JsonToolParser)
ToolParserManager.register_module('deepseek-v32', module=DeepSeekV32ToolParser)
ToolParserManager.register_module('deepseek-v4', module=DeepSeekV4ToolParser)
ToolParserManager.register_module(['kimi_k2', 'kimi-k2'], module=KimiK2ToolParser)
ToolParserManager.register_module('qwen3coder', module=Qwen3CoderToolParser)
ToolParserManager.register_module('interns2-preview', module=InternS2PreviewToolParser)
# GLM-4.5 uses the same grammar (with newlines between tags, which the parser skips).
ToolParserManager.register_module(['glm47', 'glm45'], module=Glm47ToolParser)

__all__ = [
    'ToolParser',
    'ToolParserManager',
    'JsonToolParser',
    'JsonValueScanner',
    'Qwen3ToolParser',
    'Internlm2ToolParser',
    'Llama3JsonToolParser',
    'DeepSeekV32ToolParser',
    'DeepSeekV4ToolParser',
    'KimiK2ToolParser',
    'XmlToolParser',
    'Qwen3CoderToolParser',
    'InternS2PreviewToolParser',
    'Glm47ToolParser',
]
