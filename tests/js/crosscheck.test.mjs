// The JavaScript engine against the Python server engine on the recorded games of
// tests/engine/crosscheck.py: the same procedure as its play_record, step for step.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ClientGame, IllegalMove, InvalidMove, VARIANTS } from "../../client/web/js/engine/index.js";
import { fixture } from "./fixtures.mjs";

const POSITIONS = 10_000;

function numbers(game) {
  return {
    legal: game.legalTexts().join(" "),
    over: game.isOver,
    won: game.isWon,
    leftover: game.leftover,
    on_grid: game.onGrid,
    complete: game.complete,
    moves: game.moveCount,
    text: game.positionText(),
    check: game.check(),
  };
}

function checkPosition(game, expected, where) {
  assert.deepEqual(numbers(game), expected, where);
}

function verdict(game, text) {
  const before = game.positionText();
  try {
    game.play(text);
  } catch (e) {
    if (e instanceof InvalidMove) return "invalid";
    if (e instanceof IllegalMove) return e.reason;
    throw e;
  }
  game.undo();
  assert.equal(game.positionText(), before, `${text}: play then undo changed the position`);
  return null;
}

const texts = (moves) => moves.map((m) => m.text);

function playRecord(rec) {
  const game = ClientGame.fromView(rec.view);
  checkPosition(game, rec.at, "snapshot");
  const steps = rec.steps;
  let previous = rec.at;
  steps.forEach((step, i) => {
    const where = `${rec.variant} step ${i + 1} (${step.move})`;
    for (const [text, expected] of step.probes) assert.equal(verdict(game, text), expected, `${where}: probe ${text}`);
    const played = texts(game.play(step.move));
    assert.deepEqual(played, [step.move, ...step.auto], where);
    const needed = game.revealed();
    assert.deepEqual(Object.keys(needed), Object.keys(step.reveal), `${where}: reveals`);
    for (const [key, card] of Object.entries(needed)) assert.ok(card === "??" || card === step.reveal[key], `${where}: ${key}`);
    const pending = game.legalTexts();
    const later = i + 1 < steps.length ? steps[i + 1].move : null;
    if (pending.includes(later)) {
      // played before the ack came: taken back, revealed, played again
      const hidden = game.positionText();
      game.play(later);
      game.undo();
      assert.equal(game.positionText(), hidden, `${where}: undo of ${later} before the reveal`);
    }
    game.reveal(step.reveal);
    const after = new Set(game.legalTexts());
    assert.deepEqual(pending.filter((t) => !after.has(t)), [], `${where}: offered before the reveal, illegal after`);
    checkPosition(game, step.at, where);
    if (step.undo) {
      assert.deepEqual(texts(game.undo()), played, `${where}: undo`);
      checkPosition(game, previous, `${where}, undone`);
      assert.deepEqual(texts(game.play(step.move)), played, `${where}: played again`);
      checkPosition(game, step.at, `${where}, played again`);
    }
    previous = step.at;
  });
  return 1 + steps.length;
}

const VARIANTS_RECORDED = fixture("variants.json");

test("the JavaScript engine has every variant the Python engine has", () => {
  assert.deepEqual(Object.keys(VARIANTS).sort(), [...VARIANTS_RECORDED].sort());
});

for (const variant of VARIANTS_RECORDED) {
  test(`${variant}: the JavaScript engine agrees with the Python engine`, () => {
    const started = performance.now();
    const records = fixture(`records-${variant}.json`);
    let compared = 0;
    for (const rec of records) compared += playRecord(rec);
    assert.ok(compared >= POSITIONS, `${compared} positions`);
    console.log(`${variant}: ${compared} positions in ${((performance.now() - started) / 1000).toFixed(2)} s`);
  });
}
