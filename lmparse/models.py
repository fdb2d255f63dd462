"""Which parsers a model needs: a maintained table of model families, and detection for local model folders.

``parsers_for_model("org/model-id")`` answers from the table (exact model ids
first, then name patterns); for a local folder it reads what the folder says
about its own output format, strongest evidence first: the chat template's
tool-call and thinking markers (``tokenizer_config.json``,
``chat_template.jinja``, ``chat_template.json``), the model name
(``config.json``'s ``_name_or_path``, the folder's name), ``config.json``'s
``model_type``, and last the special tokens of the vocabulary
(``tokenizer.json`` / ``added_tokens_decoder``). A model nothing identifies,
or evidence that fits two families equally, falls back to the dialect derived
from the folder's chat template (``lmparse.templates``: accepted only when it
parses the template's own renderings back; a chat template file is derived
directly), and otherwise raises :class:`UnknownModelError` with the closest
candidates: never a silent default.
"""
from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ['FAMILIES', 'ModelFamily', 'ModelParsers', 'UnknownModelError', 'parsers_for_model']


@dataclass(frozen=True)
class ModelFamily:
    """One model family: its parsers and what identifies it.

    ``template_markers`` must all appear in the chat template and
    ``token_markers`` must all be special tokens of the vocabulary; among the
    families whose markers all match, the most specific (most markers, then
    longest markers in all) wins, so a family lists every marker that sets it
    apart, shared ones included.
    """

    name: str
    reasoning_parser: str | None
    tool_parser: str | None
    response_parser: str = 'default'
    ids: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    template_markers: tuple[str, ...] = ()
    token_markers: tuple[str, ...] = ()
    model_types: tuple[str, ...] = ()
    note: str = ''


@dataclass(frozen=True)
class ModelParsers:
    """The parsers for one model, and how lmparse knows."""

    model: str
    family: str
    reasoning_parser: str | None
    tool_parser: str | None
    response_parser: str
    matched_by: str
    note: str = ''
    # Set when no table row matched and the parsers were derived from this chat template (lmparse.templates).
    chat_template: str | None = None

    def cli_args(self) -> list[str]:
        """The ``lmparse parse`` / ``serve`` flags that select these parsers."""
        if self.chat_template is not None:
            return ['--chat-template', self.chat_template]
        args = [] if self.response_parser == 'default' else ['--response-parser', self.response_parser]
        if self.reasoning_parser:
            args += ['--reasoning-parser', self.reasoning_parser]
        if self.tool_parser:
            args += ['--tool-parser', self.tool_parser]
        return args

    def as_dict(self) -> dict[str, Any]:
        return {'model': self.model, 'family': self.family, 'response_parser': self.response_parser,
                'reasoning_parser': self.reasoning_parser, 'tool_parser': self.tool_parser,
                'matched_by': self.matched_by, 'note': self.note, 'chat_template': self.chat_template}


class UnknownModelError(LookupError):
    """No family (or more than one equally) fits the model; ``candidates`` are the closest known ones."""

    def __init__(self, model: str, candidates: list[str], reason: str = '') -> None:
        self.model = model
        self.candidates = candidates
        self.reason = reason
        closest = f' Closest known: {", ".join(candidates)}.' if candidates else ''
        why = f' ({reason})' if reason else ''
        super().__init__(f'lmparse does not know which parsers {model!r} needs{why}.{closest} '
                         'Name them with --reasoning-parser / --tool-parser (see "lmparse list").')

    def __str__(self) -> str:
        return str(self.args[0])


def _f(name: str, reasoning: str | None, tool: str | None, **kw: Any) -> ModelFamily:
    return ModelFamily(name, reasoning, tool, **kw)


# Order matters for name patterns only: the first family whose pattern matches wins, so the more specific
# names come first (Qwen3-Coder before Qwen 3, DeepSeek V3.1 before V3).
FAMILIES: tuple[ModelFamily, ...] = (
    _f('GPT-OSS', None, None, response_parser='gpt-oss', ids=('openai/gpt-oss-20b', 'openai/gpt-oss-120b'),
       patterns=(r'gpt-oss',), template_markers=('<|channel|>', '<|constrain|>'),
       token_markers=('<|channel|>', '<|constrain|>'), model_types=('gpt_oss',)),
    _f('Qwen3-Coder / Qwen3.5', 'default', 'qwen3coder',
       ids=('Qwen/Qwen3-Coder-30B-A3B-Instruct', 'Qwen/Qwen3-Coder-480B-A35B-Instruct'),
       patterns=(r'qwen3-coder', r'qwen3\.5'),
       template_markers=('<tool_call>', '</tool_call>', '<function=', '<parameter=')),
    _f('QwQ', 'default', 'qwen', ids=('Qwen/QwQ-32B',), patterns=(r'qwq',)),
    _f('Qwen 3 (JSON tool calls)', 'default', 'qwen3',
       ids=('Qwen/Qwen3-8B', 'Qwen/Qwen3-32B', 'Qwen/Qwen3-30B-A3B', 'Qwen/Qwen3-235B-A22B',
            'Qwen/Qwen3-235B-A22B-Instruct-2507', 'Qwen/Qwen3-235B-A22B-Thinking-2507'),
       patterns=(r'qwen3',), template_markers=('<tool_call>', '</tool_call>', '<think>'),
       model_types=('qwen3', 'qwen3_moe')),
    _f('Qwen 2.5', None, 'qwen', ids=('Qwen/Qwen2.5-7B-Instruct', 'Qwen/Qwen2.5-72B-Instruct'),
       patterns=(r'qwen2\.5',), template_markers=('<tool_call>', '</tool_call>'), model_types=('qwen2',)),
    _f('Hermes 2 Pro / Hermes 3', None, 'hermes',
       ids=('NousResearch/Hermes-3-Llama-3.1-8B', 'NousResearch/Hermes-2-Pro-Llama-3-8B'),
       patterns=(r'hermes-2-pro', r'hermes-3')),
    _f('InternLM 2.5 / Intern-S1', 'default', 'internlm',
       ids=('internlm/internlm2_5-7b-chat', 'internlm/Intern-S1', 'internlm/Intern-S1-mini'),
       patterns=(r'internlm2', r'intern-s1'), template_markers=('<|action_start|>', '<|plugin|>'),
       token_markers=('<|action_start|>', '<|plugin|>')),
    _f('GLM-4.7', 'default', 'glm47', ids=('zai-org/GLM-4.7',), patterns=(r'glm-4\.7',),
       template_markers=('<tool_call>', '</tool_call>', '<arg_key>', '<arg_value>')),
    _f('GLM-4.5 / 4.6', 'default', 'glm45',
       ids=('zai-org/GLM-4.5', 'zai-org/GLM-4.5-Air', 'zai-org/GLM-4.6'), patterns=(r'glm-4\.[56]',),
       model_types=('glm4_moe',), note='GLM-4.5, 4.6 and 4.7 share one grammar (glm45 = glm47)'),
    _f('DeepSeek V4 / V4.1', 'deepseek-v4', 'deepseek-v4',
       ids=('deepseek-ai/DeepSeek-V4-Pro', 'deepseek-ai/DeepSeek-V4-Flash'), patterns=(r'deepseek-v4',),
       template_markers=('｜DSML｜', 'tool_calls'), token_markers=('｜DSML｜', '<｜latest_reminder｜>'),
       note='DeepSeek V4.1 writes "<｜DSML｜ calls>": use --tool-parser deepseek-v41 for it'),
    _f('DeepSeek V3.2', 'deepseek-v32', 'deepseek-v32',
       ids=('deepseek-ai/DeepSeek-V3.2', 'deepseek-ai/DeepSeek-V3.2-Exp'), patterns=(r'deepseek-v3\.2',),
       template_markers=('｜DSML｜', 'function_calls'), token_markers=('｜DSML｜',), model_types=('deepseek_v32',)),
    _f('DeepSeek V3.1', 'deepseek-v31', 'deepseek-v31',
       ids=('deepseek-ai/DeepSeek-V3.1', 'deepseek-ai/DeepSeek-V3.1-Terminus'), patterns=(r'deepseek-v3\.1',),
       template_markers=('<｜tool▁calls▁begin｜>', '<｜tool▁sep｜>', '</think>')),
    _f('DeepSeek R1 distilled (Qwen / Llama)', 'default', None,
       ids=('deepseek-ai/DeepSeek-R1-Distill-Qwen-7B', 'deepseek-ai/DeepSeek-R1-Distill-Llama-8B'),
       patterns=(r'deepseek-r1-distill',), note='no tool calling'),
    _f('DeepSeek R1', 'default', 'deepseek-v3', ids=('deepseek-ai/DeepSeek-R1', 'deepseek-ai/DeepSeek-R1-0528'),
       patterns=(r'deepseek-r1',), template_markers=('<｜tool▁calls▁begin｜>', '<｜tool▁sep｜>', '```json', '<think>')),
    _f('DeepSeek V3', None, 'deepseek-v3', ids=('deepseek-ai/DeepSeek-V3', 'deepseek-ai/DeepSeek-V3-0324'),
       patterns=(r'deepseek-v3',), template_markers=('<｜tool▁calls▁begin｜>', '<｜tool▁sep｜>', '```json')),
    _f('Kimi K3', 'kimi_k3', 'kimi_k3', patterns=(r'kimi-k3',), template_markers=('<|open|>', '<|sep|>'),
       token_markers=('<|open|>', '<|sep|>', '<|close|>')),
    _f('Kimi K2 / K2 Thinking', 'default', 'kimi_k2',
       ids=('moonshotai/Kimi-K2-Instruct', 'moonshotai/Kimi-K2-Instruct-0905', 'moonshotai/Kimi-K2-Thinking'),
       patterns=(r'kimi-k2',), template_markers=('<|tool_calls_section_begin|>',),
       token_markers=('<|tool_calls_section_begin|>', '<|tool_call_begin|>'), model_types=('kimi_k2',)),
    _f('MiniMax M3', 'minimax-m3', 'minimax-m3', patterns=(r'minimax-m3',), template_markers=(']<]minimax[>[',)),
    _f('MiniMax M2 / M2.1 / M2.5', 'minimax-m2', 'minimax-m2',
       ids=('MiniMaxAI/MiniMax-M2', 'MiniMaxAI/MiniMax-M2.1', 'MiniMaxAI/MiniMax-M2.5'), patterns=(r'minimax-m2',),
       template_markers=('<minimax:tool_call>',), model_types=('minimax_m2',)),
    _f('Magistral 2506', 'deepseek-v3', 'mistral', ids=('mistralai/Magistral-Small-2506',),
       patterns=(r'magistral.*2506',), note='writes <think> as text'),
    _f('Magistral (2507 and later)', 'mistral', 'mistral',
       ids=('mistralai/Magistral-Small-2507', 'mistralai/Magistral-Small-2509', 'mistralai/Magistral-Medium-2509'),
       patterns=(r'magistral',), template_markers=('[TOOL_CALLS]', '[THINK]'),
       token_markers=('[TOOL_CALLS]', '[THINK]')),
    _f('Mistral / Mixtral / Nemo / Small 3.x / Devstral', None, 'mistral',
       ids=('mistralai/Mistral-7B-Instruct-v0.3', 'mistralai/Mixtral-8x7B-Instruct-v0.1',
            'mistralai/Mistral-Nemo-Instruct-2407', 'mistralai/Mistral-Small-3.1-24B-Instruct-2503',
            'mistralai/Mistral-Small-3.2-24B-Instruct-2506', 'mistralai/Devstral-Small-2505'),
       patterns=(r'mistral', r'mixtral', r'devstral', r'ministral', r'codestral'),
       template_markers=('[TOOL_CALLS]',), token_markers=('[TOOL_CALLS]',), model_types=('mistral', 'mixtral')),
    _f('Llama 3.2 lightweight (pythonic)', None, 'pythonic',
       ids=('meta-llama/Llama-3.2-1B-Instruct', 'meta-llama/Llama-3.2-3B-Instruct'), patterns=(r'llama-3\.2-[13]b',)),
    _f('Llama 4', None, 'llama4_pythonic',
       ids=('meta-llama/Llama-4-Scout-17B-16E-Instruct', 'meta-llama/Llama-4-Maverick-17B-128E-Instruct'),
       patterns=(r'llama-4',), template_markers=('<|python_start|>',), token_markers=('<|python_start|>',),
       model_types=('llama4',), note='llama4_json if your system prompt asks for JSON calls'),
    _f('Llama 3.1 / 3.3 (JSON calls)', None, 'llama3_json',
       ids=('meta-llama/Llama-3.1-8B-Instruct', 'meta-llama/Llama-3.1-70B-Instruct',
            'meta-llama/Llama-3.3-70B-Instruct'),
       patterns=(r'llama-3\.[13]', r'llama-3-'), template_markers=('<|python_tag|>',),
       token_markers=('<|python_tag|>', '<|eom_id|>'),
       note='Llama 3.2 1B/3B are pythonic: --tool-parser pythonic'),
    _f('Gemma 4', 'gemma4', 'gemma4', patterns=(r'gemma-4',), template_markers=('<|tool_call>', 'call:'),
       token_markers=('<|tool_call>', '<tool_call|>'), model_types=('gemma4',)),
    _f('Granite 3.0 / 3.1', None, 'granite',
       ids=('ibm-granite/granite-3.0-8b-instruct', 'ibm-granite/granite-3.1-8b-instruct'),
       patterns=(r'granite-3\.[01]',), template_markers=('<|tool_call|>',), token_markers=('<|tool_call|>',)),
    _f('Granite 3.2 / 3.3', 'granite', 'granite',
       ids=('ibm-granite/granite-3.2-8b-instruct', 'ibm-granite/granite-3.3-8b-instruct'),
       patterns=(r'granite-3\.[23]',), template_markers=('<|tool_call|>', 'Here is my thought process:')),
    _f('Granite 4.2 (thinking)', 'granite_thinking_parser', 'qwen3coder', patterns=(r'granite-4\.2',)),
    _f('Granite 4.0', None, 'granite4',
       ids=('ibm-granite/granite-4.0-h-small', 'ibm-granite/granite-4.0-h-tiny', 'ibm-granite/granite-4.0-micro'),
       patterns=(r'granite-4\.0',), template_markers=('<tool_call>', '</tool_call>', '<|start_of_role|>')),
    _f('Granite-20B-FunctionCalling', None, 'granite-20b-fc', ids=('ibm-granite/granite-20b-functioncalling',),
       patterns=(r'granite-20b-function',), template_markers=('<function_call>',)),
    _f('Phi-4-mini', None, 'phi4_mini_json', ids=('microsoft/Phi-4-mini-instruct',), patterns=(r'phi-4-mini',),
       template_markers=('functools[',)),
    _f('Salesforce xLAM-2', None, 'xlam', ids=('Salesforce/Llama-xLAM-2-8b-fc-r', 'Salesforce/xLAM-2-32b-fc-r'),
       patterns=(r'xlam',)),
    _f('AI21 Jamba 1.5+', None, 'jamba', ids=('ai21labs/AI21-Jamba-Mini-1.6', 'ai21labs/AI21-Jamba-Large-1.6'),
       patterns=(r'jamba',)),
    _f('Apertus (Swiss AI)', 'apertus2509', 'apertus',
       ids=('swiss-ai/Apertus-8B-Instruct-2509', 'swiss-ai/Apertus-70B-Instruct-2509'), patterns=(r'apertus',),
       template_markers=('<|tools_prefix|>', '<|inner_prefix|>'), token_markers=('<|tools_prefix|>',)),
    _f('GigaChat 3.5', 'gigachat35', 'gigachat35', patterns=(r'gigachat-?3\.5',)),
    _f('GigaChat 3 / 3.1', None, 'gigachat3',
       ids=('ai-sage/GigaChat3-10B-A1.8B', 'ai-sage/GigaChat3-702B-A36B-preview'), patterns=(r'gigachat-?3',),
       template_markers=('<|role_sep|>', '<|message_sep|>', 'function call')),
    _f('dots.llm1', 'dots', 'dots', ids=('rednote-hilab/dots.llm1.inst',), patterns=(r'dots\.llm',)),
    _f('Cohere Command A Reasoning and later (Command 4)', 'cohere_command4', 'cohere_command4',
       ids=('CohereLabs/command-a-reasoning-08-2025',), patterns=(r'command-a-reasoning',),
       template_markers=('<|START_ACTION|>', '<|START_THINKING|>', '<|START_TEXT|>')),
    _f('Cohere Command R7B, Command A', 'cohere_command3', 'cohere_command3',
       ids=('CohereLabs/c4ai-command-r7b-12-2024', 'CohereLabs/c4ai-command-a-03-2025'),
       patterns=(r'command-r7b', r'command-a'), template_markers=('<|START_ACTION|>', '<|START_RESPONSE|>')),
    _f('ERNIE 4.5 Thinking', 'ernie45', 'ernie45', ids=('baidu/ERNIE-4.5-21B-A3B-Thinking',),
       patterns=(r'ernie-4\.5.*thinking',)),
    _f('ERNIE 4.5', None, 'ernie45', ids=('baidu/ERNIE-4.5-21B-A3B-PT', 'baidu/ERNIE-4.5-300B-A47B-PT'),
       patterns=(r'ernie-4\.5',), note='the Thinking models also take --reasoning-parser ernie45'),
    _f('Hunyuan-A13B', 'hunyuan_a13b', 'hunyuan_a13b', ids=('tencent/Hunyuan-A13B-Instruct',),
       patterns=(r'hunyuan-a13b',)),
    _f('Hy3 / HY v3', 'hy_v3', 'hy_v3', ids=('tencent/Hy3',), patterns=(r'\bhy-?v?3\b',),
       token_markers=('<tool_sep:opensource>', '<think:opensource>')),
    _f('HY v4', 'hy_v4', 'hy_v4', patterns=(r'\bhy-?v?4\b',)),
    _f('LongCat-Flash Thinking', 'longcat', 'longcat', ids=('meituan-longcat/LongCat-Flash-Thinking',),
       patterns=(r'longcat-flash-thinking',), template_markers=('<longcat_tool_call>', '<longcat_think>')),
    _f('LongCat-Flash Chat', None, 'longcat', ids=('meituan-longcat/LongCat-Flash-Chat',), patterns=(r'longcat',),
       template_markers=('<longcat_tool_call>',)),
    _f('MiMo', 'mimo', 'mimo', ids=('XiaomiMiMo/MiMo-V2-Flash',), patterns=(r'mimo',)),
    _f('FunctionGemma', None, 'functiongemma', ids=('google/functiongemma-270m-it',), patterns=(r'functiongemma',)),
    _f('Kimi-VL-Thinking', 'kimi', None, ids=('moonshotai/Kimi-VL-A3B-Thinking-2506',),
       patterns=(r'kimi-vl.*thinking',), template_markers=('◁think▷',), token_markers=('◁think▷', '◁/think▷')),
    _f('NVIDIA Nemotron 3', 'nemotron_v3', 'qwen3coder', ids=('nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16',),
       patterns=(r'nemotron-3',)),
    _f('H Company Holo2', 'holo2', None, patterns=(r'holo2',)),
    _f('K2 Horizon (MBZUAI IFM)', 'k2_horizon', 'k2_horizon', patterns=(r'k2-horizon',),
       template_markers=('<ifm|tool_calls>',), token_markers=('<ifm|tool_calls>', '<ifm|think>')),
    _f('Arcee Trinity', 'default', 'trinity', ids=('arcee-ai/Trinity-Mini',), patterns=(r'trinity',)),
    _f('Nanbeige 4.2', 'nanbeige', 'nanbeige', patterns=(r'nanbeige',)),
    _f('IQuest Q1', 'iquest_q1', 'iquest_q1', patterns=(r'iquest',), template_markers=('<iquest_tool_call>',)),
    # No public checkpoint ids; the engines' names (vLLM musespark1x / muse_glimmer) give the model names.
    _f('Muse Glimmer', 'muse_glimmer', 'muse_glimmer', patterns=(r'muse[-_ ]?glimmer',)),
    _f('Muse Spark', 'muse', 'muse', patterns=(r'muse[-_ ]?spark',)),
    _f('Spark 2.5', None, 'spark25', patterns=(r'spark-?2\.5',)),
    _f('Inkling', 'inkling', 'inkling', patterns=(r'inkling',),
       template_markers=('<|message_model|>', '<|content_invoke_tool_json|>')),
    _f('Seed-OSS', 'seed-oss', 'seed-oss', ids=('ByteDance-Seed/Seed-OSS-36B-Instruct',), patterns=(r'seed-oss',),
       template_markers=('<seed:tool_call>',), token_markers=('<seed:tool_call>', '<seed:think>'),
       model_types=('seed_oss',)),
    # Step-3.5 / 3.7 before Step-3: '\b' after the 3 also matches 'step-3.5'.
    _f('Step-3.5 / Step-3.7', 'step3p5', 'step3p5', patterns=(r'step-?3[.p][57]',)),
    _f('Step-5', 'step5', 'step5', patterns=(r'step-?5\b',)),
    _f('Step-3', 'step3', 'step3', patterns=(r'step-?3\b',), template_markers=('<steptml:invoke',)),
    _f('Ling 3', 'ling3', 'ling3', patterns=(r'\bling-?3',)),
    _f('poolside v1 (Laguna)', 'poolside_v1', 'poolside_v1', patterns=(r'laguna', r'poolside')),
    _f('LFM2 / LFM2.5', None, 'lfm2', patterns=(r'lfm-?2',), token_markers=('<|tool_call_start|>', '<|tool_call_end|>')),
    _f('PLaMo 3', 'plamo3', 'plamo3', patterns=(r'plamo-?3',),
       template_markers=('<|plamo:begin_tool_requests:plamo|>',)),
    _f('MiniCPM-V 4.x', 'minicpmv', 'qwen3coder', patterns=(r'minicpm-?[vo]',)),
    _f('MiniCPM 5', None, 'minicpm5', patterns=(r'minicpm-?5',)),
    _f('OLMo 3', 'olmo3', 'olmo3', patterns=(r'olmo-?3',)),
)

_NameIndex = tuple[dict[str, ModelFamily], list[tuple[re.Pattern[str], ModelFamily]]]
_name_index_for: list[tuple[tuple[ModelFamily, ...], _NameIndex]] = []


def _name_index() -> _NameIndex:
    """Exact ids and compiled name patterns of FAMILIES, built on the first lookup (not at ``import lmparse``)."""
    if not _name_index_for or _name_index_for[0][0] is not FAMILIES:
        ids = {m.lower(): fam for fam in FAMILIES for m in fam.ids}
        patterns = [(re.compile(p, re.IGNORECASE), fam) for fam in FAMILIES for p in fam.patterns]
        _name_index_for[:] = [(FAMILIES, (ids, patterns))]
    return _name_index_for[0][1]


def _result(model: str, fam: ModelFamily, matched_by: str) -> ModelParsers:
    return ModelParsers(model, fam.name, fam.reasoning_parser, fam.tool_parser, fam.response_parser, matched_by,
                        fam.note)


def _by_name(name: str) -> tuple[ModelFamily, str] | None:
    key = name.strip().strip('/').lower()
    ids, patterns = _name_index()
    if key in ids:
        return ids[key], 'model id'
    base = key.rsplit('/', 1)[-1]
    for pattern, fam in patterns:
        if pattern.search(base):
            return fam, f'name pattern /{pattern.pattern}/'
    return None


def _best(found: list[ModelFamily], what: str) -> ModelFamily | None:
    """The most specific family; two different parser sets equally specific are ambiguous."""
    if not found:
        return None
    def weight(f: ModelFamily) -> tuple[int, int]:
        markers = f.template_markers if what == 'template' else f.token_markers
        return len(markers), sum(map(len, markers))
    top = max(map(weight, found))
    best = [f for f in found if weight(f) == top]
    if len({(f.reasoning_parser, f.tool_parser, f.response_parser) for f in best}) > 1:
        raise _Ambiguous([f.name for f in best], what)
    return best[0]


class _Ambiguous(Exception):
    def __init__(self, names: list[str], what: str) -> None:
        self.names = names
        self.what = what


def _template_texts(folder: Path, tok_config: dict[str, Any]) -> str:
    parts: list[str] = []
    ct = tok_config.get('chat_template')
    if isinstance(ct, str):
        parts.append(ct)
    elif isinstance(ct, list):  # named templates: [{"name": "default", "template": "..."}, ...]
        parts += [t['template'] for t in ct if isinstance(t, dict) and isinstance(t.get('template'), str)]
    jinja = folder / 'chat_template.jinja'
    if jinja.is_file():
        parts.append(jinja.read_text(encoding='utf-8', errors='replace'))
    doc = _read_json(folder / 'chat_template.json')
    if isinstance(doc.get('chat_template'), str):
        parts.append(doc['chat_template'])
    return '\n'.join(parts)


def _vocabulary_specials(folder: Path, tok_config: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    decoder = tok_config.get('added_tokens_decoder')
    if isinstance(decoder, dict):
        found |= {v['content'] for v in decoder.values() if isinstance(v, dict) and isinstance(v.get('content'), str)}
    added = _read_json(folder / 'tokenizer.json').get('added_tokens')
    if isinstance(added, list):
        found |= {t['content'] for t in added if isinstance(t, dict) and isinstance(t.get('content'), str)}
    extra = tok_config.get('additional_special_tokens')
    if isinstance(extra, list):
        found |= {t for t in extra if isinstance(t, str)}
    return found


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _from_folder(model: str, folder: Path) -> ModelParsers:
    tok_config = _read_json(folder / 'tokenizer_config.json')
    config = _read_json(folder / 'config.json')
    if isinstance(tok_config.get('response_template'), dict):
        # The tokenizer describes its own output format: the generic parsers read it (lmparse.dialects.response_template).
        return ModelParsers(model, 'response_template in tokenizer_config.json', 'hf', 'hf', 'default',
                            'tokenizer_config.json response_template',
                            'pass the tokenizer: with_parsers("hf", "hf", tokenizer)')
    template = _template_texts(folder, tok_config)
    ambiguous: list[str] = []
    if template:
        try:
            fam = _best([f for f in FAMILIES if f.template_markers
                         and all(m in template for m in f.template_markers)], 'template')
        except _Ambiguous as err:
            ambiguous, fam = err.names, None
        if fam is not None:
            return _result(model, fam, 'chat template markers')
    for name in (config.get('_name_or_path'), tok_config.get('name_or_path'), folder.resolve().name):
        if isinstance(name, str) and name and (hit := _by_name(name)) is not None:
            return _result(model, hit[0], f'{hit[1]} on {name!r}')
    model_type = config.get('model_type')
    if isinstance(model_type, str):
        types = [f for f in FAMILIES if model_type in f.model_types]
        if len(types) == 1:
            return _result(model, types[0], f'config.json model_type {model_type!r}')
        ambiguous += [f.name for f in types]
    specials = _vocabulary_specials(folder, tok_config)
    if specials:
        try:
            fam = _best([f for f in FAMILIES if f.token_markers and all(m in specials for m in f.token_markers)],
                        'vocabulary')
        except _Ambiguous as err:
            ambiguous, fam = ambiguous + err.names, None
        if fam is not None:
            return _result(model, fam, 'special tokens of the vocabulary')
    derived, why = _derived(model, folder) if template else (None, '')
    if derived is not None:
        return derived
    if ambiguous:
        raise UnknownModelError(model, list(dict.fromkeys(ambiguous)), 'its markers fit more than one family' + why)
    if not (tok_config or config or template):
        raise UnknownModelError(model, [], 'the folder has no tokenizer_config.json, config.json or chat template')
    raise UnknownModelError(model, _closest(folder.resolve().name), 'no known tool-call or thinking markers' + why)


def _derived(model: str, path: Path) -> tuple[ModelParsers | None, str]:
    """No table row fits: the dialect derived from the chat template (proved by round trip), or why there is none."""
    from lmparse.templates import TemplateDerivationError, derive_dialect

    try:
        dialect = derive_dialect(path)
    except (TemplateDerivationError, ImportError) as err:
        return None, f'; no dialect derived from its chat template: {err}'
    what = ' and '.join(part for part, cls in (('reasoning', dialect.reasoning_parser),
                                                ('tool calls', dialect.tool_parser)) if cls is not None)
    family = f'derived from the chat template ({what} on {dialect.tools.base.__name__})' if dialect.tools \
        else f'derived from the chat template ({what})'
    if getattr(dialect, 'response_parser_cls', None) is not None:
        family = 'derived from the chat template (reasoning and tool calls on HarmonyResponseParser)'
    return ModelParsers(model, family, None, None, 'default', 'no table row; derived from the chat template and '
                        f'proved on {dialect.renderings} of its renderings',
                        '; '.join(dialect.notes), chat_template=str(path)), ''


def _closest(name: str, n: int = 3) -> list[str]:
    base = name.strip().strip('/').rsplit('/', 1)[-1].lower()
    by_base: dict[str, str] = {}
    for fam in FAMILIES:
        for m in fam.ids:
            by_base.setdefault(m.rsplit('/', 1)[-1].lower(), m)
    return [by_base[b] for b in difflib.get_close_matches(base, list(by_base), n=n, cutoff=0.4)]


def readme_table() -> str:
    """The README's "Which parsers for my model" table rows, one per family (kept equal by a test)."""
    rows = []
    for fam in FAMILIES:
        assert '|' not in ''.join(fam.patterns), fam.name  # a table cell
        ids = ', '.join(f'`{i}`' for i in fam.ids[:2]) or 'names with ' + ', '.join(f'`{p}`' for p in fam.patterns)
        reasoning = f'`{fam.reasoning_parser}`' if fam.reasoning_parser else '—'
        tool = f'`{fam.tool_parser}`' if fam.tool_parser else '—'
        if fam.response_parser != 'default':
            reasoning = f'— (`--response-parser {fam.response_parser}`)'
        rows.append(f'| {fam.name} | {ids} | {reasoning} | {tool} |')
    return '\n'.join(rows)


def parsers_for_model(model: str | os.PathLike[str]) -> ModelParsers:
    """The response, reasoning and tool parser names for a Hugging Face model id or a local model folder.

    Raises :class:`UnknownModelError` (a LookupError) when lmparse does not
    know the model; its ``candidates`` are the closest known model ids or the
    families the evidence fits equally.
    """
    text = os.fspath(model)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f'expected a model id or a folder, got {model!r}')
    folder = Path(text).expanduser()
    if folder.is_dir():
        return _from_folder(text, folder)
    if folder.is_file():  # a chat template (.jinja) or tokenizer_config.json: derive
        derived, why = _derived(text, folder)
        if derived is None:
            raise UnknownModelError(text, [], why.removeprefix('; '))
        return derived
    hit = _by_name(text)
    if hit is None:
        raise UnknownModelError(text, _closest(text))
    return _result(text, hit[0], hit[1])
