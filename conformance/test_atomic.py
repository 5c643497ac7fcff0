"""The one atomic write: the target is either the old file or the whole new one, never half, and no temp file is left."""
import pytest
from uopcheck.atomic import replacing, atomic_write, atomic_write_json

def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temp(tmp_path):
  p = tmp_path / "f.json"
  atomic_write_json(p, {"a": 1})
  with pytest.raises(RuntimeError):
    with replacing(p) as tmp:
      tmp.write_text('{"a": 2, "half')
      raise RuntimeError("killed")
  assert p.read_text() == '{\n "a": 1\n}' and [x.name for x in tmp_path.iterdir()] == ["f.json"]

def test_bytes_text_and_new_directories(tmp_path):
  assert atomic_write(tmp_path / "d" / "b.bin", b"\x00\x01").read_bytes() == b"\x00\x01"
  assert atomic_write(tmp_path / "t.txt", "x").read_text() == "x"
