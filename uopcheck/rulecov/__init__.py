"""Rule coverage: which PatternMatcher rules fired during a run, and which never did (like coverage.py, for rules).
Split as coverage.py is: ``collect`` (tinygrad's match statistics -> hits per rule id), ``data`` (one data file per
process, combined), ``report`` (the per-rule report as a ``Result`` for the renderers, plus the annotated-source HTML and
LCOV), ``plugin`` (``pytest --rule-cov``). ``uopcheck coverage -- CMD`` wraps any command.
Standard library only at import: the plugin loads before tinygrad."""
from uopcheck.rulecov.collect import MODULES, enable, rules, hits
from uopcheck.rulecov.data import write_data, data_files, combine, record_at_exit
from uopcheck.rulecov.report import report, result, term, write_html, write_lcov, write_reports, KINDS

__all__ = ["MODULES", "enable", "rules", "hits", "write_data", "data_files", "combine", "record_at_exit", "report", "result", "term",
           "write_html", "write_lcov", "write_reports", "KINDS"]
