"""Integrations that plug lmparse into serving engines through their own parser-plugin mechanisms.

``lmparse.integrations.vllm`` registers lmparse-backed tool and reasoning parsers with vLLM 0.33;
``lmparse.integrations.sglang`` registers lmparse-backed detectors with SGLang 0.5.23.
Nothing here is imported by ``lmparse`` itself: each module imports its engine and is imported
only by that engine (its plugin flag or entry point), so the core package never needs one.
"""
