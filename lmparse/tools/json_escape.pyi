"""Type stub for the compiled ``lmparse.tools.json_escape`` module."""

__all__ = ['escape_json_string']

def escape_json_string(text: str, start: int = 0, end: int | None = None, quote: bool = True) -> str:
    """``json.dumps(text[start:end], ensure_ascii=False)`` (without quotes when ``quote`` is False)."""
