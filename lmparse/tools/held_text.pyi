"""Type stub for the compiled ``lmparse.tools.held_text`` module (C-level only: nothing public from Python)."""
