"""Wire adapters: normalized deltas -> OpenAI chat completions, the OpenAI Responses API and Anthropic Messages.

All build plain dicts and ``json.dumps`` them (no pydantic on the hot path).
"""
from lmparse.adapters.anthropic import AnthropicStream, anthropic_message, map_stop_reason
from lmparse.adapters.openai import OpenAIStream, openai_completion
from lmparse.adapters.responses import ResponsesStream, responses_response

__all__ = ['AnthropicStream', 'OpenAIStream', 'ResponsesStream', 'anthropic_message', 'map_stop_reason',
           'openai_completion', 'responses_response']
