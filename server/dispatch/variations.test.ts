import { describe, expect, it } from "vitest";
import { hasMarkup, parseVariations, renderForGroup, renderVariant, variantCount, variantIndexOf, type ParsedText } from "./variations";

const at = new Date("2026-03-05T22:07:00Z"); // 19:07 on 05/03 in Brasília
const values = { groupName: "Turma 7 #3", at };

function parsed(text: string): ParsedText {
  const r = parseVariations(text);
  if (!r.ok) throw new Error(r.error);
  return r.parts;
}

const errorOf = (text: string) => {
  const r = parseVariations(text);
  return r.ok ? null : r.error;
};

describe("message variations: parsing", () => {
  it("counts the variants of every choice and renders each of them", () => {
    const parts = parsed("{Olá|Oi|E aí}, {pessoal|gente}!");
    expect(variantCount(parts)).toBe(6);
    const all = Array.from({ length: 6 }, (_, i) => renderVariant(parts, i, values));
    expect(new Set(all).size).toBe(6);
    expect(all).toContain("E aí, gente!");
  });

  it("fills {{grupo}}, {{data}} (dd/mm) and {{hora}} (HH:mm) in Brasília, in choices too", () => {
    const parts = parsed("{Oi {{grupo}}|Olá {{ grupo }}} — {{data}} às {{hora}}");
    expect(renderVariant(parts, 0, values)).toBe("Oi Turma 7 #3 — 05/03 às 19:07");
    expect(renderVariant(parts, 1, values)).toBe("Olá Turma 7 #3 — 05/03 às 19:07");
  });

  it("writes \\{ \\} \\| as the characters and leaves a lone | and other backslashes alone", () => {
    const parts = parsed("\\{x\\} a|b {c\\|d|e} \\n");
    expect(variantCount(parts)).toBe(2);
    expect(renderVariant(parts, 0, values)).toBe("{x} a|b c|d \\n");
    expect(renderVariant(parts, 1, values)).toBe("{x} a|b e \\n");
  });

  it("keeps empty options", () => {
    expect(renderVariant(parsed("a{|!}"), 0, values)).toBe("a");
    expect(renderVariant(parsed("a{|!}"), 1, values)).toBe("a!");
  });

  it("refuses unbalanced braces, nesting, a one-option choice and unknown variables, saying where", () => {
    expect(errorOf("{Olá|Oi")).toMatch(/unbalanced braces.*character 1/);
    expect(errorOf("Olá} x")).toMatch(/unbalanced braces: "}" at character 4/);
    expect(errorOf("{a|{b|c}}")).toMatch(/one level only/);
    expect(errorOf("{{grupo}")).toMatch(/never closed/);
    expect(errorOf("{só}")).toMatch(/one option/);
    expect(errorOf("Oi {{nome}}")).toMatch(/unknown variable \{\{nome\}\}.*\{\{grupo\}\}/);
    expect(errorOf("plain text | with a bar")).toBeNull();
  });

  it("says which texts need rendering", () => {
    expect(hasMarkup("plain | text \\n")).toBe(false);
    expect(hasMarkup("a \\| b")).toBe(true);
    expect(hasMarkup("{a|b}")).toBe(true);
  });
});

describe("message variations: choosing per group", () => {
  const text = "{A|B|C} {{grupo}}";

  it("is deterministic: the same delivery key gives the same text every time", () => {
    const key = "campaign_1:120363000000000001@g.us";
    const first = renderForGroup(text, key, values);
    for (let i = 0; i < 5; i++) expect(renderForGroup(text, key, values)).toBe(first);
    expect(variantIndexOf(key, parsed(text))).toBe(variantIndexOf(key, parsed(text)));
  });

  it("spreads keys over every variant", () => {
    const seen = new Set<string>();
    for (let g = 0; g < 30; g++) seen.add(renderForGroup(text, `campaign_x:1203630000000000${String(g).padStart(2, "0")}@g.us`, values).slice(0, 1));
    expect([...seen].sort()).toEqual(["A", "B", "C"]);
  });

  it("sends a text without markup as written", () => {
    expect(renderForGroup("Oi, pessoal | tudo bem?", "k", values)).toBe("Oi, pessoal | tudo bem?");
  });
});
