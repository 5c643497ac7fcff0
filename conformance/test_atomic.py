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

def test_a_writer_killed_mid_write_leaves_a_temp_that_remove_orphans_removes_alone(tmp_path):
  import subprocess, sys
  from uopcheck.atomic import remove_orphans
  target, other = tmp_path / "a[1].json", tmp_path / "b.json"
  atomic_write(target, "old")
  code = ("import sys, time; from uopcheck.atomic import replacing\n"
          "with replacing(sys.argv[1]) as t:\n  t.write_text('half'); print('in', flush=True); time.sleep(60)")
  p = subprocess.Popen([sys.executable, "-c", code, str(target)], stdout=subprocess.PIPE, text=True)
  assert p.stdout is not None and p.stdout.readline().strip() == "in"
  p.kill()
  p.wait()   # SIGKILL runs no finally: the temporary file stays
  with replacing(other) as t:   # another target's write in progress is not an orphan of ``target``
    t.write_text("b")
    left = sorted(x.name for x in tmp_path.iterdir() if x.suffix == ".tmp")
    assert len(left) == 2
    gone = remove_orphans(target)
    assert [g.name for g in gone] == [n for n in left if n.startswith(".a[1].json.")] and t.exists()
  assert target.read_text() == "old" and other.read_text() == "b" and not list(tmp_path.glob("*.tmp"))
