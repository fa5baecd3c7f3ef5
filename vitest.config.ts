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
    // Two cores: two files at a time, each with its own database (PGlite) or tenants (PostgreSQL).
    maxWorkers: 2,
    // The longest files first, also in a fresh clone: the last file to start should be a short one.
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
