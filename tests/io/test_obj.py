"""The OBJ reader: whole-array conversion and the line-by-line reader agree exactly."""

from pathlib import Path

import numpy as np
import pytest

from neurok_cli.errors import InputError
from neurok_cli.io.obj import _parse_line_by_line, parse_obj

FILES = {
    "v/vt/vn, materials, polygons, counting back": (
        "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1 0.5 0.5 0.5\nvt 0 0\nvt 1 0 0\n"
        "vt 0 1\nvn 0 0 1\nvn 1 0 0\nusemtl a\nf 1/1/1 2/2/1 3/3/2\nusemtl b x\n"
        "f 1/1/1 3/3/2 4/2/2 2/1/1\nusemtl a\nf -1/-1/-1 -2/-2/-2 -3/-3/-2\n"),
    "v//vn, vertices after faces": "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1\n"
                                   "v 1 1 1\r\nf 4//1 2//1 -4//1\n",
    "v/vt, tabs": "v 0 0 0\nv 1 0 0\n\tv 0 1 0\nvt 0 0\nf  1/1\t2/1 3/1\n",
    "mixed corner formats": "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\nf 1/1 2//1 3/1/1\n",
    "one-number uv": "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0.5\nf 1/1 2/1 3/1\n",
    "whole text: v/vt/vn, quads, comments, groups, CRLF, no final newline": (
        "# made by hand \u00e9\r\nmtllib  my lib.mtl \r\no thing\r\nv 0 0 0\r\n"
        "v 1e0 0 0\r\nv 0 1 0\r\nv 1 1 -0.5\r\nvt 0 0\r\nvt 1 0\r\nvt 0 1\r\n"
        "vn 0 0 1\r\ng part\r\ns off\r\nf 1/1/1 2/2/1 4/3/1 3/1/1\r\n"
        "f 1/1/1 3/3/1 2/2/1"),
    "whole text: positions only, tabs and blank lines": (
        "v\t0 0 0\nv 1\t0 0\n\nv 0 1 0\nv 0 0 1\n#\nf 1 2 3\nf\t1  3 4\n\n"),
    "whole text: v//vn": "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1\n",
    "whole text: v/vt, a pentagon": (
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv -1 0.5 0\nvt 0 0\nvt 1 1\n"
        "f 1/1 2/2 3/1 4/2 5/1\n"),
    "three-number uvs": "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0 0\nf 1/1 2/1 3/1\n",
    "vertex colours": "v 0 0 0 1 0 0\nv 1 0 0 0 1 0\nv 0 1 0 0 0 1\nf 1 2 3\n",
    "a line record": "v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2\nf 1 2 3\n",
}
BAD = {
    "a vertex defined after its face": ("v 0 0 0\nv 1 0 0\nf 1 2 3\nv 0 1 0\n", ":3: face "
                                        "refers to vertex 3, but only 2"),
    "index 0": ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0\n", ":4: face refers to vertex 0"),
    "a bad number": ("v 0 0 0\nv 1 0 x\nv 0 1 0\nf 1 2 3\n", ":2: bad number"),
    "numbers that add up across lines": ("v 0 0 0 0\nv 1 0\nv 0 1 0\nf 1 2 3\n",
                                         "too few numbers"),
    "four fields": ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1/1/1 2/1/1/1 3/1/1/1\nvt 0 0\nvn 0 0 1\n",
                    ":4: face refers to texture coordinate 1"),
}


@pytest.mark.parametrize("case", sorted(FILES))
def test_whole_array_reading_is_the_line_by_line_reading(tmp_path, case):
    path = tmp_path / "m.obj"
    path.write_bytes(FILES[case].encode())
    fast, slow = parse_obj(path), _parse_line_by_line(path, path.read_text())
    for a, b in zip(fast[:3], slow[:3]):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert list(fast[3]) == list(slow[3]) and fast[4] == slow[4]
    for name in fast[3]:
        assert np.array_equal(fast[3][name], slow[3][name])
    assert sum(len(t) for t in fast[3].values()) > 0


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_mistake_names_its_line(tmp_path, case):
    text, needle = BAD[case]
    path = tmp_path / "m.obj"
    path.write_text(text)
    with pytest.raises(InputError, match=needle):
        parse_obj(Path(path))


@pytest.mark.parametrize("case", sorted(c for c in FILES if c.startswith("whole text")))
def test_the_commonest_files_are_read_from_the_whole_text(tmp_path, case):
    """They take the fast reader (regular files: one material, positive indices)."""
    from neurok_cli.io.obj import _whole_text

    assert _whole_text(FILES[case]) is not None


@pytest.mark.parametrize("case", ["v/vt/vn, materials, polygons, counting back",
                                  "v//vn, vertices after faces", "v/vt, tabs",
                                  "three-number uvs", "vertex colours", "a line record"])
def test_any_other_file_is_left_to_the_other_readers(case):
    from neurok_cli.io.obj import _whole_text

    assert _whole_text(FILES[case]) is None
