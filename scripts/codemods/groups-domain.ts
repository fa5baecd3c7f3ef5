/**
 * Issue 34 item 1: what the service knows about a group (its members, the LID ⇄ phone map, member counts, its
 * activity) becomes the `groups` domain beside the group actions, and server/launches/ is split into the link, the
 * funnel and the launch itself (docs/architecture.md, "The launches and groups domains").
 *
 * Run from the repository's root: `npx tsx scripts/codemods/groups-domain.ts` (`--dry-run`: say what it would do).
 * Idempotent, so it can be run again after merging work written against the old paths:
 * 1. every file of `moves` still at its old path has its own relative imports rewritten for its new place, then is
 *    `git mv`ed there (one that is at neither place is skipped; one at both is reported and left alone);
 * 2. every import specifier of the tree (`import`, `export … from`, `import type`, `import()`, `vi.mock()` and its
 *    kin, `require()`; relative or `@/`) that resolves to an old path is pointed at the new one, in its own style;
 * 3. the old paths named in docs/*.md, README.md and the code's comments and strings (`server/launches/x.ts`, and in
 *    the docs also `launches/x.ts`) name the new ones.
 * Files left in server/launches/ that the map does not know are listed at the end (new work to place by hand).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

const launch = "server/launches/launch";
const link = "server/launches/link";
const funnel = "server/launches/funnel";
const members = "server/groups/members";
const activity = "server/groups/activity";
const actions = "server/groups/actions";

/** Old path → folder it moves to (the name stays). */
const movedInto: Record<string, string> = {
  // The launch itself: its record and schema, its groups' rotation and the engine that makes them.
  "server/launches/add-groups.ts": launch,
  "server/launches/add-launch-groups.ts": launch,
  "server/launches/find-launch.ts": launch,
  "server/launches/find-launch-owned.ts": launch,
  "server/launches/group-creators.ts": launch,
  "server/launches/group-joins.ts": launch,
  "server/launches/launch-engine.ts": launch,
  "server/launches/launch-lock.ts": launch,
  "server/launches/restatus-groups.ts": launch,
  "server/launches/rotation.ts": launch,
  "server/launches/rotation.test.ts": launch,
  "server/launches/schema.ts": launch,
  "server/launches/wake.ts": launch,
  // The link: /g/{slug}, its clicks, its pages, the health of the invites it sends people to.
  "server/launches/bot-agents.ts": link,
  "server/launches/bot-agents.test.ts": link,
  "server/launches/click-counter.ts": link,
  "server/launches/fold-clicks.ts": link,
  "server/launches/invite-health.ts": link,
  "server/launches/link-pages.ts": link,
  "server/launches/meta-event.ts": link,
  "server/launches/public-link.ts": link,
  "server/launches/slug.ts": link,
  // The funnel: what happens to the people (clicks → joins → welcome → leads → buyers), its figures and exports.
  "server/launches/buyer-figures.ts": funnel,
  "server/launches/buyers-in-groups.ts": funnel,
  "server/launches/click-figures.ts": funnel,
  "server/launches/csv-export.ts": funnel,
  "server/launches/deliver-meta-events.ts": funnel,
  "server/launches/funnel-jobs.ts": funnel,
  "server/launches/launch-analytics.ts": funnel,
  "server/launches/launch-leads.ts": funnel,
  "server/launches/launch-members.ts": funnel,
  "server/launches/lead-figures.ts": funnel,
  "server/launches/leads-router.ts": funnel,
  "server/launches/leads-schema.ts": funnel,
  "server/launches/meta-log.ts": funnel,
  "server/launches/meta-tracking.ts": funnel,
  "server/launches/record-purchase.ts": funnel,
  "server/launches/run-welcomes.ts": funnel,
  "server/launches/send-welcomes.ts": funnel,
  "server/launches/stats-router.ts": funnel,
  "server/launches/stats-schema.ts": funnel,
  "server/launches/traffic-alerts.ts": funnel,
  "server/launches/upload-leads.ts": funnel,
  "server/launches/utm-figures.ts": funnel,
  "server/launches/welcome-batches.ts": funnel,
  // A group's members: participants, the LID ⇄ phone map, member counts, who is staff.
  "server/launches/lid-phones.ts": members,
  "server/launches/member-counts.ts": members,
  "server/launches/members.ts": members,
  "server/launches/record-participants.ts": members,
  // A group's activity (the group_activity webhook).
  "server/launches/group-activity.ts": activity,
  // Group actions, buyer removals among them.
  "server/groups/action-events.ts": actions,
  "server/groups/apply-group-change.ts": actions,
  "server/groups/buyer-removals.ts": actions,
  "server/groups/buyers-router.ts": actions,
  "server/groups/buyers-schema.ts": actions,
  "server/groups/cancel-group-action.ts": actions,
  "server/groups/create-group-action.ts": actions,
  "server/groups/fetch-picture.ts": actions,
  "server/groups/find-group-action.ts": actions,
  "server/groups/fixed-removal.ts": actions,
  "server/groups/group-action-view.ts": actions,
  "server/groups/info-group-action.ts": actions,
  "server/groups/list-buyers-in-groups.ts": actions,
  "server/groups/list-group-actions.ts": actions,
  "server/groups/router.ts": actions,
  "server/groups/run-group-actions.ts": actions,
  "server/groups/schema.ts": actions,
  "server/groups/target-groups.ts": actions,
  "server/groups/wake.ts": actions,
};

/** Kept in server/launches/ on purpose: the domain's surface, above link/, funnel/ and launch/ (each imports some of them). */
const keptInLaunches = new Set(["router.ts", "create-launch.ts", "edit-launch.ts", "info-launch.ts"]);

export const moves: ReadonlyMap<string, string> = new Map(Object.entries(movedInto).map(([from, folder]) => [from, `${folder}/${path.posix.basename(from)}`]));

const root = process.cwd();
const dryRun = process.argv.includes("--dry-run");
const codeRoots = ["app", "server", "db", "inngest", "scripts", "bench", "test", "e2e", "boot"];
const codeExtensions = /\.(ts|tsx|mts|cts|js|mjs|cjs|jsx)$/;
const topLevelCode = /^(instrumentation\.ts|(vitest|drizzle|next|playwright)[\w.-]*\.config\.(ts|mts|js|mjs|cjs)|\.dependency-cruiser\.cjs)$/;

const exists = (p: string) => existsSync(path.join(root, p));
const isFile = (p: string) => exists(p) && statSync(path.join(root, p)).isFile();

function walk(dir: string, out: string[]) {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const p = `${dir}/${entry.name}`;
    if (entry.isDirectory()) walk(p, out);
    else if (codeExtensions.test(entry.name)) out.push(p);
  }
}

function codeFiles(): string[] {
  const out: string[] = [];
  for (const dir of codeRoots) if (exists(dir)) walk(dir, out);
  for (const name of readdirSync(root)) if (topLevelCode.test(name)) out.push(name);
  return out;
}

/** The repository path an import names, without its extension, or null for a package. */
function resolveSpecifier(spec: string, fromDir: string): string | null {
  if (spec.startsWith("@/")) return path.posix.normalize(spec.slice(2));
  if (spec === "." || spec === ".." || spec.startsWith("./") || spec.startsWith("../")) return path.posix.join(fromDir, spec);
  return null;
}

const sourceExtension = /\.(ts|tsx|js|jsx|mjs|cjs)$/;

/** The old path (a key of `moves`) an import names, or null. */
function movedTarget(target: string): string | null {
  const bare = target.replace(sourceExtension, "");
  for (const candidate of [`${bare}.ts`, `${bare}.tsx`, `${bare}/index.ts`]) if (moves.has(candidate)) return candidate;
  return null;
}

/** The specifier for `targetFile` (a path with its extension) written from `fromFile`, in the style of `original`. */
function specifierFor(original: string, fromFile: string, targetFile: string): string {
  const target = targetFile.replace(/\.(ts|tsx)$/, "") + (original.match(sourceExtension)?.[0] ?? "");
  return original.startsWith("@/") ? `@/${target}` : relativeFrom(fromFile, target);
}

const mockCalls = new Set(["mock", "doMock", "unmock", "doUnmock", "importActual", "importMock"]);

/** The string literals of a file that name a module. */
function moduleSpecifiers(file: string, text: string): ts.StringLiteralLike[] {
  const kind = file.endsWith(".tsx") || file.endsWith(".jsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found: ts.StringLiteralLike[] = [];
  const take = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) found.push(node);
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) take(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) take(node.moduleReference.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) take(node.argument.literal);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const named =
        callee.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(callee) && callee.text === "require") ||
        (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === "vi" && mockCalls.has(callee.name.text));
      if (named) take(node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Rewrites the imports of `file` (where it is now) for it to sit at `destination`: an import of a moved file names its
 * new path; when the file itself moves, every relative import is written from its new folder.
 */
function rewriteImports(file: string, destination: string): string | null {
  const text = readFileSync(path.join(root, file), "utf8");
  const edits: { start: number; end: number; value: string }[] = [];
  for (const literal of moduleSpecifiers(file, text)) {
    const spec = literal.text;
    const target = resolveSpecifier(spec, path.posix.dirname(file));
    if (target === null) continue;
    const old = movedTarget(target);
    let value: string | null = null;
    if (old) value = specifierFor(spec, destination, moves.get(old) as string);
    else if (destination !== file && !spec.startsWith("@/")) value = relativeFrom(destination, target);
    if (value !== null && value !== spec) edits.push({ start: literal.getStart() + 1, end: literal.getEnd() - 1, value });
  }
  if (edits.length === 0) return null;
  let out = text;
  for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.value + out.slice(e.end);
  return out;
}

/** A relative specifier for `target` (as the original named it: a folder, a file with or without its extension) from `fromFile`. */
function relativeFrom(fromFile: string, target: string): string {
  const rel = path.posix.relative(path.posix.dirname(fromFile), target);
  return rel.startsWith(".") ? rel : `./${rel}`;
}

const regexSource = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Old path mentions → new ones: `server/…/x(.ts)`, and in the docs also the domain-relative `launches/x(.ts)`. */
function mentionRules(docs: boolean): [RegExp, string][] {
  const rules: [RegExp, string][] = [];
  const byLength = [...moves].sort(([a], [b]) => b.length - a.length);
  for (const [from, to] of byLength) {
    const oldBare = from.replace(/\.ts$/, "");
    const newBare = to.replace(/\.ts$/, "");
    const end = "(?![\\w/-]|\\.(?!ts\\b)\\w)";
    rules.push([new RegExp(`(?<![\\w-])${regexSource(oldBare)}${end}`, "g"), newBare]);
    if (docs) {
      const shortOld = oldBare.replace(/^server\//, "");
      rules.push([new RegExp(`(?<![\\w./-])${regexSource(shortOld)}${end}`, "g"), newBare.replace(/^server\//, "")]);
    }
  }
  return rules;
}

function replaceMentions(text: string, rules: [RegExp, string][]): string {
  let out = text;
  for (const [pattern, value] of rules) out = out.replace(pattern, value);
  return out;
}

function main() {
  const files = codeFiles();
  const pending = [...moves].filter(([from, to]) => {
    if (!isFile(from)) return false;
    if (isFile(to)) {
      console.warn(`! both ${from} and ${to} exist: left alone (merge them by hand)`);
      return false;
    }
    return true;
  });
  const moving = new Map(pending);
  const written: string[] = [];

  // 1 and 2: imports, each file rewritten for where it will be.
  const codeRules = mentionRules(false);
  for (const file of files) {
    const destination = moving.get(file) ?? file;
    const rewritten = rewriteImports(file, destination);
    const before = rewritten ?? readFileSync(path.join(root, file), "utf8");
    const after = file.startsWith("scripts/codemods/") ? before : replaceMentions(before, codeRules);
    if (rewritten !== null || after !== before) {
      written.push(file);
      if (!dryRun) writeFileSync(path.join(root, file), after);
    }
  }
  for (const [from, to] of pending) {
    console.log(`git mv ${from} ${to}`);
    if (dryRun) continue;
    mkdirSync(path.dirname(path.join(root, to)), { recursive: true });
    execFileSync("git", ["mv", from, to], { cwd: root, stdio: "inherit" });
  }

  // 3: the docs.
  const docRules = mentionRules(true);
  const docs = [
    ...(exists("docs")
      ? readdirSync(path.join(root, "docs"))
          .filter((n) => n.endsWith(".md"))
          .map((n) => `docs/${n}`)
      : []),
    ...["README.md", "STYLE.md"].filter(exists),
  ];
  for (const doc of docs) {
    const before = readFileSync(path.join(root, doc), "utf8");
    const after = replaceMentions(before, docRules);
    if (after !== before) {
      written.push(doc);
      if (!dryRun) writeFileSync(path.join(root, doc), after);
    }
  }

  console.log(`${pending.length} moved, ${written.length} files rewritten${dryRun ? " (dry run: nothing written)" : ""}`);
  const leftover = exists("server/launches")
    ? readdirSync(path.join(root, "server/launches")).filter((n) => isFile(`server/launches/${n}`) && !keptInLaunches.has(n))
    : [];
  if (leftover.length > 0) console.warn(`! server/launches/ still holds files the map does not place: ${leftover.join(", ")}`);
  const groupsLeftover = exists("server/groups") ? readdirSync(path.join(root, "server/groups")).filter((n) => isFile(`server/groups/${n}`)) : [];
  if (groupsLeftover.length > 0) console.warn(`! server/groups/ still holds files the map does not place: ${groupsLeftover.join(", ")}`);
}

main();
