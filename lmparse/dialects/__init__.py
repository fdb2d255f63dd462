"""Built-in dialects: one module per model family, each a declaration on a compiled family.

Importing this package registers every built-in dialect under its LMDeploy
name and its aliases (``import lmparse`` does it). Which family a dialect
sits on, and what it declares, is in each module; README "Writing a dialect".
"""
from lmparse.dialects import (
    apertus,
    cohere,
    deepseek,
    dots,
    ernie,
    gemma,
    gigachat,
    glm,
    gpt_oss,
    granite,
    hermes,
    hunyuan,
    internlm,
    jamba,
    kimi,
    llama,
    longcat,
    mimo,
    minimax,
    mistral,
    phi,
    qwen,
    seed_oss,
    xlam,
)

__all__ = ['apertus', 'cohere', 'deepseek', 'dots', 'ernie', 'gemma', 'gigachat', 'glm', 'gpt_oss', 'granite',
           'hermes', 'hunyuan', 'internlm', 'jamba', 'kimi', 'llama', 'longcat', 'mimo', 'minimax', 'mistral',
           'phi', 'qwen', 'seed_oss', 'xlam']
