"""Type stub for the compiled ``lmparse.tools.dsml_grammar`` module (C-level only: nothing public from Python)."""
