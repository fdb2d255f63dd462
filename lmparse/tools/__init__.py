"""Tool-call parsers and their registry names (mirroring LMDeploy's)."""
from lmparse.registry import ToolParserManager
from lmparse.tools.base import ToolParser
from lmparse.tools.json_parser import Internlm2ToolParser, JsonToolParser, Llama3JsonToolParser, Qwen3ToolParser
from lmparse.tools.json_scanner import JsonValueScanner

ToolParserManager.register_module(['qwen', 'qwen2d5', 'qwen3'], module=Qwen3ToolParser)
ToolParserManager.register_module(['internlm', 'intern-s1'], module=Internlm2ToolParser)
ToolParserManager.register_module('llama3', module=Llama3JsonToolParser)

__all__ = [
    'ToolParser',
    'ToolParserManager',
    'JsonToolParser',
    'JsonValueScanner',
    'Qwen3ToolParser',
    'Internlm2ToolParser',
    'Llama3JsonToolParser',
]
