import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { defaultNodeFlags, serverArgs } from "../../boot/serve-args";

/** The V8 heap limit (MB) of a Node process started with these flags. */
function heapLimitMb(flags: string[], nodeOptions?: string): number {
  const r = spawnSync(process.execPath, [...flags, "-e", "console.log(require('node:v8').getHeapStatistics().heap_size_limit)"], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: nodeOptions ?? "" },
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return Number(r.stdout) / 2 ** 20;
}

describe("the server process's Node flags", () => {
  it("cap the old generation at 512 MB and the semi-space at 4 MB", () => {
    const flags = defaultNodeFlags("");
    expect(flags).toEqual(["--max-old-space-size=512", "--max-semi-space-size=4"]);
    // Node accepts them and V8 applies them: old space 512 plus the young generation (3 × 4 MB at most).
    const limit = heapLimitMb(flags);
    expect(limit).toBeGreaterThanOrEqual(512);
    expect(limit).toBeLessThanOrEqual(512 + 12);
  });

  it("leave out an option NODE_OPTIONS already sets, so the operator's value wins", () => {
    expect(defaultNodeFlags("--max-old-space-size=2048")).toEqual(["--max-semi-space-size=4"]);
    expect(defaultNodeFlags("--trace-warnings --max_semi_space_size=16")).toEqual(["--max-old-space-size=512"]);
    const flags = defaultNodeFlags("--max-old-space-size=2048");
    expect(heapLimitMb(flags, "--max-old-space-size=2048")).toBeGreaterThanOrEqual(2048);
  });

  it("put the caller's flags after the defaults, then the bundle and its options", () => {
    const args = serverArgs({ port: 4123, hostname: "127.0.0.1", nodeArgs: ["--cpu-prof"] });
    expect(args.slice(-6)).toEqual(["--cpu-prof", expect.stringMatching(/serve\.cjs$/), "--port", "4123", "--hostname", "127.0.0.1"]);
    expect(args.indexOf("--cpu-prof")).toBeGreaterThan(args.findIndex((a) => a.startsWith("--max-old-space-size")));
  });
});
