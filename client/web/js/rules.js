// The "How to play" page: rules, tips and a short FAQ, all from the translation tables.
import { el } from "./dom.js";
import { cardEl } from "./board.js";

const SECTIONS = [
  ["rules_h_setup", "rules_setup"],
  ["rules_h_build", "rules_build"],
  ["rules_h_home", "rules_home"],
  ["rules_h_stock", "rules_stock"],
  ["rules_h_score", "rules_score"],
  ["rules_h_play", "rules_play"],
];

export function rulesScreen(app) {
  const draw = () => {
    const rows = el(
      "div",
      { class: "rule-rows", "aria-hidden": "true" },
      ...[["2S", "5S", "8S", "JS"], ["3H", "6H", "9H", "QH"], ["4D", "7D", "TD", "KD"]].map((row) =>
        el("div", { class: "rule-row" }, ...row.map((c) => cardEl(c))),
      ),
    );
    app.replaceChildren(
      el(
        "article",
        { class: "panel rules", id: "rules" },
        el("h1", { i18n: "rules_title" }),
        el("p", { class: "lead", i18n: "rules_intro" }),
        rows,
        ...SECTIONS.flatMap(([h, p]) => [el("h2", { i18n: h }), el("p", { i18n: p })]),
        el("h2", { i18n: "tips_title" }),
        el("ul", {}, ...["tip1", "tip2", "tip3", "tip4"].map((k) => el("li", { i18n: k }))),
        el("h2", { i18n: "faq_title" }),
        ...[1, 2, 3, 4].map((n) =>
          el("details", { class: "faq" }, el("summary", { i18n: `faq_q${n}` }), el("p", { i18n: `faq_a${n}` })),
        ),
      ),
    );
  };
  draw();
  return { rerender: draw };
}
