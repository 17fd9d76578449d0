// The fixtures tests/engine/test_js_engine.py writes for these tests: the Python engine deals and
// records, the JavaScript engine (which never deals) must agree.

import { readFileSync } from "node:fs";
import { join } from "node:path";

const DIR = process.env.ENGINE_FIXTURES;

/** The parsed fixture `name` (JSON); throws when not run through pytest. */
export function fixture(name) {
  if (!DIR) throw new Error("ENGINE_FIXTURES is not set: run these through `python3 dev.py test tests/engine/test_js_engine.py`");
  return JSON.parse(readFileSync(join(DIR, name), "utf8"));
}
