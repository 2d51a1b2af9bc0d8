# SPDX-License-Identifier: MIT
#
# Sphinx configuration of accelsched's documentation:
#   sphinx-build -W -b html Documentation build/html
# (tests/docs runs exactly that, failing on any warning). Sphinx's own
# builders only: no extension, so that Debian's python3-sphinx is all it
# needs.
import os

_top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(_top, 'VERSION'), encoding='utf-8') as f:
    version = release = f.read().strip()

project = 'accelsched'
copyright = 'the accelsched authors'
master_doc = 'index'
source_suffix = '.rst'
exclude_patterns = []
highlight_language = 'none'
html_theme = 'alabaster'
html_show_sourcelink = False
# The tools' pages, also built by rst2man for man1 (Documentation/man/
# meson.build); here they are part of the HTML set.
man_pages = [
    ('man/accelctl.1', 'accelctl', 'inspect and control accelsched', [], 1),
    ('man/accel-run.1', 'accel-run', 'run a command script on a libaccel device', [], 1),
    ('man/accel-bench.1', 'accel-bench', 'accelsched benchmarks', [], 1),
]
