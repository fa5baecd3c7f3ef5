/**
 * JSON Schema (the subset the OpenAPI document uses) → fast-check arbitraries of valid values, a small
 * validator that says when a value is certainly refused, and the leaf fields a mutation can target.
 * Used by openapi-fuzz.test.ts.
 */
import fc from "fast-check";
import { isIllFormed } from "../../server/text";

export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  anyOf?: Schema[];
  oneOf?: Schema[];
  additionalProperties?: Schema | boolean;
  propertyNames?: Schema;
  nullable?: boolean;
  example?: unknown;
  default?: unknown;
}

/** A field-specific arbitrary (real ids, reachable URLs) by the field's dotted path, or undefined. */
export type Hint = (path: string[], schema: Schema) => fc.Arbitrary<unknown> | undefined;

const types = (s: Schema): string[] => {
  const t = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
  return s.nullable ? [...t, "null"] : t;
};

/** Values the schema accepts (with `hint` for ids and URLs the server must find real). */
export function arbitraryFor(s: Schema, hint: Hint, path: string[] = []): fc.Arbitrary<unknown> {
  const hinted = hint(path, s);
  if (hinted) return hinted;
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((a) => arbitraryFor(a, hint, path)));
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const t = types(s);
  if (t.length > 1) return fc.oneof(...t.map((one) => arbitraryFor({ ...s, type: one, nullable: false }, hint, path)));
  switch (t[0]) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return fc.integer({ min: Math.max(s.minimum ?? -1e6, -1e6), max: Math.min(s.maximum ?? 1e6, 1e6) });
    case "number": {
      const min = Math.max(s.minimum ?? -1e6, -1e6);
      const max = Math.min(s.maximum ?? 1e6, 1e6);
      return fc.oneof(fc.integer({ min: Math.ceil(min), max: Math.floor(max) }), fc.double({ min, max, noNaN: true, noDefaultInfinity: true }));
    }
    case "string": {
      if (s.format === "uri") return fc.constantFrom("https://example.com/a.png", "https://cdn.example.org/img/b.jpg");
      if (s.pattern) {
        if (s.example !== undefined) return fc.constant(s.example);
        return fc.stringMatching(new RegExp(s.pattern));
      }
      const minLength = s.minLength ?? 0;
      return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(s.maxLength ?? 40, 40)) });
    }
    case "array": {
      const minLength = s.minItems ?? 0;
      return fc.array(arbitraryFor(s.items ?? {}, hint, [...path, "0"]), { minLength, maxLength: Math.max(minLength, Math.min(s.maxItems ?? 4, 4)) });
    }
    default: {
      if (s.properties) {
        const model = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, arbitraryFor(v, hint, [...path, k])]));
        return fc.record(model, { requiredKeys: s.required ?? [] });
      }
      if (typeof s.additionalProperties === "object") {
        const key = s.propertyNames ? arbitraryFor({ ...s.propertyNames, maxLength: Math.min(s.propertyNames.maxLength ?? 20, 20) }, hint, path) : fc.string();
        return fc.dictionary(key as fc.Arbitrary<string>, arbitraryFor(s.additionalProperties, hint, [...path, "*"]), { maxKeys: 3 });
      }
      return fc.constant({});
    }
  }
}

/** A NUL or an unpaired UTF-16 surrogate: the server refuses both in every string (api-guide.md). */
export const invalidUnicode = isIllFormed;

const jsonType = (v: unknown) =>
  v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v;

/**
 * false when the value certainly breaks the schema (type, enum, length, bounds, pattern, a required
 * property, an unparseable URI, NUL or a lone surrogate); true when it may be accepted.
 */
export function mayAccept(s: Schema, v: unknown): boolean {
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return alternatives.some((a) => mayAccept(a, v));
  if (s.const !== undefined && v !== s.const) return false;
  if (s.enum && !s.enum.includes(v)) return false;
  const t = types(s);
  const actual = jsonType(v);
  if (t.length && !t.includes(actual) && !(actual === "integer" && t.includes("number"))) return false;
  if (typeof v === "string") {
    if (s.maxLength !== undefined && v.length > s.maxLength) return false;
    if (s.minLength !== undefined && v.length < s.minLength) return false;
    if (s.pattern && !new RegExp(s.pattern).test(v)) return false;
    if (s.format === "uri" && !URL.canParse(v)) return false;
    if (invalidUnicode(v)) return false;
  }
  if (typeof v === "number") {
    if (s.minimum !== undefined && v < s.minimum) return false;
    if (s.maximum !== undefined && v > s.maximum) return false;
  }
  if (Array.isArray(v)) {
    if (s.maxItems !== undefined && v.length > s.maxItems) return false;
    if (s.minItems !== undefined && v.length < s.minItems) return false;
    if (s.items && !v.every((item) => mayAccept(s.items as Schema, item))) return false;
  }
  if (actual === "object" && v !== null) {
    const o = v as Record<string, unknown>;
    for (const r of s.required ?? []) if (!(r in o)) return false;
    for (const [k, sub] of Object.entries(s.properties ?? {})) if (k in o && !mayAccept(sub, o[k])) return false;
    if (s.additionalProperties === false && Object.keys(o).some((k) => !(k in (s.properties ?? {})))) return false;
  }
  return true;
}

export interface Field {
  path: string[];
  schema: Schema;
  required: boolean;
}

/** Every property (nested objects, array items as index 0) a mutation can target. */
export function fieldsOf(s: Schema, path: string[] = []): Field[] {
  const out: Field[] = [];
  for (const [k, sub] of Object.entries(s.properties ?? {})) {
    const p = [...path, k];
    out.push({ path: p, schema: sub, required: (s.required ?? []).includes(k) });
    if (sub.properties) out.push(...fieldsOf(sub, p));
    if (sub.items?.properties) out.push(...fieldsOf(sub.items, [...p, "0"]));
    if (sub.items && !sub.items.properties) out.push({ path: [...p, "0"], schema: sub.items, required: false });
  }
  return out;
}

/** A deep copy of `obj` with the value at `path` set (intermediate objects and arrays created) or removed. */
export function withValueAt(obj: unknown, path: string[], value: unknown, remove = false): unknown {
  const root = structuredClone(obj ?? {}) as Record<string, unknown>;
  let cur: Record<string, unknown> = root;
  for (let i = 0; i < path.length - 1; i++) {
    const next = cur[path[i]];
    if (next === null || typeof next !== "object") cur[path[i]] = /^\d+$/.test(path[i + 1]) ? [] : {};
    cur = cur[path[i]] as Record<string, unknown>;
  }
  const last = path[path.length - 1];
  if (remove) {
    if (Array.isArray(cur)) cur.splice(Number(last), 1);
    else delete cur[last];
  } else cur[last] = value;
  return root;
}
