"""Reasoning protocol descriptors.

A reasoning "parser" here only describes the protocol (which tags delimit
reasoning, whether output starts inside it); the streaming work itself is
done by the compiled response parser. A dialect declares its tags and its
thinking switches as class attributes (see ``lmparse.dialects.deepseek``);
the compiled construction reads them once per class and reproduces
``cls(**kwargs)`` and ``starts_in_reasoning_mode()`` without Python calls
for classes that keep this class's methods.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from lmparse.registry import LEGACY_REASONING_PARSER_NAMES, ReasoningParserManager

__all__ = ['LEGACY_REASONING_PARSER_NAMES', 'ReasoningParser', 'ReasoningParserManager']


# Replaced (never mutated) whenever an attribute of a reasoning class is set or
# deleted: the compiled construction caches what a reasoning class resolves its
# methods and declarations to, and one identity compare against this token
# tells it nothing was patched since. Free-threaded builds: storing a list item
# is atomic and every store is a new object, so a reader sees either token.
_GENERATION: list[object] = [object()]


class ReasoningMeta(type):
    """The metaclass of :class:`ReasoningParser` and so of every reasoning class.

    A plain ``type`` except that assigning or deleting a class attribute
    (monkeypatching a method or a declaration) renews :data:`_GENERATION`.
    """

    if not TYPE_CHECKING:  # keep mypy's attribute checks on reasoning classes
        def __setattr__(cls, name, value):
            type.__setattr__(cls, name, value)
            _GENERATION[0] = object()

        def __delattr__(cls, name):
            type.__delattr__(cls, name)
            _GENERATION[0] = object()


# 'deepseek-r1' is also SGLang's name for this protocol (its DeepSeekR1Detector: output starts
# in reasoning, <think> / </think>); registered so it resolves in lmparse itself, while
# validate_parser_names still maps it, an LMDeploy legacy name, to 'default' with a warning.
@ReasoningParserManager.register_module(['default', 'deepseek-r1'])
class ReasoningParser(metaclass=ReasoningMeta):
    """Default ``<think>...</think>`` reasoning protocol.

    Registered as 'default'; the legacy names in
    :data:`LEGACY_REASONING_PARSER_NAMES` resolve to it.
    """

    reasoning_open_tag: ClassVar[str] = '<think>'
    reasoning_close_tag: ClassVar[str] = '</think>'
    # Request switches (chat template kwargs) copied onto the parser as
    # attributes. With none, output starts inside reasoning (templates commonly
    # put the open tag in the prompt); with some, only when one of them is True.
    thinking_switches: ClassVar[tuple[str, ...]] = ()
    # Request switches with a value instead of True: ((name, value), ...); output starts inside
    # reasoning when a chat template kwarg has one of them (MiniMax M3's thinking_mode="enabled").
    # Either kind of switch turns "always" off.
    thinking_values: ClassVar[tuple[tuple[str, Any], ...]] = ()
    # False when the model writes the open tag itself (the chat template never
    # puts it in the prompt): output then never starts inside reasoning,
    # whatever the switches say; the model's own open tag opens it.
    open_tag_in_prompt: ClassVar[bool] = True
    # The vocabulary entry an open tag written as several tokens starts with
    # (Gemma 4's '<|channel>' of '<|channel>thought\n'): the tokenizer check and
    # reasoning-token counting look it up instead of the whole tag. None: the tag.
    reasoning_open_token: ClassVar[str | None] = None
    # Channel markers that wrap the answer (Kimi K3's '<|open|>response<|sep|>'):
    # the router drops them wherever they occur in text outside tool blocks
    # (content and reasoning), whole only; a tool parser may declare them too.
    content_markers: ClassVar[tuple[str, ...]] = ()
    # Special-token pieces that start the dialect's markers written as several tokens (PLaMo 3's
    # '<|plamo:end_' of '<|plamo:end_think:plamo|>'): the model cannot write a piece as text, so a
    # held tag or marker prefix at the end of the output that starts with one is a marker the output
    # cut, dropped rather than released as text. A tool parser may declare them too.
    split_marker_pieces: ClassVar[tuple[str, ...]] = ()
    # False: the model never calls tools inside reasoning, so a tool-open tag there is
    # reasoning text (the tool parser may declare the same: either one turns it off).
    calls_in_reasoning: ClassVar[bool] = True
    # The tool-call open tag a model writes inside its reasoning without closing it first (Qwen3.5 /
    # Qwen3-Coder call tools straight from ``<think>``). With a tool parser that is a call inside
    # reasoning, as always; with none, under a response class that sets ``call_ends_reasoning``
    # (vLLM replace mode, as vLLM's Qwen3 parser reads it) the tag ends reasoning: it and all that
    # follows are content, as written, for the engine's own tool parser. None: no such tag.
    call_open_tag: ClassVar[str | None] = None
    # True: an output option, not a protocol: reasoning is kept inline in content with its
    # tags (``<think>…</think>answer``, the open tag written even when the prompt held it),
    # for clients that split reasoning themselves; tool calls are still extracted.
    inline_reasoning: ClassVar[bool] = False
    # (open, close): tags a model may write as plain text instead of the declared (special
    # token) tags, recognised only at the start of the output (after whitespace); when
    # found they delimit reasoning for the rest of the response. None: none.
    text_reasoning_tags: ClassVar[tuple[str, str] | None] = None
    # True: output that starts as content may begin with the close tag (the end of a reasoning block
    # the model left empty, MiniMax M3's stray ``</mm:think>``): there it is dropped, elsewhere text.
    drop_leading_close_tag: ClassVar[bool] = False
    # Characters the chat template writes after the close tag (Granite 4.2's ``</think>\n``):
    # dropped from the start of the content that follows it, up to its first other character.
    content_lead_strip: ClassVar[str] = ''
    # True: a complete response with no text after reasoning whose request sets
    # ``force_nonempty_content=True`` or ``enable_thinking=False`` gives its reasoning as the content
    # (vLLM's Nemotron V3 / Granite 4.2 swap). Complete responses only: streamed reasoning is sent.
    reasoning_as_missing_content: ClassVar[bool] = False

    def __init__(self, **kwargs: Any) -> None:
        # Subclasses read per-request switches (e.g. enable_thinking) from here.
        self.kwargs: dict[str, Any] = kwargs
        for name in type(self).thinking_switches:
            setattr(self, name, kwargs.get(name, None))

    @classmethod
    def get_reasoning_open_tag(cls) -> str:
        return cls.reasoning_open_tag

    @classmethod
    def get_reasoning_close_tag(cls) -> str:
        return cls.reasoning_close_tag

    def starts_in_reasoning_mode(self) -> bool:
        """Whether generation begins inside the reasoning block (see ``thinking_switches``)."""
        if not type(self).open_tag_in_prompt:
            return False
        switches = type(self).thinking_switches
        values = type(self).thinking_values
        if not switches and not values:
            return True
        return any(getattr(self, name, None) is True for name in switches) or any(
            name in self.kwargs and self.kwargs[name] == value for name, value in values)

    @classmethod
    def validate_tokenizer(cls, tokenizer: Any) -> None:
        """Fail fast at setup when the tokenizer lacks the reasoning tags."""
        vocab = tokenizer.get_vocab()
        missing = [tag for tag in (cls.reasoning_open_token or cls.get_reasoning_open_tag(),
                                   cls.get_reasoning_close_tag()) if tag not in vocab]
        if missing:
            raise RuntimeError(f'{cls.__name__} reasoning parser: reasoning tag(s) {missing!r} '
                               f'not found in the tokenizer vocabulary')

    @classmethod
    def token_ids(cls, tokenizer: Any) -> tuple[int | None, int | None]:
        """Vocab ids of the open and close tags (None when a tag is absent)."""
        vocab = tokenizer.get_vocab()
        return (vocab.get(cls.reasoning_open_token or cls.get_reasoning_open_tag()),
                vocab.get(cls.get_reasoning_close_tag()))
