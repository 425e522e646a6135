"""Cards sized for a phone, without a browser: a front of at most 60 words, a back that shows the answer
first, then at most 6 lines of working with the full working in a fold, and each mistake named once.

The heights at 390 px in Chromium are in test_card_phone.py (slow).
"""

import html
import re
from html.parser import HTMLParser

import pytest

from drills.cmd_generate import card_rules
from generator.problems import generate as gen
from generator.export import anki, card
from generator.export.variants import skill_notes

MAX_FRONT_WORDS = 60


def _notes():
    reg = gen.registry()
    # every chip (a chip's name and figures are in its prompts) and every lab case of miss_reason
    problems = reg.generate(None, None, 3, 0) + reg.generate(["miss_reason"], None, 16, 0)
    return skill_notes(problems, card_rules(), reg.by_id, 3)


NOTES = _notes()


class _Shown(HTMLParser):
    """The words a side shows with its folds closed: a <details>' text but its <summary> is left out."""

    def __init__(self):
        super().__init__()
        self.words: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.open.append(tag)

    def handle_endtag(self, tag):
        while self.open and self.open.pop() != tag:
            pass

    def handle_data(self, data):
        if "details" not in self.open or self.open[-1] == "summary":
            self.words += data.split()


def front_words(note, i: int) -> int:
    """Variant ``i``'s front as a reader sees it, the script's "checked on the back" included."""
    block = card.front_html(note).split('<div class="rk-v" ')[i + 1].split(">", 1)[1]
    shown = _Shown()
    shown.feed(block)
    return len(shown.words)


def test_every_front_is_at_most_60_words():
    families = {n.family for n in NOTES}
    assert len(families) >= 16
    over = [(n.skill, i, front_words(n, i), v.problem.prompt) for n in NOTES for i, v in enumerate(n.variants)
            if front_words(n, i) > MAX_FRONT_WORDS]
    assert not over, over[:3]


def test_the_word_count_counts_a_long_prompt():
    note = NOTES[0]
    long = note.variants[0].problem.__class__(**{**note.variants[0].problem.__dict__, "prompt": "word " * 61})
    changed = note.__class__(**{**note.__dict__, "variants": (note.variants[0].__class__(
        **{**note.variants[0].__dict__, "problem": long}),)})
    assert front_words(changed, 0) > MAX_FRONT_WORDS


def _back_parts(note):
    back = card.back_html(note, anki.answer_html, anki.solution_html, {})
    blocks = back.split('<div class="rk-v" ')[1:]
    k = len(note.variants)
    return back, blocks[:k], blocks[k:]


@pytest.mark.parametrize("family", sorted({n.family for n in NOTES}))
def test_the_back_shows_the_answer_then_the_verdict_then_six_lines_and_a_fold(family):
    for note in (n for n in NOTES if n.family == family):
        back, answers, workings = _back_parts(note)
        k = len(note.variants)
        assert len(answers) == len(workings) == k
        assert back.index('class="rk-answer"') < back.index('class="rk-verdict"') < back.index('class="rk-solution"')
        for v, answer, working in zip(note.variants, answers, workings):
            assert anki.answer_html(v.problem) in answer
            short = re.search(r'<ol class="rk-short">(.*?)</ol>', working).group(1)
            assert 1 <= short.count("<li>") <= anki.SHORT_LINES, (v.problem.id, short)
            fold = re.search(r'<details class="rk-full"><summary>full working</summary>(.*)</details>', working)
            assert fold, working[:300]
            text = html.unescape(re.sub(r"<[^>]+>", "", fold.group(1).replace("<br>", "\n")))
            for step in v.problem.solution:  # the full working keeps every step (sources: the file's name)
                assert step.rsplit("/", 1)[-1][:40] in text or ".json" in step, (v.problem.id, step)


def test_the_short_working_ends_on_the_result_and_drops_the_numbers_put_in():
    p = next(v.problem for n in NOTES if n.skill == "transformer_step:v5e:seed-7b-prefill" for v in n.variants)
    short = anki.short_working(p)
    assert len(p.solution) > anki.SHORT_LINES and len(short) == anki.SHORT_LINES
    assert short[-1].startswith("floor") and short[0].startswith("FLOPs")
    assert all("[" not in line and line.count(" = ") <= 2 for line in short), short


def test_a_mistake_is_named_once():
    """"186 µs: X (X gives 186 µs)" says X twice: the step is kept only where it says more than the name."""
    checked = 0
    for note in NOTES:
        for v in note.variants:
            for item in re.findall(r"<li>(.*?)</li>", anki.mistakes_html(v.problem, v.wrong)):
                text = html.unescape(re.sub(r"<small>.*?</small>", "", item))
                for w in v.wrong:
                    name = w.misconception.name
                    if name in text:
                        assert text.count(name) == 1, text
                        checked += 1
    assert checked > 500
    w = next(w for n in NOTES for v in n.variants for w in v.wrong)
    assert anki._repeats(w.misconception.name, f"{w.misconception.name} gives 186 µs", "186 µs")
    assert not anki._repeats(w.misconception.name, "bytes = 8193 (elements) instead of 16386 B", "0.9999")
