// Every golden game of ../shared/golden, played by the JavaScript engine from the deal the Python
// engine made: the legal-move count before every move, then the final state.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { ClientGame } from "../../client/web/js/engine/index.js";
import { fixture } from "./fixtures.mjs";

const deals = fixture("golden.json");

test("the golden files are there", () => {
  assert.ok(deals.length >= 7, `${deals.length} golden files`);
});

for (const { path, deal } of deals) {
  const golden = JSON.parse(readFileSync(path, "utf8"));
  test(`golden ${golden.variant} (seed ${golden.seed})`, () => {
    const game = ClientGame.fromView(deal);
    golden.steps.forEach((step, i) => {
      assert.equal(game.legalTexts().length, step.legal_count, `before step ${i + 1} (${step.move})`);
      game.play(step.move);
    });
    const state = game.state();
    for (const [key, expected] of Object.entries(golden.final)) assert.deepEqual(state[key], expected, key);
  });
}
