// Move notation, position checks and bad views, against the Python engine's answers.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ClientGame, InvalidMove, InvalidView, Move, UnknownVariant, crc32 } from "../../client/web/js/engine/index.js";
import { fixture } from "./fixtures.mjs";

test("every text parses as in Python, and canonical texts round-trip", () => {
  const cases = fixture("notation.json");
  assert.ok(cases.length > 1000);
  for (const [text, canonical] of cases) {
    if (canonical === null) {
      assert.throws(() => Move.parse(text), InvalidMove, JSON.stringify(text));
      continue;
    }
    const move = Move.parse(text);
    assert.equal(move.text, canonical, JSON.stringify(text));
    assert.equal(String(Move.parse(canonical)), canonical);
    assert.deepEqual(Move.parse(canonical), move);
  }
  assert.throws(() => Move.parse(7), InvalidMove);
});

test("crc32 is zlib's", () => {
  assert.equal(crc32(""), 0);
  assert.equal(crc32("123456789"), 0xcbf43926);
  const example = "QS/8C/JD/3S/9D/3C/TD/4H/4C/7C/TD/KC/7H/9H/9H/JD/QH/JS/TH/TC/9C/7S/JC/KS|-0|72|0";
  assert.equal(crc32(example), 2612825012); // protocol v2's example: zlib.crc32 of it
});

test("a bad view is refused naming why, as in Python", () => {
  for (const [view, why] of fixture("bad-views.json")) {
    const error = view.variant === "chess" ? UnknownVariant : InvalidView; // as the Python test has it
    assert.throws(() => ClientGame.fromView(view), (e) => e instanceof error && e.message.includes(why), why);
  }
});
