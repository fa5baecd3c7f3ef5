/**
 * Message variations (docs/decisions.md#message-variations): spintax `{Olá|Oi|E aí}` (one level) and the
 * variables `{{grupo}}`, `{{data}}` and `{{hora}}` in a campaign's `message` and card texts. `\{`, `\}` and
 * `\|` write the character itself. create-campaign parses a text once to refuse a bad one (400 naming the
 * field); the message builder renders it per group at send. Pure and dependency-free (the composer imports
 * it to count and preview variants in the browser).
 */
import { brasiliaParts } from "../time/brasilia";

export const variationVariables = ["grupo", "data", "hora"] as const;
export type VariationVariable = (typeof variationVariables)[number];

type Piece = string | { variable: VariationVariable };
/** A text as pieces: literal text, a variable, or a spintax choice (each option itself literal text and variables). */
export type Part = Piece | { options: Piece[][] };
export type ParsedText = Part[];

export type ParseResult = { ok: true; parts: ParsedText } | { ok: false; error: string };

const isVariable = (v: string): v is VariationVariable => (variationVariables as readonly string[]).includes(v);

/** Whether a text holds any markup (a brace, or a backslash escape): only such a text needs rendering. */
export const hasMarkup = (text: string) => /[{}]|\\[{}|]/.test(text);

/**
 * Parses a text. Errors (said the way a 400 names them after the field): an unclosed `{` or `{{`, a `}`
 * with no `{`, a brace inside a choice (one level only), a choice of fewer than two options, an unknown variable.
 */
export function parseVariations(text: string): ParseResult {
  const parts: Part[] = [];
  let literal = "";
  let options: Piece[][] | null = null; // inside { … }
  let option: Piece[] = [];
  let optionText = "";
  let openedAt = -1;
  const flushInto = (into: Piece[], s: string) => {
    if (s !== "") into.push(s);
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\" && (text[i + 1] === "{" || text[i + 1] === "}" || text[i + 1] === "|")) {
      if (options) optionText += text[i + 1];
      else literal += text[i + 1];
      i++;
      continue;
    }
    if (ch === "{" && text[i + 1] === "{") {
      const end = text.indexOf("}}", i + 2);
      if (end < 0) return { ok: false, error: `unbalanced braces: "{{" at character ${i + 1} is never closed with "}}" (write \\{ for a brace)` };
      const name = text.slice(i + 2, end).trim();
      if (!isVariable(name)) return { ok: false, error: `unknown variable {{${name}}} (known: ${variationVariables.map((v) => `{{${v}}}`).join(", ")})` };
      if (options) {
        flushInto(option, optionText);
        optionText = "";
        option.push({ variable: name });
      } else {
        flushInto(parts as Piece[], literal);
        literal = "";
        parts.push({ variable: name });
      }
      i = end + 1;
      continue;
    }
    if (ch === "{") {
      if (options)
        return { ok: false, error: `unbalanced braces: "{" at character ${i + 1} opens a choice inside a choice (one level only; write \\{ for a brace)` };
      flushInto(parts as Piece[], literal);
      literal = "";
      options = [];
      option = [];
      optionText = "";
      openedAt = i;
      continue;
    }
    if (ch === "}") {
      if (!options) return { ok: false, error: `unbalanced braces: "}" at character ${i + 1} closes nothing (write \\} for a brace)` };
      flushInto(option, optionText);
      options.push(option);
      if (options.length < 2) {
        return { ok: false, error: `the choice at character ${openedAt + 1} has one option; separate two or more with | (write \\{ \\} for braces)` };
      }
      parts.push({ options });
      options = null;
      continue;
    }
    if (ch === "|" && options) {
      flushInto(option, optionText);
      options.push(option);
      option = [];
      optionText = "";
      continue;
    }
    if (options) optionText += ch;
    else literal += ch;
  }
  if (options) return { ok: false, error: `unbalanced braces: "{" at character ${openedAt + 1} is never closed with "}" (write \\{ for a brace)` };
  flushInto(parts as Piece[], literal);
  return { ok: true, parts };
}

/** How many different texts the choices make (variables aside): the product of each choice's options. */
export function variantCount(parts: ParsedText): number {
  let n = 1;
  for (const p of parts) if (typeof p === "object" && "options" in p) n = Math.min(n * p.options.length, Number.MAX_SAFE_INTEGER);
  return n;
}

/** The values of the variables for one group at one instant. */
export interface VariationValues {
  groupName: string;
  /** The send's time: {{data}} is its dd/mm and {{hora}} its HH:mm in Brasília. */
  at: Date;
}

/** cyrb53: a 53-bit string hash, the same in Node and the browser. */
function hash53(s: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The variant a delivery key chooses: its hash modulo the number of variants (the same key, the same variant). */
export const variantIndexOf = (key: string, parts: ParsedText) => hash53(key) % variantCount(parts);

/** The text of variant `index` (0 ≤ index < variantCount; mixed radix over the choices, first choice fastest). */
export function renderVariant(parts: ParsedText, index: number, values: VariationValues): string {
  const { date, time } = brasiliaParts(values.at);
  const variable = (v: VariationVariable) => (v === "grupo" ? values.groupName : v === "data" ? `${date.slice(8, 10)}/${date.slice(5, 7)}` : time);
  const piece = (p: Piece) => (typeof p === "string" ? p : variable(p.variable));
  let rest = index;
  let out = "";
  for (const p of parts) {
    if (typeof p === "object" && "options" in p) {
      const chosen = p.options[rest % p.options.length];
      rest = Math.floor(rest / p.options.length);
      out += chosen.map(piece).join("");
    } else out += piece(p);
  }
  return out;
}

const parsedCache = new Map<string, ParsedText>();

/** A stored text's parts, parsed once per process (null: it does not parse; never stored, create-campaign refuses it). */
function partsOf(text: string): ParsedText | null {
  let parts = parsedCache.get(text);
  if (!parts) {
    const parsed = parseVariations(text);
    if (!parsed.ok) return null;
    parts = parsed.parts;
    if (parsedCache.size >= 256) parsedCache.clear();
    parsedCache.set(text, parts);
  }
  return parts;
}

/** The text one group gets: the variant its delivery key chooses, with its name and the send's time. */
export function renderForGroup(text: string, key: string, values: VariationValues): string {
  const parts = hasMarkup(text) ? partsOf(text) : null;
  return parts ? renderVariant(parts, variantIndexOf(key, parts), values) : text;
}

/** Variant `n` of a text (modulo its count): previews show the first few, one after another. */
export function renderNth(text: string, n: number, values: VariationValues): string {
  const parts = hasMarkup(text) ? partsOf(text) : null;
  return parts ? renderVariant(parts, n % variantCount(parts), values) : text;
}
