"""`drill site`: the Stage 0 course page as a static, offline site.

The page is built from the same sources as the rest of the tool: the chip
catalogue and op costs (exported as JSON by ``drills.site.data``), the chapter
text (``labs/stage-0/chapter.md``), the notebook's ``site:show`` cells and the
lab records in ``bench/`` (judged by ``labs.gate.verdict``). Pure Python, no jax.
"""
