(function () {
  var R = {{READER}};
  var M = {{MODULUS}}, A = {{MULTIPLIER}}, STRIDE = {{STRIDE}}, DAY = {{DAY_MS}}, MAX = {{MAX_CHARS}};
  var ROLL = {{ROLLOVER_MS}}, CONTEXT = "/_anki/getSchedulingStatesWithContext", WAIT = {{CONTEXT_WAIT_MS}};
  var SAFE = {{MAX_SAFE_INTEGER}};  // the largest integer a double holds exactly, and every one below it
  var CARRY = "rudrite:review", LAST = "rudrite:last:", NAME = "rudrite:";
  var SAME = {{SAME_REL}};  // misconceptions.SAME_REL: mistakes this close to the closest are a tie
  var PAIR = /^[(]?\s*([0-9]+)\s*(?:x|\*|,|by)\s*([0-9]+)\s*[)]?$/;
  function q(s) { return document.querySelector(s); }
  function qa(s) { return Array.prototype.slice.call(document.querySelectorAll(s)); }
  function own(o, k) { return Object.prototype.hasOwnProperty.call(o, k); }
  function mod(a, n) { return ((a % n) + n) % n; }
  // --- the rotation (generator.export.rotation) ---
  function order(seed, block, k) {
    var x = mod(seed + block * STRIDE, M) || 1, o = [], i, j, t;
    x = x * A % M; x = x * A % M;
    for (i = 0; i < k; i++) o.push(i);
    for (i = k - 1; i > 0; i--) { x = x * A % M; j = x % (i + 1); t = o[i]; o[i] = o[j]; o[j] = t; }
    return o;
  }
  function dayPick(seed, day, k) {
    if (k <= 1) return 0;
    var b = Math.floor(day / k), o = order(seed, b, k), t;
    if (k >= 3 && o[0] === order(seed, b - 1, k)[k - 1]) { t = o[0]; o[0] = o[1]; o[1] = t; }
    return o[day - b * k];
  }
  function pick(seed, day, k, last) {
    var i = dayPick(seed, day, k), before;
    if (last === null || k < 2 || i !== last) return i;
    before = dayPick(seed, day - 1, k);
    return before !== last ? before : (i + 1) % k;
  }
  function countPick(seed, count, k) { return k <= 1 ? 0 : (seed % k + count % k) % k; }
  function today() {  // Anki's day: it starts at ROLL past local midnight (Anki's default 4 am)
    var now = Date.now(), off = new Date(now).getTimezoneOffset(), d = Math.floor((now - off * 60000 - ROLL) / DAY);
    return isFinite(d) ? d : 0;
  }
  // --- Anki's review count: the scheduling context desktop Anki's reviewer serves the card (protobuf) ---
  function varint(b, p) {  // [value, next offset] of the varint at p; null past SAFE or the end
    var v = 0, m = 1, c;
    while (p < b.length) {
      c = b[p++]; v += (c % 128) * m;
      if (c < 128) return v <= SAFE ? [v, p] : null;
      m *= 128;
      if (m > SAFE) return null;
    }
    return null;
  }
  function field(b, want, wire) {  // field number want (wire 0: its value, 2: its bytes); null if absent or malformed
    var p = 0, t, n, w, len, found = null;
    while (p < b.length) {
      t = varint(b, p); if (!t) return null;
      p = t[1]; n = Math.floor(t[0] / 8); w = t[0] % 8;
      if (w === 0) { t = varint(b, p); if (!t) return null; p = t[1]; if (n === want && wire === 0) found = t[0]; }
      else if (w === 2) {
        t = varint(b, p); if (!t) return null;
        p = t[1]; len = t[0];
        if (p + len > b.length) return null;
        if (n === want && wire === 2) found = b.subarray(p, p + len);
        p += len;
      } else if (w === 1 || w === 5) { p += w === 1 ? 8 : 4; if (p > b.length) return null; }
      else return null;
    }
    return found;
  }
  function contextSeed(b) {  // SchedulingStatesWithContext.context (2) .seed (2): card id term + reps
    var c = field(b, 2, 2), s = c ? field(c, 2, 0) : null;
    return typeof s === "number" && s > 0 ? s : null;
  }
  function reviewCount(done) {  // done(seed or null), once; null off desktop Anki, or after WAIT ms
    var over = false, timer = null;
    function end(v) {
      if (over) return;
      over = true;
      try { if (timer !== null) window.clearTimeout(timer); } catch (e) {}
      done(v);
    }
    try {
      if (typeof window.fetch !== "function" || typeof Uint8Array !== "function" ||
          !/^https?:$/.test(String(window.location && window.location.protocol))) return end(null);
      timer = window.setTimeout(function () { end(null); }, WAIT);
      window.fetch(CONTEXT, {method: "POST", headers: {"Content-Type": "application/binary"}, body: new Uint8Array(0)})
        .then(function (r) { return r && r.ok ? r.arrayBuffer() : null; })
        .then(function (a) { end(a ? contextSeed(new Uint8Array(a)) : null); }, function () { end(null); });
    } catch (e) { end(null); }
  }
  // Anki's reviewer waits for the promises its onUpdateHook callbacks return before it shows the card.
  function beforeShown(start) {
    var hooks = window.onUpdateHook, settled = null, waiting = [];
    function finish() { settled = true; while (waiting.length) waiting.shift()(); }
    try {
      if (hooks && typeof hooks.push === "function" && typeof Promise === "function") {
        hooks.push(function () { return new Promise(function (ok) { if (settled) ok(); else waiting.push(ok); }); });
      }
    } catch (e) {}
    start(finish);
  }
  // --- carrying the review from front to back: the page itself, sessionStorage, window.name ---
  function session() { try { return window.sessionStorage; } catch (e) { return null; } }
  function local() { try { return window.localStorage; } catch (e) { return null; } }
  // window.name outlives a page reload in the same webview: {r: this review, l: {skill: last id}}
  function named() {
    var st = null;
    try { if (String(window.name).indexOf(NAME) === 0) st = JSON.parse(window.name.slice(NAME.length)); } catch (e) {}
    return st && typeof st === "object" ? st : {};
  }
  function setNamed(st) { try { window.name = NAME + JSON.stringify(st); } catch (e) {} }
  function carry(rec) {
    var s = session(), st = named();
    window.rudriteReview = rec;
    try { s.setItem(CARRY, JSON.stringify(rec)); } catch (e) {}
    st.r = rec; setNamed(st);
  }
  function carried(skill, ids) {
    var found = [window.rudriteReview], s = session(), i, r;
    try { found.push(JSON.parse(s.getItem(CARRY))); } catch (e) {}
    found.push(named().r);
    for (i = 0; i < found.length; i++) {
      r = found[i];
      if (r && r.skill === skill && typeof r.id === "string" && ids.indexOf(r.id) >= 0) return r;
    }
    return null;
  }
  function uncarry() {
    var s = session(), st = named();
    window.rudriteReview = null;
    try { s.removeItem(CARRY); } catch (e) {}
    if (st.r) { delete st.r; setNamed(st); }
  }
  // --- the last variant shown at this note's previous review: localStorage, the page, window.name ---
  function lastShown(skill) {
    var l = local(), v = null, st;
    try { v = l.getItem(LAST + skill); } catch (e) {}
    if (v === null && window.rudriteLast && own(window.rudriteLast, skill)) v = window.rudriteLast[skill];
    st = named();
    if (v === null && st.l && own(st.l, skill)) v = st.l[skill];
    return v;
  }
  function remember(skill, id) {
    var l = local(), st = named();
    window.rudriteLast = window.rudriteLast || {};
    window.rudriteLast[skill] = id;
    try { l.setItem(LAST + skill, id); } catch (e) {}
    st.l = st.l && typeof st.l === "object" ? st.l : {};
    st.l[skill] = id; setNamed(st);
  }
  // --- reading a typed answer: generator.model.answers' grammar, step for step (its patterns from READER) ---
  var NO = {};  // thrown where answers raises AnswerError: the answer is not read
  var NUMBER = new RegExp("^" + R.number), WORD = new RegExp("^" + R.word), STOP = new RegExp(R.stop);
  var PLAIN = new RegExp("^[+-]?" + R.number + "$");
  function no() { throw NO; }
  function fin(x) { if (!isFinite(x)) no(); return x; }
  function rel(g, k) { return k === 0 ? (g === 0 ? 0 : Infinity) : Math.abs(g - k) / Math.abs(k); }
  function swap(t, table) { for (var c in table) if (own(table, c)) t = t.split(c).join(table[c]); return t; }
  function dims(s) { return s.split(",").map(Number); }
  function same(a, b) { return a[0] === b[0] && a[1] === b[1] && a[2] === b[2]; }
  function flat(a) { return same(a, [0, 0, 0]); }
  function add(a, b, sign) { return [a[0] + sign * b[0], a[1] + sign * b[1], a[2] + sign * b[2]]; }
  // a unit word as parse_unit reads it: [scale, dims, kind] (kind % 10: 1 a FLOP word, 2 a count; + 10 a
  // word of its own, which may stand on either side of "a/b")
  function word(w) {
    if (own(R.exact, w)) return R.exact[w];
    if (R.ambiguous.indexOf(w) >= 0) return null;
    return own(R.lower, w.toLowerCase()) ? R.lower[w.toLowerCase()] : null;
  }
  function unit(u) {
    var parts = u.split("/"), a, b;
    if (parts.length === 1) a = word(u);
    else {
      a = word(parts[0]); b = word(parts[1]);
      a = a && b && a[2] >= 10 && b[2] >= 10 ? [a[0] / b[0], add(dims(a[1]), dims(b[1]), -1).join(","), 0] : null;
    }
    if (!a) no();
    return {s: a[0], d: dims(a[1]), k: a[2] % 10};
  }
  function lexed(t) {  // answers._tokens_of: the text made plain, then its tokens
    var out = [], i = 0, m, w, per, rest, j;
    if (t.length > MAX) no();
    t = swap(t, R.translate).replace(new RegExp(R.approx, "g"), "").trim();  // an "about" sign before a number (R.approx): dropped
    if (t.slice(-1) === "." && STOP.test(t.slice(0, -1).replace(/\s+$/, "").slice(-1))) t = t.slice(0, -1).replace(/\s+$/, "");
    if (t.indexOf(",") >= 0) {  // thousands separators: a whole run of digits and commas, not after a point
      t = t.replace(/[0-9,]+/g, function (run, at, all) {
        return all.charAt(at - 1) !== "." && /^[0-9]{1,3}(?:,[0-9]{3})+$/.test(run) ? run.replace(/,/g, "") : run;
      });
      if (t.indexOf(",") >= 0) no();
    }
    if (!t) no();
    t = t.replace(/([A-Za-z\u00b5\u03bc])\s+per\s+(?=[A-Za-z\u00b5\u03bc])/g, "$1/");
    while (i < t.length) {
      rest = t.slice(i);
      if (/^\s/.test(rest)) { i += 1; continue; }
      if ((m = NUMBER.exec(rest))) { out.push({n: fin(Number(m[0]))}); i += m[0].length; continue; }
      if ((m = WORD.exec(rest))) {
        w = m[0]; i += w.length;
        per = t.charAt(i) === "/" ? WORD.exec(t.slice(i + 1)) : null;
        if (per && (word(w) || [0, 0, 0])[2] >= 10 && (word(per[0]) || [0, 0, 0])[2] >= 10) {
          w += "/" + per[0]; i += per[0].length + 1;
        }
        out.push({u: unit(w)});
        continue;
      }
      for (j = 0; j < R.ops.length && rest.indexOf(R.ops[j]) !== 0; j++) {}
      if (j === R.ops.length) no();
      out.push({o: R.ops[j] === "^" ? "**" : R.ops[j]}); i += R.ops[j].length;
    }
    out.push({end: true});
    return out;
  }
  function parsed(ts) {  // answers._Parser: [value in base units, dims, whether a unit was typed]
    var pos = 0, depth = 0, typed = false, top;
    function op(a, b) {
      var o = ts[pos].o;
      if (o !== undefined && (o === a || o === b)) { pos += 1; return o; }
      return null;
    }
    function nest(f) { depth += 1; if (depth > R.limits[0]) no(); var r = f(); depth -= 1; return r; }
    function expr() {
      var a = term(), o, b;
      while ((o = op("+", "-")) !== null) {
        b = term();
        if (!same(a[1], b[1])) no();
        a = [fin(o === "+" ? a[0] + b[0] : a[0] - b[0]), a[1]];
      }
      return a;
    }
    function term() {
      var a = unary(), o, b;
      while ((o = op("*", "/")) !== null) {
        b = unary();
        if (o === "*") a = [fin(a[0] * b[0]), add(a[1], b[1], 1)];
        else { if (b[0] === 0) no(); a = [fin(a[0] / b[0]), add(a[1], b[1], -1)]; }
      }
      return a;
    }
    function unary() {
      var o = op("-", "+"), a;
      if (o === null) return power();
      a = nest(unary);
      return [(o === "-" ? -1 : 1) * a[0], a[1]];
    }
    function raise(a, e) {
      var whole = e < 0 ? Math.ceil(e) : Math.floor(e);
      if (Math.abs(e) > R.limits[1] || (!flat(a[1]) && whole !== e)) no();
      return [fin(Math.pow(a[0], e)), [a[1][0] * whole, a[1][1] * whole, a[1][2] * whole]];
    }
    function power() {
      var a = atom(), u;
      if (op("**") !== null) a = raise(a, exponent());
      u = ts[pos].u;
      if (u) {  // the unit binds after the power: "n**k FLOP" is (n**k) FLOP
        pos += 1; typed = true;
        a = [fin(a[0] * u.s), add(a[1], u.d, 1)];
        if (ts[pos].u) no();
      }
      return a;
    }
    function exponent() {
      var o = op("-", "+"), a;
      if (o !== null) return (o === "-" ? -1 : 1) * nest(exponent);
      a = atom();
      if (op("**") !== null) a = nest(function () { return raise(a, exponent()); });
      if (!flat(a[1])) no();
      return a[0];
    }
    function atom() {
      var t = ts[pos], a;
      pos += 1;
      if (t.n !== undefined) return [t.n, [0, 0, 0]];
      if (t.o !== "(") no();
      a = nest(expr);
      if (ts[pos].o !== ")") no();
      pos += 1;
      return a;
    }
    top = expr();
    if (!ts[pos].end) no();
    return [top[0], top[1], typed];
  }
  // answers.parse_number with the card's unit stated: [the value in the answer's unit, and where no unit was
  // typed and the answer has one, the same number read in the answer's own unit (else null)]; null: not read
  function number(v, t) {
    var ts, q, us = [], want = dims(v.x), i, flops = true, counts = true, w;
    try { ts = lexed(t); q = parsed(ts); } catch (e) { if (e === NO) return null; throw e; }
    for (i = 0; i < ts.length; i++) if (ts[i].u) us.push(ts[i].u);
    for (i = 0; i < us.length; i++) { flops = flops && us[i].k === 1; counts = counts && us[i].k === 2; }
    if (same(q[1], [0, 0, 1]) && same(want, [-1, 0, 1]) && us.length && flops) return [q[0] / v.b, null];
    if (flat(q[1]) && q[2] && !flat(want) && !counts) return null;  // "us/s": the units cancel
    if (flat(q[1])) {
      if (flat(want)) return [q[0], null];
      return isFinite(q[0] * v.s) ? [q[0] * v.s / v.b, q[0] / v.b] : null;
    }
    if (same(q[1], want)) return [q[0] / v.b, null];
    if (us.length === 1 && ts[ts.length - 2].u && same(us[0].d, want)) {  // (working) unit, its unit last
      try { w = parsed(ts.slice(0, -2).concat([{end: true}])); } catch (e) { if (e === NO) return null; throw e; }
      if (flat(w[1])) return isFinite(w[0] * us[0].s) ? [w[0] * us[0].s / v.b, null] : null;
    }
    return null;
  }
  function norm(s) {  // answers.normalize_choice
    s = swap(s, R.dashes).trim().toLowerCase().split(/\s+/).join(" ");
    while (s && (R.stops + " ").indexOf(s.slice(-1)) >= 0) s = s.slice(0, -1);
    ["-bound", " bound"].forEach(function (x) {
      if (s.length > x.length && s.slice(-x.length) === x) s = s.slice(0, -x.length);
    });
    return s;
  }
  function choice(t, cs) {
    var g = norm(swap(t, R.translate)).replace(new RegExp(R.lead), ""), p, by = {}, i, hits = [];  // "the TPU v6e"
    if (!g) return null;
    p = PAIR.exec(g);
    if (p) g = p[1] + "x" + p[2];
    for (i = 0; i < cs.length; i++) by[norm(cs[i])] = cs[i];
    if (own(by, g)) return by[g];
    if (own(R.aliases, g) && own(by, R.aliases[g])) return by[R.aliases[g]];
    for (i in by) if (own(by, i) && i.indexOf(g) === 0 && hits.indexOf(by[i]) < 0) hits.push(by[i]);
    return hits.length === 1 ? hits[0] : null;
  }
  // drills.quiz.grading.grade: within the tolerance, or of another edition's answer unless a named mistake is closer
  function right(v, g) {
    var near = Infinity, i;
    if (rel(g, v.k) <= v.t) return true;
    for (i = 0; i < v.w.length; i++) if (typeof v.w[i][0] === "number") near = Math.min(near, Math.abs(g - v.w[i][0]));
    for (i = 0; i < (v.a || []).length; i++) if (rel(g, v.a[i]) <= v.t && Math.abs(g - v.a[i]) <= near) return true;
    return false;
  }
  function verdict(v, t) {
    var g, i, best = -1, r, near = Infinity;
    t = String(t || "");
    if (t.length > MAX || !t.trim()) return ["none", ""];
    if (v.c) {
      g = choice(t, v.c);
      if (g === null) return ["none", ""];
      if (g === v.k) return ["right", ""];
      for (i = 0; i < v.w.length; i++) if (v.w[i][0] === g) return ["wrong", v.w[i][1]];
      return ["wrong", ""];
    }
    r = number(v, t);
    if (r === null) return ["none", ""];
    g = r[0];
    if (right(v, g)) return ["right", ""];
    if (r[1] !== null && right(v, r[1])) return ["needs-unit", ""];  // right only read in the answer's own unit
    if (rel(g, v.k) > v.dt) {  // the closest classic mistake is named (as close as it, within SAME: the first listed)
      for (i = 0; i < v.w.length; i++) if (rel(g, v.w[i][0]) <= v.dt) near = Math.min(near, rel(g, v.w[i][0]));
      for (i = 0; i < v.w.length && best < 0; i++) if (rel(g, v.w[i][0]) <= Math.min(v.dt, near + SAME)) best = i;
    }
    return best < 0 ? ["wrong", ""] : ["wrong", v.w[best][1]];
  }
  // --- showing ---
  function show(d, i, typed) {
    var v = d.v[i], back = q(".rk-back"), r, m, box, input = q("input[name=answer]"), t, small, n, bare, line, el;
    qa(".rk-v").forEach(function (el) { el.hidden = el.getAttribute("data-v") !== String(i); });
    qa(".rk-front, .rk-back").forEach(function (el) { el.setAttribute("data-problem-id", v.id); });
    qa(".rk-type, .rk-js").forEach(function (el) { el.hidden = false; });
    if (!back) return;
    box = q(".rk-verdict");
    back.setAttribute("data-carried", typed === null ? "no" : "yes");
    if (input) { input.value = typed || ""; input.readOnly = true; }
    // The verdict's one line (.rk-verdict), then what it means (.rk-why; into the line's box where there is none)
    function say(line, more) {
      var why = q(".rk-why");
      box.textContent = line;
      if (why) why.textContent = more; else if (more) box.textContent = more;
      return why || box;
    }
    if (typed === null) {
      back.setAttribute("data-verdict", "none");
      back.setAttribute("data-misconception", "");
      if (box) say("Not carried: compare by eye.",
                   "Your typed answer could not be carried to the back on this client: compare by eye.");
      return;
    }
    r = verdict(v, typed); m = d.m[r[1]];
    back.setAttribute("data-verdict", r[0]);
    back.setAttribute("data-misconception", r[1]);
    if (!box) return;
    t = String(typed).trim();
    n = v.c || r[0] === "none" ? null : number(v, t);
    bare = n && n[1] !== null ? (PLAIN.test(t) ? t : "(" + t + ")") : "";  // no unit typed: read in the card's
    // The verdict's word first: a long answer echoed after it is what a narrow screen cuts, never the verdict.
    line = r[0] === "needs-unit" ? "Type its unit: " + bare + " " + v.bu + "." :
      r[0] !== "none" ? (r[0] === "right" ? "Right: " : "Wrong: ") + (bare ? bare + " " + v.u : t) + "." :
      t ? "Not checked." : "";
    el = say(line, r[0] === "needs-unit" ?
      "Your answer " + t + " has no unit, so it is read in " + v.u + ", and so it is wrong; in " + v.bu + " it is " +
        Number(n[1].toPrecision(3)) + " " + v.bu + ", which is right. Type its unit: " + bare + " " + v.bu + "." :
      r[0] === "none" && t ? "Your answer \u201c" + t + "\u201d was not checked: the card reads a number or a working " +
        "(2*3), with or without a unit, or a listed choice, as drill check does." : "");
    if (m) {
      el.textContent += (el.textContent ? " " : "") + "The classic mistake: " + m[0] + ". " + m[1] + " ";
      small = document.createElement("small");
      small.textContent = "(" + r[1] + ")";
      el.appendChild(small);
    }
  }
  function run() {
    var el = q(".rk-data"), d, ids, k, rec, last, input, i;
    if (!el) return;
    d = JSON.parse(el.textContent);
    ids = d.v.map(function (v) { return v.id; });
    k = ids.length;
    window.rudriteCard = {data: d, show: function (j, t) { show(d, j, t); }, verdict: verdict, pick: pick,
                          countPick: countPick, contextSeed: contextSeed};
    function dayRule() {
      var l = ids.indexOf(lastShown(d.skill));
      return pick(d.seed, today(), k, l < 0 ? null : l);
    }
    if (!q(".rk-back")) {
      i = dayRule();
      rec = {skill: d.skill, id: ids[i], typed: ""};
      carry(rec);
      input = q("input[name=answer]");
      if (input) input.addEventListener("input", function () { rec.typed = input.value; carry(rec); });
      if (input) input.addEventListener("keydown", function (e) {
        if (e.key === "Enter" && typeof window.pycmd === "function") window.pycmd("ans");
      });
      show(d, i, "");
      // Where Anki serves the review count, it decides (the same on the back, with no storage at all).
      beforeShown(function (shown) {
        reviewCount(function (count) {
          try {
            if (count !== null) { i = countPick(d.seed, count, k); rec.id = ids[i]; carry(rec); show(d, i, ""); }
          } catch (e) {}
          shown();
        });
      });
      return;
    }
    rec = carried(d.skill, ids);
    function finish(j, typed) {
      show(d, j, typed);
      remember(d.skill, ids[j]);
      uncarry();
    }
    if (rec) { finish(ids.indexOf(rec.id), String(rec.typed || "")); return; }
    // Nothing carried: the front's own rule again (the same review count, or the same Anki day and memory).
    i = dayRule();
    show(d, i, null);
    beforeShown(function (shown) {
      reviewCount(function (count) {
        try { finish(count !== null ? countPick(d.seed, count, k) : i, null); } catch (e) {}
        shown();
      });
    });
  }
  function safely() {
    try { run(); } catch (e) {  // never a blank card: the first variant stays as the markup has it
      try { qa(".rk-type, .rk-js").forEach(function (el) { el.hidden = true; }); } catch (e2) {}
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", safely); else safely();
})();
