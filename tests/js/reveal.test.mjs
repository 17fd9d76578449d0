// A refill from the stock that the page cannot see yet: deal "1" after B2:0>B1 (tests/engine/crosscheck.py,
// after_a_stock_refill), the same cases as the Python engine's tests.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ClientGame, IllegalMove, RevealMismatch } from "../../client/web/js/engine/index.js";
import { fixture } from "./fixtures.mjs";

const refill = fixture("refill.json");

function afterTheRefill() {
  const game = ClientGame.fromView(refill.view);
  game.play(refill.move);
  return game;
}

test("a hidden refill takes part in no move until revealed", () => {
  const game = afterTheRefill();
  assert.deepEqual(game.revealed(), { B2: "??" });
  assert.deepEqual(game.grid().B2, ["??"]);
  assert.deepEqual(game.legalTexts().filter((t) => t.includes("B2")), []);
  assert.throws(() => game.play("A4~B2"), (e) => e instanceof IllegalMove && e.reason.includes("bottom card in view"));
  game.reveal(refill.reveal);
  assert.deepEqual(game.legalTexts(), refill.legal);
  assert.ok(game.legalTexts().includes("A4~B2"));
  assert.equal(game.check(), refill.check);
});

test("a reveal that does not fit is refused and changes nothing", () => {
  for (const [cards, why] of refill.mismatches) {
    const game = afterTheRefill();
    const before = game.positionText();
    if (why === null) {
      game.reveal(cards); // the page cannot know the card: accepted, and the check tells
      assert.notEqual(game.check(), refill.check);
      continue;
    }
    assert.throws(() => game.reveal(cards), (e) => e instanceof RevealMismatch && e.message.includes(why), why);
    assert.equal(game.positionText(), before);
  }
});

test("a reveal must agree with a card already known", () => {
  const game = afterTheRefill();
  game.reveal(refill.reveal);
  assert.throws(() => game.reveal({ B2: "5D" }), (e) => e instanceof RevealMismatch && e.why === "another card is there");
  game.reveal(refill.reveal); // the same card again: fine
  assert.equal(game.check(), refill.check);
});

test("undo stops at the snapshot", () => {
  const game = afterTheRefill();
  game.undo();
  assert.throws(() => game.undo(), RangeError);
});
