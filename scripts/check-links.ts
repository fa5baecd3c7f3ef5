/**
 * `npm run docs:check`: every relative link and `#anchor` in README.md and docs/ (subfolders too) must lead
 * somewhere — the file exists, and the anchor is a heading of the target, slugged as GitHub does.
 * Prints the broken ones and exits 1; test/docs/links.test.ts runs the same check under `npm test`.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export interface BrokenLink {
  file: string; // relative to the root
  line: number;
  target: string;
  reason: string;
}

/** GitHub's heading anchor: lower case, punctuation dropped (`_` and `-` kept), spaces to `-`. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link keeps its text
    .replace(/<[^>]+>/g, "") // inline HTML
    .replace(/[`*]/g, "");
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The lines of a Markdown file outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | null = null;
  text.split("\n").forEach((raw, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(raw)?.[1];
    if (marker) {
      if (fence === null) fence = marker[0];
      else if (marker[0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line: i + 1, text: raw });
  });
  return out;
}

/** The anchors a Markdown file offers: its headings (duplicates get -1, -2, …) and explicit ids. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

/** Link targets on one line: inline `[x](target)` and reference definitions `[x]: target`. */
function targetsOf(line: string): string[] {
  const code = line.replace(/`[^`]*`/g, ""); // a link inside inline code is not a link
  const inline = [...code.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const reference = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(code);
  return reference ? [...inline, reference[1]] : inline;
}

/** README.md and every .md under `root`'s docs/, subfolders included (docs/history/). */
export function markdownFiles(root: string): string[] {
  const docs = path.join(root, "docs");
  const inDocs = existsSync(docs)
    ? readdirSync(docs, { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".md"))
        .sort()
        .map((f) => path.join("docs", f))
    : [];
  return [...(existsSync(path.join(root, "README.md")) ? ["README.md"] : []), ...inDocs];
}

export function checkLinks(root: string, files = markdownFiles(root)): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (abs: string) => {
    let set = anchorCache.get(abs);
    if (!set) {
      set = anchorsOf(readFileSync(abs, "utf8"));
      anchorCache.set(abs, set);
    }
    return set;
  };
  for (const file of files) {
    const abs = path.join(root, file);
    for (const { line, text } of proseLines(readFileSync(abs, "utf8"))) {
      for (const target of targetsOf(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:, …
        const hash = target.indexOf("#");
        const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
        const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
        const resolved = pathPart === "" ? abs : pathPart.startsWith("/") ? path.join(root, pathPart) : path.resolve(path.dirname(abs), pathPart);
        if (!existsSync(resolved)) {
          broken.push({ file, line, target, reason: `no file ${path.relative(root, resolved)}` });
        } else if (anchor !== null && resolved.endsWith(".md") && !anchors(resolved).has(anchor)) {
          broken.push({ file, line, target, reason: `no heading #${anchor} in ${path.relative(root, resolved)}` });
        }
      }
    }
  }
  return broken;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const files = markdownFiles(root);
  const broken = checkLinks(root, files);
  for (const b of broken) console.error(`${b.file}:${b.line}: ${b.target} — ${b.reason}`);
  console.log(broken.length ? `links: ${broken.length} broken` : `links: ${files.length} files, none broken`);
  process.exit(broken.length ? 1 : 0);
}
