import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lastLines, unhandledErrors } from "../../scripts/test-output";

// npm test's summary names what failed (scripts/test.ts). An unhandled rejection fails vitest's run without failing a
// test, so only vitest's own output names it: this runs a real vitest on a file that leaves one behind.
const dir = mkdtempSync(path.join(tmpdir(), "gcs-unhandled-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("npm test's failure lines", () => {
  it("names an unhandled rejection, its file and the latest test, from vitest's real output", () => {
    writeFileSync(
      path.join(dir, "leaves.test.ts"),
      [
        'import { test } from "vitest";',
        'test("leaves a rejection behind", async () => {',
        '  setTimeout(() => { Promise.reject(new Error("boom after the test")); }, 5);',
        "  await new Promise((r) => setTimeout(r, 50));",
        "});",
        'test("a later test passes", () => {});',
      ].join("\n"),
    );
    writeFileSync(path.join(dir, "vitest.config.mjs"), 'export default { test: { include: ["*.test.ts"] } };\n');
    const vitest = path.resolve("node_modules/vitest/vitest.mjs");
    const r = spawnSync(process.execPath, [vitest, "run", "--root", dir], { encoding: "utf8", env: { ...process.env, FORCE_COLOR: "1" } });
    expect(r.status).toBe(1);
    const found = unhandledErrors(r.stdout + r.stderr);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain("leaves.test.ts");
    expect(found[0]).toContain("leaves a rejection behind");
    expect(found[0]).toContain("Error: boom after the test");
    expect(found[0]).not.toContain("\u001b");
  });

  it("finds nothing in a clean run's output, and keeps the last lines of a runner's output", () => {
    expect(unhandledErrors(" ✓ a.test.ts (1 test)\n Test Files  1 passed (1)\n")).toEqual([]);
    expect(lastLines("one\n\ntwo\nthree\n  \n", 2)).toBe("two | three");
  });
});
