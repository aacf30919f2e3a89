"""Lean highlighting: the Pygments spans that change little on screen go, the code's text stays."""

from __future__ import annotations

import lxml.html

from perfblog.seo.highlight import lighten

CODE = (
    '<div class="highlight"><pre><span></span><code><span class="kn">import</span><span class="w"> </span>'
    '<span class="nn">torch</span>\n<span class="n">f</span> <span class="o">=</span> '
    '<span class="n">torch</span><span class="o">.</span><span class="n">compile</span>'
    '<span class="p">(</span><span class="n">g</span><span class="p">,</span> '
    '<span class="n">fullgraph</span><span class="o">=</span>'
    '<span class="kc">True</span><span class="p">)</span>  <span class="c1"># one graph</span>\n'
    '<span class="n">n</span> <span class="o">=</span> <span class="mi">3</span> <span class="ow">in</span> '
    '<span class="s2">"&lt;x&gt;"</span>\n</code></pre></div>'
)


def test_plain_spans_are_unwrapped_and_the_text_is_unchanged():
    lean = lighten(CODE)
    text = lxml.html.fragment_fromstring(CODE).text_content()
    assert lxml.html.fragment_fromstring(lean).text_content() == text
    for plain in ('class="n"', 'class="w"', 'class="p"', 'class="o"', 'class="kc"'):
        assert plain not in lean
    for kept in ('class="kn"', 'class="nn"', 'class="c1"', 'class="mi"', 'class="ow"', 'class="s2"'):
        assert kept in lean
    assert lean.count("<span") == 7  # of 23


def test_spans_outside_code_blocks_are_left_alone():
    prose = '<p>The value <span class="n">n</span> is <code><span class="p">(</span></code>.</p>'
    assert lighten(prose + CODE).startswith(prose)
