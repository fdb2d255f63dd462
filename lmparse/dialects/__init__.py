"""Built-in dialects: one module per model family, each a declaration on a compiled family.

Importing this package registers every built-in dialect under its LMDeploy
name and its aliases (``import lmparse`` does it). Which family a dialect
sits on, and what it declares, is in each module; README "Writing a dialect".
"""
from lmparse.dialects import (
    cohere,
    deepseek,
    ernie,
    gemma,
    glm,
    gpt_oss,
    granite,
    hermes,
    holo,
    hunyuan,
    internlm,
    iquest,
    k2,
    kimi,
    llama,
    longcat,
    mimo,
    minimax,
    mistral,
    nanbeige,
    nemotron,
    qwen,
    seed_oss,
    spark,
    trinity,
)

__all__ = ['cohere', 'deepseek', 'ernie', 'gemma', 'glm', 'gpt_oss', 'granite', 'hermes', 'holo', 'hunyuan',
           'internlm', 'iquest', 'k2', 'kimi', 'llama', 'longcat', 'mimo', 'minimax', 'mistral', 'nanbeige',
           'nemotron', 'qwen', 'seed_oss', 'spark', 'trinity']
