import path from "node:path";
import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/sequencer";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(__dirname) } },
  test: {
    include: ["server/**/*.test.ts", "inngest/**/*.test.ts", "test/**/*.test.ts", "db/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup.ts"],
    pool: "forks",
    // Three files at a time on two cores, each with its own database: a file spends much of its time waiting (engines'
    // ticks, polls, timers, child processes), so a third keeps the cores busy. The PGlite suite, the same tree at load
    // ~10: 810 s with two, 618 s with three, none failing (docs/testing.md#the-suites-wall-time).
    maxWorkers: 3,
    // The longest files first, also in a fresh clone: the last file to start should be a short one.
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
