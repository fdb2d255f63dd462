"""Wire adapters: normalized deltas -> OpenAI chat completions and Anthropic Messages.

Both build plain dicts and ``json.dumps`` them (no pydantic on the hot path).
"""
from lmparse.adapters.anthropic import AnthropicStream, anthropic_message, map_stop_reason
from lmparse.adapters.openai import OpenAIStream, openai_completion

__all__ = ['AnthropicStream', 'OpenAIStream', 'anthropic_message', 'map_stop_reason', 'openai_completion']
