"""Type stub for the compiled ``lmparse.tools.json_declarations`` module (C-level only: nothing public from Python)."""
