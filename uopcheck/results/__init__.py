"""Results are objects, reports are renderers: a command builds one ``Result`` (``model``), and the renderers
(``render``: terminal, JSON, Markdown, HTML; ``ci``: JUnit, SARIF, GitHub annotations) turn it into what ``--report``
asks for. Standard library only."""
from uopcheck.results.model import Column, Table, Section, Result, Outcome, at_source
from uopcheck.results.render import Renderer, RENDERERS, DEFAULT_KINDS, parse_kinds, emit

__all__ = ["Column", "Table", "Section", "Result", "Outcome", "at_source", "Renderer", "RENDERERS", "DEFAULT_KINDS", "parse_kinds", "emit"]
