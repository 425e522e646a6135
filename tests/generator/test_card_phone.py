"""Cards on a phone (slow): every card of the one-chip deck, every variant, rendered through Anki's own templates
in Chromium at 390 px wide (an iPhone's 390 x 844), is at most two screens tall, front and back, with the
"full working" fold closed; nothing overflows sideways; the back's verdict is one line; and a classic mistake
the verdict names is said once in what the back shows.

The deck, the reviewer and the browser are test_anki_variants' (Debian's Chromium through Playwright). The
tallest sides, and the tallest back with its fold open, are printed (`-s`), not claimed.
"""

import pytest

from tests.generator.test_anki_variants import T0, Reviewer, deck  # noqa: F401  (the imported deck fixture)
from tests.site.conftest import browser  # noqa: F401  (the module-scoped Chromium fixture)

pytestmark = pytest.mark.slow

PHONE = {"width": 390, "height": 844}
MAX_HEIGHT = 2 * PHONE["height"]

# Each variant shown in turn on the open side (the card's own show): the page's height and width, the verdict
# line's height against its line height, and how often the named mistake's name appears in the visible text
# (innerText leaves out a closed fold). ``opened``: the "full working" folds opened first.
MEASURE = """([k, typed, opened]) => {
  const out = [];
  for (const d of document.querySelectorAll('details.rk-full')) d.open = opened;
  for (let j = 0; j < k; j++) {
    window.rudriteCard.show(j, typed === null ? '' : typed[j]);
    const v = document.querySelector('.rk-verdict'), back = document.querySelector('.rk-back');
    const style = v ? getComputedStyle(v) : null;
    const line = style ? parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize) : 0;
    const mid = back ? back.getAttribute('data-misconception') : '', said_as = back ? back.getAttribute('data-verdict') : '';
    const name = mid ? window.rudriteCard.data.m[mid][0] : '';
    const said = name ? document.body.innerText.split(name).length - 1 : 0;
    out.push({j, height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth,
              verdict: v && v.textContent ? v.getBoundingClientRect().height : 0, line,
              clipped: v && v.textContent ? v.scrollWidth > v.clientWidth : false,
              text: v ? v.textContent : '', name, said, said_as});
  }
  return out;
}"""


def _typed(data):
    """What a learner types, per variant, to four significant figures in the card's unit: the right answer on
    every third variant, else a classic wrong answer where the variant has one (the verdict names it), else a
    far-off number or a wrong choice."""
    out = []
    for j, v in enumerate(data["v"]):
        if "c" in v:
            wrong = next((str(w[0]) for w in v["w"]), v["c"][-1] if v["c"][-1] != v["k"] else v["c"][0])
            out.append(v["k"] if j % 3 == 2 else wrong)
        else:
            value = v["k"] if j % 3 == 2 else v["w"][0][0] if v["w"] else v["k"] * 7
            out.append(f"{value * v['b'] / v['s']:.4g}")
    return out


@pytest.fixture(scope="module")
def measured(deck, browser):  # noqa: F811
    """{(side, skill): [each variant's measure]} for every note of the deck, folds closed; and the backs with the
    folds open under ("open", skill)."""
    out = {}
    r = Reviewer(browser, mode="mobile", viewport=PHONE)
    try:
        for skill, (question, answer, data) in sorted(deck.items()):
            k = len(data["v"])
            r.front(question, T0)
            out["front", skill] = r.page.evaluate(MEASURE, [k, None, False])
            r.back(answer, T0)
            r.page.wait_for_load_state("load")  # the figures' media
            out["back", skill] = r.page.evaluate(MEASURE, [k, _typed(data), False])
            out["open", skill] = r.page.evaluate(MEASURE, [k, _typed(data), True])
    finally:
        r.close()
    for side in ("front", "back", "open"):
        tallest = max(((m["height"], skill, m["j"]) for (s, skill), ms in out.items() if s == side for m in ms))
        print(f"\ntallest {side} at 390 px: {tallest[0]} px ({tallest[1]}, variant {tallest[2]})")
    return out


def test_the_sample_is_every_family_and_many_variants(measured, deck):  # noqa: F811
    assert len({skill.split(":", 1)[0] for _, skill in measured}) >= 16
    assert {skill for _, skill in measured} == set(deck)
    assert sum(len(ms) for (side, _), ms in measured.items() if side == "back") > 300


def test_every_card_fits_two_phone_screens_front_and_back(measured):
    tall = [(side, skill, m["j"], m["height"]) for (side, skill), ms in measured.items() if side != "open"
            for m in ms if m["height"] > MAX_HEIGHT]
    assert not tall, tall[:10]
    # the fold is what keeps them short: opened, some back is taller than a screen
    assert max(m["height"] for (side, _), ms in measured.items() if side == "open" for m in ms) > PHONE["height"]


def test_nothing_overflows_sideways(measured):
    wide = [(side, skill, m["j"], m["width"]) for (side, skill), ms in measured.items() for m in ms
            if m["width"] > PHONE["width"]]
    assert not wide, wide[:10]


def test_the_verdict_is_one_whole_line_its_word_first(measured):
    """One line tall, all of it shown for an answer typed to four figures, and the verdict's word first, so a
    longer answer echoed after it is all a narrow screen can cut."""
    verdicts = [(skill, m) for (side, skill), ms in measured.items() if side == "back" for m in ms]
    assert {m["said_as"] for _, m in verdicts} >= {"right", "wrong"}
    assert sum(1 for _, m in verdicts if m["text"]) > 300
    long = [(skill, m["j"], m["verdict"], m["line"], m["text"]) for skill, m in verdicts
            if m["verdict"] > 1.5 * m["line"] or m["clipped"]]
    assert not long, long[:5]
    first = {"right": "Right: ", "wrong": "Wrong: ", "needs-unit": "Type its unit: "}
    late = [(skill, m["j"], m["said_as"], m["text"]) for skill, m in verdicts
            if m["said_as"] in first and not m["text"].startswith(first[m["said_as"]])]
    assert not late, late[:5]


def test_a_named_mistake_is_said_once_on_the_back(measured):
    named = [(skill, m) for (side, skill), ms in measured.items() if side == "back" for m in ms if m["name"]]
    assert len(named) > 100, len(named)
    repeated = [(skill, m["j"], m["name"], m["said"]) for skill, m in named if m["said"] != 1]
    assert not repeated, repeated[:5]
