"""How many examples a property test draws under the loaded hypothesis profile (dev / ci / nightly, uopcheck/settings.py):
a test states its count for ci; dev draws a quarter of it, nightly ten times."""
from hypothesis import settings

def examples(n:int) -> int:
  assert settings.default is not None   # hypothesis always has a current profile
  return max(1, round(n * settings.default.max_examples / 100))
