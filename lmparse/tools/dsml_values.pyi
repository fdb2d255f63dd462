"""Type stub for the compiled ``lmparse.tools.dsml_values`` module (C-level only: nothing public from Python)."""
