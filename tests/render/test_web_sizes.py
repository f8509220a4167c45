"""The page's JavaScript (render/web/): each file of our own at most 500 lines, each of them
in the page.

Skipped, by name: the third-party code vendored there unchanged, three.js r181 (npm three
0.181.0: its build and the addons the page imports) and meshoptimizer's decoder that ships
with it. Not an exceptions list for our code: each is checked to be upstream's file byte for
byte (three.js's addons carry no header of their own, so by its SHA-256), and one edited here
fails this test. Updating three.js re-pins them (``sha256sum``), as it re-checks page.py's
renames of their sibling imports.
"""

from __future__ import annotations

import hashlib

from neurok_cli.render.page import OWN, VENDORED, WEB

MOST_LINES = 500  # the project's limit on a JavaScript file of our own
VENDORED_SHA256 = {  # file -> upstream's, and where upstream keeps it
    "three.core.min.js": ("295a28f4a9786dd24a2a357a4ce90921eb041127e53a508335b9a0556c1e0875",
                          "three/build/three.core.min.js"),
    "three.module.min.js": ("ff29585116898cc56ddeb871764f2c8edf02cc2ca5b7521056f332d11053b799",
                            "three/build/three.module.min.js"),
    "GLTFLoader.js": ("a2d45c28c56774cc789b99154e914c34db3197f9ea2b89fee27600cc2509b14f",
                      "three/examples/jsm/loaders/GLTFLoader.js"),
    "BufferGeometryUtils.js": ("fda7e946b8e0b5ab39b779206589e7a1079a22eb24efb89d7223e03fdfb1f751",
                               "three/examples/jsm/utils/BufferGeometryUtils.js"),
    "OrbitControls.js": ("e1cdf5833c6e0aa095bd1a4f67dffe68f35677a992e1fb26fe374b5b759ce267",
                         "three/examples/jsm/controls/OrbitControls.js"),
    "meshopt_decoder.module.js": (
        "784315b6959c85459eab77f51776158cc381d7e7d77b919ff7c4935f088a7c5c",
        "three/examples/jsm/libs/meshopt_decoder.module.js"),
}


def _scripts():
    return sorted(p for p in WEB.rglob("*") if p.suffix in (".js", ".mjs") and p.is_file())


def test_the_vendored_files_are_upstream_s_unchanged():
    assert set(VENDORED.values()) == set(VENDORED_SHA256)
    for name, (sha, upstream) in VENDORED_SHA256.items():
        got = hashlib.sha256((WEB / name).read_bytes()).hexdigest()
        assert got == sha, (f"render/web/{name} is not {upstream} of npm three 0.181.0 (sha256 "
                            f"{got}): vendored code is not edited here")


def test_no_javascript_file_of_our_own_exceeds_500_lines():
    ours = [p for p in _scripts()
            if not (p.parent == WEB and p.name in VENDORED_SHA256)]
    assert len(ours) >= len(OWN) + 1  # (the page's modules and page.js: the search found them)
    long = {str(p.relative_to(WEB)): n for p in ours
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MOST_LINES}
    assert not long, f"render/web/: over {MOST_LINES} lines (split by concern): {long}"


def test_the_page_holds_each_module_of_our_own():
    """Each of our files is page.js (inline) or a module the page's import map names."""
    ours = {str(p.relative_to(WEB)) for p in _scripts()} - set(VENDORED.values())
    assert ours == set(OWN.values()) | {"page.js"}
