"""codegraph: definitions and references (callers) of a symbol, from real parsers.

Tree-sitter grammars from PyPI for Python, JavaScript, TypeScript/TSX and Go (`languages`), one
file's analysis (`scan`), and the two executors over a tree (`tools`).
"""

from yagent.tools.codegraph.tools import find_definitions, find_references

__all__ = ["find_definitions", "find_references"]
